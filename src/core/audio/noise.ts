/**
 * Procedural noise (no files needed): white, pink, brown, wind and babble, plus helpers to fit
 * a noise recording to a length. Every generator takes a seeded {@link Rng} and returns unit-RMS
 * samples, so the mixer sets the level from the SNR alone.
 */
import { rngFromState, type Rng } from '../ports/rng.ts';
import { rms } from './measure.ts';

/** Kinds of procedural background noise. */
export type NoiseKind = 'white' | 'pink' | 'brown' | 'wind';

/** Scale `x` in place to the given RMS (no-op on silence). Returns `x`. */
export function normalizeRms(x: Float32Array, target = 1): Float32Array {
  const r = rms(x);
  if (r > 0) {
    const g = target / r;
    for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) * g;
  }
  return x;
}

/**
 * A generator's raw output, before centring and scaling: `x` is a scratch buffer reused by the
 * next generator call (read it at once), with the moments that make it unit RMS.
 */
export interface RawNoise {
  /** `n` raw samples (float64). */
  x: Float64Array;
  /** Mean of `x`. */
  mean: number;
  /** RMS of `x − mean` (0 for silence). */
  rms: number;
  /** Mean power of the uniform white source `x` was filtered from (1/3 in expectation). */
  whitePower: number;
}

let rawScratch = new Float64Array(0);
let whiteScratch = new Float64Array(0);

/** The raw scratch buffer, `n` samples long (grown on demand; the generators are synchronous). */
function rawBuffer(n: number): Float64Array {
  if (rawScratch.length < n) rawScratch = new Float64Array(n);
  return rawScratch.length === n ? rawScratch : rawScratch.subarray(0, n);
}

/**
 * The generators' white source: uniform samples in [−1, 1), seeded by one draw of `rng`, from a
 * 32-bit linear congruential generator (multiplier 1664525, increment 1013904223: the constants
 * of the "quick and dirty" generator in Press et al., *Numerical Recipes*), its whole state read
 * as a signed fraction. Written out in each kernel's loop: one multiply and one add per sample,
 * a fifth of the work of the mulberry32 mixer {@link rngFromState} uses (which cost more than
 * the noise filters themselves). Its weak low bits sit below 2^−24 of a sample, under float32
 * resolution; different seeds start at different points of its 2^32-sample period (74 hours at
 * 16 kHz), so turns do not share noise.
 */
const LCG_A = 1664525;
const LCG_C = 1013904223;
/** 2^−31: the LCG's signed 32-bit state to [−1, 1). */
const UNIFORM_SCALE = 1 / 2147483648;

/**
 * Block length of the generator kernels: 4096 samples. Each kernel runs over one block and keeps
 * its state in a small array between blocks, so V8 optimizes it as a function called many times
 * (a single loop over the whole turn was compiled on stack replacement, and how fast that code
 * was varied by a factor of four from one process to the next).
 */
const BLOCK = 4096;

/**
 * Kernel state: [LCG state, Σ y, Σ y², Σ v², filter states …] of the output y and the white
 * source v so far.
 */
type KernelState = Float64Array;

function rawFromState(x: Float64Array, st: KernelState): RawNoise {
  const n = x.length || 1;
  const mean = (st[1] as number) / n;
  return {
    x,
    mean,
    rms: Math.sqrt(Math.max(0, (st[2] as number) / n - mean * mean)),
    whitePower: (st[3] as number) / n,
  };
}

/** A kernel over `x[from, to)` with its state. */
type Kernel = (x: Float64Array, from: number, to: number, st: KernelState) => void;

/** Run `kernel` over `x` block by block, from and into the state `st`. Returns `st`. */
function runKernel(x: Float64Array, st: KernelState, kernel: Kernel): KernelState {
  for (let from = 0; from < x.length; from += BLOCK) kernel(x, from, Math.min(x.length, from + BLOCK), st);
  return st;
}

/** A fresh kernel state of `size` values, its LCG seeded with `seed`. */
function seeded(seed: number, size: number): KernelState {
  const st = new Float64Array(size);
  st[0] = seed | 0;
  return st;
}

