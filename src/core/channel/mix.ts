/**
 * The mic's mix for one caller turn: the talker (after far field), the continuous noise at the
 * SNR the agent hears, bursts and wind, summed as WebAudio sums a node's inputs. One plan, two
 * renderings with the same float32 samples: {@link buildChannelGraph}, a WebAudio graph
 * description any `OfflineAudioContext` renders, and {@link mixInto}, the same sum computed in
 * core in one fused pass (what {@link runChannel} uses: no noise or wind buffer, no copies).
 */
import { rngFromState } from '../ports/rng.ts';
import { activeRms, activeRmsFullAndBand } from '../audio/measure.ts';
import { farFieldMix } from '../audio/reverb.ts';
import {
  kindPowerResponse,
  loopTo,
  proceduralBurst,
  proceduralRaw,
  unitRms,
  unitRmsGain,
  windRaw,
  type NoiseKind,
  type ProceduralBurst,
  type RawNoise,
} from '../audio/noise.ts';
import { meanPowerResponse } from '../audio/band-power.ts';
import { biquadCascadeInto, biquadCoefficients, type BiquadCascade4 } from '../audio/biquad.ts';
import { dbToGain, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import { addAt, BUTTERWORTH4_Q, type AudioGraph, type GraphNode } from './graph.ts';
import type { ChannelPlan, SourceRef } from './plan.ts';
import { driftGains, driftRamps, rampsMeanSquare } from './snr-drift.ts';

/** Noise recordings, mono at 16 kHz, by name (e.g. decoded from ../shared/noise or user files). */
export interface NoiseBank {
  continuous?: Readonly<Record<string, Float32Array>>;
  bursts?: Readonly<Record<string, Float32Array>>;
  /** The TTS babble bed of the turn's (language, seed) for the `procedural:babble` source ({@link babbleBed}). */
  babble?: Float32Array;
}

/**
 * Speech level used when the turn is silent: RMS 3000 / 32768 ≈ −21 dBFS (tau2-bench
 * `SNR_SPEECH_REFERENCE_RMS`).
 */
export const REFERENCE_SPEECH_RMS = 3000 / 32768;

/** The telephony band-pass at `rateHz`: 4th-order Butterworth high-pass at `lowHz` and low-pass at `highHz` (cookbook sections). */
export function telephonyBandPass(t: { lowHz: number; highHz: number }, rateHz: number): BiquadCascade4 {
  return [
    biquadCoefficients('highpass', t.lowHz, BUTTERWORTH4_Q[0], rateHz),
    biquadCoefficients('highpass', t.lowHz, BUTTERWORTH4_Q[1], rateHz),
    biquadCoefficients('lowpass', t.highHz, BUTTERWORTH4_Q[0], rateHz),
    biquadCoefficients('lowpass', t.highHz, BUTTERWORTH4_Q[1], rateHz),
  ];
}

/** The levels the mixer measured for one turn (recorded on the `background_noise` event). */
export interface ChannelLevels {
  /**
   * Mean SNR of speech against the drifting noise in the telephony band (full band without
   * telephony), dB: the plan's. For white, pink and brown noise with telephony the noise's level
   * is set from its expected in-band power, so the SNR the agent hears is this within sampling
   * error (see {@link noiseLayer}).
   */
  snrInBandDb: number;
  /** The same mix over the full band (before the telephony band-pass), dB: the figure a full-band mixer would report. */
  snrFullBandDb: number;
}

/** A burst's samples: the bank's recording, or the procedural burst of `seed`. */
function burstSamples(ref: SourceRef, bank: NoiseBank, seed: number): Float32Array {
  const [scheme, name] = ref.split(':') as [string, string];
  if (scheme === 'file') {
    const rec = bank.bursts?.[name];
    if (!rec) throw new Error(`noise bank has no bursts recording "${name}"`);
    return rec;
  }
  return proceduralBurst(name as ProceduralBurst, SPEECH_RATE_HZ, rngFromState(seed));
}

/**
 * The continuous noise of a turn before its level is set: a recording or the babble bed looped
 * from `offset` (share of its length), or procedural noise generated from the plan's seed —
 * every seed has its own noise, of the turn's length — as raw samples ({@link RawNoise}, in a
 * scratch buffer: read before generating more noise).
 */
function continuousNoise(
  ref: SourceRef,
  bank: NoiseBank,
  n: number,
  seed: number,
  offset: number,
): Float32Array | RawNoise {
  const [scheme, name] = ref.split(':') as [string, string];
  if (scheme === 'file') {
    const rec = bank.continuous?.[name];
    if (!rec) throw new Error(`noise bank has no continuous recording "${name}"`);
    return loopTo(rec, n, Math.floor(offset * rec.length));
  }
  if (name === 'babble') {
    if (!bank.babble)
      throw new Error('the plan uses babble noise but the noise bank has no babble bed (see babbleBed)');
    return loopTo(bank.babble, n, Math.floor(offset * bank.babble.length));
  }
  return proceduralRaw(name as NoiseKind, n, SPEECH_RATE_HZ, rngFromState(seed));
}

/**
 * Expected power in the telephony band of a unit-power white source through a procedural kind's
 * filter ({@link kindPowerResponse}, {@link meanPowerResponse}), per (kind, band, rate): `null`
 * for a kind that is not stationary (wind). Cached: the band-pass's response is integrated once.
 */
const bandShares = new Map<string, number | null>();
function kindBandShare(kind: NoiseKind, t: { lowHz: number; highHz: number }, rateHz: number): number | null {
  const key = `${kind}:${t.lowHz}:${t.highHz}:${rateHz}`;
  let share = bandShares.get(key);
  if (share === undefined) {
    const f = kindPowerResponse(kind, rateHz);
    share = f ? meanPowerResponse(f, telephonyBandPass(t, rateHz)) : null;
    bandShares.set(key, share);
  }
  return share;
}

/** Scratch of {@link heardBand}, reused across calls (grown on demand). */
let bandScratch = new Float32Array(0);

/**
 * What the agent hears of a component: `x` filtered to the plan's telephony band (in a scratch
 * buffer, valid until the next call: read it at once), or `x` itself without telephony.
 */
function heardBand(x: Float32Array, plan: ChannelPlan): Float32Array {
  if (!plan.telephony) return x;
  if (bandScratch.length < x.length) bandScratch = new Float32Array(x.length);
  return biquadCascadeInto(x, bandScratch.subarray(0, x.length), telephonyBandPass(plan.telephony, plan.sampleRate));
}

/**
 * Active level ({@link activeRms}) of `x` as the agent hears it: in the plan's telephony band
 * (`band`), and over the full band (`full`), in one pass with telephony.
 */
function heardLevels(x: Float32Array, plan: ChannelPlan): { full: number; band: number } {
  if (!plan.telephony) {
    const full = activeRms(x, plan.sampleRate);
    return { full, band: full };
  }
  return activeRmsFullAndBand(x, plan.sampleRate, telephonyBandPass(plan.telephony, plan.sampleRate));
}

/**
 * Buffers the fused mix builds the far-field speech and (measured) noise in, reused from turn to
 * turn (grown on demand): {@link mixInto} is synchronous and nothing keeps them after it.
 * Saves ~1 MB of garbage per 10 s turn.
 */
const mixScratch = { voice: new Float32Array(0), noise: new Float32Array(0) };

/** The `n`-sample scratch buffer `key` of {@link mixScratch}, or a new array without scratch. */
function mixBuffer(scratch: typeof mixScratch | null, key: keyof typeof mixScratch, n: number): Float32Array {
  if (!scratch) return new Float32Array(n);
  if (scratch[key].length < n) scratch[key] = new Float32Array(n);
  return scratch[key].length === n ? scratch[key] : scratch[key].subarray(0, n);
}

/** The drift gains of a measured noise, in a scratch buffer reused across turns (read at once). */
let driftScratch = new Float32Array(0);

/** The talker as the mic picks it up, and the levels noise, bursts and wind are set against. */
interface Talker {
  /** The speech after far field (a lower direct level plus the room's tail), or the speech itself. */
  voice: Float32Array;
  /** Active level over the full band (0 when nothing is set against it). */
  fullLevel: number;
  /** Active level as the agent hears it (in band with telephony; the reference level for silence; 0 when unused). */
  level: number;
}

/** {@link Talker} of a plan; with `scratch` the far-field speech is in its buffer. */
function talker(speech: Float32Array, plan: ChannelPlan, scratch: typeof mixScratch | null): Talker {
  const ff = plan.farField;
  const voice = ff
    ? farFieldMix(
        speech,
        plan.sampleRate,
        { rt60Ms: ff.rt60Ms, seed: ff.seed },
        dbToGain(ff.gainDb),
        dbToGain(ff.wetDb),
        mixBuffer(scratch, 'voice', plan.length),
      )
    : speech;
  // Measured only when something is set against them.
  const needsLevel = plan.noise !== null || plan.bursts.length > 0;
  if (!needsLevel) return { voice, fullLevel: plan.wind ? activeRms(voice, plan.sampleRate) : 0, level: 0 };
  const { full, band } = heardLevels(voice, plan);
  return { voice, fullLevel: full, level: band || REFERENCE_SPEECH_RMS };
}

/** One burst as the mix adds it: its samples from frame `at`, times `gain`. */
interface BurstLayer {
  samples: Float32Array;
  at: number;
  gain: number;
}

/** The plan's bursts, each at its gain against the in-band speech `level` (by its own in-band active level). */
function burstLayers(plan: ChannelPlan, bank: NoiseBank, level: number): BurstLayer[] {
  return plan.bursts.map((b) => {
    const samples = burstSamples(b.source, bank, b.seed);
    const burstLevel = heardLevels(samples, plan).band || 1;
    // On a sample frame, so the mix stays sums of whole-sample buffers.
    const at = Math.round((b.atMs * plan.sampleRate) / 1000);
    return { samples, at, gain: (level / burstLevel) * dbToGain(-b.snrDb) };
  });
}

/** The wind's gain on its raw samples: unit RMS at the full-band level less its SNR. */
function windGainLevel(plan: ChannelPlan, fullLevel: number): number {
  return (fullLevel || REFERENCE_SPEECH_RMS) * dbToGain(-(plan.wind?.snrDb ?? 0));
}

/**
 * The turn's continuous noise, drifting, at the gain that puts the mean SNR the agent hears at
 * the plan's, before it is rendered:
 *
 * - `ramped`: stationary procedural noise (white, pink, brown) with telephony. The in-band power
 *   is the expected power from the filters' responses ({@link kindBandShare}) times the drift's
 *   mean square ({@link rampsMeanSquare}), which matches the measured power within sampling error
 *   (at most 0.11 dB on 10 s turns and 0.29 dB on 1 s turns over 20 seeds, brown noise the
 *   widest) without a band-pass over the noise (a tenth of the chain's time). Its samples are
 *   `(x[i] − mean) · norm · d(i) · gain` over the raw samples and the drift's ramps, computed
 *   where they are added ({@link rampLayerInto}); `pFull` comes out of that pass.
 * - `samples`: anything else, measured: the noise at unit level and its band-passed copy, both
 *   with the drift; the samples are written at their gain (into `out`).
 */
type NoiseLayer =
  | {
      kind: 'ramped';
      raw: RawNoise;
      ramps: Float64Array;
      /** 1 / RMS of the raw noise (0 for silence). */
      norm: number;
      /** Mean power of the drifting unit noise as the agent hears it, before `gain`. */
      pBand: number;
      gain: number;
    }
  | { kind: 'samples'; samples: Float32Array; pBand: number; pFull: number; gain: number };

/** The {@link NoiseLayer} of the plan's noise against the in-band speech `level`; measured samples go into `out`. */
function noiseLayer(
  plan: ChannelPlan,
  nz: NonNullable<ChannelPlan['noise']>,
  bank: NoiseBank,
  level: number,
  out: Float32Array,
): NoiseLayer {
  const n = plan.length;
  const rate = plan.sampleRate;
  const source = continuousNoise(nz.source, bank, n, nz.seed, nz.offset);
  const kind = nz.source.slice(nz.source.indexOf(':') + 1) as NoiseKind;
  const share = source instanceof Float32Array || !plan.telephony ? null : kindBandShare(kind, plan.telephony, rate);
  if (share !== null && !(source instanceof Float32Array)) {
    const ramps = driftRamps(nz, n, rate);
    const norm = source.rms > 0 ? 1 / source.rms : 0;
    // Unit-RMS noise has band power whitePower · share / rms²; the drift scales it by mean(d²).
    const pBand = source.whitePower * share * norm * norm * rampsMeanSquare(ramps, n);
    const gain = pBand > 0 ? (level * dbToGain(-nz.snrDb)) / Math.sqrt(pBand) : 0;
    return { kind: 'ramped', raw: source, ramps, norm, pBand, gain };
  }
  if (driftScratch.length < n) driftScratch = new Float32Array(n);
  const drift = driftGains(nz, n, rate, driftScratch.subarray(0, n));
  // Measured: the noise at unit level, its band-passed copy, both with the drift.
  const samples = source instanceof Float32Array ? source : unitRms(source, 1, out);
  const band = heardBand(samples, plan);
  let pBand = 0;
  let pFull = 0;
  for (let i = 0; i < n; i++) {
    const d = drift[i] as number;
    const b = (band[i] as number) * d;
    const f = (samples[i] as number) * d;
    pBand += b * b;
    pFull += f * f;
  }
  pBand /= n || 1;
  pFull /= n || 1;
  const gain = pBand > 0 ? (level * dbToGain(-nz.snrDb)) / Math.sqrt(pBand) : 0;
  for (let i = 0; i < n; i++) samples[i] = (samples[i] as number) * (drift[i] as number) * gain;
  return { kind: 'samples', samples, pBand, pFull, gain };
}

/** The levels recorded for a noise layer, from its full-band mean power `pFull` (before its gain). */
function noiseLevels(
  nz: NonNullable<ChannelPlan['noise']>,
  layer: NoiseLayer,
  pFull: number,
  fullLevel: number,
): ChannelLevels {
  return {
    snrInBandDb: layer.pBand > 0 ? nz.snrDb : Number.POSITIVE_INFINITY,
    snrFullBandDb:
      pFull > 0
        ? 20 * Math.log10((fullLevel || REFERENCE_SPEECH_RMS) / (layer.gain * Math.sqrt(pFull)))
        : Number.POSITIVE_INFINITY,
  };
}

/**
 * The mix's last two sums over `[from, to)` inside ramp k of `ramps` ({@link driftRamps}), fused:
 * `out[i] = f32(f32(out[i] + f32(u · gain)) + voice[i])`, where `out` holds the mic's sum so far
 * (wind and bursts, or zeros) and u = (x[i] − mean) · norm · d(i) is the raw noise to unit RMS,
 * drifting (d(i) = at0 + slope · i of the ramp), so `f32(u · gain)` is the noise's float32 sample.
 * Each sum is rounded to float32 as WebAudio sums a node's inputs, in its order (see
 * {@link mixInto}), so the result equals the graph's render. Returns `e` plus Σ u² over the span
 * (the drifting unit noise's energy, added sample by sample: a ramp cut into spans sums as one).
 */
function rampLayerInto(
  x: Float64Array,
  mean: number,
  norm: number,
  gain: number,
  ramps: Float64Array,
  k: number,
  from: number,
  to: number,
  e: number,
  voice: Float32Array,
  out: Float32Array,
): number {
  const fround = Math.fround;
  const at0 = (ramps[k + 2] as number) * norm;
  const slope = (ramps[k + 3] as number) * norm;
  for (let i = from; i < to; i++) {
    const u = ((x[i] as number) - mean) * (at0 + slope * i);
    e += u * u;
    out[i] = fround((out[i] as number) + fround(u * gain)) + (voice[i] as number);
  }
  return e;
}

/** The wind's raw samples and the gain that sets their level ({@link unitRms}: `f32((x[i] − mean) · gain)`). */
interface WindLayer {
  x: Float64Array;
  mean: number;
  gain: number;
}

/**
 * {@link rampLayerInto} where nothing but the wind is in `out` yet (no burst): the wind's float32
 * sample w = f32((wind.x[i] − wind.mean) · wind.gain), as {@link unitRms} writes it, is computed
 * here instead of read, `out[i] = f32(f32(w + f32(u · gain)) + voice[i])`: the same sums in the
 * same order, without a pass that writes the wind first.
 */
function rampWindLayerInto(
  x: Float64Array,
  mean: number,
  norm: number,
  gain: number,
  ramps: Float64Array,
  k: number,
  from: number,
  to: number,
  e: number,
  wind: WindLayer,
  voice: Float32Array,
  out: Float32Array,
): number {
  const fround = Math.fround;
  const at0 = (ramps[k + 2] as number) * norm;
  const slope = (ramps[k + 3] as number) * norm;
  const wx = wind.x;
  const wMean = wind.mean;
  const wGain = wind.gain;
  for (let i = from; i < to; i++) {
    const u = ((x[i] as number) - mean) * (at0 + slope * i);
    e += u * u;
    const w = fround(((wx[i] as number) - wMean) * wGain);
    out[i] = fround(w + fround(u * gain)) + (voice[i] as number);
  }
  return e;
}

/** Sorted, disjoint `[from, to)` sample spans the bursts cover in an `n`-sample turn (their union). */
function burstSpans(bursts: readonly BurstLayer[], n: number): [number, number][] {
  const spans = bursts
    .map((b): [number, number] => [Math.max(0, b.at), Math.min(n, b.at + b.samples.length)])
    .filter(([a, b]) => b > a)
    .sort((p, q) => p[0] - q[0]);
  const union: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = union[union.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else union.push([a, b]);
  }
  return union;
}

/**
 * Build the WebAudio graph of a plan for `speech` (16 kHz, `plan.length` samples): the mic's mix
 * of the (far-field) speech, the noise, bursts and wind, all as buffers and constant gains (the
 * muffled mic, the ADC clip and the telephone network leg run in core after it, {@link runChannel}).
 * Everything the graph needs (noise, reverb) is generated here from the plan's seeds. Rendered,
 * it gives the samples of {@link mixInto}.
 *
 * Levels are set where the agent hears them: the speech level is the active RMS of the speech
 * after far field, and noise and bursts are scaled against it by their own RMS in the telephony
 * band (full band without telephony); the noise's drift is included in its mean power, so the
 * mean SNR over the turn is the plan's. Wind is set against the full-band level (it is a mic
 * overload effect, mostly below the band).
 */
export function buildChannelGraph(speech: Float32Array, plan: ChannelPlan, bank: NoiseBank = {}): AudioGraph {
  checkLength(speech, plan);
  const rate = plan.sampleRate;
  const n = plan.length;
  const { voice, fullLevel, level } = talker(speech, plan, null);
  const nodes: GraphNode[] = [
    { kind: 'buffer', id: 'speech', samples: voice, startS: 0 },
    { kind: 'gain', id: 'mic', gain: 1 },
  ];
  const edges: [string, string][] = [['speech', 'mic']];
  if (plan.noise) {
    const out = new Float32Array(n);
    const layer = noiseLayer(plan, plan.noise, bank, level, out);
    let samples: Float32Array = out;
    if (layer.kind === 'ramped') {
      // The noise alone: its samples added to zeros.
      const { raw, ramps, norm, gain } = layer;
      const silence = new Float32Array(n);
      for (let k = 0; k < ramps.length; k += 4)
        rampLayerInto(raw.x, raw.mean, norm, gain, ramps, k, rampFrom(ramps, k), rampTo(ramps, k), 0, silence, out);
    } else samples = layer.samples;
    nodes.push({ kind: 'buffer', id: 'noise', samples, startS: 0 });
    edges.push(['noise', 'mic']);
  }
  for (const [i, b] of burstLayers(plan, bank, level).entries()) {
    nodes.push(
      { kind: 'buffer', id: `burst${i}`, samples: b.samples, startS: b.at / rate },
      { kind: 'gain', id: `burst${i}_gain`, gain: b.gain },
    );
    edges.push([`burst${i}`, `burst${i}_gain`], [`burst${i}_gain`, 'mic']);
  }
  if (plan.wind) {
    // Unit-RMS wind at its gain against the full-band level, in one pass from the raw samples.
    const samples = unitRms(windRaw(n, rate, rngFromState(plan.wind.seed)), windGainLevel(plan, fullLevel));
    nodes.push({ kind: 'buffer', id: 'wind', samples, startS: 0 });
    edges.push(['wind', 'mic']);
  }
  return { sampleRate: rate, length: n, nodes, edges, output: 'mic' };
}

/** Start of ramp k of `ramps` as an integer (`| 0`: a double loop index costs a conversion check per array access). */
const rampFrom = (ramps: Float64Array, k: number): number => (ramps[k] as number) | 0;
/** End of ramp k of `ramps` as an integer. */
const rampTo = (ramps: Float64Array, k: number): number => (ramps[k + 1] as number) | 0;

/** Raw wind samples kept apart from the generators' shared scratch (the noise is generated after them), reused across turns. */
let windScratch = new Float64Array(0);

function checkLength(speech: Float32Array, plan: ChannelPlan): void {
  if (speech.length !== plan.length)
    throw new RangeError(`speech has ${speech.length} samples, the plan ${plan.length}`);
}

/** The wind's float32 samples into `out[from, to)`, as {@link unitRms} writes them. */
function windInto(wind: WindLayer, out: Float32Array, from: number, to: number): void {
  const { x, mean, gain } = wind;
  for (let i = from; i < to; i++) out[i] = ((x[i] as number) - mean) * gain;
}

/**
 * The mix of {@link buildChannelGraph} computed directly into `out` (`plan.length` samples,
 * overwritten): the same float32 samples as the graph rendered by WebAudio (or by
 * `renderGraphDirect`), which sums a node's inputs from the last connected to the first, rounding
 * each sum to float32: wind, then the bursts from the last, then the noise, then the speech. Wind
 * (its raw samples in a buffer of their own) and bursts go into `out` first; the noise is
 * generated only then and added with the speech in one pass per drift ramp
 * ({@link rampLayerInto}), so no noise buffer is written and nothing is copied. With procedural
 * noise the wind is written first only under the bursts: elsewhere that pass computes it
 * ({@link rampWindLayerInto}, the same float32 sums). Returns the measured levels (null without
 * noise).
 * @throws RangeError when `speech` or `out` does not have `plan.length` samples.
 */
export function mixInto(
  speech: Float32Array,
  plan: ChannelPlan,
  bank: NoiseBank,
  out: Float32Array,
): ChannelLevels | null {
  checkLength(speech, plan);
  const n = plan.length;
  if (out.length !== n) throw new RangeError(`mixInto: ${out.length} output samples for ${n}`);
  const { voice, fullLevel, level } = talker(speech, plan, mixScratch);
  // The wind's raw samples in a buffer of their own (the noise, generated below, reuses the shared one).
  let wind: WindLayer | null = null;
  if (plan.wind) {
    if (windScratch.length < n) windScratch = new Float64Array(n);
    const raw = windRaw(n, plan.sampleRate, rngFromState(plan.wind.seed), {}, windScratch.subarray(0, n));
    wind = { x: raw.x, mean: raw.mean, gain: unitRmsGain(raw, windGainLevel(plan, fullLevel)) };
  }
  const bursts = burstLayers(plan, bank, level);
  const nz = plan.noise;
  const layer = nz ? noiseLayer(plan, nz, bank, level, mixBuffer(mixScratch, 'noise', n)) : null;
  // With ramped noise and wind, the wind is written first only under the bursts; elsewhere the
  // noise pass computes it (rampWindLayerInto). Otherwise the sum starts from zeros (0 + x = x
  // in float32) or from the whole wind, the last input connected.
  const fused = wind !== null && layer?.kind === 'ramped';
  const covered = fused ? burstSpans(bursts, n) : [];
  if (fused) for (const [a, b] of covered) windInto(wind as WindLayer, out, a, b);
  else if (wind) windInto(wind, out, 0, n);
  else out.fill(0);
  for (let k = bursts.length - 1; k >= 0; k--) {
    const b = bursts[k] as BurstLayer;
    addAt(out, b.samples, b.at, Math.fround(b.gain));
  }
  if (!nz || !layer) {
    addAt(out, voice, 0, 1);
    return null;
  }
  if (layer.kind === 'samples') {
    addAt(out, layer.samples, 0, 1);
    addAt(out, voice, 0, 1);
    return noiseLevels(nz, layer, layer.pFull, fullLevel);
  }
  const { raw, ramps, norm, gain } = layer;
  let energy = 0;
  let c = 0;
  for (let k = 0; k < ramps.length; k += 4) {
    const to = rampTo(ramps, k);
    let e = 0;
    for (let i = rampFrom(ramps, k); i < to; ) {
      if (!fused) {
        e = rampLayerInto(raw.x, raw.mean, norm, gain, ramps, k, i, to, e, voice, out);
        break;
      }
      // The covered span at or after i, if any: before it the wind is computed, inside it read.
      while (c < covered.length && (covered[c] as [number, number])[1] <= i) c++;
      const span = covered[c];
      if (span && span[0] <= i) {
        const end = Math.min(to, span[1]);
        e = rampLayerInto(raw.x, raw.mean, norm, gain, ramps, k, i, end, e, voice, out);
        i = end;
      } else {
        const end = Math.min(to, span ? span[0] : to);
        e = rampWindLayerInto(raw.x, raw.mean, norm, gain, ramps, k, i, end, e, wind as WindLayer, voice, out);
        i = end;
      }
    }
    energy += e;
  }
  return noiseLevels(nz, layer, energy / (n || 1), fullLevel);
}
