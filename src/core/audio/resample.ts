/**
 * Exact 2:1 rate changes (16 kHz ↔ 8 kHz) with a linear-phase half-band FIR filter, zero-delay
 * (the filter is centred), so durations and timelines line up sample for sample; the phone
 * channel's 16 → 8 kHz step uses a polyphase IIR half-band instead, fused with the telephony
 * band-pass ({@link bandPassDecimate2MapInto}: a third of the multiplies, after a filter that is
 * not linear-phase anyway). Also any-rate resampling ({@link resampleRate}).
 */

import type { BiquadCascade4, BiquadCoefficients } from './biquad.ts';

/**
 * Half-length of the half-band filter: 31 → 63 taps, 16 of them non-zero besides the centre.
 * With a Kaiser window of β = 7 (≈ 70 dB stopband, Kaiser's design formula) the transition
 * band is ≈ 1.1 kHz wide at 16 kHz, centred on 4 kHz (3.45–4.55 kHz): the telephony low-pass at
 * 3.4 kHz sits below it. (Was 95 Blackman taps; two thirds of the work for the same job.)
 */
export const HALFBAND_HALF_LENGTH = 31;
/** Kaiser β of the half-band filter: 7 (≈ 70 dB stopband attenuation). */
export const HALFBAND_KAISER_BETA = 7;

/**
 * Odd-index taps h[1], h[3], … of a Kaiser-windowed half-band sinc, scaled so that they sum to
 * 0.25 on each side (h[0] = 0.5, even taps are 0): unit DC gain when decimating, and exact unit
 * gain on both output phases when interpolating.
 */
function halfbandOddTaps(half: number): Float64Array {
  const taps = new Float64Array((half + 1) / 2);
  const i0b = besselI0(HALFBAND_KAISER_BETA);
  let sum = 0;
  for (let k = 0; k < taps.length; k++) {
    const n = 2 * k + 1;
    const sinc = Math.sin((Math.PI * n) / 2) / (Math.PI * n);
    const r = n / (half + 1);
    const w = besselI0(HALFBAND_KAISER_BETA * Math.sqrt(1 - r * r)) / i0b;
    taps[k] = sinc * w;
    sum += sinc * w;
  }
  for (let k = 0; k < taps.length; k++) taps[k] = ((taps[k] as number) * 0.25) / sum;
  return taps;
}

const ODD = halfbandOddTaps(HALFBAND_HALF_LENGTH);
const H0 = 0.5;
/** 1 / 32768: a power of two, so `v * INV_32768` equals `v / 32768` exactly. */
const INV_32768 = 1 / 32768;

/** `x` with `pad` zeros before and after (so the filter loops need no bounds checks). */
function padded(x: Float32Array, pad: number): Float32Array {
  const p = new Float32Array(x.length + 2 * pad);
  p.set(x, pad);
  return p;
}

// The 16 non-zero odd taps as constants for the unrolled kernels below (the hot path of the
// phone channel). The unrolled loops add the terms in the same order as the generic ones
// ({@link tapSum}), so results are bit-identical.
const UNROLLED = ODD.length === 16;
const [T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15] = Array.from(
  ODD.length === 16 ? ODD : new Float64Array(16),
) as unknown as readonly [
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
];

/**
 * Σ_k h[k]·pair(k) in four partial sums (k mod 4), added as (s0 + s1) + (s2 + s3): the order of
 * the unrolled kernels below (four short dependency chains instead of one of sixteen additions:
 * the FIR loops ran at the latency of that chain).
 */
function tapSum(pair: (k: number) => number): number {
  const h = ODD;
  const s = [0, 0, 0, 0];
  for (let k = 0; k < h.length; k++) s[k % 4] = (k < 4 ? 0 : (s[k % 4] as number)) + (h[k] as number) * pair(k);
  return (s[0] as number) + (s[1] as number) + ((s[2] as number) + (s[3] as number));
}

/** One decimator output at centre `c` with zero padding outside `x` (edges only). */
function decimateAt(x: Float32Array | Float64Array, c: number): number {
  const n = x.length;
  const at = (i: number) => (i >= 0 && i < n ? (x[i] as number) : 0);
  return H0 * at(c) + tapSum((k) => at(c - 1 - 2 * k) + at(c + 1 + 2 * k));
}

/** One interpolator odd output between `x[m]` and `x[m + 1]`, with zero padding outside `x` (edges only). */
function interpolateAt(x: Float32Array | Float64Array, m: number): number {
  const n = x.length;
  const at = (i: number) => (i >= 0 && i < n ? (x[i] as number) : 0);
  return 2 * tapSum((k) => at(m - k) + at(m + 1 + k));
}