function whiteKernel(x: Float64Array, from: number, to: number, st: KernelState): void {
  const lcgA = LCG_A;
  const lcgC = LCG_C;
  const scale = UNIFORM_SCALE;
  let s = (st[0] as number) | 0;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  for (let i = from; i < to; i++) {
    s = (Math.imul(s, lcgA) + lcgC) | 0;
    const v = s * scale;
    x[i] = v;
    sum += v;
    sumSq += v * v;
  }
  st[0] = s;
  st[1] = sum;
  st[2] = sumSq;
  st[3] = sumSq;
}

/** Raw white noise: independent uniform samples (flat spectrum). */
export function whiteRaw(n: number, rng: Rng): RawNoise {
  const x = rawBuffer(n);
  return rawFromState(x, runKernel(x, seeded(rng.int(2 ** 32), 4), whiteKernel));
}

/**
 * `raw` centred and scaled to RMS `level` (default 1), into `out` (same length; a new
 * Float32Array by default). Silence stays silence. Returns `out`.
 */
export function unitRms(raw: RawNoise, level = 1, out: Float32Array = new Float32Array(raw.x.length)): Float32Array {
  const { x, mean } = raw;
  const g = unitRmsGain(raw, level);
  if (out.length !== x.length) throw new RangeError(`unitRms: ${out.length} slots for ${x.length} samples`);
  for (let i = 0; i < x.length; i++) out[i] = ((x[i] as number) - mean) * g;
  return out;
}

/** The gain {@link unitRms} puts on `raw`'s centred samples for RMS `level`: level / RMS, 0 for silence. */
export function unitRmsGain(raw: RawNoise, level = 1): number {
  return raw.rms > 0 ? level / raw.rms : 0;
}

/** White noise: independent uniform samples (flat spectrum), zero mean, unit RMS. */
export function whiteNoise(n: number, rng: Rng): Float32Array {
  return unitRms(whiteRaw(n, rng));
}

/** One-pole low-pass coefficient for a corner frequency (Hz) at a sample rate (Hz). */
function onePole(cornerHz: number, rateHz: number): number {
  return Math.exp((-2 * Math.PI * cornerHz) / rateHz);
}

/**
 * Corner frequencies of the pink-noise sections: one per octave from 40 Hz (Hz). Below the
 * lowest corner the spectrum is flat (far below the 300 Hz telephony band edge).
 */
const PINK_CORNERS_HZ = [40, 80, 160, 320, 640, 1280, 2560, 5120, 10240];

/** Poles and weights of the pink sections below Nyquist at `rateHz` (see {@link pinkRaw}). */
export function pinkSections(rateHz: number): { poles: Float64Array; weights: Float64Array } {
  const corners = PINK_CORNERS_HZ.filter((c) => c < rateHz / 2);
  const poles = Float64Array.from(corners, (c) => onePole(c, rateHz));
  const weights = Float64Array.from(corners, (c, i) => (1 - (poles[i] as number)) / Math.sqrt(c));
  return { poles, weights };
}

/**
 * Raw pink noise (power ∝ 1/f, −3 dB per octave, equal energy per octave): a sum of one-pole
 * low-passed copies of one white source, with corners one octave apart and amplitude weights
 * ∝ 1/√corner. A sum of relaxation spectra with log-uniform corners integrates to 1/f between
 * the lowest and highest corner. Five to eight sections (eight at 16 kHz) run in one pass
 * ({@link pinkEightKernel}); more run four per pass, the first pass drawing the white source and
 * keeping it for the others.
 */
export function pinkRaw(n: number, rateHz: number, rng: Rng): RawNoise {
  const { poles, weights } = pinkSections(rateHz);
  const k = poles.length;
  const x = rawBuffer(n);
  if (k > 4 && k <= 8) return pinkEight(x, poles, weights, rng);
  if (whiteScratch.length < n) whiteScratch = new Float64Array(n);
  const white = whiteScratch;
  // [LCG, Σ y, Σ y², Σ v², 4 filter states, 4 poles, 4 weights]; sections past the last have
  // weight 0. The moments of y are those of the last pass (the whole sum).
  const st = seeded(rng.int(2 ** 32), 16);
  for (let j = 0; j < Math.max(1, k); j += 4) {
    st.fill(0, 1, 3);
    st.fill(0, 4, 8);
    for (let d = 0; d < 4; d++) {
      st[8 + d] = j + d < k ? (poles[j + d] as number) : 0;
      st[12 + d] = j + d < k ? (weights[j + d] as number) : 0;
    }
    for (let from = 0; from < n; from += BLOCK) {
      const to = Math.min(n, from + BLOCK);
      if (j === 0) pinkFirstKernel(x, white, from, to, st);
      else pinkMoreKernel(x, white, from, to, st);
    }
  }
  return rawFromState(x, st);
}

