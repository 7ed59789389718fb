/**
 * Caller speech through the phone channel for one turn: TTS → (dropout cut) → channel → two
 * 16 kHz mono 16-bit WAV files (clean and degraded) in an {@link AudioStore}, referenced from
 * the trajectory together with the effect timeline.
 */
import { meanPower } from '../audio/measure.ts';
import { msToSamples, samplesToMs, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import { encodeWav } from '../audio/wav.ts';
import type { Tts, TtsVoice } from '../ports/tts.ts';
import type { TurnAudioRef } from '../schema/trajectory.ts';
import type { AudioStore } from './audio-store.ts';
import { runChannel, type NoiseBank } from './chain.ts';
import type { GraphRenderer } from './graph.ts';
import { planChannel } from './plan.ts';
import type { ChannelPreset, PresetName } from './presets.ts';

/** A speech segment in ms from the start of a clip. */
export interface SpeechSegment {
  startMs: number;
  endMs: number;
}

/** Finds speech in 16 kHz mono audio (Silero VAD in `adapters/shared/vad.ts`). */
export interface SpeechDetector {
  readonly id: string;
  segments(samples: Float32Array, sampleRate: number): Promise<SpeechSegment[]>;
}

/** Everything the channel needs for caller turns. */
export interface CallerChannel {
  tts: Tts;
  /** Voice of the caller (the persona's choice); default: the domain's language. */
  voice?: TtsVoice;
  renderer: GraphRenderer;
  preset: PresetName | ChannelPreset;
  /** Noise recordings; without them the preset's procedural noises are used. */
  bank?: NoiseBank;
  /** Where the WAV files go; without a store the audio is rendered but not kept. */
  store?: AudioStore;
  /** Times dropout cuts by speech detection instead of the energy gate ({@link speechEndSample}). */
  vad?: SpeechDetector;
}

/** Frame of the speech-end gate: 10 ms. */
export const SPEECH_END_FRAME_MS = 10;
/** Frames more than 35 dB below the loudest frame count as silence (ours; espeak-ng's trailing silence is digital zero or near it). */
export const SPEECH_END_GATE_DB = 35;

/**
 * End of speech in samples: the end of the last 10 ms frame whose power is within 35 dB of the
 * loudest frame. 0 for silence. Used to time a dropout cut from the TTS of the heard part.
 */
export function speechEndSample(x: Float32Array, rateHz = SPEECH_RATE_HZ): number {
  const frame = Math.max(1, msToSamples(SPEECH_END_FRAME_MS, rateHz));
  const powers: number[] = [];
  for (let s = 0; s < x.length; s += frame) powers.push(meanPower(x, s, Math.min(x.length, s + frame)));
  const max = Math.max(0, ...powers);
  if (max === 0) return 0;
  const floor = max * 10 ** (-SPEECH_END_GATE_DB / 10);
  for (let i = powers.length - 1; i >= 0; i--) if ((powers[i] as number) >= floor) return Math.min(x.length, (i + 1) * frame);
  return 0;
}

/** Where a turn's files go and which plan it draws. */
export interface CallerTurnKey {
  seed: number;
  taskId: string;
  /** Index of the turn in the trajectory (the plan's `turn`). */
  turn: number;
  /** Folder-like prefix of the episode's files, e.g. `audio/carrier/t1/0-7`. */
  prefix: string;
}

/** Result of {@link callerTurnAudio}. */
export interface CallerTurnAudio {
  ref: TurnAudioRef;
  /** The degraded WAV bytes (what the agent hears). */
  degraded: Uint8Array;
  clean: Uint8Array;
  /** For a cut turn: cut time in ms (= `ref.duration_ms`). */
  cutMs: number | null;
}

/**
 * Speak `text` and put it through the channel. With `heard` (a dropout), the full text is
 * spoken and cut at the end of speech of the TTS of `heard` alone (or the last VAD segment's end
 * when the channel has a VAD), so audio and transcript stop at the same point; the channel then
 * runs on the cut audio, so its length in ms equals the cut time.
 */
export async function callerTurnAudio(ch: CallerChannel, text: string, key: CallerTurnKey, heard?: string): Promise<CallerTurnAudio> {
  const full = await ch.tts.synthesize(text, ch.voice);
  let clean = full.samples;
  let cutMs: number | null = null;
  if (heard !== undefined) {
    const prefix = await ch.tts.synthesize(heard, ch.voice);
    let end = speechEndSample(prefix.samples);
    if (ch.vad) {
      const segs = await ch.vad.segments(prefix.samples, SPEECH_RATE_HZ);
      const last = segs[segs.length - 1];
      if (last) end = Math.min(prefix.samples.length, msToSamples(last.endMs, SPEECH_RATE_HZ));
    }
    clean = full.samples.subarray(0, Math.min(full.samples.length, Math.max(1, end)));
    cutMs = samplesToMs(clean.length, SPEECH_RATE_HZ);
  }
  const bankNames = { continuous: Object.keys(ch.bank?.continuous ?? {}), bursts: Object.keys(ch.bank?.bursts ?? {}) };
  const plan = planChannel(ch.preset, { seed: key.seed, taskId: key.taskId, turn: key.turn }, clean.length, bankNames);
  const out = await runChannel(ch.renderer, clean, plan, ch.bank);
  const cleanWav = encodeWav(clean, SPEECH_RATE_HZ);
  const base = `${key.prefix}/turn-${String(key.turn).padStart(3, '0')}`;
  const names = { clean: `${base}.clean.wav`, degraded: `${base}.degraded.wav` };
  const refs = ch.store
    ? { clean: await ch.store.put(names.clean, cleanWav), degraded: await ch.store.put(names.degraded, out.wav) }
    : names;
  return {
    ref: { ...refs, duration_ms: plan.durationMs, preset: plan.preset, tts: ch.tts.id, timeline: out.timeline },
    degraded: out.wav,
    clean: cleanWav,
    cutMs,
  };
}
