/**
 * The phone channel for one caller turn: the mic's mix as a WebAudio graph description (speech
 * after far field, noise, bursts, wind: buffers and constant gains, rendered by a platform
 * {@link GraphRenderer} or computed directly), then core DSP identical on every platform: the
 * muffled mic, the ADC clip, and the telephone network leg (telephony band-pass with headroom,
 * 16 → 8 kHz, G.711 mu-law, Gilbert–Elliott frame drops, 8 → 16 kHz, 16-bit quantization).
 */
import { rngFromState } from '../ports/rng.ts';
import { activeRms } from '../audio/measure.ts';
import { farFieldMix } from '../audio/reverb.ts';
import {
  kindPowerResponse,
  loopTo,
  proceduralBurst,
  proceduralBurstLength,
  proceduralRaw,
  unitRms,
  windRaw,
  type NoiseKind,
  type ProceduralBurst,
  type RawNoise,
} from '../audio/noise.ts';
import { meanPowerResponse } from '../audio/band-power.ts';
import { muLawRoundTripTable } from '../audio/mulaw.ts';
import { biquadCascadeInPlace, biquadCascadeInto, biquadCoefficients, type BiquadCascade4 } from '../audio/biquad.ts';
import { dbToGain, msToSamples, quantize16Into, SPEECH_RATE_HZ, TELEPHONY_RATE_HZ } from '../audio/pcm.ts';
import { bandPassDecimate2MapInto, interpolate2IirQuantize16Into } from '../audio/resample.ts';
import { allocWavPcm16, encodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { BUTTERWORTH4_Q, renderGraphDirect, type AudioGraph, type GraphNode, type GraphRenderer } from './graph.ts';
import type { ChannelPlan, SourceRef } from './plan.ts';
import type { EffectEvent } from './timeline.ts';
import { driftGains, driftRamps, driftSnrDb, rampsMeanSquare } from './snr-drift.ts';

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

/** The degraded turn. */
export interface ChannelOutput {
  /**
   * 16 kHz mono samples, already quantized to 16 bits (exactly what the WAV holds). For a
   * pass-through plan this is the input speech itself: read it, do not write to it.
   */
  samples: Float32Array;
  /** 16 kHz mono 16-bit WAV. */
  wav: Uint8Array;
  timeline: EffectEvent[];
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

export { driftSnrDb };

/**
 * Headroom of the telephony leg: the band-passed signal is scaled by 0.9 before the codec
 * (tau2-bench `TELEPHONY_HEADROOM`). A turn whose 8 → 16 kHz step still reaches the int16 limits
 * is scaled back to peak at this headroom ({@link channelTail}).
 */
export const TELEPHONY_HEADROOM = 0.9;

/**
 * Scale of the run that finds a turn's peak when its 8 → 16 kHz step reached the int16 limits:
 * ¼. That run cannot clip: the interpolator's two branch impulse responses have L1 norms of
 * 2.98 and 3.72 (measured in test/audio/degraded-headroom.test.ts) and its input, mu-law decoded,
 * is at most 32,124 / 32,768 = 0.980 FS, so its output at ¼ scale stays under 0.92 FS. A power of
 * two scales every step of the filter exactly in floating point.
 */
const PEAK_PROBE_SCALE = 0.25;

/** Whether a 16-bit sample sits at an int16 limit (32,767 or −32,768). */
function atInt16Limits(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i] as number;
    if (v === 32767 || v === -32768) return true;
  }
  return false;
}

/** Largest |v| of 16-bit samples. */
function int16Peak(pcm: Int16Array): number {
  let peak = 0;
  for (let i = 0; i < pcm.length; i++) {
    const v = Math.abs(pcm[i] as number);
    if (v > peak) peak = v;
  }
  return peak;
}