/**
 * {@link pinkRaw} with five to eight sections (eight at 16 kHz) in one pass ({@link pinkEightKernel}),
 * sections past the last with weight 0 as the two passes pad them: the same samples and moments.
 */
function pinkEight(x: Float64Array, poles: Float64Array, weights: Float64Array, rng: Rng): RawNoise {
  // [LCG, Σ y, Σ y², Σ v², 8 filter states, 8 poles, 8 weights]
  const st = seeded(rng.int(2 ** 32), 28);
  st.set(poles, 12);
  st.set(weights, 20);
  return rawFromState(x, runKernel(x, st, pinkEightKernel));
}

/**
 * Eight pink sections over [from, to) in one pass (a deliberate fused hot loop): the white source
 * v drawn as in {@link pinkFirstKernel}, each section a_k = p_k·a_k + w_k·v, and
 * y = (a₀ + a₁ + a₂ + a₃) + (a₄ + a₅ + a₆ + a₇), the sum the first pass writes plus the sum the
 * second adds, in their order, so y equals the two-pass output exactly; Σ y, Σ y² and Σ v² as
 * they keep them. One pass writes y once instead of writing the white source and y, then reading
 * both back (10 s at 16 kHz: 0.93 → 0.76 ms CPU in-process under load; the spills of its eight
 * states cost less than the second pass).
 */
function pinkEightKernel(x: Float64Array, from: number, to: number, st: KernelState): void {
  const lcgA = LCG_A;
  const lcgC = LCG_C;
  const scale = UNIFORM_SCALE;
  const p0 = st[12] as number;
  const p1 = st[13] as number;
  const p2 = st[14] as number;
  const p3 = st[15] as number;
  const p4 = st[16] as number;
  const p5 = st[17] as number;
  const p6 = st[18] as number;
  const p7 = st[19] as number;
  const w0 = st[20] as number;
  const w1 = st[21] as number;
  const w2 = st[22] as number;
  const w3 = st[23] as number;
  const w4 = st[24] as number;
  const w5 = st[25] as number;
  const w6 = st[26] as number;
  const w7 = st[27] as number;
  let s = (st[0] as number) | 0;
  let a0 = st[4] as number;
  let a1 = st[5] as number;
  let a2 = st[6] as number;
  let a3 = st[7] as number;
  let a4 = st[8] as number;
  let a5 = st[9] as number;
  let a6 = st[10] as number;
  let a7 = st[11] as number;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  let whiteSq = st[3] as number;
  for (let i = from; i < to; i++) {
    s = (Math.imul(s, lcgA) + lcgC) | 0;
    const v = s * scale;
    whiteSq += v * v;
    a0 = p0 * a0 + w0 * v;
    a1 = p1 * a1 + w1 * v;
    a2 = p2 * a2 + w2 * v;
    a3 = p3 * a3 + w3 * v;
    a4 = p4 * a4 + w4 * v;
    a5 = p5 * a5 + w5 * v;
    a6 = p6 * a6 + w6 * v;
    a7 = p7 * a7 + w7 * v;
    const y = a0 + a1 + a2 + a3 + (a4 + a5 + a6 + a7);
    x[i] = y;
    sum += y;
    sumSq += y * y;
  }
  st[0] = s;
  st[1] = sum;
  st[2] = sumSq;
  st[3] = whiteSq;
  st[4] = a0;
  st[5] = a1;
  st[6] = a2;
  st[7] = a3;
  st[8] = a4;
  st[9] = a5;
  st[10] = a6;
  st[11] = a7;
}

