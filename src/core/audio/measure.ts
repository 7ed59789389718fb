/**
 * Measurements on the audio itself, used by the mixer (levels) and by the tests (SNR, band
 * energy, drop rates).
 */
import type { BiquadCascade4 } from './biquad.ts';
import { fft } from './fft.ts';

/** Mean power (mean of squares) of `x[start, end)`; 0 for an empty range. */
export function meanPower(x: Float32Array, start = 0, end = x.length): number {
  let s = 0;
  for (let i = start; i < end; i++) {
    const v = x[i] as number;
    s += v * v;
  }
  return end > start ? s / (end - start) : 0;
}

/** Root mean square of `x[start, end)`. */
export function rms(x: Float32Array, start = 0, end = x.length): number {
  return Math.sqrt(meanPower(x, start, end));
}

/** Power ratio in dB (`10·log10(a/b)`). */
export function powerRatioDb(a: number, b: number): number {
  return 10 * Math.log10(a / b);
}

/**
 * Signal-to-noise ratio in dB of two separate components (`10·log10(P_signal / P_noise)`), each
 * over its whole length.
 */
export function snrDb(signal: Float32Array, noise: Float32Array): number {
  return powerRatioDb(meanPower(signal), meanPower(noise));
}

/** Frame length of the active-level gate: 20 ms (a common speech frame). */
export const ACTIVE_FRAME_MS = 20;
/** Frames quieter than the loudest frame by more than this many dB are silence: 40 dB. */
export const ACTIVE_GATE_DB = 40;

/** Samples per frame of the active-level gate at `rateHz`: 20 ms ({@link ACTIVE_FRAME_MS}), at least 1. */
export function activeFrameLength(rateHz: number): number {
  return Math.max(1, Math.round((rateHz * ACTIVE_FRAME_MS) / 1000));
}

/**
 * RMS over the active frames of `x`: frames (20 ms) whose power is within 40 dB of the loudest
 * frame. This is the speech level the mixer sets the SNR against, so leading and trailing
 * silence of a TTS clip does not lower it. (A simple gate in the spirit of ITU-T P.56's active
 * speech level, not an implementation of it.) Returns 0 for an all-zero signal.
 */
export function activeRms(x: Float32Array, rateHz: number): number {
  const frame = activeFrameLength(rateHz);
  const powers = new Float64Array(Math.ceil(x.length / frame));
  for (let f = 0; f < powers.length; f++) powers[f] = meanPower(x, f * frame, Math.min(x.length, (f + 1) * frame));
  return gatedRms(powers, frame, x.length);
}

/**
 * The gate of {@link activeRms} on the mean powers of consecutive `frame`-sample frames of an
 * `n`-sample signal (the last frame may be shorter): the RMS over the frames within 40 dB of the
 * loudest, each weighted by its length. 0 when every frame is silent.
 */
export function gatedRms(powers: Float64Array, frame: number, n: number): number {
  // A loop, not Math.max(...powers): minutes of speech are more frames than a call's arguments allow.
  let max = 0;
  for (let f = 0; f < powers.length; f++) max = Math.max(max, powers[f] as number);
  if (max === 0) return 0;
  const floor = max * 10 ** (-ACTIVE_GATE_DB / 10);
  let sum = 0;
  let count = 0;
  for (let f = 0; f < powers.length; f++) {
    const p = powers[f] as number;
    if (p < floor) continue;
    const len = Math.min(n, (f + 1) * frame) - f * frame;
    sum += p * len;
    count += len;
  }
  return Math.sqrt(sum / count);
}

/**
 * {@link activeRms} of `x` (`full`) and of `x` through a cascade of four second-order sections
 * (`band`, e.g. the telephony band-pass: the level as the agent hears it) in one pass, frame by
 * frame ({@link bandFramePowers}): both equal `activeRms(x)` and
 * `activeRms(biquadCascadeInto(x, copy, sections))` exactly, without writing the filtered copy
 * (a fifth less time than the two passes and the copy).
 */
export function activeRmsFullAndBand(
  x: Float32Array,
  rateHz: number,
  sections: BiquadCascade4,
): { full: number; band: number } {
  const frame = activeFrameLength(rateHz);
  const frames = Math.ceil(x.length / frame);
  const full = new Float64Array(frames);
  const band = new Float64Array(frames);
  const st = new Float64Array(8);
  for (let f = 0; f < frames; f++)
    bandFramePowers(x, f * frame, Math.min(x.length, (f + 1) * frame), sections, st, full, band, f);
  return { full: gatedRms(full, frame, x.length), band: gatedRms(band, frame, x.length) };
}