/**
 * {@link decimate2} into `out` (length `ceil(x.length / 2)`, e.g. a reused buffer). Returns `out`.
 */
export function decimate2Into(x: Float32Array, out: Float32Array): Float32Array {
  // Taps as function locals: module-level consts cost a context load and hole check per use.
  const h0 = T0,
    h1 = T1,
    h2 = T2,
    h3 = T3,
    h4 = T4,
    h5 = T5,
    h6 = T6,
    h7 = T7,
    h8 = T8,
    h9 = T9,
    h10 = T10,
    h11 = T11,
    h12 = T12,
    h13 = T13,
    h14 = T14,
    h15 = T15;
  const n = x.length;
  const len = (n + 1) >> 1;
  if (out.length !== len) throw new RangeError(`decimate2Into: output has ${out.length} samples, needs ${len}`);
  const reach = 2 * ODD.length - 1; // 31
  // Interior outputs: every tap inside x (2m − 31 ≥ 0 and 2m + 31 ≤ n − 1).
  const mLo = Math.min(len, (reach + 1) >> 1);
  const mHi = Math.max(mLo, Math.min(len, ((n - 1 - reach) >> 1) + 1));
  for (let m = 0; m < mLo; m++) out[m] = decimateAt(x, 2 * m);
  if (UNROLLED) {
    for (let m = mLo; m < mHi; m++) {
      const c = 2 * m;
      let a0 = h0 * ((x[c - 1] as number) + (x[c + 1] as number));
      let a1 = h1 * ((x[c - 3] as number) + (x[c + 3] as number));
      let a2 = h2 * ((x[c - 5] as number) + (x[c + 5] as number));
      let a3 = h3 * ((x[c - 7] as number) + (x[c + 7] as number));
      a0 += h4 * ((x[c - 9] as number) + (x[c + 9] as number));
      a1 += h5 * ((x[c - 11] as number) + (x[c + 11] as number));
      a2 += h6 * ((x[c - 13] as number) + (x[c + 13] as number));
      a3 += h7 * ((x[c - 15] as number) + (x[c + 15] as number));
      a0 += h8 * ((x[c - 17] as number) + (x[c + 17] as number));
      a1 += h9 * ((x[c - 19] as number) + (x[c + 19] as number));
      a2 += h10 * ((x[c - 21] as number) + (x[c + 21] as number));
      a3 += h11 * ((x[c - 23] as number) + (x[c + 23] as number));
      a0 += h12 * ((x[c - 25] as number) + (x[c + 25] as number));
      a1 += h13 * ((x[c - 27] as number) + (x[c + 27] as number));
      a2 += h14 * ((x[c - 29] as number) + (x[c + 29] as number));
      a3 += h15 * ((x[c - 31] as number) + (x[c + 31] as number));
      const acc = H0 * (x[c] as number) + (a0 + a1 + (a2 + a3));
      out[m] = acc;
    }
  } else {
    for (let m = mLo; m < mHi; m++) out[m] = decimateAt(x, 2 * m);
  }
  for (let m = mHi; m < len; m++) out[m] = decimateAt(x, 2 * m);
  return out;
}

/*
 * ROUNDING: the 16-bit kernels round with Math.floor(v + 0.5), Math.round's rule (halves up),
 * not Math.round itself, which V8 does not lower to a fast instruction here (it alone doubled
 * the decimator's time). The rounded value goes to an int32 with `| 0` (NaN becomes 0) and is
 * clipped to 16 bits as an integer: the same result as clipping the float (the kernels' values
 * stay far inside ±2^31: inputs within ±1 through filters of small gain), and a float compare and
 * conversion less per sample (a quarter of the 8 → 16 kHz kernel's time).
 */

/**
 * Output pairs per call of the telephony leg's kernels (2048): their filter states are flushed
 * between calls ({@link flushTinyStates}).
 */
const STATE_BLOCK = 2048;

/**
 * Filter states smaller than this are set to 0 between blocks: 1e-200. On digital silence IIR
 * states decay into float64 subnormals (below 2.2e-308), which the CPU handles about 100× slower
 * (a 10 s turn of silence took 30× its time), and can stay there; a state this small changes no
 * float32 output (the smallest float32 is 1.4e-45).
 */
export const DENORMAL_FLUSH = 1e-200;

/** Zero the first `count` states of `st` (all by default) whose magnitude is below {@link DENORMAL_FLUSH}. */
export function flushTinyStates(st: Float64Array, count = st.length): void {
  for (let k = 0; k < count; k++) if (Math.abs(st[k] as number) < DENORMAL_FLUSH) st[k] = 0;
}