/** Pink's first pass over [from, to): draws the white source into `white`, four sections into `x`. */
function pinkFirstKernel(x: Float64Array, white: Float64Array, from: number, to: number, st: KernelState): void {
  const lcgA = LCG_A;
  const lcgC = LCG_C;
  const scale = UNIFORM_SCALE;
  const p0 = st[8] as number;
  const p1 = st[9] as number;
  const p2 = st[10] as number;
  const p3 = st[11] as number;
  const w0 = st[12] as number;
  const w1 = st[13] as number;
  const w2 = st[14] as number;
  const w3 = st[15] as number;
  let s = (st[0] as number) | 0;
  let a0 = st[4] as number;
  let a1 = st[5] as number;
  let a2 = st[6] as number;
  let a3 = st[7] as number;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  let whiteSq = st[3] as number;
  for (let i = from; i < to; i++) {
    s = (Math.imul(s, lcgA) + lcgC) | 0;
    const v = s * scale;
    white[i] = v;
    whiteSq += v * v;
    a0 = p0 * a0 + w0 * v;
    a1 = p1 * a1 + w1 * v;
    a2 = p2 * a2 + w2 * v;
    a3 = p3 * a3 + w3 * v;
    const y = a0 + a1 + a2 + a3;
    x[i] = y;
    sum += y;
    sumSq += y * y;
  }
  st[0] = s;
  st[1] = sum;
  st[2] = sumSq;
  st[3] = whiteSq;
  st[4] = a0;
  st[5] = a1;
  st[6] = a2;
  st[7] = a3;
}

/** Four more pink sections over the kept white source on [from, to), added into `x`. */
function pinkMoreKernel(x: Float64Array, white: Float64Array, from: number, to: number, st: KernelState): void {
  const p0 = st[8] as number;
  const p1 = st[9] as number;
  const p2 = st[10] as number;
  const p3 = st[11] as number;
  const w0 = st[12] as number;
  const w1 = st[13] as number;
  const w2 = st[14] as number;
  const w3 = st[15] as number;
  let a0 = st[4] as number;
  let a1 = st[5] as number;
  let a2 = st[6] as number;
  let a3 = st[7] as number;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  for (let i = from; i < to; i++) {
    const v = white[i] as number;
    a0 = p0 * a0 + w0 * v;
    a1 = p1 * a1 + w1 * v;
    a2 = p2 * a2 + w2 * v;
    a3 = p3 * a3 + w3 * v;
    const y = (x[i] as number) + (a0 + a1 + a2 + a3);
    x[i] = y;
    sum += y;
    sumSq += y * y;
  }
  st[1] = sum;
  st[2] = sumSq;
  st[4] = a0;
  st[5] = a1;
  st[6] = a2;
  st[7] = a3;
}

/** Corner of the brown-noise leaky integrator: 10 Hz (keeps it from wandering off). */
const BROWN_CORNER_HZ = 10;

/** The brown-noise leaky integrator's pole at `rateHz` (see {@link brownRaw}). */
export function brownPole(rateHz: number): number {
  return onePole(BROWN_CORNER_HZ, rateHz);
}

/** Raw brown (red) noise: leaky-integrated white noise, power ∝ 1/f² above 10 Hz (−6 dB per octave). */
export function brownRaw(n: number, rateHz: number, rng: Rng): RawNoise {
  const x = rawBuffer(n);
  // [LCG, Σ y, Σ y², Σ v², state, pole]
  const st = seeded(rng.int(2 ** 32), 6);
  st[5] = brownPole(rateHz);
  return rawFromState(x, runKernel(x, st, brownKernel));
}

function brownKernel(x: Float64Array, from: number, to: number, st: KernelState): void {
  const lcgA = LCG_A;
  const lcgC = LCG_C;
  const scale = UNIFORM_SCALE;
  const p = st[5] as number;
  let s = (st[0] as number) | 0;
  let a = st[4] as number;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  let whiteSq = st[3] as number;
  for (let i = from; i < to; i++) {
    s = (Math.imul(s, lcgA) + lcgC) | 0;
    const v = s * scale;
    a = p * a + v;
    x[i] = a;
    whiteSq += v * v;
    sum += a;
    sumSq += a * a;
  }
  st[0] = s;
  st[1] = sum;
  st[2] = sumSq;
  st[3] = whiteSq;
  st[4] = a;
}

