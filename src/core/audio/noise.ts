/**
 * Procedural noise (no files needed): white, pink, brown, wind and babble, plus helpers to fit
 * a noise recording to a length. Every generator takes a seeded {@link Rng} and returns unit-RMS
 * samples, so the mixer sets the level from the SNR alone.
 */
import type { Rng } from '../ports/rng.ts';
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

let uniformScratch = new Float64Array(0);
let pinkScratch = new Float64Array(0);

/**
 * `n` independent uniform samples in [−1, 1), seeded by one draw of `rng`: the same mulberry32
 * mixer as {@link rngFromState}, inlined in one loop (a generator call per sample cost more than
 * the noise filters themselves). The array is a scratch buffer, valid until the next call.
 */
function uniformNoise(n: number, rng: Rng): Float64Array {
  // A scratch buffer reused across calls (the generators are synchronous and only read it).
  if (uniformScratch.length < n) uniformScratch = new Float64Array(n);
  const out = uniformScratch.length === n ? uniformScratch : uniformScratch.subarray(0, n);
  let s = rng.int(2 ** 32) >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 2147483648 - 1;
  }
  return out;
}

/** White noise: independent uniform samples (flat spectrum), scaled to exactly unit RMS. */
export function whiteNoise(n: number, rng: Rng): Float32Array {
  return normalizeRms(Float32Array.from(uniformNoise(n, rng)));
}

/** One-pole low-pass coefficient for a corner frequency (Hz) at a sample rate (Hz). */
function onePole(cornerHz: number, rateHz: number): number {
  return Math.exp((-2 * Math.PI * cornerHz) / rateHz);
}

/**
 * Corner frequencies of the pink-noise sections: one per octave from 40 Hz (Hz). Below the
 * lowest corner the spectrum is flat (far below the 300 Hz telephony band edge); eight
 * sections are two passes of four.
 */
const PINK_CORNERS_HZ = [40, 80, 160, 320, 640, 1280, 2560, 5120, 10240];

/**
 * Pink noise (power ∝ 1/f, -3 dB per octave, equal energy per octave): a sum of one-pole
 * low-passed copies of one white source, with corners one octave apart and amplitude weights
 * ∝ 1/√corner. A sum of relaxation spectra with log-uniform corners integrates to 1/f between
 * the lowest and highest corner. Unit RMS.
 */
export function pinkNoise(n: number, rateHz: number, rng: Rng): Float32Array {
  const corners = PINK_CORNERS_HZ.filter((c) => c < rateHz / 2);
  const poles = Float64Array.from(corners, (c) => onePole(c, rateHz));
  const weights = Float64Array.from(corners, (c, i) => (1 - (poles[i] as number)) / Math.sqrt(c));
  const out = new Float32Array(n);
  const white = uniformNoise(n, rng);
  // Four sections per pass over the signal, their states in locals (sections past the last are
  // zero-weighted), summed into `white` in place: a tight loop per group of four.
  const k = corners.length;
  if (pinkScratch.length < n) pinkScratch = new Float64Array(n);
  const acc = pinkScratch.length === n ? pinkScratch.fill(0) : pinkScratch.subarray(0, n).fill(0);
  for (let j = 0; j < k; j += 4) {
    const [p0, p1, p2, p3] = [0, 1, 2, 3].map((d) => (j + d < k ? (poles[j + d] as number) : 0));
    const [w0, w1, w2, w3] = [0, 1, 2, 3].map((d) => (j + d < k ? (weights[j + d] as number) : 0));
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let i = 0; i < n; i++) {
      const v = white[i] as number;
      s0 = (p0 as number) * s0 + (w0 as number) * v;
      s1 = (p1 as number) * s1 + (w1 as number) * v;
      s2 = (p2 as number) * s2 + (w2 as number) * v;
      s3 = (p3 as number) * s3 + (w3 as number) * v;
      acc[i] = (acc[i] as number) + s0 + s1 + s2 + s3;
    }
  }
  for (let i = 0; i < n; i++) out[i] = acc[i] as number;
  return normalizeRms(removeMean(out));
}