/**
 * Coefficients of a polyphase IIR half-band low-pass: an elliptic half-band filter of order
 * `2·count + 1` built as the mean of two allpass branches, H(z) = ½·[A₀(z²) + z⁻¹·A₁(z²)], each
 * branch a cascade of first-order sections (a + z⁻²) / (1 + a·z⁻²); coefficients with even index
 * belong to A₀, odd to A₁ (R. A. Valenzuela and A. G. Constantinides, "Digital signal processing
 * schemes for efficient interpolation and decimation", IEE Proc. G 130(6), 1983). `transition` is
 * the half-width of the transition band as a share of the sample rate: the passband ends at
 * 0.25 − transition, the stopband starts at 0.25 + transition. The nome q of the elliptic
 * modulus comes from its series q ≈ ε + 2ε⁵ + 15ε⁹ + 150ε¹³ (the standard elliptic-filter
 * approximation, e.g. A. Antoniou, *Digital Filters*, ch. 5), and each coefficient from the
 * theta-function series at the pole's index. The stopband attenuation is equiripple; the
 * passband ripple is its square (below 10⁻⁶ dB at 70 dB), so the passband is flat.
 * @throws RangeError when `count` < 1 or `transition` is not in (0, 0.25).
 */
export function halfbandAllpassCoefficients(count: number, transition: number): Float64Array {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`halfband: ${count} coefficients (need ≥ 1)`);
  if (!(transition > 0 && transition < 0.25))
    throw new RangeError(`halfband: transition ${transition} is not in (0, 0.25) of the sample rate`);
  const k = Math.tan(((1 - 2 * transition) * Math.PI) / 4) ** 2;
  const kk = (1 - k * k) ** 0.25;
  const e = (0.5 * (1 - kk)) / (1 + kk);
  const e4 = e ** 4;
  const q = e * (1 + e4 * (2 + e4 * (15 + 150 * e4)));
  const order = 2 * count + 1;
  const out = new Float64Array(count);
  for (let c = 1; c <= count; c++) {
    // Numerator Σ (−1)^i q^(i(i+1)) sin((2i+1)cπ/order), denominator ½ + Σ (−1)^i q^(i²) cos(2icπ/order).
    let num = 0;
    for (let i = 0, sign = 1; i < 64; i++, sign = -sign) {
      const t = sign * q ** (i * (i + 1)) * Math.sin(((2 * i + 1) * c * Math.PI) / order);
      num += t;
      if (Math.abs(t) < 1e-100) break;
    }
    let den = 0.5;
    for (let i = 1, sign = -1; i < 64; i++, sign = -sign) {
      const t = sign * q ** (i * i) * Math.cos((2 * i * c * Math.PI) / order);
      den += t;
      if (Math.abs(t) < 1e-100) break;
    }
    const w = (num * q ** 0.25) / den;
    const w2 = w * w;
    const x = Math.sqrt((1 - w2 * k) * (1 - w2 / k)) / (1 + w2);
    out[c - 1] = (1 - x) / (1 + x);
  }
  return out;
}

/**
 * Coefficient count of the telephony leg's 16 → 8 kHz decimator: 6 (order 13; two branches of
 * three first-order allpass sections).
 */
export const HALFBAND_IIR_COEFFICIENTS = 6;
/**
 * Transition half-width of that decimator: 0.0375 of 16 kHz (600 Hz), so it passes up to 3.4 kHz
 * (the telephony band's top) and stops from 4.6 kHz, where it attenuates by 73 dB (what fewer
 * taps buy than the 63-tap FIR's 70 dB from 4.55 kHz).
 */
export const HALFBAND_IIR_TRANSITION = 0.0375;

const IIR = halfbandAllpassCoefficients(HALFBAND_IIR_COEFFICIENTS, HALFBAND_IIR_TRANSITION);

/**
 * The telephony band-pass split around the 16 → 8 kHz step of {@link bandPassDecimate2MapInto}:
 * `lowPass`, two sections at the input rate (16 kHz), before the half-band; `highPass`, two
 * sections at the output rate (8 kHz), after it. Both filters are linear and time-invariant, so
 * the order only moves where the work is done: the high-pass on half the samples.
 */
export interface SplitBandPass {
  lowPass: readonly [BiquadCoefficients, BiquadCoefficients];
  highPass: readonly [BiquadCoefficients, BiquadCoefficients];
}

