/** Shared fixtures of the audio tests: the real noise recordings and a speech-like test signal. */
import { readFileSync } from 'node:fs';
import { testData } from '../fixtures/data.ts';
import { expect } from 'vitest';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { floatToInt16, SPEECH_PEAK_CEILING } from '../../src/core/audio/pcm.ts';
import type { Rng } from '../../src/core/ports/rng.ts';

/**
 * tau2-bench's noise recordings (16 kHz mono 16-bit), found by test/fixtures/data.ts; tests that
 * read them carry the tag `noise-data`.
 */
export const NOISE_DIR = testData('noise');

/** Samples of `<NOISE_DIR><name>.wav`; throws when it is not 16 kHz. */
export function loadNoise(name: string): Float32Array {
  const { samples, sampleRate } = decodeWav(new Uint8Array(readFileSync(`${NOISE_DIR}${name}.wav`)));
  if (sampleRate !== 16000) throw new Error(`${name}.wav is ${sampleRate} Hz`);
  return samples;
}

/**
 * Speech-like signal: voiced "syllables" (harmonics of a gliding 120–180 Hz pitch under a
 * 4 Hz envelope) separated by pauses, peak ≈ 0.3. Deterministic.
 */
export function speechLike(seconds: number, rate = 16000, rng?: Rng): Float32Array {
  const n = Math.round(seconds * rate);
  const out = new Float32Array(n);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const f0 = 150 + 30 * Math.sin(2 * Math.PI * 0.7 * t);
    phase += (2 * Math.PI * f0) / rate;
    let v = 0;
    for (let h = 1; h <= 20; h++) v += Math.sin(h * phase) / h;
    const syllable = Math.max(0, Math.sin(2 * Math.PI * 4 * t));
    const pause = Math.sin(2 * Math.PI * 0.25 * t) > -0.7 ? 1 : 0;
    out[i] = 0.15 * v * syllable * pause + (rng ? (rng.next() - 0.5) * 1e-4 : 0);
  }
  return out;
}

/** Element-wise a - b. */
export function diff(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) - (b[i] as number);
  return out;
}

/** A sine of `hz` at amplitude `amp`. */
export function sine(hz: number, seconds: number, amp = 0.5, rate = 16000): Float32Array {
  const n = Math.round(seconds * rate);
  return Float32Array.from({ length: n }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / rate));
}

/** Largest |sample| (full scale 1 for float samples, 32,768 for int16). */
export function peakOf(x: Float32Array | Int16Array): number {
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  return peak;
}

/**
 * Asserts that `unlimited` (a TTS waveform resampled to 16 kHz without a limit) overshoots full
 * scale and clips at the int16 limits, and that `limited` (what the TTS adapter returned) is the
 * same samples × 0.9 / peak, peaking at exactly 0.9 FS: 29,491 as 16-bit.
 */
export function expectPeakLimited(limited: Float32Array, unlimited: Float32Array): void {
  expect(peakOf(unlimited)).toBeGreaterThan(1);
  expect(peakOf(floatToInt16(unlimited))).toBeGreaterThanOrEqual(32767);
  const g = SPEECH_PEAK_CEILING / peakOf(unlimited);
  expect(Array.from(limited)).toEqual(Array.from(unlimited, (v) => Math.fround(v * g)));
  expect(peakOf(limited)).toBe(Math.fround(SPEECH_PEAK_CEILING));
  expect(peakOf(floatToInt16(limited))).toBe(29_491);
}
