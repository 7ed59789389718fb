/**
 * Procedural vocal tics at 16 kHz: a cough (one or two explosive noise bursts, band-limited to
 * the voice range, with fast attack and ~60 ms decay) and a sniffle (one or two short nasal
 * inhalations: high-passed noise under a raised-sine envelope). Unit active RMS; deterministic
 * for a given generator.
 */
import type { Rng } from '../ports/rng.ts';
import { biquadCascadeInPlace, biquadCoefficients } from './biquad.ts';
import { msToSamples } from './pcm.ts';
import { activeRms } from './measure.ts';

export type VocalTicKind = 'cough' | 'sniffle';
export const VOCAL_TIC_KINDS: readonly VocalTicKind[] = ['cough', 'sniffle'];

function scaleToUnit(x: Float32Array, rateHz: number): Float32Array {
  const r = activeRms(x, rateHz) || 1;
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) / r;
  return x;
}

/** A cough of 180–560 ms (one or two bursts). */
export function coughSound(rateHz: number, rng: Rng): Float32Array {
  const bursts = 1 + rng.int(2);
  const burstMs = 180 + rng.next() * 60;
  const gapMs = 40 + rng.next() * 40;
  const n = msToSamples(bursts * burstMs + (bursts - 1) * gapMs, rateHz);
  const x = new Float32Array(n);
  const attack = msToSamples(6, rateHz);
  const tau = msToSamples(55 + rng.next() * 25, rateHz);
  const f0 = 110 + rng.next() * 80;
  for (let b = 0; b < bursts; b++) {
    const start = msToSamples(b * (burstMs + gapMs), rateHz);
    const len = msToSamples(burstMs, rateHz);
    const amp = b === 0 ? 1 : 0.6;
    for (let i = 0; i < len && start + i < n; i++) {
      const env = (i < attack ? i / attack : Math.exp(-(i - attack) / tau)) * amp;
      // Turbulent noise with a little voicing (the glottis closes at the end of a cough).
      const voiced = 0.3 * Math.sin((2 * Math.PI * f0 * i) / rateHz);
      x[start + i] = env * (2 * rng.next() - 1 + voiced);
    }
  }
  // High-pass 200 Hz, 4th-order low-pass 2.5 kHz (Butterworth sections): the chest and throat band.
  biquadCascadeInPlace(x, [
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: the Q as tabulated to four places; Math.SQRT1_2 would change the stored audio
    biquadCoefficients('highpass', 200, 0.7071, rateHz),
    biquadCoefficients('lowpass', 2500, 0.5412, rateHz),
    biquadCoefficients('lowpass', 2500, 1.3066, rateHz),
  ]);
  return scaleToUnit(x, rateHz);
}

/** A sniffle of 110–400 ms. */
export function sniffleSound(rateHz: number, rng: Rng): Float32Array {
  const pulls = 1 + rng.int(2);
  const pullMs = 110 + rng.next() * 60;
  const gapMs = 40 + rng.next() * 30;
  const n = msToSamples(pulls * pullMs + (pulls - 1) * gapMs, rateHz);
  const x = new Float32Array(n);
  for (let p = 0; p < pulls; p++) {
    const start = msToSamples(p * (pullMs + gapMs), rateHz);
    const len = msToSamples(pullMs, rateHz);
    for (let i = 0; i < len && start + i < n; i++)
      x[start + i] = Math.sin((Math.PI * i) / len) ** 2 * (2 * rng.next() - 1);
  }
  biquadCascadeInPlace(x, [
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: the Q as tabulated to four places; Math.SQRT1_2 would change the stored audio
    biquadCoefficients('highpass', 1500, 0.7071, rateHz),
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: the Q as tabulated to four places; Math.SQRT1_2 would change the stored audio
    biquadCoefficients('lowpass', 6000, 0.7071, rateHz),
  ]);
  return scaleToUnit(x, rateHz);
}

/** The tic of `kind`. */
export function vocalTic(kind: VocalTicKind, rateHz: number, rng: Rng): Float32Array {
  return kind === 'cough' ? coughSound(rateHz, rng) : sniffleSound(rateHz, rng);
}
