/**
 * Exact 2:1 rate changes (16 kHz ↔ 8 kHz) with a linear-phase half-band FIR filter: fast enough
 * for the channel's hot path, and zero-delay (the filter is centred), so durations and
 * timelines line up sample for sample.
 */

/** Half-length of the half-band filter: 47 → 95 taps (≈ 0.93 kHz transition band at 16 kHz, centred on 4 kHz). */
export const HALFBAND_HALF_LENGTH = 47;

/**
 * Odd-index taps h[1], h[3], … of a Blackman-windowed half-band sinc, scaled so that they sum to
 * 0.25 on each side (h[0] = 0.5, even taps are 0): unit DC gain when decimating, and exact unit
 * gain on both output phases when interpolating.
 */
function halfbandOddTaps(half: number): Float64Array {
  const taps = new Float64Array((half + 1) / 2);
  const len = 2 * half + 1;
  let sum = 0;
  for (let k = 0; k < taps.length; k++) {
    const n = 2 * k + 1;
    const sinc = Math.sin((Math.PI * n) / 2) / (Math.PI * n);
    const m = n + half; // position in the window, 0 … len-1
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * m) / (len - 1)) + 0.08 * Math.cos((4 * Math.PI * m) / (len - 1));
    taps[k] = sinc * w;
    sum += sinc * w;
  }
  for (let k = 0; k < taps.length; k++) taps[k] = ((taps[k] as number) * 0.25) / sum;
  return taps;
}

const ODD = halfbandOddTaps(HALFBAND_HALF_LENGTH);
const H0 = 0.5;

/** `x` with `pad` zeros before and after (so the filter loops need no bounds checks). */
function padded(x: Float32Array, pad: number): Float32Array {
  const p = new Float32Array(x.length + 2 * pad);
  p.set(x, pad);
  return p;
}

/**
 * Halve the sample rate (e.g. 16 kHz → 8 kHz): low-pass at a quarter of the input rate, keep
 * every other sample. Output length is `ceil(n / 2)`; sample m of the output is at the time of
 * input sample 2m.
 */
export function decimate2(x: Float32Array): Float32Array {
  const taps = ODD.length;
  const pad = 2 * taps;
  const p = padded(x, pad);
  const out = new Float32Array((x.length + 1) >> 1);
  const h = ODD;
  for (let m = 0; m < out.length; m++) {
    const c = pad + 2 * m;
    let acc = H0 * (p[c] as number);
    for (let k = 0; k < taps; k++) acc += (h[k] as number) * ((p[c - 2 * k - 1] as number) + (p[c + 2 * k + 1] as number));
    out[m] = acc;
  }
  return out;
}

/**
 * Double the sample rate (e.g. 8 kHz → 16 kHz): zero-stuff and low-pass with the same half-band
 * filter (gain 2). Input samples pass through unchanged at even output positions.
 * `length` is the output length (default `2 · x.length`), so a {@link decimate2} →
 * `interpolate2(y, n)` round trip restores an odd length `n` too.
 */
export function interpolate2(x: Float32Array, length = 2 * x.length): Float32Array {
  const taps = ODD.length;
  const pad = taps + 1;
  const p = padded(x, pad);
  const out = new Float32Array(length);
  const h = ODD;
  const half = length >> 1;
  for (let m = 0; m < half + (length & 1); m++) {
    const c = pad + m;
    out[2 * m] = p[c] as number;
    if (2 * m + 1 >= length) break;
    // Output 2m+1 sits between input m and m+1.
    let acc = 0;
    for (let k = 0; k < taps; k++) acc += (h[k] as number) * ((p[c - k] as number) + (p[c + 1 + k] as number));
    out[2 * m + 1] = 2 * acc;
  }
  return out;
}
