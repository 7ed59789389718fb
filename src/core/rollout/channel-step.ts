/**
 * The episode loop's phone-channel step (issue 5), kept out of the loop itself: caller turns get
 * audio and may be cut off (dropout); agent replies may be interrupted (barge-in). Every random
 * choice here comes from a generator derived from (seed, task id, turn index) alone, never from
 * the participants' generators, so a run with the channel switched off is the text-only run
 * bit for bit, and a run with it on is reproducible.
 */
import { hash32, rngFromState } from '../ports/rng.ts';
import type { Task } from '../schema/task.ts';
import type { Interrupted, ToolCall, UserTurn } from '../schema/trajectory.ts';
import type { InterruptionType } from '../schema/trajectory.ts';
import { safeName } from '../channel/audio-store.ts';
import { normalizeMix, sampleInterruptionType } from '../channel/barge-in.ts';
import { heuristicPicker, type BargeInPicker } from '../channel/picker.ts';
import { personaKey, personaVoice } from '../channel/persona-voice.ts';
import type { EffectEvent } from '../channel/timeline.ts';
import { callerTurnAudio, speechEndSample, type CallerChannel } from '../channel/caller-audio.ts';
import { pickDropoutCut, type DropoutCutOptions } from '../channel/text-cut.ts';
import { samplesToMs, SPEECH_RATE_HZ } from '../audio/pcm.ts';

/** The channel settings of an episode ({@link EpisodeOptions.channel}). */
export interface EpisodeChannel extends CallerChannel {
  /** Probability that a caller turn is cut off mid-way (CLI `--dropout`, default 0). */
  dropout?: number;
  dropoutCut?: DropoutCutOptions;
  /** Probability that the caller barges in on an agent reply (CLI `--barge-in`, default 0). */
  bargeIn?: number;
  /** Ratios of the interruption types (normalized; default {@link DEFAULT_INTERRUPTION_MIX}). */
  mix?: Partial<Record<InterruptionType, number>>;
  /**
   * Chooses barge-in cuts and words (default the seeded heuristic; CLI `--barge-in-model` gives
   * a model picker). The type is always sampled here, by the program.
   */
  bargeInPicker?: BargeInPicker;
  /** Called with each caller turn's degraded WAV (e.g. to stream it to a page). */
  onAudio?: (turnIndex: number, degradedWav: Uint8Array) => void;
}

/** Identity of the episode for seeds and file names. */
export interface ChannelEpisodeKey {
  domain: string;
  /** BCP-47 language of the conversation (default TTS voice and phrase tables). */
  language: string;
  task: Task;
  trial: number;
  seed: number;
}

const rngFor = (what: string, key: ChannelEpisodeKey, turn: number) =>
  rngFromState(hash32(`${what}:${key.seed}:${key.task.id}:${turn}`));

/** Folder-like prefix of an episode's audio files: `audio/<domain>/<task>/<trial>-<seed>`. */
export function audioPrefix(key: ChannelEpisodeKey): string {
  return episodeAudioPrefix({ domain: key.domain, task_id: key.task.id, trial: key.trial, seed: key.seed });
}

/**
 * {@link audioPrefix} of a finished episode, from its trajectory's fields: every WAV its channel
 * stored (each caller turn's clean and degraded audio, the duplex call files) is named `<prefix>/…`.
 */
export function episodeAudioPrefix(t: { domain: string; task_id: string; trial: number; seed: number }): string {
  return `audio/${safeName(t.domain)}/${safeName(t.task_id)}/${t.trial}-${t.seed}`;
}

/** Fields a caller turn gains from the channel: heard text, dropout record, audio. */
export type CallerTurnFields = Pick<UserTurn, 'text'> & Partial<Pick<UserTurn, 'audio' | 'dropout' | 'asides'>>;

/** Notes for the timeline of a caller turn not yet spoken (a picker fallback on the barge-in turn), by episode and turn. */
const pendingNotes = new WeakMap<EpisodeChannel, Map<string, EffectEvent[]>>();
const noteKey = (key: ChannelEpisodeKey, turn: number) =>
  `${key.domain}\u0000${key.task.id}\u0000${key.trial}\u0000${key.seed}\u0000${turn}`;

