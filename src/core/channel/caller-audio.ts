/**
 * Caller speech through the phone channel for one turn: TTS → (dropout cut) → channel → two
 * 16 kHz mono 16-bit WAV files (clean and degraded) in an {@link AudioStore}, referenced from
 * the trajectory together with the effect timeline.
 */
import { activeRms, meanPower } from '../audio/measure.ts';
import { dbToGain, msToSamples, samplesToMs, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import { vocalTic } from '../audio/tics.ts';
import { rngFromState } from '../ports/rng.ts';
import { encodeWav } from '../audio/wav.ts';
import type { Tts, TtsVoice } from '../ports/tts.ts';
import type { Aside, TurnAudioRef } from '../schema/trajectory.ts';
import type { EffectEvent } from './timeline.ts';
import { babbleBed } from './babble.ts';
import { planInserts, type InsertPlan } from './inserts.ts';
import type { AudioStore } from './audio-store.ts';
import { isPassThrough, runChannel, type NoiseBank } from './chain.ts';
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
  // A loop, not Math.max(...powers): minutes of speech are more frames than a call's arguments allow.
  const max = powers.reduce((m, p) => Math.max(m, p), 0);
  if (max === 0) return 0;
  const floor = max * 10 ** (-SPEECH_END_GATE_DB / 10);
  for (let i = powers.length - 1; i >= 0; i--)
    if ((powers[i] as number) >= floor) return Math.min(x.length, (i + 1) * frame);
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
  /** Asides inserted into the audio (not part of `text`). */
  asides: Aside[];
}

/** Silence around an inserted tic or aside: 150 ms. */
export const INSERT_GAP_MS = 150;

/**
 * Speak `text` with the planned insertions: each text piece between insertion points is
 * spoken on its own, and every insertion sits between them with {@link INSERT_GAP_MS} of
 * silence either side, at its level relative to the active level of the turn's speech.
 */
async function speakWithInserts(
  ch: CallerChannel,
  text: string,
  inserts: readonly InsertPlan[],
): Promise<{ samples: Float32Array; events: EffectEvent[]; asides: Aside[] }> {
  type Piece = { kind: 'speech'; samples: Float32Array } | { kind: 'insert'; plan: InsertPlan; samples: Float32Array };
  const pieces: Piece[] = [];
  let from = 0;
  for (const ins of inserts) {
    const part = text.slice(from, ins.atChar);
    if (part.trim()) pieces.push({ kind: 'speech', samples: (await ch.tts.synthesize(part, ch.voice)).samples });
    from = ins.atChar;
    const samples =
      ins.kind === 'aside'
        ? (await ch.tts.synthesize(ins.text, ch.voice)).samples.slice()
        : vocalTic(ins.tic, SPEECH_RATE_HZ, rngFromState(ins.seed));
    pieces.push({ kind: 'insert', plan: ins, samples });
  }
  const rest = text.slice(from);
  if (rest.trim()) pieces.push({ kind: 'speech', samples: (await ch.tts.synthesize(rest, ch.voice)).samples });
  const speech = pieces.filter((p) => p.kind === 'speech').map((p) => p.samples);
  const joined = new Float32Array(speech.reduce((a, x) => a + x.length, 0));
  let joinedAt = 0;
  for (const x of speech) {
    joined.set(x, joinedAt);
    joinedAt += x.length;
  }
  const level = activeRms(joined, SPEECH_RATE_HZ) || 0.1;
  const gap = msToSamples(INSERT_GAP_MS, SPEECH_RATE_HZ);
  const total = pieces.reduce((a, p) => a + p.samples.length + (p.kind === 'insert' ? 2 * gap : 0), 0);
  const out = new Float32Array(total);
  const events: EffectEvent[] = [];
  const asides: Aside[] = [];
  let at = 0;
  for (const p of pieces) {
    if (p.kind === 'speech') {
      out.set(p.samples, at);
      at += p.samples.length;
      continue;
    }
    at += gap;
    const own = activeRms(p.samples, SPEECH_RATE_HZ) || 1;
    const g = (p.plan.kind === 'aside' ? 1 : level / own) * dbToGain(p.plan.levelDb);
    for (let i = 0; i < p.samples.length; i++) out[at + i] = (p.samples[i] as number) * g;
    const startMs = samplesToMs(at, SPEECH_RATE_HZ);
    const endMs = samplesToMs(at + p.samples.length, SPEECH_RATE_HZ);
    if (p.plan.kind === 'aside') {
      events.push({
        type: 'aside',
        start_ms: startMs,
        end_ms: endMs,
        params: { text: p.plan.text, level_db: p.plan.levelDb, at_char: p.plan.atChar },
      });
      asides.push({ text: p.plan.text, at_char: p.plan.atChar, start_ms: startMs, end_ms: endMs });
    } else {
      events.push({
        type: 'vocal_tic',
        start_ms: startMs,
        end_ms: endMs,
        params: { kind: p.plan.tic, level_db: p.plan.levelDb, at_char: p.plan.atChar },
      });
    }
    at += p.samples.length + gap;
  }
  return { samples: out, events, asides };
}

