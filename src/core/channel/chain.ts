/**
 * The phone channel for one caller turn: a WebAudio graph (noise, bursts, wind, far field,
 * muffled mic, mic clipping) rendered by a platform {@link GraphRenderer}, then core DSP for the
 * telephone network leg (telephony band-pass, 16 → 8 kHz, G.711 mu-law, Gilbert–Elliott frame
 * drops, 8 → 16 kHz, 16-bit quantization), identical on every platform.
 */
import { hash32, rngFromState } from '../ports/rng.ts';
import { activeRms, rms } from '../audio/measure.ts';
import {
  loopTo,
  proceduralBurst,
  proceduralNoise,
  windNoise,
  type NoiseKind,
  type ProceduralBurst,
} from '../audio/noise.ts';
import { muLawRoundTripTable } from '../audio/mulaw.ts';
import { biquadCoefficients } from '../audio/biquad.ts';
import {
  dbToGain,
  floatToInt16,
  int16ToFloat,
  msToSamples,
  quantize16Into,
  SPEECH_RATE_HZ,
  TELEPHONY_RATE_HZ,
} from '../audio/pcm.ts';
import { biquadCascade4Decimate2MapInto, interpolate2Into, interpolate2Quantize16Into } from '../audio/resample.ts';
import { allocWavPcm16, encodeWavPcm16 } from '../audio/wav.ts';
import { BUTTERWORTH4_Q, type AudioGraph, type GraphNode, type GraphRenderer } from './graph.ts';
import type { ChannelPlan, SourceRef } from './plan.ts';
import type { EffectEvent } from './timeline.ts';

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
/** Step between SNR-drift automation points: 250 ms. */
export const DRIFT_STEP_MS = 250;

/** The degraded turn. */
export interface ChannelOutput {
  /** 16 kHz mono samples, already quantized to 16 bits (exactly what the WAV holds). */
  samples: Float32Array;
  /** 16 kHz mono 16-bit WAV. */
  wav: Uint8Array;
  timeline: EffectEvent[];
}

/** Length of a cached procedural noise bed: 30 s (looped from the plan's offset, like a recording). */
export const NOISE_BED_S = 30;
const beds = new Map<NoiseKind, Float32Array>();

/**
 * A procedural noise bed of {@link NOISE_BED_S} seconds at 16 kHz, generated once per kind from a
 * fixed seed and cached: turns loop it from a planned offset, so generation cost is paid once
 * and the output still depends only on the plan.
 */
export function noiseBed(kind: NoiseKind): Float32Array {
  let bed = beds.get(kind);
  if (!bed) {
    bed = proceduralNoise(
      kind,
      NOISE_BED_S * SPEECH_RATE_HZ,
      SPEECH_RATE_HZ,
      rngFromState(hash32(`noise-bed:${kind}`)),
    );
    beds.set(kind, bed);
  }
  return bed;
}

function sourceSamples(
  ref: SourceRef,
  kind: 'continuous' | 'bursts',
  bank: NoiseBank,
  n: number,
  seed: number,
  offset = 0,
): Float32Array {
  const rng = rngFromState(seed);
  const [scheme, name] = ref.split(':') as [string, string];
  if (scheme === 'file') {
    const rec = bank[kind]?.[name];
    if (!rec) throw new Error(`noise bank has no ${kind} recording "${name}"`);
    return kind === 'continuous' ? loopTo(rec, n, Math.floor(offset * rec.length)) : rec;
  }
  if (kind === 'bursts') return proceduralBurst(name as ProceduralBurst, SPEECH_RATE_HZ, rng);
  if (name === 'babble') {
    if (!bank.babble)
      throw new Error('the plan uses babble noise but the noise bank has no babble bed (see babbleBed)');
    return loopTo(bank.babble, n, Math.floor(offset * bank.babble.length));
  }
  const bed = noiseBed(name as NoiseKind);
  return loopTo(bed, n, Math.floor(offset * bed.length));
}

/** SNR in dB of the drifting background noise at time `tMs` (mean ± drift, sinusoidal). */
export function driftSnrDb(noise: NonNullable<ChannelPlan['noise']>, tMs: number): number {
  return noise.snrDb + noise.driftDb * Math.sin((2 * Math.PI * tMs) / noise.driftPeriodMs + noise.driftPhase);
}