/**
 * The telephony leg's band-pass and 16 → 8 kHz rate change in one pass: each input sample of `x`
 * is clipped to [−1, 1] (the ADC) and run through the two low-pass sections of `band`
 * (transposed direct form II, float64 state, zero initial state); every pair feeds the
 * polyphase IIR half-band ({@link halfbandAllpassCoefficients} with
 * {@link HALFBAND_IIR_COEFFICIENTS} and {@link HALFBAND_IIR_TRANSITION}): output m is
 * ½·[A₀(x_f[2m]) + A₁(x_f[2m − 1])] of the low-passed signal x_f, run through the two high-pass
 * sections at 8 kHz, then scaled by 32768, rounded, clipped to 16 bits and mapped through `table`
 * (65,536 entries, e.g. the mu-law round trip). The half-band's ½ and the 32768 ride on the first
 * high-pass section's numerator (the cascade is linear). `out` has `ceil(x.length / 2)` samples;
 * returns it. The half-band's six multiplies per output replace a 63-tap FIR's sixteen
 * (symmetric pairs), and its recursion overlaps the band-pass's in one loop; the high-pass at
 * 8 kHz costs half what it does at 16 kHz (a 300 Hz Butterworth high-pass designed at 8 kHz is
 * within 0.004 dB of the 16 kHz one from 300 Hz to 3.4 kHz, by their responses). Not
 * linear-phase: the half-band delays low frequencies by about 2.7 samples at 16 kHz (0.17 ms),
 * less than the band-pass's own delay.
 * @throws RangeError on a wrong `out` length or table size.
 */
export function bandPassDecimate2MapInto(
  x: Float32Array,
  band: SplitBandPass,
  out: Float64Array,
  table: Float32Array,
): Float64Array {
  const n = x.length;
  const len = (n + 1) >> 1;
  if (out.length !== len)
    throw new RangeError(`bandPassDecimate2MapInto: output has ${out.length} samples, needs ${len}`);
  if (table.length !== 65536) throw new RangeError('bandPassDecimate2MapInto: table needs 65536 entries');
  // 4 low-pass states, 12 allpass states, the odd branch's pending output, 4 high-pass states.
  const st = new Float64Array(21);
  const [h0, h1] = band.highPass;
  const k = 0.5 * 32768;
  const sections: BiquadCascade4 = [
    band.lowPass[0],
    band.lowPass[1],
    { ...h0, b0: h0.b0 * k, b1: h0.b1 * k, b2: h0.b2 * k },
    h1,
  ];
  // The last output of an odd length has no odd input after it: run the pairs, then that one.
  const pairs = n >> 1;
  for (let m = 0; m < pairs; m += STATE_BLOCK) {
    bandPassDecimatePairs(x, sections, out, table, st, Math.min(STATE_BLOCK, pairs - m), m, m);
    flushTinyStates(st);
  }
  if (len > pairs) {
    // The last sample and a zero after it.
    bandPassDecimatePairs(Float32Array.of(x[n - 1] as number, 0), sections, out, table, st, 1, 0, pairs);
  }
  return out;
}

/**
 * `count` outputs of {@link bandPassDecimate2MapInto}: input pairs from sample `2·from` of `x`
 * into `out[at…]`, continuing from and updating `st` (4 low-pass states, 12 allpass states, the
 * odd branch's pending output, 4 high-pass states). `sections` are the two low-pass sections at
 * 16 kHz and the two high-pass sections at 8 kHz, the first carrying ½ · 32768. Its hot loop in
 * a function of its own, so V8 optimizes it once.
 */