/**
 * One frame `x[from, to)` of {@link activeRmsFullAndBand}: its mean power (Σ x² / length, as
 * {@link meanPower} sums it) into `full[f]`, and the mean power of the frame through the four
 * sections into `band[f]`. The sections run as `biquadCascadeInto` runs them (transposed direct
 * form II, Audio EQ Cookbook coefficients, float64 from section to section), continuing from
 * and updating their eight states `st` (zeros at the signal's start); each output is rounded to
 * float32 before it is squared, as the filtered copy in a Float32Array would hold it. The hot
 * loop of the mixer's level measurement, so the cascade is written out here rather than called.
 */
function bandFramePowers(
  x: Float32Array,
  from: number,
  to: number,
  [s0, s1, s2, s3]: BiquadCascade4,
  st: Float64Array,
  full: Float64Array,
  band: Float64Array,
  f: number,
): void {
  const { b0: p0, b1: p1, b2: p2, a1: pa1, a2: pa2 } = s0;
  const { b0: q0, b1: q1, b2: q2, a1: qa1, a2: qa2 } = s1;
  const { b0: r0, b1: r1, b2: r2, a1: ra1, a2: ra2 } = s2;
  const { b0: t0, b1: t1, b2: t2, a1: ta1, a2: ta2 } = s3;
  const fround = Math.fround;
  let u1 = st[0] as number,
    u2 = st[1] as number,
    v1 = st[2] as number,
    v2 = st[3] as number,
    w1 = st[4] as number,
    w2 = st[5] as number,
    z1 = st[6] as number,
    z2 = st[7] as number;
  let sf = 0;
  let sb = 0;
  for (let i = from; i < to; i++) {
    const a = x[i] as number;
    sf += a * a;
    const b = p0 * a + u1;
    u1 = p1 * a - pa1 * b + u2;
    u2 = p2 * a - pa2 * b;
    const c = q0 * b + v1;
    v1 = q1 * b - qa1 * c + v2;
    v2 = q2 * b - qa2 * c;
    const d = r0 * c + w1;
    w1 = r1 * c - ra1 * d + w2;
    w2 = r2 * c - ra2 * d;
    const y = t0 * d + z1;
    z1 = t1 * d - ta1 * y + z2;
    z2 = t2 * d - ta2 * y;
    const yf = fround(y);
    sb += yf * yf;
  }
  full[f] = to > from ? sf / (to - from) : 0;
  band[f] = to > from ? sb / (to - from) : 0;
  st[0] = u1;
  st[1] = u2;
  st[2] = v1;
  st[3] = v2;
  st[4] = w1;
  st[5] = w2;
  st[6] = z1;
  st[7] = z2;
}

/** Largest absolute sample value. */
export function peak(x: Float32Array): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) {
    const v = Math.abs(x[i] as number);
    if (v > m) m = v;
  }
  return m;
}

/** FFT size of {@link bandEnergy}: 2048 samples (7.8 Hz bins at 16 kHz). */
export const BAND_FFT_SIZE = 2048;

/**
 * Energy of `x` between `loHz` and `hiHz` (inclusive bins), from a Hann-windowed Welch
 * periodogram (2048-sample frames, 50 % overlap), summed over frames. Absolute scale is
 * arbitrary but the same for every call, so differences in dB ({@link bandEnergyDb}) between two
 * signals or two bands are meaningful.
 */
export function bandEnergy(x: Float32Array, rateHz: number, loHz: number, hiHz: number): number {
  const n = BAND_FFT_SIZE;
  const hop = n / 2;
  const win = new Float64Array(n);
  for (let i = 0; i < n; i++) win[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
  const lo = Math.max(0, Math.ceil((loHz * n) / rateHz));
  const hi = Math.min(n / 2, Math.floor((hiHz * n) / rateHz));
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  let total = 0;
  for (let start = 0; start + n <= Math.max(n, x.length); start += hop) {
    for (let i = 0; i < n; i++) {
      re[i] = ((x[start + i] as number | undefined) ?? 0) * (win[i] as number);
      im[i] = 0;
    }
    fft(re, im);
    for (let k = lo; k <= hi; k++) total += (re[k] as number) ** 2 + (im[k] as number) ** 2;
  }
  return total;
}

/** {@link bandEnergy} in dB (`10·log10`). */
export function bandEnergyDb(x: Float32Array, rateHz: number, loHz: number, hiHz: number): number {
  return 10 * Math.log10(bandEnergy(x, rateHz, loHz, hiHz));
}