/** Impulse response of a room: exponentially decaying noise reaching −60 dB at `rt60Ms`, unit energy. */
export function syntheticImpulse(rt60Ms: number, rateHz: number, seed: number): Float32Array {
  const rng = rngFromState(seed);
  const n = Math.max(1, msToSamples(rt60Ms, rateHz));
  const ir = new Float32Array(n);
  const decay = (3 * Math.LN10) / n; // amplitude 10^-3 (= -60 dB) after n samples
  let e = 0;
  for (let i = 0; i < n; i++) {
    const v = (2 * rng.next() - 1) * Math.exp(-decay * i);
    ir[i] = v;
    e += v * v;
  }
  const g = 1 / Math.sqrt(e);
  for (let i = 0; i < n; i++) ir[i] = (ir[i] as number) * g;
  return ir;
}

/**
 * Build the WebAudio graph of a plan for `speech` (16 kHz, `plan.length` samples). Everything the
 * graph needs (noise, impulse responses) is generated here from the plan's seeds.
 */
export function buildChannelGraph(speech: Float32Array, plan: ChannelPlan, bank: NoiseBank = {}): AudioGraph {
  if (speech.length !== plan.length)
    throw new RangeError(`speech has ${speech.length} samples, the plan ${plan.length}`);
  const rate = plan.sampleRate;
  const n = plan.length;
  const durS = n / rate;
  const level = activeRms(speech, rate) || REFERENCE_SPEECH_RMS;
  const nodes: GraphNode[] = [{ kind: 'buffer', id: 'speech', samples: speech, startS: 0 }];
  const edges: [string, string][] = [];
  nodes.push({ kind: 'gain', id: 'mic', gain: 1 });

  if (plan.farField) {
    const ff = plan.farField;
    nodes.push(
      { kind: 'gain', id: 'far_gain', gain: dbToGain(ff.gainDb) },
      { kind: 'convolver', id: 'far_reverb', impulse: syntheticImpulse(ff.rt60Ms, rate, ff.seed) },
      { kind: 'gain', id: 'far_wet', gain: dbToGain(ff.wetDb) },
    );
    edges.push(
      ['speech', 'far_gain'],
      ['far_gain', 'mic'],
      ['far_gain', 'far_reverb'],
      ['far_reverb', 'far_wet'],
      ['far_wet', 'mic'],
    );
  } else {
    edges.push(['speech', 'mic']);
  }

  if (plan.noise) {
    const nz = plan.noise;
    // Recordings and procedural beds are looped from the plan's offset.
    const samples = sourceSamples(nz.source, 'continuous', bank, n, nz.seed, nz.offset);
    const noiseRms = rms(samples) || 1;
    // The drifting gain is applied to the (owned) noise samples here, as linear ramps between
    // points every 250 ms (what a WebAudio gain automation with linear ramps does): an a-rate
    // automated gain node cost more to render than the multiply.
    const points: { atSample: number; value: number }[] = [];
    for (let t = 0; ; t += DRIFT_STEP_MS) {
      const tc = Math.min(t, plan.durationMs);
      points.push({ atSample: (tc * rate) / 1000, value: (level / noiseRms) * dbToGain(-driftSnrDb(nz, tc)) });
      if (tc >= plan.durationMs) break;
    }
    applyRamps(samples, points);
    nodes.push({ kind: 'buffer', id: 'noise', samples, startS: 0 });
    edges.push(['noise', 'mic']);
  }

  for (const [i, b] of plan.bursts.entries()) {
    const samples = sourceSamples(b.source, 'bursts', bank, n, b.seed);
    const burstLevel = activeRms(samples, rate) || 1;
    nodes.push(
      { kind: 'buffer', id: `burst${i}`, samples, startS: b.atMs / 1000 },
      { kind: 'gain', id: `burst${i}_gain`, gain: (level / burstLevel) * dbToGain(-b.snrDb) },
    );
    edges.push([`burst${i}`, `burst${i}_gain`], [`burst${i}_gain`, 'mic']);
  }

  if (plan.wind) {
    const samples = windNoise(n, rate, rngFromState(plan.wind.seed));
    nodes.push(
      { kind: 'buffer', id: 'wind', samples, startS: 0 },
      { kind: 'gain', id: 'wind_gain', gain: level * dbToGain(-plan.wind.snrDb) },
    );
    edges.push(['wind', 'wind_gain'], ['wind_gain', 'mic']);
  }

  nodes.push({ kind: 'clip', id: 'adc' });
  if (plan.muffle) {
    const m = plan.muffle;
    const segs = m.segments ?? [{ startMs: m.startMs, endMs: m.endMs }];
    const whole = segs.length === 1 && m.startMs <= 0 && m.endMs >= plan.durationMs;
    const tr = m.transitionMs / 1000;
    // Crossfade dry ↔ low-passed: `wet` rises over `transitionMs` at each segment's start and
    // falls at its end.
    const wet: { timeS: number; value: number }[] = whole ? [{ timeS: 0, value: 1 }] : [{ timeS: 0, value: 0 }];
    if (!whole) {
      for (const seg of segs) {
        const s = seg.startMs / 1000;
        const e = seg.endMs / 1000;
        wet.push(
          { timeS: Math.max(0, s - tr / 2), value: 0 },
          { timeS: Math.min(durS, s + tr / 2), value: 1 },
          { timeS: Math.max(0, e - tr / 2), value: 1 },
          { timeS: Math.min(durS, e + tr / 2), value: 0 },
        );
      }
    }
    nodes.push(
      { kind: 'gain', id: 'muffle_dry', gain: 1, automation: wet.map((p) => ({ timeS: p.timeS, value: 1 - p.value })) },
      { kind: 'biquad', id: 'muffle_lp1', type: 'lowpass', frequencyHz: m.cutoffHz, q: BUTTERWORTH4_Q[0] },
      { kind: 'biquad', id: 'muffle_lp2', type: 'lowpass', frequencyHz: m.cutoffHz, q: BUTTERWORTH4_Q[1] },
      { kind: 'gain', id: 'muffle_wet', gain: 1, automation: wet },
    );
    edges.push(
      ['mic', 'muffle_dry'],
      ['muffle_dry', 'adc'],
      ['mic', 'muffle_lp1'],
      ['muffle_lp1', 'muffle_lp2'],
      ['muffle_lp2', 'muffle_wet'],
      ['muffle_wet', 'adc'],
    );
  } else {
    edges.push(['mic', 'adc']);
  }

  // The telephony band-pass runs in the core tail ({@link channelTail}), with the rest of the
  // network leg: as four WebAudio biquads it cost more than all other nodes together.
  const output = 'adc';
  return { sampleRate: rate, length: n, nodes, edges, output };
}