function bandPassDecimatePairs(
  x: Float32Array,
  [s0, s1, s2, s3]: BiquadCascade4,
  out: Float64Array,
  table: Float32Array,
  st: Float64Array,
  count: number,
  from = 0,
  at = 0,
): void {
  const { b0: p0, b1: p1, b2: p2, a1: pa1, a2: pa2 } = s0;
  const { b0: q0, b1: q1, b2: q2, a1: qa1, a2: qa2 } = s1;
  const { b0: r0, b1: r1, b2: r2, a1: ra1, a2: ra2 } = s2;
  const { b0: t0, b1: t1, b2: t2, a1: ta1, a2: ta2 } = s3;
  const c0 = IIR[0] as number;
  const c1 = IIR[1] as number;
  const c2 = IIR[2] as number;
  const c3 = IIR[3] as number;
  const c4 = IIR[4] as number;
  const c5 = IIR[5] as number;
  let u1 = st[0] as number,
    u2 = st[1] as number,
    v1 = st[2] as number,
    v2 = st[3] as number;
  // Allpass section k: previous input e_k, previous output f_k.
  let e0 = st[4] as number,
    f0 = st[5] as number,
    e1 = st[6] as number,
    f1 = st[7] as number,
    e2 = st[8] as number,
    f2 = st[9] as number,
    e3 = st[10] as number,
    f3 = st[11] as number,
    e4 = st[12] as number,
    f4 = st[13] as number,
    e5 = st[14] as number,
    f5 = st[15] as number;
  let odd = st[16] as number;
  let w1 = st[17] as number,
    w2 = st[18] as number,
    z1 = st[19] as number,
    z2 = st[20] as number;
  for (let m = 0; m < count; m++) {
    const i = 2 * (from + m);
    // Even input: low-pass, then branch A₀ (sections 0, 2, 4).
    let a = x[i] as number;
    a = a > 1 ? 1 : a < -1 ? -1 : a;
    let b = p0 * a + u1;
    u1 = p1 * a - pa1 * b + u2;
    u2 = p2 * a - pa2 * b;
    let y = q0 * b + v1;
    v1 = q1 * b - qa1 * y + v2;
    v2 = q2 * b - qa2 * y;
    const g0 = c0 * (y - f0) + e0;
    e0 = y;
    f0 = g0;
    const g2 = c2 * (g0 - f2) + e2;
    e2 = g0;
    f2 = g2;
    const g4 = c4 * (g2 - f4) + e4;
    e4 = g2;
    f4 = g4;
    // The half-band's output (its ½ and the 32768 in r0, r1, r2), then the high-pass at 8 kHz.
    const h = g4 + odd;
    const d = r0 * h + w1;
    w1 = r1 * h - ra1 * d + w2;
    w2 = r2 * h - ra2 * d;
    const o = t0 * d + z1;
    z1 = t1 * d - ta1 * o + z2;
    z2 = t2 * d - ta2 * o;
    // Rounded half up with Math.floor(v + 0.5), as the 16-bit kernels round (see ROUNDING).
    const r = Math.floor(o + 0.5) | 0;
    out[at + m] = table[(r > 32767 ? 32767 : r < -32768 ? -32768 : r) + 32768] as number;
    // Odd input: low-pass, then branch A₁ (sections 1, 3, 5); its output joins the next even one.
    a = x[i + 1] as number;
    a = a > 1 ? 1 : a < -1 ? -1 : a;
    b = p0 * a + u1;
    u1 = p1 * a - pa1 * b + u2;
    u2 = p2 * a - pa2 * b;
    y = q0 * b + v1;
    v1 = q1 * b - qa1 * y + v2;
    v2 = q2 * b - qa2 * y;
    const g1 = c1 * (y - f1) + e1;
    e1 = y;
    f1 = g1;
    const g3 = c3 * (g1 - f3) + e3;
    e3 = g1;
    f3 = g3;
    odd = c5 * (g3 - f5) + e5;
    e5 = g3;
    f5 = odd;
  }
  st[0] = u1;
  st[1] = u2;
  st[2] = v1;
  st[3] = v2;
  st[4] = e0;
  st[5] = f0;
  st[6] = e1;
  st[7] = f1;
  st[8] = e2;
  st[9] = f2;
  st[10] = e3;
  st[11] = f3;
  st[12] = e4;
  st[13] = f4;
  st[14] = e5;
  st[15] = f5;
  st[16] = odd;
  st[17] = w1;
  st[18] = w2;
  st[19] = z1;
  st[20] = z2;
}

/**
 * The phone channel's 8 → 16 kHz step with 16-bit quantization fused in: `x` (8 kHz) through the
 * same polyphase IIR half-band as {@link bandPassDecimate2MapInto}, as an interpolator (output
 * 2m is branch A₀ of x[m], output 2m + 1 branch A₁ of x[m]: the zero-stuffed signal through 2·H,
 * unit gain in the passband; x is 0 beyond its end). `pcm` (its length is the output length)
 * gets the 16-bit values `v` (rounded half up, clipped) and `out` (same length; or `null`: not
 * written) the quantized samples `v / 32768`. Images of the 8 kHz band are ≥ 73 dB down from 4.6 kHz. Its
 * impulse response decays by 41 dB in 6 ms and 104 dB in 20 ms (not a finite reach: silence
 * that must be exact is zeroed after it). `x` may be a Float64Array holding float32 values.
 * Returns `false` when no 16-bit value reached `limit` (default 32,767: a value ≥ `limit` or
 * ≤ −`limit` − 1, so by default the int16 limits 32,767 and −32,768), as the quantization checks
 * each value it computes; `true` when one may have (the last pair of an odd-length output counts
 * its dropped sample too): the caller looks through `pcm` only then.
 * @throws RangeError when `pcm` and `out` differ in length, or `limit` is not an integer in [1, 32,767].
 */