/** Pink noise ({@link pinkRaw}), zero mean, unit RMS. */
export function pinkNoise(n: number, rateHz: number, rng: Rng): Float32Array {
  return unitRms(pinkRaw(n, rateHz, rng));
}

/** Brown noise ({@link brownRaw}), zero mean, unit RMS. */
export function brownNoise(n: number, rateHz: number, rng: Rng): Float32Array {
  return unitRms(brownRaw(n, rateHz, rng));
}

/** Settings of {@link windNoise}. */
export interface WindOptions {
  /** Corner of the rumble low-pass in Hz (default 150 Hz: wind on a mic is mostly below a few hundred Hz). */
  cornerHz?: number;
  /** Mean time between gust peaks in ms (default 800 ms). */
  gustMs?: number;
  /** Gust depth: envelope = floor + (1 - floor)·g², floor = 1 - depth (default 0.9: near-silent lulls). */
  depth?: number;
}

/**
 * Raw wind on the microphone: low-frequency rumble (white noise through two one-pole low-passes)
 * under a gust envelope (smooth random peaks, squared so gusts are short and strong): a high
 * crest factor, so gusts overload the mic's clip stage at low SNR (clipping-prone). The samples go
 * into the shared scratch buffer (see {@link RawNoise}), or into `into` (`n` samples, kept from
 * the next generator call) when given.
 * @throws RangeError when `into` does not have `n` samples.
 */
export function windRaw(
  n: number,
  rateHz: number,
  rng: Rng,
  opts: WindOptions = {},
  into: Float64Array | null = null,
): RawNoise {
  if (into && into.length !== n) throw new RangeError(`windRaw: ${into.length} slots for ${n} samples`);
  const gustSamples = Math.max(1, Math.round(((opts.gustMs ?? 800) * rateHz) / 1000));
  // Gust peaks: two to start, then one per gust; sample i sits at phase (i + 1) mod gustSamples
  // of its gust, so a new gust starts at samples gustSamples − 1, 2·gustSamples − 1, …
  const g0 = rng.next();
  const g1 = rng.next();
  const seed = rng.int(2 ** 32);
  const gusts = new Float64Array(2 + Math.floor(n / gustSamples));
  gusts[0] = g0;
  gusts[1] = g1;
  for (let k = 2; k < gusts.length; k++) gusts[k] = rng.next();
  const fade = gustFade(gustSamples);
  const x = into ?? rawBuffer(n);
  // [LCG, Σ y, Σ y², Σ v², a, b, pole, floor, g0, g1 − g0]
  const st = seeded(seed, 10);
  st[6] = onePole(opts.cornerHz ?? 150, rateHz);
  st[7] = 1 - (opts.depth ?? 0.9);
  // One gust at a time (its envelope's ends are fixed), in blocks of at most BLOCK samples.
  for (let start = 0, phase = 1 % gustSamples, k = phase === 0 ? 1 : 0; start < n; phase = 0, k++) {
    st[8] = gusts[k] as number;
    st[9] = (gusts[k + 1] as number) - (gusts[k] as number);
    const end = Math.min(n, start + gustSamples - phase);
    for (let from = start; from < end; from += BLOCK)
      windKernel(x, fade, from, Math.min(end, from + BLOCK), phase + (from - start), st);
    start = end;
  }
  return rawFromState(x, st);
}

/** {@link gustFade} tables by gust length (read-only once made). */
const gustFades = new Map<number, Float64Array>();

/**
 * The raised-cosine crossfade between gust peaks, `0.5 − 0.5·cos(π·k / gustSamples)` for k in
 * [0, gustSamples): tabulated once per gust length and kept (a turn's 12,800 cosines at 16 kHz
 * cost a fifth of the wind's time when made per turn).
 */
function gustFade(gustSamples: number): Float64Array {
  let fade = gustFades.get(gustSamples);
  if (!fade) {
    fade = new Float64Array(gustSamples);
    for (let k = 0; k < gustSamples; k++) fade[k] = 0.5 - 0.5 * Math.cos((Math.PI * k) / gustSamples);
    // A few gust lengths in practice (one per rate and option); a bound keeps odd callers from growing it.
    if (gustFades.size >= 16) gustFades.clear();
    gustFades.set(gustSamples, fade);
  }
  return fade;
}