/**
 * Multiply `x` in place by a piecewise-linear envelope through `points` (sample positions,
 * increasing; the first at 0): one loop per segment, each sample's gain by the same formula as
 * a per-sample search would use (bit-identical), the last value held after the last point.
 */
function applyRamps(x: Float32Array, points: readonly { atSample: number; value: number }[]): void {
  const n = x.length;
  let i = 0;
  for (let j = 0; j + 1 < points.length && i < n; j++) {
    const a = points[j]!;
    const b = points[j + 1]!;
    // Samples i with a.atSample ≤ i < b.atSample take this segment.
    const end = Math.min(n, Math.ceil(b.atSample));
    if (b.atSample > a.atSample) {
      const at = a.atSample;
      const v0 = a.value;
      const dv = b.value - a.value;
      const span = b.atSample - a.atSample;
      for (; i < end; i++) x[i] = (x[i] as number) * (v0 + (dv * (i - at)) / span);
    }
    i = Math.max(i, end);
  }
  const last = points[points.length - 1];
  if (last) for (; i < n; i++) x[i] = (x[i] as number) * last.value;
}

/** Zero the samples of every span (ms) at `rateHz`, in place. */
function zeroSpans(
  x: Float32Array | Float64Array,
  rateHz: number,
  spans: readonly { startMs: number; endMs: number }[],
): void {
  for (const s of spans) x.fill(0, msToSamples(s.startMs, rateHz), Math.min(x.length, msToSamples(s.endMs, rateHz)));
}

/**
 * The core-DSP tail of the chain on the graph's output (the telephone network leg): with
 * telephony, the 300–3400 Hz band-pass (4th-order Butterworth high- and low-pass, cookbook
 * sections as in WebAudio), 16 → 8 kHz, mu-law round trip, frame drops at 8 kHz, 8 → 16 kHz;
 * without it, frame drops at 16 kHz. Length is preserved; 16-bit quantization is left to
 * {@link runChannel}. Works in place on `rendered` where it can (the caller hands over a buffer
 * it owns).
 */
export function channelTail(rendered: Float32Array, plan: ChannelPlan): Float32Array {
  return tail(rendered, plan, null);
}