export function interpolate2IirQuantize16Into(
  x: Float32Array | Float64Array,
  out: Float32Array | null,
  pcm: Int16Array,
  limit = 32767,
): boolean {
  const length = pcm.length;
  if (out && out.length !== length)
    throw new RangeError(`interpolate2IirQuantize16Into: ${length} PCM slots for ${out.length} samples`);
  if (!Number.isInteger(limit) || limit < 1 || limit > 32767)
    throw new RangeError(`interpolate2IirQuantize16Into: limit ${limit} is not an integer in [1, 32767]`);
  const whole = Math.min(x.length, length >> 1);
  // 12 allpass states, a flag set to 1 once a 16-bit value reached the limit, the limit.
  const st = new Float64Array(14);
  st[13] = limit;
  for (let m = 0; m < whole; m += STATE_BLOCK) {
    interpolateIirPairs(x, out, pcm, st, m, Math.min(whole, m + STATE_BLOCK));
    flushTinyStates(st, 12);
  }
  // Past the whole pairs: x runs out (zeros) or the output has an odd last sample.
  for (let m = whole; 2 * m < length; m++) {
    const pair = new Float32Array(2);
    const q = new Int16Array(2);
    interpolateIirPairs(Float64Array.of(m < x.length ? (x[m] as number) : 0), pair, q, st, 0, 1);
    for (let k = 0; k < 2 && 2 * m + k < length; k++) {
      if (out) out[2 * m + k] = pair[k] as number;
      pcm[2 * m + k] = q[k] as number;
    }
  }
  return st[12] === 1;
}

/**
 * Output pairs `[2·from, 2·to)` of {@link interpolate2IirQuantize16Into} from `x[from, to)`,
 * continuing from and updating `st` (12 allpass states, then 1 once a 16-bit value written
 * reached the limit, then the limit); `out` may be `null` (only `pcm` written). Its hot loop in a
 * function of its own, so V8 optimizes it once.
 */
function interpolateIirPairs(
  x: Float32Array | Float64Array,
  out: Float32Array | null,
  pcm: Int16Array,
  st: Float64Array,
  from: number,
  to: number,
): void {
  const c0 = IIR[0] as number;
  const c1 = IIR[1] as number;
  const c2 = IIR[2] as number;
  const c3 = IIR[3] as number;
  const c4 = IIR[4] as number;
  const c5 = IIR[5] as number;
  const inv = INV_32768;
  let e0 = st[0] as number,
    f0 = st[1] as number,
    e1 = st[2] as number,
    f1 = st[3] as number,
    e2 = st[4] as number,
    f2 = st[5] as number,
    e3 = st[6] as number,
    f3 = st[7] as number,
    e4 = st[8] as number,
    f4 = st[9] as number,
    e5 = st[10] as number,
    f5 = st[11] as number;
  let limits = st[12] as number;
  const hi = st[13] as number;
  const lo = -hi - 1;
  for (let m = from; m < to; m++) {
    const v = x[m] as number;
    const g0 = c0 * (v - f0) + e0;
    e0 = v;
    f0 = g0;
    const g2 = c2 * (g0 - f2) + e2;
    e2 = g0;
    f2 = g2;
    const g4 = c4 * (g2 - f4) + e4;
    e4 = g2;
    f4 = g4;
    const g1 = c1 * (v - f1) + e1;
    e1 = v;
    f1 = g1;
    const g3 = c3 * (g1 - f3) + e3;
    e3 = g1;
    f3 = g3;
    const g5 = c5 * (g3 - f5) + e5;
    e5 = g3;
    f5 = g5;
    // Noting a value at the limit, clipped to 16 bits: rarely true, so the branch predicts well
    // (a running min and max did not: their compares are random).
    let q0 = Math.floor(g4 * 32768 + 0.5) | 0;
    if (q0 >= hi || q0 <= lo) {
      q0 = q0 > 32767 ? 32767 : q0 < -32768 ? -32768 : q0;
      limits = 1;
    }
    pcm[2 * m] = q0;
    let q1 = Math.floor(g5 * 32768 + 0.5) | 0;
    if (q1 >= hi || q1 <= lo) {
      q1 = q1 > 32767 ? 32767 : q1 < -32768 ? -32768 : q1;
      limits = 1;
    }
    pcm[2 * m + 1] = q1;
    if (out !== null) {
      out[2 * m] = q0 * inv;
      out[2 * m + 1] = q1 * inv;
    }
  }
  st[12] = limits;
  st[0] = e0;
  st[1] = f0;
  st[2] = e1;
  st[3] = f1;
  st[4] = e2;
  st[5] = f2;
  st[6] = e3;
  st[7] = f3;
  st[8] = e4;
  st[9] = f4;
  st[10] = e5;
  st[11] = f5;
}