/** Corner of the brown-noise leaky integrator: 10 Hz (keeps it from wandering off). */
const BROWN_CORNER_HZ = 10;

/** Brown (red) noise: leaky-integrated white noise, power ∝ 1/f² above 10 Hz (-6 dB per octave). Unit RMS. */
export function brownNoise(n: number, rateHz: number, rng: Rng): Float32Array {
  const p = onePole(BROWN_CORNER_HZ, rateHz);
  const out = new Float32Array(n);
  const white = uniformNoise(n, rng);
  let s = 0;
  for (let i = 0; i < n; i++) {
    s = p * s + (white[i] as number);
    out[i] = s;
  }
  return normalizeRms(removeMean(out));
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
 * Wind on the microphone: low-frequency rumble (white noise through two one-pole low-passes)
 * under a gust envelope (smooth random peaks, squared so gusts are short and strong). Unit RMS
 * with a high crest factor, so gusts overload the mic's clip stage at low SNR (clipping-prone).
 */
export function windNoise(n: number, rateHz: number, rng: Rng, opts: WindOptions = {}): Float32Array {
  const p = onePole(opts.cornerHz ?? 150, rateHz);
  const gustSamples = Math.max(1, Math.round(((opts.gustMs ?? 800) * rateHz) / 1000));
  const floor = 1 - (opts.depth ?? 0.9);
  const out = new Float32Array(n);
  let a = 0;
  let b = 0;
  let g0 = rng.next();
  let g1 = rng.next();
  let phase = 0;
  const white = uniformNoise(n, rng);
  // Raised-cosine crossfade between gust peaks, tabulated once per gust length.
  const fade = Float64Array.from({ length: gustSamples }, (_, k) => 0.5 - 0.5 * Math.cos((Math.PI * k) / gustSamples));
  for (let i = 0; i < n; i++) {
    a = p * a + (1 - p) * (white[i] as number);
    b = p * b + (1 - p) * a;
    if (++phase >= gustSamples) {
      phase = 0;
      g0 = g1;
      g1 = rng.next();
    }
    const g = g0 + (g1 - g0) * (fade[phase] as number);
    out[i] = b * (floor + (1 - floor) * g * g);
  }
  return normalizeRms(removeMean(out));
}

/** One of the procedural kinds, `n` samples at `rateHz`, unit RMS. */
export function proceduralNoise(kind: NoiseKind, n: number, rateHz: number, rng: Rng): Float32Array {
  switch (kind) {
    case 'white':
      return whiteNoise(n, rng);
    case 'pink':
      return pinkNoise(n, rateHz, rng);
    case 'brown':
      return brownNoise(n, rateHz, rng);
    case 'wind':
      return windNoise(n, rateHz, rng);
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

function removeMean(x: Float32Array): Float32Array {
  let m = 0;
  for (let i = 0; i < x.length; i++) m += x[i] as number;
  m /= x.length || 1;
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) - m;
  return x;
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

/**
 * A short procedural burst, unit RMS: `knock` (250 ms of decaying low-passed noise, like
 * something dropped) or `ring` (1 s of a 440 + 480 Hz two-tone, the North American ring tone pair).
 */
export function proceduralBurst(kind: ProceduralBurst, rateHz: number, rng: Rng): Float32Array {
  if (kind === 'knock') {
    const n = Math.round(0.25 * rateHz);
    const out = new Float32Array(n);
    const p = onePole(800, rateHz);
    let s = 0;
    for (let i = 0; i < n; i++) {
      s = p * s + (1 - p) * (2 * rng.next() - 1);
      out[i] = s * Math.exp(-i / (0.04 * rateHz));
    }
    return normalizeRms(out);
  }
  const n = Math.round(1 * rateHz);
  const out = new Float32Array(n);
  const fade = Math.round(0.01 * rateHz);
  for (let i = 0; i < n; i++) {
    const env = Math.min(1, i / fade, (n - 1 - i) / fade);
    out[i] = env * (Math.sin((2 * Math.PI * 440 * i) / rateHz) + Math.sin((2 * Math.PI * 480 * i) / rateHz));
  }
  return normalizeRms(out);
}