/**
 * Speak `text` and put it through the channel. With `heard` (a dropout), only the heard words
 * are spoken, cut at their end of speech (or the last VAD segment's end when the channel has a
 * VAD), so the audio holds exactly the words of the transcript; the channel then runs on the cut
 * audio, so its length in ms equals the cut time.
 */
export async function callerTurnAudio(
  ch: CallerChannel,
  text: string,
  key: CallerTurnKey,
  heard?: string,
  extraEvents: readonly EffectEvent[] = [],
): Promise<CallerTurnAudio> {
  const language = ch.voice?.language ?? 'en';
  // Tics and asides go into whole turns only (a cut turn keeps audio and text in sync).
  const inserts =
    heard === undefined
      ? planInserts(ch.preset, { seed: key.seed, taskId: key.taskId, turn: key.turn }, text, language)
      : [];
  let inserted: Awaited<ReturnType<typeof speakWithInserts>> | null = null;
  if (inserts.length > 0) inserted = await speakWithInserts(ch, text, inserts);
  let clean: Float32Array;
  let cutMs: number | null = null;
  if (heard !== undefined) {
    // The heard words are spoken on their own and cut where their speech ends: the audio holds
    // exactly the words of the transcript. (Cutting the whole utterance's audio at that time
    // left the next word half audible: a clause spoken alone ends slower than the same words
    // mid-sentence — measured ~170 ms, up to 465 ms, in English — and espeak-ng's program gives
    // no word timings to cut the whole audio by.)
    const prefix = await ch.tts.synthesize(heard, ch.voice);
    let end = speechEndSample(prefix.samples);
    if (ch.vad) {
      const segs = await ch.vad.segments(prefix.samples, SPEECH_RATE_HZ);
      const last = segs[segs.length - 1];
      if (last) end = Math.min(prefix.samples.length, msToSamples(last.endMs, SPEECH_RATE_HZ));
    }
    clean = prefix.samples.subarray(0, Math.min(prefix.samples.length, Math.max(1, end)));
    cutMs = samplesToMs(clean.length, SPEECH_RATE_HZ);
  } else {
    clean = inserted ? inserted.samples : (await ch.tts.synthesize(text, ch.voice)).samples;
  }
  const bankNames = { continuous: Object.keys(ch.bank?.continuous ?? {}), bursts: Object.keys(ch.bank?.bursts ?? {}) };
  const plan = planChannel(ch.preset, { seed: key.seed, taskId: key.taskId, turn: key.turn }, clean.length, bankNames);
  const bank =
    plan.noise?.source === 'procedural:babble'
      ? { ...ch.bank, babble: await babbleBed(ch.tts, language, key.seed) }
      : ch.bank;
  // A plan that applies nothing (the clean preset) skips the chain: the degraded turn is the clean one.
  const out = isPassThrough(plan) ? null : await runChannel(ch.renderer, clean, plan, bank);
  const extra = [...(inserted?.events ?? []), ...extraEvents];
  const own = out?.timeline ?? [];
  const timeline = extra.length ? [...own, ...extra].sort((a, b) => a.start_ms - b.start_ms) : own;
  const v = ch.voice;
  const cleanWav = encodeWav(clean, SPEECH_RATE_HZ);
  const degradedWav = out ? out.wav : cleanWav;
  const base = `${key.prefix}/turn-${String(key.turn).padStart(3, '0')}`;
  const names = { clean: `${base}.clean.wav`, degraded: `${base}.degraded.wav` };
  const refs = ch.store
    ? { clean: await ch.store.put(names.clean, cleanWav), degraded: await ch.store.put(names.degraded, degradedWav) }
    : names;
  return {
    ref: {
      ...refs,
      duration_ms: plan.durationMs,
      preset: plan.preset,
      tts: ch.tts.id,
      ...(v
        ? {
            voice: { language: v.language, name: v.voice ?? null, rate_wpm: v.rateWpm ?? null, pitch: v.pitch ?? null },
          }
        : {}),
      timeline,
    },
    degraded: degradedWav,
    clean: cleanWav,
    cutMs,
    asides: inserted?.asides ?? [],
  };
}