/**
 * {@link channelTail}, and with `pcm` (same length as `rendered`) also the 16-bit quantization
 * of {@link runChannel}: the returned samples are then quantized and `pcm` holds their 16-bit
 * values. The telephony leg runs as three passes over typed arrays: band-pass fused with the
 * decimation and the mu-law round trip (one table lookup); frame drops; interpolation
 * back into `rendered`, fused with the quantization. Bit-identical to the step-by-step chain.
 */
/** The telephony leg's 8 kHz buffer, reused by {@link tail} (grown on demand). */
let narrowScratch = new Float64Array(0);

function tail(rendered: Float32Array, plan: ChannelPlan, pcm: Int16Array | null): Float32Array {
  if (!plan.telephony) {
    if (plan.packetLoss) zeroSpans(rendered, plan.sampleRate, plan.packetLoss.spans);
    return pcm ? quantize16Into(rendered, pcm) : rendered;
  }
  const { lowHz, highHz } = plan.telephony;
  const rate = plan.sampleRate;
  // Band-pass fused with the decimation (and the mu-law map): one pass, reading `rendered`.
  const bandPass = [
    biquadCoefficients('highpass', lowHz, BUTTERWORTH4_Q[0], rate),
    biquadCoefficients('highpass', lowHz, BUTTERWORTH4_Q[1], rate),
    biquadCoefficients('lowpass', highHz, BUTTERWORTH4_Q[0], rate),
    biquadCoefficients('lowpass', highHz, BUTTERWORTH4_Q[1], rate),
  ] as const;
  // The 8 kHz signal: float32 values in a Float64Array (read without conversions below), in a
  // scratch buffer reused across turns (the tail is synchronous; nothing keeps it).
  const len = (rendered.length + 1) >> 1;
  if (narrowScratch.length < len) narrowScratch = new Float64Array(len);
  const narrow = biquadCascade4Decimate2MapInto(
    rendered,
    bandPass,
    narrowScratch.subarray(0, len),
    muLawRoundTripTable(),
  );
  if (plan.packetLoss) zeroSpans(narrow, TELEPHONY_RATE_HZ, plan.packetLoss.spans);
  // Back to 16 kHz into the (no longer needed) wideband buffer.
  return pcm ? interpolate2Quantize16Into(narrow, rendered, pcm) : interpolate2Into(new Float32Array(narrow), rendered);
}

/** The effect timeline of a plan (burst spans use the burst sounds' lengths). */
export function channelTimeline(plan: ChannelPlan, bank: NoiseBank = {}): EffectEvent[] {
  const end = plan.durationMs;
  const events: EffectEvent[] = [];
  if (plan.farField) {
    const f = plan.farField;
    events.push({
      type: 'far_field',
      start_ms: 0,
      end_ms: end,
      params: { gain_db: f.gainDb, rt60_ms: f.rt60Ms, wet_db: f.wetDb },
    });
  }
  if (plan.noise) {
    const z = plan.noise;
    events.push({
      type: 'background_noise',
      start_ms: 0,
      end_ms: end,
      params: { source: z.source, snr_db: z.snrDb, drift_db: z.driftDb, drift_period_ms: z.driftPeriodMs },
    });
  }
  for (const b of plan.bursts) {
    const len = b.source.startsWith('file:')
      ? (bank.bursts?.[b.source.slice(5)]?.length ?? 0)
      : proceduralBurst(b.source.slice(11) as ProceduralBurst, plan.sampleRate, rngFromState(b.seed)).length;
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

/** Run the whole channel on one turn's speech (16 kHz, `plan.length` samples). */
export async function runChannel(
  renderer: GraphRenderer,
  speech: Float32Array,
  plan: ChannelPlan,
  bank: NoiseBank = {},
): Promise<ChannelOutput> {
  const rendered = await renderer.render(buildChannelGraph(speech, plan, bank));
  // Quantize once: the WAV holds the 16-bit values, `samples` the same values as floats.
  const { wav, pcm } = allocWavPcm16(rendered.length, SPEECH_RATE_HZ);
  if (!pcm) {
    // Big-endian platform: no direct view of the WAV's little-endian data.
    const q = floatToInt16(channelTail(rendered, plan));
    return { samples: int16ToFloat(q), wav: encodeWavPcm16(q, SPEECH_RATE_HZ), timeline: channelTimeline(plan, bank) };
  }
  // The 16-bit values go straight into the WAV's data chunk.
  return { samples: tail(rendered, plan, pcm), wav, timeline: channelTimeline(plan, bank) };
}