/**
 * Halve the sample rate (e.g. 16 kHz → 8 kHz): low-pass at a quarter of the input rate, keep
 * every other sample. Output length is `ceil(n / 2)`; sample m of the output is at the time of
 * input sample 2m.
 */
export function decimate2(x: Float32Array): Float32Array {
  return decimate2Into(x, new Float32Array((x.length + 1) >> 1));
}

/**
 * {@link interpolate2} into `out` (its length is the output length; `out` must not overlap `x`).
 * Returns `out`.
 */
export function interpolate2Into(x: Float32Array, out: Float32Array): Float32Array {
  // Taps as function locals: module-level consts cost a context load and hole check per use.
  const h0 = T0,
    h1 = T1,
    h2 = T2,
    h3 = T3,
    h4 = T4,
    h5 = T5,
    h6 = T6,
    h7 = T7,
    h8 = T8,
    h9 = T9,
    h10 = T10,
    h11 = T11,
    h12 = T12,
    h13 = T13,
    h14 = T14,
    h15 = T15;
  const length = out.length;
  const nx = x.length;
  // Output pairs (2m, 2m + 1) for m < pairs; x[m] is 0 beyond x's end (padding).
  const pairs = (length + 1) >> 1;
  const taps = ODD.length;
  // Interior: every tap inside x (m − 15 ≥ 0 and m + 16 ≤ nx − 1), and 2m + 1 < length.
  const mLo = Math.min(pairs, taps - 1);
  const mHi = Math.max(mLo, Math.min(nx - taps, length >> 1));
  const edge = (m: number) => {
    out[2 * m] = m < nx ? (x[m] as number) : 0;
    if (2 * m + 1 < length) out[2 * m + 1] = interpolateAt(x, m);
  };
  for (let m = 0; m < mLo; m++) edge(m);
  if (UNROLLED) {
    for (let m = mLo; m < mHi; m++) {
      out[2 * m] = x[m] as number;
      let a0 = h0 * ((x[m - 0] as number) + (x[m + 1] as number));
      let a1 = h1 * ((x[m - 1] as number) + (x[m + 2] as number));
      let a2 = h2 * ((x[m - 2] as number) + (x[m + 3] as number));
      let a3 = h3 * ((x[m - 3] as number) + (x[m + 4] as number));
      a0 += h4 * ((x[m - 4] as number) + (x[m + 5] as number));
      a1 += h5 * ((x[m - 5] as number) + (x[m + 6] as number));
      a2 += h6 * ((x[m - 6] as number) + (x[m + 7] as number));
      a3 += h7 * ((x[m - 7] as number) + (x[m + 8] as number));
      a0 += h8 * ((x[m - 8] as number) + (x[m + 9] as number));
      a1 += h9 * ((x[m - 9] as number) + (x[m + 10] as number));
      a2 += h10 * ((x[m - 10] as number) + (x[m + 11] as number));
      a3 += h11 * ((x[m - 11] as number) + (x[m + 12] as number));
      a0 += h12 * ((x[m - 12] as number) + (x[m + 13] as number));
      a1 += h13 * ((x[m - 13] as number) + (x[m + 14] as number));
      a2 += h14 * ((x[m - 14] as number) + (x[m + 15] as number));
      a3 += h15 * ((x[m - 15] as number) + (x[m + 16] as number));
      const acc = a0 + a1 + (a2 + a3);
      out[2 * m + 1] = 2 * acc;
    }
  } else {
    for (let m = mLo; m < mHi; m++) edge(m);
  }
  for (let m = mHi; m < pairs; m++) edge(m);
  return out;
}

/**
 * Double the sample rate (e.g. 8 kHz → 16 kHz): zero-stuff and low-pass with the same half-band
 * filter (gain 2). Input samples pass through unchanged at even output positions.
 * `length` is the output length (default `2 · x.length`), so a {@link decimate2} →
 * `interpolate2(y, n)` round trip restores an odd length `n` too.
 */
export function interpolate2(x: Float32Array, length = 2 * x.length): Float32Array {
  return interpolate2Into(x, new Float32Array(length));
}

/** Half-width of the {@link resampleRate} kernel in input samples (at the lower of the two rates): 32 → 64 taps. */
export const SINC_HALF_WIDTH = 32;
/** Kaiser window β of {@link resampleRate}: 8 (≈ 80 dB stopband). */
export const SINC_KAISER_BETA = 8;