/** Wind over [from, to), the first sample at `phase` of the gust's crossfade. */
function windKernel(
  x: Float64Array,
  fade: Float64Array,
  from: number,
  to: number,
  phase: number,
  st: KernelState,
): void {
  const lcgA = LCG_A;
  const lcgC = LCG_C;
  const scale = UNIFORM_SCALE;
  const p = st[6] as number;
  const q = 1 - p;
  const floor = st[7] as number;
  const depth = 1 - floor;
  const g0 = st[8] as number;
  const dg = st[9] as number;
  let s = (st[0] as number) | 0;
  let a = st[4] as number;
  let b = st[5] as number;
  let sum = st[1] as number;
  let sumSq = st[2] as number;
  let whiteSq = st[3] as number;
  for (let i = from, f = phase; i < to; i++, f++) {
    s = (Math.imul(s, lcgA) + lcgC) | 0;
    const v = s * scale;
    a = p * a + q * v;
    b = p * b + q * a;
    const g = g0 + dg * (fade[f] as number);
    const y = b * (floor + depth * g * g);
    x[i] = y;
    whiteSq += v * v;
    sum += y;
    sumSq += y * y;
  }
  st[0] = s;
  st[1] = sum;
  st[2] = sumSq;
  st[3] = whiteSq;
  st[4] = a;
  st[5] = b;
}

/** Wind ({@link windRaw}), zero mean, unit RMS. */
export function windNoise(n: number, rateHz: number, rng: Rng, opts: WindOptions = {}): Float32Array {
  return unitRms(windRaw(n, rateHz, rng, opts));
}

/** The raw samples of one of the procedural kinds, `n` samples at `rateHz` ({@link RawNoise}). */
export function proceduralRaw(kind: NoiseKind, n: number, rateHz: number, rng: Rng): RawNoise {
  switch (kind) {
    case 'white':
      return whiteRaw(n, rng);
    case 'pink':
      return pinkRaw(n, rateHz, rng);
    case 'brown':
      return brownRaw(n, rateHz, rng);
    case 'wind':
      return windRaw(n, rateHz, rng);
  }
}

/** `x` repeated from `offset` until `n` samples (a recording fitted to a turn's length). */
export function loopTo(x: Float32Array, n: number, offset = 0): Float32Array {
  const out = new Float32Array(n);
  if (x.length === 0) return out;
  let pos = offset % x.length;
  let filled = 0;
  while (filled < n) {
    const take = Math.min(n - filled, x.length - pos);
    out.set(x.subarray(pos, pos + take), filled);
    filled += take;
    pos = 0;
  }
  return out;
}

/**
 * Start times (ms) of a Poisson process with `ratePerMin` events per minute over `durationMs`
 * (exponential gaps; tau2-bench's burst default is 1 per minute).
 */
export function poissonTimesMs(durationMs: number, ratePerMin: number, rng: Rng): number[] {
  const times: number[] = [];
  if (!(ratePerMin > 0)) return times;
  const meanGapMs = 60_000 / ratePerMin;
  let t = -Math.log(1 - rng.next()) * meanGapMs;
  while (t < durationMs) {
    times.push(t);
    t += -Math.log(1 - rng.next()) * meanGapMs;
  }
  return times;
}

/** Procedural burst sounds used when no burst recordings are supplied. */
export type ProceduralBurst = 'knock' | 'ring';

/** Length in samples of a {@link proceduralBurst} at `rateHz`: 250 ms for a knock, 1 s for a ring. */
export function proceduralBurstLength(kind: ProceduralBurst, rateHz: number): number {
  return Math.round((kind === 'knock' ? 0.25 : 1) * rateHz);
}

/** {@link knockDecay} tables by rate (read-only once made). */
const knockDecays = new Map<number, Float64Array>();

/**
 * The knock's envelope, `exp(−i / (0.04 · rateHz))` for i in [0, n) (a 40 ms time constant):
 * the same for every knock at a rate, so tabulated once per rate and kept (its 4,000 exponentials
 * at 16 kHz cost more than the rest of the knock).
 */
