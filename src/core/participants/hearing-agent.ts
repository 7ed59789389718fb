/**
 * {@link HearingAgent}: an agent that hears the caller's speech, for agents that take audio and
 * run where the episode's channel store cannot be read back at once (the page's realtime agent,
 * issue 17). Before each reply, every caller turn it has not heard yet gets a WAV: the channel's
 * degraded audio of the turn when `stored` has it, else the turn's text spoken by `tts` in the
 * caller's voice ({@link personaVoice} of the task's persona: clean speech, as a call without a
 * channel sounds). The inner agent is built with a `userAudio` hook over these, so a realtime
 * agent sends each caller turn as `input_audio_buffer.append` of PCM16 at its session's rate,
 * then a commit, instead of text.
 */
import { encodeWav } from '../audio/wav.ts';
import { toBase64 } from '../channel/audio-store.ts';
import { personaKey, personaVoice } from '../channel/persona-voice.ts';
import type { Tts } from '../ports/tts.ts';
import type { ParticipantCard, UserTurn } from '../schema/trajectory.ts';
import type { TurnAudio } from './model-messages.ts';
import type { Agent, EpisodeView, ParticipantReply } from './types.ts';

/** Where the caller's audio comes from. */
export interface CallerSpeech {
  /** Speaks a caller turn that has no stored audio (a call without a channel). */
  tts: Tts;
  /** The stored degraded WAV of a caller turn, when the call has a channel and it is kept. */
  stored?: (turn: UserTurn) => Uint8Array | undefined;
}

/** See the module comment. One instance per episode, as its inner agent. */
export class HearingAgent implements Agent {
  readonly id: string;
  readonly card?: ParticipantCard;
  /** Base64 WAV by trajectory index of the caller turns heard so far. */
  private readonly heard = new Map<number, string>();
  private readonly inner: Agent;

  /** @param make Builds the inner agent with the `userAudio` hook it must use. */
  constructor(
    make: (userAudio: TurnAudio) => Agent,
    private readonly speech: CallerSpeech,
  ) {
    this.inner = make((_turn, index) => this.heard.get(index) ?? null);
    this.id = this.inner.id;
    if (this.inner.card) this.card = this.inner.card;
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    for (const [i, t] of view.turns.entries()) {
      if (t.role !== 'user' || !t.text.trim() || this.heard.has(i)) continue;
      let wav = this.speech.stored?.(t);
      if (!wav) {
        const voice = personaVoice(view.domain.language, personaKey(view.task));
        const a = await this.speech.tts.synthesize(t.text, voice);
        wav = encodeWav(a.samples, a.sampleRate);
      }
      this.heard.set(i, toBase64(wav));
    }
    return this.inner.respond(view);
  }

  async close(): Promise<void> {
    this.heard.clear();
    await this.inner.close?.();
  }
}