/**
 * The caller's voice: the channel's fixed voice when it has one, else the persona's
 * ({@link personaVoice} of the task's persona, or its id).
 */
export function callerVoice(ch: EpisodeChannel, key: ChannelEpisodeKey) {
  return ch.voice ?? personaVoice(key.language, personaKey(key.task));
}

/**
 * The caller's spoken `text` at trajectory index `turn` through the channel. With probability
 * `dropout` (and only when `mayCut`, e.g. no stop token) the turn is cut: the returned text is
 * the heard part and `dropout` records the rest. Empty text: no audio.
 */
export async function channelCallerTurn(
  ch: EpisodeChannel,
  key: ChannelEpisodeKey,
  turn: number,
  text: string,
  mayCut: boolean,
): Promise<CallerTurnFields> {
  if (!text.trim()) return { text };
  const rng = rngFor('dropout', key, turn);
  const cut =
    mayCut && (ch.dropout ?? 0) > 0 && rng.next() < (ch.dropout ?? 0) ? pickDropoutCut(text, rng, ch.dropoutCut) : null;
  const voiced = { ...ch, voice: callerVoice(ch, key) };
  const notes = pendingNotes.get(ch);
  const extra = notes?.get(noteKey(key, turn)) ?? [];
  notes?.delete(noteKey(key, turn));
  const audio = await callerTurnAudio(
    voiced,
    text,
    { seed: key.seed, taskId: key.task.id, turn, prefix: audioPrefix(key) },
    cut?.heard,
    extra,
  );
  ch.onAudio?.(turn, audio.degraded);
  if (!cut) return { text, audio: audio.ref, ...(audio.asides.length ? { asides: audio.asides } : {}) };
  return {
    text: cut.heard,
    audio: audio.ref,
    dropout: { full_text: text, cut_char: cut.char, mode: cut.mode, cut_ms: audio.cutMs },
  };
}

/** A barge-in on an agent reply: the heard assistant record and the caller's interrupting turn. */
export interface ChannelBargeIn {
  interrupted: Interrupted;
  /** What the caller says, and the correction's value. */
  caller: { text: string; type: InterruptionType; value: string | null };
}

/**
 * Decide whether the caller barges in on the agent's reply `text` (trajectory index `turn`):
 * with probability `bargeIn`, sample the type from the mix and let the picker cut the reply.
 * The reply's tool calls are dropped (they come after its text, in its unspoken end). The cut
 * time is the end of speech of the TTS of the heard part (the agent's voice is not stored).
 */
export async function channelBargeIn(
  ch: EpisodeChannel,
  key: ChannelEpisodeKey,
  turn: number,
  text: string,
  calls: readonly ToolCall[],
): Promise<ChannelBargeIn | null> {
  const p = ch.bargeIn ?? 0;
  if (!(p > 0)) return null;
  const rng = rngFor('barge-in', key, turn);
  if (!(rng.next() < p)) return null;
  const type = sampleInterruptionType(normalizeMix(ch.mix), rng);
  const picker = ch.bargeInPicker ?? heuristicPicker;
  const result = await picker.pick(text, type, rng, {
    language: key.language,
    facts: key.task.user_scenario.facts ?? [],
  });
  const pick = result.pick;
  if (!pick) return null;
  if (result.note) {
    // The note goes on the timeline of the caller's interrupting turn (the next trajectory index).
    let notes = pendingNotes.get(ch);
    if (!notes) pendingNotes.set(ch, (notes = new Map()));
    notes.set(noteKey(key, turn + 1), [
      {
        type: 'note',
        start_ms: 0,
        end_ms: 0,
        params: { what: 'barge_in_picker_fallback', picker: picker.id, note: result.note },
      },
    ]);
  }
  const heardAudio = await ch.tts.synthesize(pick.cut.heard, { language: key.language });
  return {
    interrupted: {
      type,
      heard_text: pick.cut.heard,
      full_text: text,
      cut_char: pick.cut.char,
      cut_ms: samplesToMs(speechEndSample(heardAudio.samples), SPEECH_RATE_HZ),
      dropped_tool_calls: calls.map((c) => structuredClone(c)),
      ...(picker === heuristicPicker ? {} : { picker: result.picker }),
    },
    caller: { text: pick.text, type, value: pick.value },
  };
}
