/**
 * Speech a model endpoint sent as a base64 WAV (an agent's audio output, a realtime agent's
 * response audio, an endpoint TTS's reply), decoded only when it is a recording we can use.
 */
import { fromBase64 } from '../channel/audio-store.ts';
import { AGENT_AUDIO_RATES_HZ, MAX_AGENT_AUDIO_S } from '../rollout/limits.ts';
import { decodeWav, type DecodedAudio } from './wav.ts';

/**
 * Base64 characters of the longest WAV accepted: {@link MAX_AGENT_AUDIO_S} of 48 kHz 16-bit
 * stereo plus 1 kB of header; longer text is refused before it is decoded.
 */
const MAX_AUDIO_BASE64 = Math.ceil(((MAX_AGENT_AUDIO_S * AGENT_AUDIO_RATES_HZ.max * 4 + 1024) * 4) / 3);

/**
 * Decode `base64`, a WAV file of speech from a model endpoint, to mono samples at its own rate, or
 * say why it was refused: over {@link MAX_AGENT_AUDIO_S} (checked on the base64 length before
 * decoding, then on the samples: a 50 MB reply is refused without being decoded), not base64, not
 * a decodable WAV, a rate outside {@link AGENT_AUDIO_RATES_HZ} (8–48 kHz: a header written wrong;
 * a 1 Hz header would make 24,000 samples 6.7 hours of audio), or no samples at all. Never throws.
 */
export function decodeSpeechWav(base64: string): DecodedAudio | { refused: string } {
  if (base64.length > MAX_AUDIO_BASE64)
    return { refused: `${Math.round((base64.length * 3) / 4)} bytes of audio, over the ${MAX_AGENT_AUDIO_S}-s limit` };
  let decoded: DecodedAudio;
  try {
    decoded = decodeWav(fromBase64(base64));
  } catch (e) {
    return { refused: `not a WAV file (${e instanceof Error ? e.message : String(e)})` };
  }
  const { samples, sampleRate } = decoded;
  if (!(sampleRate >= AGENT_AUDIO_RATES_HZ.min && sampleRate <= AGENT_AUDIO_RATES_HZ.max))
    return {
      refused: `sample rate ${sampleRate} Hz, outside ${AGENT_AUDIO_RATES_HZ.min}–${AGENT_AUDIO_RATES_HZ.max} Hz`,
    };
  if (samples.length === 0) return { refused: 'the WAV holds no samples' };
  if (samples.length > MAX_AGENT_AUDIO_S * sampleRate)
    return { refused: `${(samples.length / sampleRate).toFixed(1)} s of audio, over the ${MAX_AGENT_AUDIO_S}-s limit` };
  return decoded;
}
