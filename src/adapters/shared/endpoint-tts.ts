/**
 * {@link Tts} over a model endpoint's own speech (vLLM-Omni serving Qwen-Omni, or OpenAI audio
 * output) through a {@link ModelClient}: the model is asked to say the text verbatim with
 * `audio: { voice }`; the reply's WAV (24 kHz from vLLM-Omni and OpenAI) is checked and decoded
 * (`decodeSpeechWav`: 8–48 kHz, 1 sample to 120 s), mixed to mono, resampled to 16 kHz and
 * peak-limited to 0.9 FS like every TTS's speech (`speechFromTtsSamples`). A reply without audio,
 * or with audio it refuses, throws an `InfrastructureError` naming the endpoint and why: the
 * caller's speech is the sandbox's, so the rollout is invalid (resampled), never scored on a
 * silent or garbled turn. Not bit-deterministic unless the server is (sampling is sent
 * explicitly: temperature 0, a fixed seed).
 */
import type { ModelClient } from '../../core/ports/model-client.ts';
import type { Tts, TtsAudio, TtsVoice } from '../../core/ports/tts.ts';
import { InfrastructureError } from '../../core/errors.ts';
import { decodeSpeechWav } from '../../core/audio/speech-wav.ts';
import { speechFromTtsSamples } from '../../core/audio/wav.ts';

/** Options of {@link endpointTts}. */
export interface EndpointTtsOptions {
  /** Speaker used when the voice names none (vLLM-Omni Qwen3-Omni: `Ethan`, `Chelsie`; OpenAI: `alloy`). Default `Ethan`. */
  speaker?: string;
  /** Most tokens of the spoken text reply. Default 1024. */
  maxTokens?: number;
}

/** Instruction that makes an omni model a reader. */
export const ENDPOINT_TTS_SYSTEM =
  'Read the user message aloud exactly as written, word for word, in its own language. Do not add, answer or translate anything.';

/** A {@link Tts} backed by an endpoint's audio output. `TtsVoice.voice` is taken as the speaker name when it is not an espeak-ng name. */
export function endpointTts(client: ModelClient, opts: EndpointTtsOptions = {}): Tts {
  const fallbackSpeaker = opts.speaker ?? 'Ethan';
  return {
    id: `endpoint:${client.id}`,
    async synthesize(text: string, voice?: TtsVoice): Promise<TtsAudio> {
      // espeak-ng names (`en-us+f3`, `cmn`) mean nothing to an endpoint.
      const speaker =
        voice?.voice && !/[+]|^(?:cmn|en-us|[a-z]{2,3}(?:-[a-z]{2})?)$/.test(voice.voice)
          ? voice.voice
          : fallbackSpeaker;
      const res = await client.complete({
        messages: [
          { role: 'system', content: ENDPOINT_TTS_SYSTEM },
          { role: 'user', content: text },
        ],
        sampling: { temperature: 0, top_p: 1, top_k: null, max_tokens: opts.maxTokens ?? 1024, seed: 0 },
        audio: { voice: speaker },
      });
      if (!res.audio)
        throw new InfrastructureError(
          `endpoint TTS ${client.id}: the reply has no audio (is audio output enabled on the server?)`,
        );
      // Checked before it is decoded and resampled: a reply of 50 MB or a WAV header of 1 Hz took
      // minutes of CPU, and an empty WAV was a silent caller turn scored as if it were heard.
      const decoded = decodeSpeechWav(res.audio.base64);
      if ('refused' in decoded)
        throw new InfrastructureError(`endpoint TTS ${client.id}: refused the reply's audio: ${decoded.refused}`);
      return speechFromTtsSamples(decoded.samples, decoded.sampleRate);
    },
  };
}