/** Modified Bessel function of the first kind, order 0 (power series; enough terms for β ≤ 20). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-16) break;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

const kernels = new Map<string, { L: number; M: number; half: number; table: Float32Array }>();

/**
 * Polyphase table for `fromHz → toHz`: L = to/g phases (g = gcd), each `2·half` taps of a
 * Kaiser-windowed sinc low-pass whose −6 dB point sits half a transition band (≈ 0.078 of the
 * lower rate, from the Kaiser design formula for 80 dB over 64 taps) below the lower Nyquist
 * frequency, scaled for unit DC gain per phase.
 */
function kernel(fromHz: number, toHz: number) {
  const key = `${fromHz}:${toHz}`;
  const hit = kernels.get(key);
  if (hit) return hit;
  const g = gcd(fromHz, toHz);
  const L = toHz / g;
  const M = fromHz / g;
  // Downsampling stretches the kernel over more input samples (the cutoff is the output's Nyquist).
  const stretch = Math.max(1, M / L);
  const half = Math.ceil(SINC_HALF_WIDTH * stretch);
  const nyquist = 0.5 / stretch; // cycles per input sample
  const fc = nyquist - 0.039 / stretch;
  const table = new Float32Array(L * 2 * half);
  const i0b = besselI0(SINC_KAISER_BETA);
  for (let phase = 0; phase < L; phase++) {
    const frac = phase / L;
    let sum = 0;
    for (let j = 0; j < 2 * half; j++) {
      const t = j - half + 1 - frac; // distance of input sample (base + j − half + 1) from the output time
      const x = 2 * fc * t;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const r = t / half;
      const w = Math.abs(r) >= 1 ? 0 : besselI0(SINC_KAISER_BETA * Math.sqrt(1 - r * r)) / i0b;
      const v = sinc * w;
      table[phase * 2 * half + j] = v;
      sum += v;
    }
    for (let j = 0; j < 2 * half; j++) table[phase * 2 * half + j] = (table[phase * 2 * half + j] as number) / sum;
  }
  const k = { L, M, half, table };
  kernels.set(key, k);
  return k;
}

/**
 * Resample between any two integer rates (e.g. a TTS engine's 22 050 Hz → 16 kHz) with a
 * polyphase Kaiser-windowed sinc (64 taps at the lower rate, ≈ 80 dB stopband). Output sample m
 * is at input time m·from/to; the output has `round(n·to/from)` samples. About 100× faster
 * than wavefile's sinc resampler, which it replaced in {@link resample}.
 */
export function resampleRate(x: Float32Array, fromHz: number, toHz: number): Float32Array {
  if (!Number.isInteger(fromHz) || !Number.isInteger(toHz) || fromHz <= 0 || toHz <= 0)
    throw new RangeError(`rates must be positive integers, got ${fromHz} → ${toHz}`);
  if (fromHz === toHz) return x.slice();
  const { L, M, half, table } = kernel(fromHz, toHz);
  const taps = 2 * half;
  const p = padded(x, taps);
  const out = new Float32Array(Math.round((x.length * toHz) / fromHz));
  for (let m = 0; m < out.length; m++) {
    const pos = m * M;
    const base = Math.floor(pos / L);
    const phase = pos - base * L;
    const row = phase * taps;
    const start = taps + base - half + 1;
    let acc = 0;
    for (let j = 0; j < taps; j++) acc += (table[row + j] as number) * (p[start + j] as number);
    out[m] = acc;
  }
  return out;
}

// Warm the hot kernels on a short signal at load: every statement then has type feedback
// before V8 first optimizes them, which happens mid-loop (OSR) on the first real 10 s turn;
// without it the OSR code lacks feedback for the code after the loop and deopts there on every
// later call (measured: 121 deopts in 700 turns, the kernels running at a fraction of speed).
{
  const x = new Float32Array(256);
  for (let i = 0; i < x.length; i++) x[i] = Math.sin(i);
  const table = new Float32Array(65536);
  const passThrough = { b0: 1, b1: 0, b2: 0, a1: 0, a2: 0 };
  const narrow = bandPassDecimate2MapInto(
    x,
    { lowPass: [passThrough, passThrough], highPass: [passThrough, passThrough] },
    new Float64Array(128),
    table,
  );
  interpolate2IirQuantize16Into(narrow, x, new Int16Array(256));
  const narrow32 = new Float32Array(narrow);
  interpolate2Into(narrow32, x);
  decimate2Into(x, narrow32);
}