/** The telephony band-pass at `rateHz`: 4th-order Butterworth high-pass at `lowHz` and low-pass at `highHz` (cookbook sections). */
export function telephonyBandPass(t: { lowHz: number; highHz: number }, rateHz: number): BiquadCascade4 {
  return [
    biquadCoefficients('highpass', t.lowHz, BUTTERWORTH4_Q[0], rateHz),
    biquadCoefficients('highpass', t.lowHz, BUTTERWORTH4_Q[1], rateHz),
    biquadCoefficients('lowpass', t.highHz, BUTTERWORTH4_Q[0], rateHz),
    biquadCoefficients('lowpass', t.highHz, BUTTERWORTH4_Q[1], rateHz),
  ];
}

/**
 * The muffled mic's low-pass: the 4th-order Butterworth sections twice, the magnitude of tau2's
 * zero-phase `filtfilt(butter(4))` (|H|², −6 dB at the cutoff).
 */
export function muffleLowPass(cutoffHz: number, rateHz: number): BiquadCascade4 {
  const a = biquadCoefficients('lowpass', cutoffHz, BUTTERWORTH4_Q[0], rateHz);
  const b = biquadCoefficients('lowpass', cutoffHz, BUTTERWORTH4_Q[1], rateHz);
  return [a, b, a, b];
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

/** The levels the mixer measured for one turn (recorded on the `background_noise` event). */
export interface ChannelLevels {
  /**
   * Mean SNR of speech against the drifting noise in the telephony band (full band without
   * telephony), dB: the plan's. For white, pink and brown noise with telephony the noise's level
   * is set from its expected in-band power, so the SNR the agent hears is this within sampling
   * error (see {@link levelledNoise}).
   */
  snrInBandDb: number;
  /** The same mix over the full band (before the telephony band-pass), dB: the figure a full-band mixer would report. */
  snrFullBandDb: number;
}

/** The mix of one turn: its graph and the measured levels (null without noise). */
interface ChannelMix {
  graph: AudioGraph;
  levels: ChannelLevels | null;
}

/**
 * Build the WebAudio graph of a plan for `speech` (16 kHz, `plan.length` samples): the mic's mix
 * of the (far-field) speech, the noise, bursts and wind, all as buffers and constant gains (the
 * muffled mic, the ADC clip and the telephone network leg run in core after it, {@link runChannel}).
 * Everything the graph needs (noise, reverb) is generated here from the plan's seeds.
 *
 * Levels are set where the agent hears them: the speech level is the active RMS of the speech
 * after far field, and noise and bursts are scaled against it by their own RMS in the telephony
 * band (full band without telephony); the noise's drift is included in its mean power, so the
 * mean SNR over the turn is the plan's. Wind is set against the full-band level (it is a mic
 * overload effect, mostly below the band).
 */
export function buildChannelGraph(speech: Float32Array, plan: ChannelPlan, bank: NoiseBank = {}): AudioGraph {
  return channelMix(speech, plan, bank, null).graph;
}

/**
 * Buffers the mix of {@link runChannel} builds its far-field speech, noise and wind in, reused
 * from turn to turn (grown on demand): its graph is rendered at once, synchronously, and nothing
 * keeps them after (the rendered output is a new array). Saves ~2 MB of garbage per 10 s turn.
 */
const mixScratch = { voice: new Float32Array(0), noise: new Float32Array(0), wind: new Float32Array(0) };

/** The `n`-sample scratch buffer `key` of {@link mixScratch}, or a new array without scratch. */
function mixBuffer(scratch: typeof mixScratch | null, key: keyof typeof mixScratch, n: number): Float32Array {
  if (!scratch) return new Float32Array(n);
  if (scratch[key].length < n) scratch[key] = new Float32Array(n);
  return scratch[key].length === n ? scratch[key] : scratch[key].subarray(0, n);
}

/** The drift gains of a measured noise, in a scratch buffer reused across turns (read at once). */
let driftScratch = new Float32Array(0);

/** The turn's noise at its level, and the mean powers (before `gain`) that set it. */
interface LevelledNoise {
  /** The noise as the mic picks it up: drifting, at its gain. */
  samples: Float32Array;
  /** Mean power of the drifting noise as the agent hears it (in band with telephony), before `gain`. */
  pBand: number;
  /** The same over the full band. */
  pFull: number;
  /** Gain applied so that the mean SNR against `level` in band is the plan's. */
  gain: number;
}

/**
 * The turn's continuous noise, drifting, at the gain that puts the mean SNR the agent hears at
 * the plan's (generated noise written into `out`, `plan.length` samples). The in-band power is measured on the band-passed noise, except for stationary
 * procedural noise (white, pink, brown) with telephony: there it is the expected power from the
 * filters' responses ({@link kindBandShare}) times the drift's mean square, which matches the
 * measured power within sampling error (at most 0.11 dB on 10 s turns and 0.29 dB on 1 s turns
 * over 20 seeds, brown noise the widest) without a band-pass over the noise (a tenth of the
 * chain's time).
 */
function levelledNoise(
  plan: ChannelPlan,
  nz: NonNullable<ChannelPlan['noise']>,
  bank: NoiseBank,
  level: number,
  out: Float32Array,
): LevelledNoise {
  const n = plan.length;
  const rate = plan.sampleRate;
  const source = continuousNoise(nz.source, bank, n, nz.seed, nz.offset);
  const kind = nz.source.slice(nz.source.indexOf(':') + 1) as NoiseKind;
  const share = source instanceof Float32Array || !plan.telephony ? null : kindBandShare(kind, plan.telephony, rate);
  if (share !== null && !(source instanceof Float32Array)) {
    const raw = source;
    const ramps = driftRamps(nz, n, rate);
    const norm = raw.rms > 0 ? 1 / raw.rms : 0;
    // Unit-RMS noise has band power whitePower · share / rms²; the drift scales it by mean(d²).
    const pBand = raw.whitePower * share * norm * norm * rampsMeanSquare(ramps, n);
    const gain = pBand > 0 ? (level * dbToGain(-nz.snrDb)) / Math.sqrt(pBand) : 0;
    const samples = out;
    let energy = 0;
    for (let k = 0; k < ramps.length; k += 4) energy += driftScaleInto(raw.x, raw.mean, norm, gain, ramps, k, samples);
    return { samples, pBand, pFull: energy / (n || 1), gain };
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
  return { samples, pBand, pFull, gain };
}

/**
 * Over ramp k of `ramps` ({@link driftRamps}): `out[i] = (x[i] − mean) · norm · d(i) · gain`
 * (raw noise to unit RMS, drifting, at its gain); returns Σ ((x[i] − mean) · norm · d(i))², the
 * drifting unit noise's energy over the ramp.
 */
function driftScaleInto(
  x: Float64Array,
  mean: number,
  norm: number,
  gain: number,
  ramps: Float64Array,
  k: number,
  out: Float32Array,
): number {
  const to = ramps[k + 1] as number;
  const at0 = (ramps[k + 2] as number) * norm;
  const slope = (ramps[k + 3] as number) * norm;
  let e = 0;
  for (let i = ramps[k] as number; i < to; i++) {
    const u = ((x[i] as number) - mean) * (at0 + slope * i);
    out[i] = u * gain;
    e += u * u;
  }
  return e;
}

/**
 * The mix of {@link buildChannelGraph}; with `scratch` its generated buffers are {@link mixScratch}'s
 * (render the graph before the next call).
 */
function channelMix(
  speech: Float32Array,
  plan: ChannelPlan,
  bank: NoiseBank,
  scratch: typeof mixScratch | null,
): ChannelMix {
  if (speech.length !== plan.length)
    throw new RangeError(`speech has ${speech.length} samples, the plan ${plan.length}`);
  const rate = plan.sampleRate;
  const n = plan.length;
  // The talker as the mic picks it up: far field is a lower direct level plus the room's tail.
  const ff = plan.farField;
  const voice = ff
    ? farFieldMix(
        speech,
        rate,
        { rt60Ms: ff.rt60Ms, seed: ff.seed },
        dbToGain(ff.gainDb),
        dbToGain(ff.wetDb),
        mixBuffer(scratch, 'voice', n),
      )
    : speech;
  // The levels noise, bursts and wind are set against (measured only when one of them is on).
  const needsLevel = plan.noise !== null || plan.bursts.length > 0;
  const fullLevel = needsLevel || plan.wind ? activeRms(voice, rate) : 0;
  const level = needsLevel ? activeRms(heardBand(voice, plan), rate) || REFERENCE_SPEECH_RMS : 0;
  const nodes: GraphNode[] = [
    { kind: 'buffer', id: 'speech', samples: voice, startS: 0 },
    { kind: 'gain', id: 'mic', gain: 1 },
  ];
  const edges: [string, string][] = [['speech', 'mic']];
  let levels: ChannelLevels | null = null;

  if (plan.noise) {
    const nz = plan.noise;
    const { samples, pBand, pFull, gain } = levelledNoise(plan, nz, bank, level, mixBuffer(scratch, 'noise', n));
    levels = {
      snrInBandDb: pBand > 0 ? nz.snrDb : Number.POSITIVE_INFINITY,
      snrFullBandDb:
        pFull > 0
          ? 20 * Math.log10((fullLevel || REFERENCE_SPEECH_RMS) / (gain * Math.sqrt(pFull)))
          : Number.POSITIVE_INFINITY,
    };
    nodes.push({ kind: 'buffer', id: 'noise', samples, startS: 0 });
    edges.push(['noise', 'mic']);
  }

  for (const [i, b] of plan.bursts.entries()) {
    const samples = burstSamples(b.source, bank, b.seed);
    const burstLevel = activeRms(heardBand(samples, plan), rate) || 1;
    nodes.push(
      // On a sample frame, so the mix stays sums of whole-sample buffers (no WebAudio render needed).
      { kind: 'buffer', id: `burst${i}`, samples, startS: Math.round((b.atMs * rate) / 1000) / rate },
      { kind: 'gain', id: `burst${i}_gain`, gain: (level / burstLevel) * dbToGain(-b.snrDb) },
    );
    edges.push([`burst${i}`, `burst${i}_gain`], [`burst${i}_gain`, 'mic']);
  }

  if (plan.wind) {
    // Unit-RMS wind at its gain against the full-band level, in one pass from the raw samples.
    const samples = unitRms(
      windRaw(n, rate, rngFromState(plan.wind.seed)),
      (fullLevel || REFERENCE_SPEECH_RMS) * dbToGain(-plan.wind.snrDb),
      mixBuffer(scratch, 'wind', n),
    );
    nodes.push({ kind: 'buffer', id: 'wind', samples, startS: 0 });
    edges.push(['wind', 'mic']);
  }
  return { graph: { sampleRate: rate, length: n, nodes, edges, output: 'mic' }, levels };
}

/**
 * The muffled mic, in place on the mic signal: crossfade between the dry signal and its
 * low-passed copy ({@link muffleLowPass}), the wet share rising over `transitionMs` centred on
 * each segment's start and falling at its end.
 */
export function muffleInPlace(x: Float32Array, plan: ChannelPlan): Float32Array {
  const m = plan.muffle;
  if (!m) return x;
  const rate = plan.sampleRate;
  const sections = muffleLowPass(m.cutoffHz, rate);
  const tr = (m.transitionMs * rate) / 1000;
  // The low-pass starts MUFFLE_PREROLL_MS before each crossfade, so its state has settled.
  const preroll = Math.round((MUFFLE_PREROLL_MS * rate) / 1000);
  for (const seg of m.segments ?? [{ startMs: m.startMs, endMs: m.endMs }]) {
    const s = (seg.startMs * rate) / 1000;
    const e = (seg.endMs * rate) / 1000;
    const whole = s <= 0 && e >= x.length;
    const from = Math.max(0, Math.floor(s - tr / 2));
    const to = Math.min(x.length, Math.ceil(e + tr / 2));
    if (to <= from) continue;
    const start = Math.max(0, from - preroll);
    const wet = biquadCascadeInPlace(x.slice(start, to), sections);
    for (let i = from; i < to; i++) {
      const up = whole || tr <= 0 ? 1 : Math.min(1, Math.max(0, (i - (s - tr / 2)) / tr));
      const down = whole || tr <= 0 ? 1 : Math.min(1, Math.max(0, (e + tr / 2 - i) / tr));
      const w = Math.min(up, down);
      x[i] = (x[i] as number) + w * ((wet[i - start] as number) - (x[i] as number));
    }
  }
  return x;
}

/** Settling time of the muffle low-pass before a segment's crossfade: 50 ms (its impulse response at 1 kHz has died down by then). */
const MUFFLE_PREROLL_MS = 50;

/** The ADC: hard clip to [−1, 1] in place (a mic overloaded by wind or a loud burst). */
function adcClipInPlace(x: Float32Array): Float32Array {
  for (let i = 0; i < x.length; i++) {
    const v = x[i] as number;
    if (v > 1) x[i] = 1;
    else if (v < -1) x[i] = -1;
  }
  return x;
}

/** Zero the samples of every span (ms) at `rateHz`, in place. */
function zeroSpans(
  x: Float32Array | Float64Array | Int16Array,
  rateHz: number,
  spans: readonly { startMs: number; endMs: number }[],
): void {
  for (const s of spans) x.fill(0, msToSamples(s.startMs, rateHz), Math.min(x.length, msToSamples(s.endMs, rateHz)));
}

/** The telephony leg's 8 kHz buffer, reused by {@link channelTail} (grown on demand). */
let narrowScratch = new Float64Array(0);

/**
 * The core-DSP tail of the chain on the (muffled) graph's output, in place on `rendered` (a
 * buffer the caller owns), with the 16-bit quantization: the returned samples are `rendered`,
 * quantized, and `pcm` (same length) holds their 16-bit values. The ADC's hard clip to [−1, 1],
 * then the telephone network leg: with telephony, the 300–3400 Hz band-pass (4th-order
 * Butterworth high- and low-pass, cookbook sections as in WebAudio) at the 0.9 headroom, 16 → 8 kHz,
 * the mu-law round trip (one loop: {@link bandPassDecimate2MapInto}), frame drops at 8 kHz,
 * 8 → 16 kHz fused with the quantization ({@link interpolate2IirQuantize16Into}), and the
 * dropped frames zeroed again at 16 kHz (the IIR interpolator rings on into a gap: a dropped
 * frame is silence, exactly); a turn whose 8 → 16 kHz step reached the int16 limits is scaled
 * as a whole to peak at the 0.9 headroom (29,487–29,491 of 32,768), so with telephony no sample
 * is at the int16 limits. Without telephony, frame drops at 16 kHz. Length is preserved.
 */
export function channelTail(rendered: Float32Array, plan: ChannelPlan, pcm: Int16Array): Float32Array {
  if (!plan.telephony) {
    adcClipInPlace(rendered);
    if (plan.packetLoss) zeroSpans(rendered, plan.sampleRate, plan.packetLoss.spans);
    return quantize16Into(rendered, pcm);
  }
  // The headroom scale rides on the first section's numerator (the cascade is linear).
  const [first, ...rest] = telephonyBandPass(plan.telephony, plan.sampleRate);
  const h = TELEPHONY_HEADROOM;
  const bandPass = [{ ...first, b0: first.b0 * h, b1: first.b1 * h, b2: first.b2 * h }, ...rest] as BiquadCascade4;
  // The 8 kHz signal: float32 values in a Float64Array (read without conversions below), in a
  // scratch buffer reused across turns (the tail is synchronous; nothing keeps it).
  const len = (rendered.length + 1) >> 1;
  if (narrowScratch.length < len) narrowScratch = new Float64Array(len);
  const narrow = bandPassDecimate2MapInto(rendered, bandPass, narrowScratch.subarray(0, len), muLawRoundTripTable());
  if (plan.packetLoss) zeroSpans(narrow, TELEPHONY_RATE_HZ, plan.packetLoss.spans);
  // Back to 16 kHz into the (no longer needed) wideband buffer.
  // Whether the 16-bit values may have reached the int16 limits (then `pcm` is looked through).
  const back = (): boolean => {
    const mayClip = interpolate2IirQuantize16Into(narrow, rendered, pcm);
    if (plan.packetLoss) {
      zeroSpans(rendered, plan.sampleRate, plan.packetLoss.spans);
      zeroSpans(pcm, plan.sampleRate, plan.packetLoss.spans);
    }
    return mayClip;
  };
  // The interpolator overshoots a mu-law signal near full scale (a loud caller clipped at the
  // ADC, harsh noise): when that reached the int16 limits, the turn is scaled as a whole to peak
  // at the headroom again. Its true peak p (in 16-bit steps) is within 0.5 / ¼ of the ¼-scale
  // run's peak q / ¼, so with g = C / ((q + 0.5) / ¼), C = round(0.9 · 32768) = 29,491, the
  // turn's peak lands in [C − 4, C]: never at the limits.
  if (back() && atInt16Limits(pcm)) {
    for (let i = 0; i < narrow.length; i++) narrow[i] = (narrow[i] as number) * PEAK_PROBE_SCALE;
    back();
    const bound = (int16Peak(pcm) + 0.5) / PEAK_PROBE_SCALE;
    const g = Math.round(TELEPHONY_HEADROOM * 32768) / bound / PEAK_PROBE_SCALE;
    for (let i = 0; i < narrow.length; i++) narrow[i] = (narrow[i] as number) * g;
    back();
  }
  return rendered;
}

/** The effect timeline of a plan (burst spans use the burst sounds' lengths). */
export function channelTimeline(
  plan: ChannelPlan,
  bank: NoiseBank = {},
  levels: ChannelLevels | null = null,
): EffectEvent[] {
  const end = plan.durationMs;
  const events: EffectEvent[] = [];
  if (plan.farField) {
    const f = plan.farField;
    events.push({
      type: 'far_field',
      start_ms: 0,
      end_ms: end,
      params: { gain_db: f.gainDb, rt60_ms: f.rt60Ms, wet_db: f.wetDb, reverb: 'fdn4' },
    });
  }
  if (plan.noise) {
    const z = plan.noise;
    events.push({
      type: 'background_noise',
      start_ms: 0,
      end_ms: end,
      params: {
        source: z.source,
        snr_db: z.snrDb,
        snr_band: plan.telephony ? 'telephony' : 'full',
        ...(levels ? { snr_in_band_db: levels.snrInBandDb, snr_full_band_db: levels.snrFullBandDb } : {}),
        drift_db: z.driftDb,
        drift_speed_hz: z.driftSpeedHz,
        drift_start_s: z.driftStartS,
      },
    });
  }
  for (const b of plan.bursts) {
    const len = b.source.startsWith('file:')
      ? (bank.bursts?.[b.source.slice(5)]?.length ?? 0)
      : proceduralBurstLength(b.source.slice(11) as ProceduralBurst, plan.sampleRate);
    events.push({
      type: 'burst',
      start_ms: b.atMs,
      end_ms: Math.min(end, b.atMs + (len * 1000) / plan.sampleRate),
      params: { source: b.source, snr_db: b.snrDb },
    });
  }
  if (plan.wind) events.push({ type: 'wind', start_ms: 0, end_ms: end, params: { snr_db: plan.wind.snrDb } });
  if (plan.muffle) {
    const m = plan.muffle;
    for (const seg of m.segments ?? [{ startMs: m.startMs, endMs: m.endMs }]) {
      events.push({
        type: 'muffle',
        start_ms: seg.startMs,
        end_ms: seg.endMs,
        params: { cutoff_hz: m.cutoffHz, order: 4, transition_ms: m.transitionMs },
      });
    }
  }
  if (plan.telephony) {
    events.push({
      type: 'telephony',
      start_ms: 0,
      end_ms: end,
      params: {
        low_hz: plan.telephony.lowHz,
        high_hz: plan.telephony.highHz,
        codec: 'mulaw',
        codec_rate_hz: TELEPHONY_RATE_HZ,
      },
    });
  }
  if (plan.packetLoss) {
    const p = plan.packetLoss;
    for (const s of p.spans) {
      events.push({
        type: 'packet_loss',
        start_ms: s.startMs,
        end_ms: s.endMs,
        params: { frames: s.frames, frame_ms: p.frameMs, loss_rate: p.lossRate, mean_burst_ms: p.meanBurstMs },
      });
    }
  }
  return events.sort((a, b) => a.start_ms - b.start_ms);
}

/** True when the plan applies no effect at all (the `clean` preset): the channel is the identity. */
export function isPassThrough(plan: ChannelPlan): boolean {
  return (
    !plan.noise &&
    plan.bursts.length === 0 &&
    !plan.wind &&
    !plan.muffle &&
    !plan.farField &&
    !plan.packetLoss &&
    !plan.telephony
  );
}

/** True when every sample is a 16-bit value / 32768 (as TTS output is), so quantizing changes nothing. */
function on16BitGrid(x: Float32Array): boolean {
  for (let i = 0; i < x.length; i++) {
    const v = (x[i] as number) * 32768;
    if (v !== Math.floor(v) || v > 32767 || v < -32768) return false;
  }
  return true;
}

/**
 * Run the whole channel on one turn's speech (16 kHz, `plan.length` samples). With a plan that
 * applies nothing ({@link isPassThrough}) the speech is only quantized to 16 bits (one copy), and
 * when it is already on the 16-bit grid `samples` is `speech` itself and `wav` is encoded when
 * first read.
 */
export async function runChannel(
  renderer: GraphRenderer,
  speech: Float32Array,
  plan: ChannelPlan,
  bank: NoiseBank = {},
): Promise<ChannelOutput> {
  if (speech.length !== plan.length)
    throw new RangeError(`speech has ${speech.length} samples, the plan ${plan.length}`);
  if (isPassThrough(plan)) {
    if (on16BitGrid(speech)) {
      // Nothing to do: the speech is the output (not copied), its WAV encoded only when read.
      let wav: Uint8Array | undefined;
      return {
        samples: speech,
        get wav() {
          wav ??= encodeWav(speech, SPEECH_RATE_HZ);
          return wav;
        },
        timeline: [],
      };
    }
    // Only the 16-bit quantization (e.g. resampled TTS output): one copy, straight into the WAV.
    const { wav, pcm } = allocWavPcm16(speech.length, SPEECH_RATE_HZ);
    if (pcm) return { samples: quantize16Into(speech.slice(), pcm), wav, timeline: [] };
  }
  // The mix in scratch buffers, rendered at once in core (its graph has only buffers on sample
  // frames and constant gains); the platform's renderer only if that ever changes, on fresh buffers.
  const { graph, levels } = channelMix(speech, plan, bank, mixScratch);
  const mixed = renderGraphDirect(graph) ?? (await renderer.render(channelMix(speech, plan, bank, null).graph));
  // The ADC clip runs in the tail (fused into the telephony band-pass's read).
  const rendered = muffleInPlace(mixed, plan);
  // Quantize once: the WAV holds the 16-bit values, `samples` the same values as floats.
  const { wav, pcm } = allocWavPcm16(rendered.length, SPEECH_RATE_HZ);
  if (!pcm) {
    // Big-endian platform: no direct view of the WAV's little-endian data.
    const q = new Int16Array(rendered.length);
    const samples = channelTail(rendered, plan, q);
    return { samples, wav: encodeWavPcm16(q, SPEECH_RATE_HZ), timeline: channelTimeline(plan, bank, levels) };
  }
  // The 16-bit values go straight into the WAV's data chunk.
  return { samples: channelTail(rendered, plan, pcm), wav, timeline: channelTimeline(plan, bank, levels) };
}
