/**
 * The call's stereo recording: caller on the left channel, agent on the right, 16-bit PCM
 * written by wavefile (pure JavaScript, page and Node alike).
 */
import wavefile from 'wavefile';
import { floatToInt16 } from '../audio/pcm.ts';
import { SPEECH_RATE_HZ } from '../audio/pcm.ts';

const { WaveFile } = wavefile;

/**
 * A 2-channel 16-bit WAV of `left` and `right` (float samples in [-1, 1], clipped) at
 * `rateHz` (16 kHz). The channels must have the same length.
 *
 * @throws RangeError when the lengths differ.
 */
export function stereoWav(left: Float32Array, right: Float32Array, rateHz = SPEECH_RATE_HZ): Uint8Array {
  if (left.length !== right.length)
    throw new RangeError(`stereo channels differ in length: ${left.length} vs ${right.length}`);
  const wav = new WaveFile();
  wav.fromScratch(2, rateHz, '16', [floatToInt16(left), floatToInt16(right)]);
  return wav.toBuffer();
}
