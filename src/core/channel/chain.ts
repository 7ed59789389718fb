/**
 * The phone channel for one caller turn: the mic's mix (speech after far field, noise, bursts,
 * wind: `mix.ts`, computed in core with the samples its WebAudio graph description renders to),
 * then core DSP identical on every platform: the muffled mic, the ADC clip, and the telephone
 * network leg (telephony band-pass with headroom, 16 → 8 kHz, G.711 mu-law, Gilbert–Elliott frame
 * drops, 8 → 16 kHz, 16-bit quantization).
 */
import { proceduralBurstLength, type ProceduralBurst } from '../audio/noise.ts';
import { muLawRoundTripTable } from '../audio/mulaw.ts';
import { biquadCoefficients, type BiquadCascade4 } from '../audio/biquad.ts';
import { int16ToFloat, msToSamples, quantize16Into, SPEECH_RATE_HZ, TELEPHONY_RATE_HZ } from '../audio/pcm.ts';
import {
  bandPassDecimate2MapInto,
  flushTinyStates,
  interpolate2IirQuantize16Into,
  type SplitBandPass,
} from '../audio/resample.ts';
import { allocWavPcm16, encodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { BUTTERWORTH4_Q, type GraphRenderer } from './graph.ts';
import { mixInto, telephonyBandPass, type ChannelLevels, type NoiseBank } from './mix.ts';
import type { ChannelPlan } from './plan.ts';
import type { EffectEvent } from './timeline.ts';
import { driftSnrDb } from './snr-drift.ts';

export {
  buildChannelGraph,
  telephonyBandPass,
  type ChannelLevels,
  type NoiseBank,
} from './mix.ts';
export { driftSnrDb };

/** The degraded turn. */
export interface ChannelOutput {
  /**
   * 16 kHz mono samples, already quantized to 16 bits (exactly what the WAV holds), decoded from
   * the WAV when first read. For a pass-through plan on the 16-bit grid this is the input speech
   * itself: read it, do not write to it.
   */
  samples: Float32Array;
  /** 16 kHz mono 16-bit WAV. */
  wav: Uint8Array;
  timeline: EffectEvent[];
}

/**
 * Headroom of the telephony leg: the band-passed signal is scaled by 0.9 before the codec
 * (tau2-bench `TELEPHONY_HEADROOM`). A turn whose 8 → 16 kHz step still reaches
 * {@link DEGRADED_PEAK_LIMIT} is scaled back to peak at this headroom ({@link channelTail}).
 */
export const TELEPHONY_HEADROOM = 0.9;

/**
 * Highest 16-bit magnitude a degraded turn may keep: 32,439 (below 0.99 FS; a value of 32,440
 * = round(0.99 · 32,768) or more, or −32,441 or less, sends the turn to the rescale of
 * {@link channelTail}). The interpolator overshoots a mu-law signal near full scale by a varying
 * amount: turns that came within a few steps of the int16 limits without reaching them kept peaks
 * of 0.998 FS; with this limit no degraded turn peaks at 0.99 FS or above, the ceiling the duplex
 * headroom test holds every WAV to.
 */
export const DEGRADED_PEAK_LIMIT = 32_440;

/**
 * Scale of the run that finds a turn's peak when its 8 → 16 kHz step reached {@link DEGRADED_PEAK_LIMIT}:
 * ¼. That run cannot clip: the interpolator's two branch impulse responses have L1 norms of
 * 2.98 and 3.72 (measured in test/audio/degraded-headroom.test.ts) and its input, mu-law decoded,
 * is at most 32,124 / 32,768 = 0.980 FS, so its output at ¼ scale stays under 0.92 FS. A power of
 * two scales every step of the filter exactly in floating point.
 */
const PEAK_PROBE_SCALE = 0.25;

/** Whether a 16-bit sample reaches {@link DEGRADED_PEAK_LIMIT} (≥ 32,440 or ≤ −32,441). */
function overPeakLimit(pcm: Int16Array): boolean {
  const hi = DEGRADED_PEAK_LIMIT;
  const lo = -DEGRADED_PEAK_LIMIT - 1;
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i] as number;
    if (v >= hi || v <= lo) return true;
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

/**
 * The muffled mic's low-pass: the 4th-order Butterworth sections twice, the magnitude of tau2's
 * zero-phase `filtfilt(butter(4))` (|H|², −6 dB at the cutoff).
 */
export function muffleLowPass(cutoffHz: number, rateHz: number): BiquadCascade4 {
  const a = biquadCoefficients('lowpass', cutoffHz, BUTTERWORTH4_Q[0], rateHz);
  const b = biquadCoefficients('lowpass', cutoffHz, BUTTERWORTH4_Q[1], rateHz);
  return [a, b, a, b];
}

/**
 * The muffled mic, in place on the mic signal: crossfade between the dry signal and its
 * low-passed copy ({@link muffleLowPass}), the wet share rising over `transitionMs` centred on
 * each segment's start and falling at its end. The low-pass and the crossfade run in one pass
 * per segment ({@link muffleRun}), no low-passed copy written.
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
    const sharp = whole || tr <= 0;
    const fade = sharp
      ? crossfade(from, to, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 1)
      : crossfade(from, to, s - tr / 2, e + tr / 2, tr);
    // Zero state at `start`; the preroll only settles it, then the fade in, the wet span, the fade out.
    const st = new Float64Array(8);
    muffleRun(x, sections, st, start, from, SETTLE, fade.share);
    muffleRun(x, sections, st, from, fade.wetFrom, FADE, fade.share);
    muffleRun(x, sections, st, fade.wetFrom, fade.wetTo, WET, fade.share);
    muffleRun(x, sections, st, fade.wetTo, to, FADE, fade.share);
  }
  return x;
}

/**
 * The muffle's crossfade over `[from, to)`: the wet share w(i) = min(up, down), up = (i − rise) /
 * tr and down = (fall − i) / tr each clipped to [0, 1] (a linear fade in over `tr` samples from
 * `rise`, out over `tr` samples to `fall`; w = 1 throughout with infinite ends), and the fully wet
 * span `[wetFrom, wetTo)` where both are 1 (found with the same expressions, so the boundary
 * samples are the ones the formula puts there), where w is not computed.
 */
function crossfade(
  from: number,
  to: number,
  rise: number,
  fall: number,
  tr: number,
): { share: (i: number) => number; wetFrom: number; wetTo: number } {
  const share = (i: number) =>
    Math.min(Math.min(1, Math.max(0, (i - rise) / tr)), Math.min(1, Math.max(0, (fall - i) / tr)));
  // up reaches 1 at a (it only grows), down stays 1 until b (it only falls).
  let a = Math.min(to, Math.max(from, Math.floor(rise + tr)));
  while (a > from && (a - 1 - rise) / tr >= 1) a--;
  while (a < to && (a - rise) / tr < 1) a++;
  let b = Math.min(to, Math.max(a, Math.ceil(fall - tr)));
  while (b > a && (fall - (b - 1)) / tr < 1) b--;
  while (b < to && (fall - b) / tr >= 1) b++;
  return { share, wetFrom: a, wetTo: b };
}

/** {@link muffleKernel} modes: settle the low-pass only, crossfade with the share, or fully wet. */
const SETTLE = 0;
const FADE = 1;
const WET = 2;

/** Samples per {@link muffleKernel} call: 4096 (states below `DENORMAL_FLUSH` are zeroed between calls). */
const MUFFLE_BLOCK = 4096;

/**
 * The muffle over `x[from, to)` in place ({@link muffleKernel}), block by block, flushing tiny
 * states between blocks ({@link flushTinyStates}: on digital silence they decay into slow subnormals).
 */
function muffleRun(
  x: Float32Array,
  sections: BiquadCascade4,
  st: Float64Array,
  from: number,
  to: number,
  mode: number,
  share: (i: number) => number,
): void {
  for (let i = from; i < to; i += MUFFLE_BLOCK) {
    muffleKernel(x, sections, st, i, Math.min(to, i + MUFFLE_BLOCK), mode, share);
    flushTinyStates(st);
  }
}

/**
 * The muffle's low-pass and crossfade over `x[from, to)`, in place, continuing from and
 * updating the eight section states `st`: each sample x[i] (read before it is written) runs
 * through the four sections as `biquadCascadeInto` runs them (transposed direct form II, float64
 * from section to section), its output rounded to float32 is the wet sample y, and x[i] becomes
 * `x[i] + w · (y − x[i])`: w = `share(i)` when `mode` is FADE, 1 when WET; SETTLE leaves x alone
 * (the preroll). The same samples as the low-passed copy crossfaded in a second pass.
 */
function muffleKernel(
  x: Float32Array,
  [s0, s1, s2, s3]: BiquadCascade4,
  st: Float64Array,
  from: number,
  to: number,
  mode: number,
  share: (i: number) => number,
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
  for (let i = from; i < to; i++) {
    const a = x[i] as number;
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
    if (mode === WET) x[i] = a + (fround(y) - a);
    else if (mode === FADE) x[i] = a + share(i) * (fround(y) - a);
  }
  st[0] = u1;
  st[1] = u2;
  st[2] = v1;
  st[3] = v2;
  st[4] = w1;
  st[5] = w2;
  st[6] = z1;
  st[7] = z2;
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

/**
 * The telephony band-pass of the network leg ({@link bandPassDecimate2MapInto}) at `gain`: the
 * sections of {@link telephonyBandPass}, its two low-pass sections at `rateHz` (16 kHz) before
 * the 16 → 8 kHz step and its two high-pass sections designed at the 8 kHz rate
 * ({@link TELEPHONY_RATE_HZ}) after it, `gain` on the first section's numerator (the cascade is
 * linear). From 300 Hz to 3.4 kHz its magnitude response is within 0.004 dB of the 16 kHz
 * band-pass's times `gain`; below the band the 8 kHz high-pass cuts up to 0.1 dB more (at
 * 100–150 Hz). Its phase is the 8 kHz design's (up to ~6° apart at 3 kHz: the bilinear transform
 * maps frequencies differently at the two rates), as tau2-bench's, which designs its whole
 * band-pass at 8 kHz (`StreamingTelephonyConverter`: `butter(4, [300, 3400] / 4000, 'band')`
 * after the rate change).
 */
export function telephonySplitBandPass(
  t: { lowHz: number; highHz: number },
  rateHz: number,
  gain: number,
): SplitBandPass {
  const [, , low0, low1] = telephonyBandPass(t, rateHz);
  const [high0, high1] = telephonyBandPass(t, TELEPHONY_RATE_HZ);
  return {
    lowPass: [{ ...low0, b0: low0.b0 * gain, b1: low0.b1 * gain, b2: low0.b2 * gain }, low1],
    highPass: [high0, high1],
  };
}

/** The telephony leg's 8 kHz buffer, reused by {@link channelTail} (grown on demand). */
let narrowScratch = new Float64Array(0);

/**
 * The core-DSP tail of the chain on the (muffled) graph's output `rendered` (a buffer the caller
 * owns, used as scratch: its samples are not kept), with the 16-bit quantization: `pcm` (same
 * length) gets the degraded turn's 16-bit values. The ADC's hard clip to [−1, 1],
 * then the telephone network leg: with telephony, the 300–3400 Hz band-pass (4th-order
 * Butterworth high- and low-pass, cookbook sections as in WebAudio; the high-pass after the
 * 16 → 8 kHz step, {@link telephonySplitBandPass}) at the 0.9 headroom, 16 → 8 kHz,
 * the mu-law round trip (one loop: {@link bandPassDecimate2MapInto}), frame drops at 8 kHz,
 * 8 → 16 kHz fused with the quantization ({@link interpolate2IirQuantize16Into}), and the
 * dropped frames zeroed again at 16 kHz (the IIR interpolator rings on into a gap: a dropped
 * frame is silence, exactly); a turn whose 8 → 16 kHz step reached {@link DEGRADED_PEAK_LIMIT} is scaled
 * as a whole to peak at the 0.9 headroom (29,487–29,491 of 32,768), so with telephony no sample
 * is at or above 0.99 FS. Without telephony, frame drops at 16 kHz. Length is preserved.
 */
export function channelTail(rendered: Float32Array, plan: ChannelPlan, pcm: Int16Array): void {
  if (!plan.telephony) {
    adcClipInPlace(rendered);
    if (plan.packetLoss) zeroSpans(rendered, plan.sampleRate, plan.packetLoss.spans);
    quantize16Into(rendered, pcm, null);
    return;
  }
  const bandPass = telephonySplitBandPass(plan.telephony, plan.sampleRate, TELEPHONY_HEADROOM);
  // The 8 kHz signal: float32 values in a Float64Array (read without conversions below), in a
  // scratch buffer reused across turns (the tail is synchronous; nothing keeps it).
  const len = (rendered.length + 1) >> 1;
  if (narrowScratch.length < len) narrowScratch = new Float64Array(len);
  const narrow = bandPassDecimate2MapInto(rendered, bandPass, narrowScratch.subarray(0, len), muLawRoundTripTable());
  if (plan.packetLoss) zeroSpans(narrow, TELEPHONY_RATE_HZ, plan.packetLoss.spans);
  // Back to 16 kHz, the 16-bit values only.
  // Whether the 16-bit values may have reached the peak limit (then `pcm` is looked through).
  const back = (): boolean => {
    const mayClip = interpolate2IirQuantize16Into(narrow, null, pcm, DEGRADED_PEAK_LIMIT);
    if (plan.packetLoss) zeroSpans(pcm, plan.sampleRate, plan.packetLoss.spans);
    return mayClip;
  };
  // The interpolator overshoots a mu-law signal near full scale (a loud caller clipped at the
  // ADC, harsh noise): when that reached the peak limit, the turn is scaled as a whole to peak
  // at the headroom again. Its true peak p (in 16-bit steps) is within 0.5 / ¼ of the ¼-scale
  // run's peak q / ¼, so with g = C / ((q + 0.5) / ¼), C = round(0.9 · 32768) = 29,491, the
  // turn's peak lands in [C − 4, C]: never at the limits.
  if (back() && overPeakLimit(pcm)) {
    for (let i = 0; i < narrow.length; i++) narrow[i] = (narrow[i] as number) * PEAK_PROBE_SCALE;
    back();
    const bound = (int16Peak(pcm) + 0.5) / PEAK_PROBE_SCALE;
    const g = Math.round(TELEPHONY_HEADROOM * 32768) / bound / PEAK_PROBE_SCALE;
    for (let i = 0; i < narrow.length; i++) narrow[i] = (narrow[i] as number) * g;
    back();
  }
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
 * applies nothing ({@link isPassThrough}) the speech is only quantized to 16 bits (straight into
 * the WAV), and when it is already on the 16-bit grid `samples` is `speech` itself and `wav` is
 * encoded when first read. Otherwise, and for quantized speech, `samples` are decoded from the
 * WAV's 16-bit values when first read (the chain writes only the WAV). The mix is computed in core ({@link mixInto}: the samples its graph renders to on
 * any platform), so `renderer` is not called; it stays in the signature for callers that render
 * graphs of their own with it.
 */
export async function runChannel(
  _renderer: GraphRenderer,
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
    // Only the 16-bit quantization (e.g. resampled TTS output), straight into the WAV; the
    // samples are decoded from it when read.
    const { wav, pcm } = allocWavPcm16(speech.length, SPEECH_RATE_HZ);
    if (pcm) {
      quantize16Into(speech, pcm, null);
      return decodedOnRead(pcm, wav, []);
    }
  }
  // The mix, in the reused scratch buffer (the chain below is synchronous; nothing keeps it).
  if (mixScratch.length < plan.length) mixScratch = new Float32Array(plan.length);
  const mixed = mixScratch.length === plan.length ? mixScratch : mixScratch.subarray(0, plan.length);
  const levels = mixInto(speech, plan, bank, mixed);
  // The ADC clip runs in the tail (fused into the telephony band-pass's read).
  const rendered = muffleInPlace(mixed, plan);
  // Quantize once: the WAV holds the 16-bit values; `samples` are decoded from them when read.
  const { wav, pcm } = allocWavPcm16(rendered.length, SPEECH_RATE_HZ);
  const timeline = channelTimeline(plan, bank, levels);
  if (!pcm) {
    // Big-endian platform: no direct view of the WAV's little-endian data.
    const q = new Int16Array(rendered.length);
    channelTail(rendered, plan, q);
    return decodedOnRead(q, encodeWavPcm16(q, SPEECH_RATE_HZ), timeline);
  }
  // The 16-bit values go straight into the WAV's data chunk.
  channelTail(rendered, plan, pcm);
  return decodedOnRead(pcm, wav, timeline);
}

/**
 * The mix buffer of {@link runChannel}, reused from turn to turn (grown to the longest turn): a
 * new 16 kHz buffer per turn (640 kB for 10 s) cost its allocation, its first-touch page faults
 * and garbage collection. The chain that writes it is synchronous and returns none of it.
 */
let mixScratch = new Float32Array(0);

/**
 * A degraded turn whose `samples` are `pcm`'s 16-bit values as floats (`v / 32768`,
 * {@link int16ToFloat}: exactly the quantized samples the tail computed), decoded when first read:
 * the call's own path reads only the WAV.
 */
function decodedOnRead(pcm: Int16Array, wav: Uint8Array, timeline: EffectEvent[]): ChannelOutput {
  let samples: Float32Array | undefined;
  return {
    get samples() {
      samples ??= int16ToFloat(pcm);
      return samples;
    },
    wav,
    timeline,
  };
}
