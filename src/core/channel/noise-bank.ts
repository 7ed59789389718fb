/**
 * A noise bank from user recordings, shared by the CLI's `--noise-dir` and the page's noise
 * file input: every WAV decoded to 16 kHz mono, then split by length — at least
 * {@link BED_MIN_S} seconds is a continuous background bed, shorter is a burst sound.
 */
import { decodeWav, resample } from '../audio/wav.ts';
import { SPEECH_RATE_HZ } from '../audio/pcm.ts';
import type { NoiseBank } from './chain.ts';

/** Minimum length of a background-noise recording: 10 s (shorter files are burst sounds). */
export const BED_MIN_S = 10;

/** A WAV file's bytes as 16 kHz mono samples (decoded, channels averaged, resampled). */
export function noiseRecording(bytes: Uint8Array): Float32Array {
  const { samples, sampleRate } = decodeWav(bytes);
  return sampleRate === SPEECH_RATE_HZ ? samples : resample(samples, sampleRate, SPEECH_RATE_HZ);
}

/** The recording's name in the bank: the file name without its `.wav` ending. */
export function noiseName(fileName: string): string {
  return fileName.replace(/\.wav$/i, '');
}

/** Split 16 kHz recordings (name → samples) into beds (≥ {@link BED_MIN_S} s) and bursts. */
export function splitNoiseBank(
  recordings: Iterable<readonly [string, Float32Array]>,
): Required<Pick<NoiseBank, 'continuous' | 'bursts'>> {
  const continuous: Record<string, Float32Array> = {};
  const bursts: Record<string, Float32Array> = {};
  for (const [name, x] of recordings) (x.length >= BED_MIN_S * SPEECH_RATE_HZ ? continuous : bursts)[name] = x;
  return { continuous, bursts };
}