function knockDecay(rateHz: number, n: number): Float64Array {
  let decay = knockDecays.get(rateHz);
  if (!decay || decay.length !== n) {
    decay = new Float64Array(n);
    for (let i = 0; i < n; i++) decay[i] = Math.exp(-i / (0.04 * rateHz));
    // One or two rates in practice; a bound keeps odd callers from growing it.
    if (knockDecays.size >= 16) knockDecays.clear();
    knockDecays.set(rateHz, decay);
  }
  return decay;
}

/** The ring tone per rate (it draws nothing from the generator): computed once, copied out. */
const rings = new Map<number, Float32Array>();

/**
 * A short procedural burst, unit RMS: `knock` (250 ms of decaying low-passed noise, like
 * something dropped) or `ring` (1 s of a 440 + 480 Hz two-tone, the North American ring tone pair).
 */
export function proceduralBurst(kind: ProceduralBurst, rateHz: number, rng: Rng): Float32Array {
  const n = proceduralBurstLength(kind, rateHz);
  if (kind === 'knock') {
    const out = new Float32Array(n);
    const p = onePole(800, rateHz);
    let s = 0;
    const decay = knockDecay(rateHz, n);
    for (let i = 0; i < n; i++) {
      s = p * s + (1 - p) * (2 * rng.next() - 1);
      out[i] = s * (decay[i] as number);
    }
    return normalizeRms(out);
  }
  let ring = rings.get(rateHz);
  if (!ring) {
    ring = new Float32Array(n);
    const fade = Math.round(0.01 * rateHz);
    for (let i = 0; i < n; i++) {
      const env = Math.min(1, i / fade, (n - 1 - i) / fade);
      ring[i] = env * (Math.sin((2 * Math.PI * 440 * i) / rateHz) + Math.sin((2 * Math.PI * 480 * i) / rateHz));
    }
    normalizeRms(ring);
    rings.set(rateHz, ring);
  }
  return ring.slice();
}

/**
 * Power response |F(e^{jω})|² of the filter a procedural kind applies to its white source, at
 * angular frequency `omega` (radians per sample): 1 for white, |Σ w_k / (1 − p_k e^{−jω})|² for
 * pink ({@link pinkSections}), 1 / |1 − p e^{−jω}|² for brown. `null` for wind, whose gust
 * envelope makes it non-stationary.
 */
export function kindPowerResponse(kind: NoiseKind, rateHz: number): ((omega: number) => number) | null {
  if (kind === 'white') return () => 1;
  if (kind === 'brown') {
    const p = brownPole(rateHz);
    return (w) => 1 / (1 - 2 * p * Math.cos(w) + p * p);
  }
  if (kind === 'pink') {
    const { poles, weights } = pinkSections(rateHz);
    return (w) => {
      const c = Math.cos(w);
      const s = Math.sin(w);
      let re = 0;
      let im = 0;
      for (let k = 0; k < poles.length; k++) {
        // w_k / (1 − p e^{−jω}) = w_k (1 − p cos ω − j p sin ω) / |1 − p e^{−jω}|²
        const p = poles[k] as number;
        const dr = 1 - p * c;
        const di = p * s;
        const g = (weights[k] as number) / (dr * dr + di * di);
        re += g * dr;
        im -= g * di;
      }
      return re * re + im * im;
    };
  }
  return null;
}

// Warm the generator kernels on a short signal at load (as resample.ts warms the telephony
// kernels): every statement then has type feedback before V8 first optimizes them. A kernel's
// first 10 s turn is long enough for V8 to compile its loop on stack replacement (OSR) before
// the code after the loop has ever run; that OSR code then lacked feedback for the state stores
// after the loop and deoptimized there on every later call (measured: brownKernel 1,507 deopts
// in 300 turns of one process, windKernel and the pink kernel tens; the generators ran up to 4×
// slower in such a process). The warm-up draws from its own generator and writes only scratch
// buffers every call overwrites, so no turn's noise depends on it.
{
  const rng = rngFromState(1);
  for (const rate of [16000, 48000]) {
    whiteRaw(256, rng);
    pinkRaw(256, rate, rng);
    brownRaw(256, rate, rng);
    windRaw(256, rate, rng);
    windRaw(256, rate, rng, {}, new Float64Array(256));
  }
}
