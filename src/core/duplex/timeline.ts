/**
 * The full-duplex timeline of one episode (`run --duplex`): the episode loop's turns placed on
 * one time axis of whole ticks (200 ms by default), never read from the wall clock. The agent's
 * replies are synthesized (so their length is real), the caller's turns come through the phone
 * channel, and between and over them the caller backchannels, coughs, speaks to someone else or
 * barges in, and people nearby talk. The agent's turn-taking is {@link TurnTaking}: it answers
 * after `agentWaitMs` of silence, talks through backchannels, tics, asides and background speech,
 * and stops `yieldAfterMs` after a real barge-in, keeping in its history only the words said by
 * then. Every random choice comes from (seed, task, turn) alone, so a seeded call with scripted
 * participants is the same call bit for bit. At the end the timeline gives the trajectory's
 * duplex record with a stereo WAV (caller left, agent right), an Audacity label track and the
 * call's interaction metrics.
 */
import { msToSamples, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import { vocalTic, VOCAL_TIC_KINDS } from '../audio/tics.ts';
import { decodeSpeechWav } from '../audio/speech-wav.ts';
import { decodeWav, resample } from '../audio/wav.ts';
import { speechEndSample } from '../channel/caller-audio.ts';
import { asidePhrases } from '../channel/inserts.ts';
import { personaVoice } from '../channel/persona-voice.ts';
import { cutAfterToken, tokenize } from '../channel/text-cut.ts';
import { type PrefixSpeech, wordsSaidWithin } from './word-timing.ts';
import { MAX_OWN_AUDIO_STRETCH, OWN_AUDIO_SLACK_S } from '../rollout/limits.ts';
import { hash32, rngFromState, type Rng } from '../ports/rng.ts';
import type { TtsVoice } from '../ports/tts.ts';
import { ranToolTurn, type ReplyCap, type ToolCall, type Turn } from '../schema/trajectory.ts';
import {
  audioPrefix,
  callerVoice,
  channelBargeIn,
  channelCallerTurn,
  type CallerTurnFields,
  type ChannelBargeIn,
  type ChannelEpisodeKey,
  type EpisodeChannel,
} from '../rollout/channel-step.ts';
import { DEFAULT_WINDOWS, type InteractionWindows } from './interaction-events.ts';
import { interactionPanel } from './interaction-metrics.ts';
import { labelTrack, spanTicks, type DuplexRecord, type DuplexSpan } from './record.ts';
import { stereoWav } from './stereo.ts';
import {
  DEFAULT_TURN_TAKING,
  NO_OVERLAPS,
  type DuplexSettings,
  type Overlaps,
  type TurnTaking,
} from './turn-taking.ts';

/** A float buffer that grows as audio is placed on it. */
class Track {
  data = new Float32Array(SPEECH_RATE_HZ * 10);
  length = 0;

  /** A track holding `samples` (copied). */
  static of(samples: Float32Array): Track {
    const t = new Track();
    t.add(samples, 0);
    return t;
  }

  /** Mix `samples × gain` in at sample `at`. */
  add(samples: Float32Array, at: number, gain = 1): void {
    const end = at + samples.length;
    if (end > this.data.length) {
      const next = new Float32Array(Math.max(end, this.data.length * 2));
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    }
    for (let i = 0; i < samples.length; i++) this.data[at + i]! += samples[i]! * gain;
    this.length = Math.max(this.length, end);
  }

  /** The first `n` samples (zero-padded). */
  take(n: number): Float32Array {
    const out = new Float32Array(n);
    out.set(this.data.subarray(0, Math.min(n, this.length)));
    return out;
  }
}

/** Fade applied where the agent stops mid-word: 10 ms. */
const YIELD_FADE_MS = 10;
/** Level of an aside relative to the caller's speech: −10 dB (said away from the phone). */
const ASIDE_GAIN = 10 ** (-10 / 20);
/** Level of background speech: −15 dB. */
const BACKGROUND_GAIN = 10 ** (-15 / 20);
/** Level of a vocal tic: −6 dB. */
const TIC_GAIN = 10 ** (-6 / 20);

/**
 * The state of a timeline at a point of its episode (a milestone, a decision point), from
 * {@link DuplexTimeline.save}: a timeline built from it ({@link DuplexTimeline}'s `from`) goes on
 * exactly where this one was. Every random choice of the timeline and the channel comes from
 * (seed, task, turn), so nothing else is needed: a fork with the source's seed replays the
 * source's call bit for bit, a fork with another seed draws its own overlaps from there on.
 */
export interface TimelineState {
  /** Trajectory turns placed so far (the episode's turn count when saved). */
  turns: number;
  /** Spans so far (deep copies). */
  spans: DuplexSpan[];
  /** Tick at which the last floor-holder stopped, and who it was. */
  lastEnd: number;
  lastWho: 'caller' | 'agent' | null;
  /** Where the caller's interrupting turn starts, when a barge-in awaits its turn. */
  bargeOnset: number | null;
  /** The caller's last turn was a barge-in the agent has not answered yet. */
  answering: boolean;
  /** Earliest tick of the caller's next turn (after background speech). */
  callerNotBefore: number;
  /**
   * Both tracks so far (16 kHz samples, copies), or null when not kept: a timeline resumed
   * without them stores no stereo WAV or label track (its record's `audio` is null).
   */
  audio: { caller: Float32Array; agent: Float32Array } | null;
}

/**
 * Longest agent reply spoken on the timeline: 1,000 characters (ours). At espeak-ng's default
 * rates that is about 70 s of English (~14 characters/s) and under 4 minutes of Mandarin
 * (~4.5 characters/s); a runaway reply (16,000 characters is about 11 minutes of speech and
 * minutes of synthesis) is cut at the last word boundary within it, the rest marked unspoken
 * (`unspoken_chars` on the span, "[n more characters not spoken]" in the labels). The reply's
 * text in the trajectory, and so its scoring, is unchanged.
 */
export const MAX_SPOKEN_AGENT_CHARS = 1_000;

/** Tokens of `reply` that end within the first {@link MAX_SPOKEN_AGENT_CHARS} characters (at least 1). */
function spokenTokens(reply: string): number {
  return Math.max(1, tokenize(reply).filter((t) => t.end <= MAX_SPOKEN_AGENT_CHARS).length);
}

/** The agent's reply as placed: a barge-in to hand to the loop, or null when it was said whole. */
export type AgentSpeech = ChannelBargeIn | null;

/**
 * One episode's timeline. Create one per episode; the episode loop calls {@link agentSpeech}
 * for every agent text, {@link callerSpeech} for every caller text, {@link toolCall} for every
 * tool call, and {@link finish} at the end.
 */
export class DuplexTimeline {
  readonly tt: TurnTaking;
  readonly overlaps: Overlaps;
  private spans: DuplexSpan[] = [];
  private readonly caller: Track;
  private readonly agent: Track;
  /** False for a timeline resumed from a state without audio: no stereo WAV is stored. */
  private readonly keepsAudio: boolean;
  private readonly tickSamples: number;
  /** Tick at which the last floor-holder stopped, and who it was. */
  private lastEnd = 0;
  private lastWho: 'caller' | 'agent' | null = null;
  /** Where the caller's interrupting turn starts (set by a barge-in, used by the next caller turn). */
  private bargeOnset: number | null = null;
  /** The caller's last turn was a barge-in the agent has not answered yet. */
  private answering = false;
  /** Earliest tick of the caller's next turn (after background speech). */
  private callerNotBefore = 0;
  private readonly agentVoice: TtsVoice;
  /** This episode's view of the channel: hands each caller turn's degraded WAV to the timeline too. */
  private readonly ch: EpisodeChannel;
  /** The degraded WAV of the last caller turn. */
  private lastWav: Uint8Array | null = null;

  /**
   * @param from A saved state ({@link save}) to go on from, e.g. a milestone fork's; absent: the
   *   call's start.
   */
  constructor(
    channel: EpisodeChannel,
    private readonly key: ChannelEpisodeKey,
    private readonly settings: DuplexSettings = {},
    from?: TimelineState,
  ) {
    this.caller = from?.audio ? Track.of(from.audio.caller) : new Track();
    this.agent = from?.audio ? Track.of(from.audio.agent) : new Track();
    this.keepsAudio = !from || from.audio !== null;
    if (from) {
      this.spans = structuredClone(from.spans);
      this.lastEnd = from.lastEnd;
      this.lastWho = from.lastWho;
      this.bargeOnset = from.bargeOnset;
      this.answering = from.answering;
      this.callerNotBefore = from.callerNotBefore;
    }
    this.ch = {
      ...channel,
      onAudio: (i, wav) => {
        this.lastWav = wav;
        channel.onAudio?.(i, wav);
      },
    };
    this.tt = { ...DEFAULT_TURN_TAKING, ...settings.turnTaking };
    this.overlaps = { ...NO_OVERLAPS, ...settings.overlaps };
    this.tickSamples = msToSamples(this.tt.tickMs, SPEECH_RATE_HZ);
    this.agentVoice = { language: key.language };
  }

  private ticks(ms: number): number {
    return Math.ceil(ms / this.tt.tickMs - 1e-9);
  }

  private samplesToTicks(n: number): number {
    return Math.max(1, Math.ceil(n / this.tickSamples));
  }

  private rng(what: string, turn: number): Rng {
    return rngFromState(hash32(`duplex:${what}:${this.key.seed}:${this.key.task.id}:${turn}`));
  }

  /** Where the agent starts now: after its wait when the caller held the floor, else at once. */
  private agentStart(): number {
    return this.lastWho === 'caller' ? this.lastEnd + this.ticks(this.tt.agentWaitMs) : this.lastEnd;
  }

  private span(s: DuplexSpan): void {
    this.spans.push(s);
  }

  /** Speech of the caller's voice (or `voice`), its samples trimmed to the end of speech. */
  private async speak(text: string, voice: TtsVoice): Promise<Float32Array> {
    const a = await this.ch.tts.synthesize(text, voice);
    return a.samples.subarray(0, Math.max(1, speechEndSample(a.samples)));
  }

  /**
   * Length (samples) of the speech of a prefix of the reply: its synthesis × `scale` ({@link ownScale}:
   * word ends on the agent's own audio in proportion to the synthesis's, as no word timings come with it).
   */
  private prefixSpeech(scale: number): PrefixSpeech {
    return async (prefix) => Math.round((await this.speak(prefix, this.agentVoice)).length * scale);
  }

  /**
   * Place an agent reply `text` (trajectory index `turn`), as the agent's own audio `own` (see
   * {@link agentOwnAudio}) when it gave some that speaks the text (at most
   * {@link MAX_OWN_AUDIO_STRETCH} × its synthesis + {@link OWN_AUDIO_SLACK_S}), else as its
   * synthesis; the span's `own_audio` says which, and why own audio was refused. When `mayOverlap` (no stop token),
   * the channel may barge in: a backchannel is said over the reply (not a turn), another type
   * makes the agent yield `yieldAfterMs` after the caller starts, and the returned barge-in
   * carries the heard part (the words whose end, measured on the synthesis by
   * {@link wordsSaidWithin}, is at or before the stop) for the loop to record. Asides and tics are said over a reply without a barge-in;
   * background speech follows it. `capped`: the turn's {@link ReplyCap} when the reply was stopped
   * at a response limit (kept on the span and in its label).
   */
  async agentSpeech(
    turn: number,
    reply: string,
    calls: readonly ToolCall[],
    mayOverlap: boolean,
    own: OwnAudio = null,
    capped: ReplyCap | null = null,
  ): Promise<AgentSpeech> {
    const start = this.agentStart();
    // A runaway reply is spoken only up to the cap (the rest is marked unspoken on the span).
    const over = reply.length > MAX_SPOKEN_AGENT_CHARS;
    const text = over ? cutAfterToken(reply, spokenTokens(reply)).heard : reply;
    const unspoken = over ? { unspoken_chars: reply.length - text.length } : {};
    const synth = await this.speak(text, this.agentVoice);
    let samples = synth;
    let ownNote: string | null = own && 'refused' in own ? `refused: ${own.refused}` : null;
    if (own && 'samples' in own) {
      const limit = MAX_OWN_AUDIO_STRETCH * synth.length + OWN_AUDIO_SLACK_S * SPEECH_RATE_HZ;
      if (own.samples.length > limit) {
        const s = (n: number) => `${(n / SPEECH_RATE_HZ).toFixed(1)} s`;
        ownNote = `refused: ${s(own.samples.length)} of audio for ${s(synth.length)} of speech (over ${MAX_OWN_AUDIO_STRETCH}× + ${OWN_AUDIO_SLACK_S} s)`;
      } else {
        samples = own.samples;
        ownNote = 'used';
      }
    }
    const note = { ...(ownNote ? { own_audio: ownNote } : {}), ...unspoken, ...(capped ? { capped } : {}) };
    // Word ends on the agent's own audio: in proportion to the synthesis's (no timings come with it).
    const scale = samples.length / synth.length;
    const length = this.samplesToTicks(samples.length);
    const end = start + length;
    // The answer to a barge-in is let finish when the settings say so (the user-interruption subset).
    const letFinish = this.answering && this.settings.letAnswerAfterBargeIn === true;
    this.answering = false;
    const barge = mayOverlap && !letFinish ? await channelBargeIn(this.ch, this.key, turn, text, calls) : null;
    // An overlap needs the backchannel/aside window (1 s) and a tick of the reply after it, else
    // the reply's natural end would look like a yield to it.
    const room = this.ticks(1000) + 1;
    if (barge && barge.interrupted.type !== 'backchannel') {
      // The channel measures its cut on the synthesis; on the agent's own audio the cut falls
      // at the same share of the reply (scaled by own length / synthesis length).
      const onset = Math.min(end - 1, start + Math.floor(((barge.interrupted.cut_ms ?? 0) * scale) / this.tt.tickMs));
      const stop = Math.min(end, onset + this.ticks(this.tt.yieldAfterMs));
      const saidSamples = (stop - start) * this.tickSamples;
      const tokens = tokenize(text);
      // The heard words are those whose end (from the synthesis, ./word-timing.ts) is at or
      // before the agent's stop; all of them when it stopped after the end of its speech.
      const k =
        saidSamples >= samples.length
          ? tokens.length
          : (await wordsSaidWithin(text, tokens, saidSamples, this.prefixSpeech(scale))).k;
      const heard = k >= tokens.length ? null : cutAfterToken(text, k);
      const said = samples.slice(0, Math.min(samples.length, saidSamples));
      const fade = msToSamples(YIELD_FADE_MS, SPEECH_RATE_HZ);
      for (let i = 0; i < Math.min(fade, said.length); i++) said[said.length - 1 - i]! *= i / fade;
      this.agent.add(said, start * this.tickSamples);
      const heardText = heard ? heard.heard : text;
      this.span({
        who: 'agent',
        kind: 'speech',
        start_tick: start,
        end_tick: stop,
        text: heardText,
        turn,
        ...(heard ? { yielded: true } : {}),
        ...note,
      });
      this.bargeOnset = onset;
      this.lastEnd = stop;
      this.lastWho = 'agent';
      if (!heard) return null;
      return {
        interrupted: {
          ...barge.interrupted,
          heard_text: heard.heard,
          cut_char: heard.char,
          cut_ms: (stop - start) * this.tt.tickMs,
        },
        caller: barge.caller,
      };
    }
    this.agent.add(samples, start * this.tickSamples);
    this.span({ who: 'agent', kind: 'speech', start_tick: start, end_tick: end, text, turn, ...note });
    if (barge && length > room) {
      // A backchannel over the reply: heard, never a turn; the agent talks through it.
      const onset = Math.min(end - room, start + Math.floor((barge.interrupted.cut_ms ?? 0) / this.tt.tickMs));
      const bc = await this.speak(barge.caller.text, callerVoice(this.ch, this.key));
      this.caller.add(bc, onset * this.tickSamples);
      this.span({
        who: 'caller',
        kind: 'backchannel',
        start_tick: onset,
        end_tick: onset + this.samplesToTicks(bc.length),
        text: barge.caller.text,
        turn: null,
      });
    } else if (!barge && mayOverlap) {
      await this.overSpeech(turn, start, end, room);
    }
    this.lastEnd = end;
    this.lastWho = 'agent';
    if (mayOverlap && this.overlaps.background > 0) await this.backgroundAfter(turn, end);
    return null;
  }

  /**
   * A tic or an aside of the caller over the agent's reply `[start, end)`, by the overlap rates.
   * It starts at least a tick into the reply, ends a tick before the reply does and leaves
   * `room` ticks of the reply after its start (else none is said): so the agent is heard to
   * talk through it, and it never reads as a caller turn.
   */
  private async overSpeech(turn: number, start: number, end: number, room: number): Promise<void> {
    const place = (r: Rng, sound: Float32Array): number | null => {
      const last = Math.min(end - room, end - 1 - this.samplesToTicks(sound.length));
      return last < start + 1 ? null : start + 1 + r.int(last - start);
    };
    const tic = this.rng('tic', turn);
    if (this.overlaps.vocalTic > 0 && tic.next() < this.overlaps.vocalTic) {
      const kind = tic.pick(VOCAL_TIC_KINDS);
      const sound = vocalTic(kind, SPEECH_RATE_HZ, tic.fork('sound'));
      const onset = place(tic, sound);
      if (onset !== null) {
        this.caller.add(sound, onset * this.tickSamples, TIC_GAIN);
        this.span({
          who: 'caller',
          kind: 'vocal_tic',
          start_tick: onset,
          end_tick: onset + this.samplesToTicks(sound.length),
          text: `[${kind}]`,
          turn: null,
        });
        return;
      }
    }
    const aside = this.rng('aside', turn);
    if (this.overlaps.aside > 0 && aside.next() < this.overlaps.aside) {
      const words = aside.pick(asidePhrases(this.key.language));
      const sound = await this.speak(words, callerVoice(this.ch, this.key));
      const onset = place(aside, sound);
      if (onset === null) return;
      this.caller.add(sound, onset * this.tickSamples, ASIDE_GAIN);
      this.span({
        who: 'caller',
        kind: 'aside',
        start_tick: onset,
        end_tick: onset + this.samplesToTicks(sound.length),
        text: words,
        turn: null,
      });
    }
  }

  /** Another person speaking near the caller's phone, one tick after the agent's reply ends at `end`. */
  private async backgroundAfter(turn: number, end: number): Promise<void> {
    const r = this.rng('background', turn);
    if (!(r.next() < this.overlaps.background)) return;
    const words = r.pick(asidePhrases(this.key.language));
    const voice = personaVoice(this.key.language, `background:${this.key.seed}:${turn}`);
    const sound = await this.speak(words, voice);
    const onset = end + 1;
    const stop = onset + this.samplesToTicks(sound.length);
    this.caller.add(sound, onset * this.tickSamples, BACKGROUND_GAIN);
    this.span({ who: 'caller', kind: 'background', start_tick: onset, end_tick: stop, text: words, turn: null });
    // The caller waits for the nearby speaker to finish before taking its turn.
    this.callerNotBefore = stop + 1;
  }

  /**
   * Place a caller turn `text` (trajectory index `turn`) through the channel: after the caller's
   * wait, or where its barge-in started. Returns the channel's fields for the turn.
   */
  async callerSpeech(turn: number, text: string, mayCut: boolean, bargeIn: boolean): Promise<CallerTurnFields> {
    this.lastWav = null;
    const fields = await channelCallerTurn(this.ch, this.key, turn, text, mayCut);
    const wav = this.lastWav as Uint8Array | null;
    const start =
      bargeIn && this.bargeOnset !== null
        ? this.bargeOnset
        : // After the agent, or after its own turn when the agent said nothing (the caller speaks again).
          Math.max(this.callerNotBefore, this.lastEnd + (this.lastWho === null ? 0 : this.ticks(this.tt.callerWaitMs)));
    this.bargeOnset = null;
    this.answering = bargeIn;
    if (!fields.audio) return fields;
    const samples = wav ? decodeWav(wav).samples : await this.speak(fields.text, callerVoice(this.ch, this.key));
    this.caller.add(samples, start * this.tickSamples);
    const end = start + this.samplesToTicks(msToSamples(fields.audio.duration_ms, SPEECH_RATE_HZ));
    this.span({
      who: 'caller',
      kind: bargeIn ? 'barge_in' : 'turn',
      start_tick: start,
      end_tick: end,
      text: fields.text,
      turn,
    });
    this.lastEnd = Math.max(this.lastEnd, end);
    this.lastWho = 'caller';
    return fields;
  }

  /** A tool call by `who`: it takes `toolCallMs`, after that side's wait when the other side spoke last. */
  toolCall(who: 'assistant' | 'user'): void {
    const side = who === 'assistant' ? 'agent' : 'caller';
    const wait = who === 'assistant' ? this.tt.agentWaitMs : this.tt.callerWaitMs;
    const base = this.lastWho !== null && this.lastWho !== side ? this.lastEnd + this.ticks(wait) : this.lastEnd;
    this.lastEnd = base + this.ticks(this.tt.toolCallMs);
    this.lastWho = side;
  }

  /**
   * Save the timeline after `turns` trajectory turns (see {@link TimelineState}), with copies of
   * both tracks when `audio` (default true; a 3-minute call is about 23 MB of them), else none.
   */
  save(turns: number, audio = true): TimelineState {
    return {
      turns,
      spans: structuredClone(this.spans),
      lastEnd: this.lastEnd,
      lastWho: this.lastWho,
      bargeOnset: this.bargeOnset,
      answering: this.answering,
      callerNotBefore: this.callerNotBefore,
      audio:
        audio && this.keepsAudio
          ? { caller: this.caller.take(this.caller.length), agent: this.agent.take(this.agent.length) }
          : null,
    };
  }

  /**
   * Place turns given whole (no overlap, no barge-in, no dropout: they were decided elsewhere,
   * e.g. a turn-level candidate and its tool results), from trajectory index `from` on: spoken
   * agent turns as {@link agentSpeech} (their own audio absent: synthesized), caller turns as
   * {@link callerSpeech} (a `barge_in` turn where its barge-in started), tool turns as
   * {@link toolCall}.
   */
  async placeWhole(turns: readonly Turn[], from: number): Promise<void> {
    for (let i = from; i < turns.length; i++) {
      const t = turns[i]!;
      if (t.role === 'tool') {
        // An answer to a call that never ran (`not_run`) took no time.
        if (ranToolTurn(t)) this.toolCall(t.requestor);
      } else if (t.role === 'assistant' && t.text) await this.agentSpeech(i, t.text, [], false, null, t.capped ?? null);
      else if (t.role === 'user' && t.text) await this.callerSpeech(i, t.text, false, t.barge_in !== undefined);
    }
  }

  /** The record so far, without stored files or metrics. */
  record(): Omit<DuplexRecord, 'audio' | 'metrics'> {
    const spans = [...this.spans].sort(
      (a, b) => a.start_tick - b.start_tick || (a.who === b.who ? 0 : a.who === 'caller' ? -1 : 1),
    );
    const last = spans.reduce((m, s) => Math.max(m, s.end_tick), 0);
    return {
      subset: this.settings.subset ?? null,
      turn_taking: {
        tick_ms: this.tt.tickMs,
        agent_wait_ms: this.tt.agentWaitMs,
        caller_wait_ms: this.tt.callerWaitMs,
        yield_after_ms: this.tt.yieldAfterMs,
        tool_call_ms: this.tt.toolCallMs,
      },
      // One tick of silence after the last speech closes every segment.
      total_ticks: last > 0 ? last + 1 : 0,
      spans,
    };
  }

  /**
   * The trajectory's duplex record: spans, metrics of this call (null without speech), and
   * with a store the stereo WAV and the label track (`<audio prefix>/call.stereo.wav`,
   * `call.labels.txt`).
   */
  async finish(): Promise<DuplexRecord> {
    const rec = this.record();
    const metrics = rec.total_ticks > 0 ? interactionPanel([{ ticks: spanTicks(rec) }], this.windows()) : null;
    let audio: DuplexRecord['audio'] = null;
    const store = this.ch.store;
    if (store && this.keepsAudio && rec.total_ticks > 0) {
      const n = rec.total_ticks * this.tickSamples;
      const prefix = audioPrefix(this.key);
      audio = {
        stereo: await store.put(`${prefix}/call.stereo.wav`, stereoWav(this.caller.take(n), this.agent.take(n))),
        labels: await store.put(`${prefix}/call.labels.txt`, new TextEncoder().encode(labelTrack(rec))),
      };
    }
    return { ...rec, audio, metrics: metrics as unknown as Record<string, unknown> | null };
  }

  /** Detection windows for this call's metrics: tau2-bench's, with this timeline's tick. */
  windows(): InteractionWindows {
    return { ...DEFAULT_WINDOWS, tick_duration_sec: this.tt.tickMs / 1000 };
  }
}

/**
 * The agent's own audio of a reply, checked: 16 kHz mono samples to place, or why it was refused
 * (the reply is then synthesized from its text), or null when the reply carried none.
 */
export type OwnAudio = { samples: Float32Array } | { refused: string } | null;

/**
 * The agent's own speech in a reply (a realtime agent's response audio, an endpoint's audio
 * output, e.g. OpenAI's `message.audio.data`): the first audio content part
 * `{ type: 'audio', base64 }` of `reply.parts`, a WAV file of 8–48 kHz, as 16 kHz mono samples
 * ({@link SPEECH_RATE_HZ}). Null when there is none; `refused` with the reason when
 * {@link decodeSpeechWav} refuses it (over 120 s, not a WAV, a rate outside 8–48 kHz, empty). Nothing the agent sends makes the call invalid: a refused reply is
 * synthesized from its text.
 */
export function agentOwnAudio(reply: unknown): OwnAudio {
  const parts = (reply as { parts?: unknown } | null)?.parts;
  if (!Array.isArray(parts)) return null;
  const part = parts.find((p) => (p as { type?: unknown } | null)?.type === 'audio') as
    | { base64?: unknown }
    | undefined;
  if (typeof part?.base64 !== 'string') return null;
  const decoded = decodeSpeechWav(part.base64);
  if ('refused' in decoded) return decoded;
  const { samples, sampleRate } = decoded;
  return { samples: sampleRate === SPEECH_RATE_HZ ? samples : resample(samples, sampleRate, SPEECH_RATE_HZ) };
}
