/**
 * Measurements on the audio itself, used by the mixer (levels) and by the tests (SNR, band
 * energy, drop rates).
 */
import { fft } from './fft.ts';

/** Mean power (mean of squares) of `x[start, end)`; 0 for an empty range. */
export function meanPower(x: Float32Array, start = 0, end = x.length): number {
  let s = 0;
  for (let i = start; i < end; i++) {
    const v = x[i] as number;
    s += v * v;
  }
  return end > start ? s / (end - start) : 0;
}

/** Root mean square of `x[start, end)`. */
export function rms(x: Float32Array, start = 0, end = x.length): number {
  return Math.sqrt(meanPower(x, start, end));
}

/** Power ratio in dB (`10·log10(a/b)`). */
export function powerRatioDb(a: number, b: number): number {
  return 10 * Math.log10(a / b);
}

/**
 * Signal-to-noise ratio in dB of two separate components (`10·log10(P_signal / P_noise)`), each
 * over its whole length.
 */
export function snrDb(signal: Float32Array, noise: Float32Array): number {
  return powerRatioDb(meanPower(signal), meanPower(noise));
}

/** Frame length of the active-level gate: 20 ms (a common speech frame). */
export const ACTIVE_FRAME_MS = 20;
/** Frames quieter than the loudest frame by more than this many dB are silence: 40 dB. */
export const ACTIVE_GATE_DB = 40;

/**
 * RMS over the active frames of `x`: frames (20 ms) whose power is within 40 dB of the loudest
 * frame. This is the speech level the mixer sets the SNR against, so leading and trailing
 * silence of a TTS clip does not lower it. (A simple gate in the spirit of ITU-T P.56's active
 * speech level, not an implementation of it.) Returns 0 for an all-zero signal.
 */
export function activeRms(x: Float32Array, rateHz: number): number {
  const frame = Math.max(1, Math.round((rateHz * ACTIVE_FRAME_MS) / 1000));
  const powers: number[] = [];
  for (let s = 0; s < x.length; s += frame) powers.push(meanPower(x, s, Math.min(x.length, s + frame)));
  // A loop, not Math.max(...powers): minutes of speech are more frames than a call's arguments allow.
  const max = powers.reduce((m, p) => Math.max(m, p), 0);
  if (max === 0) return 0;
  const floor = max * 10 ** (-ACTIVE_GATE_DB / 10);
  let sum = 0;
  let n = 0;
  for (const [i, p] of powers.entries()) {
    if (p < floor) continue;
    const len = Math.min(x.length, (i + 1) * frame) - i * frame;
    sum += p * len;
    n += len;
  }
  return Math.sqrt(sum / n);
}

/** Largest absolute sample value. */
export function peak(x: Float32Array): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) {
    const v = Math.abs(x[i] as number);
    if (v > m) m = v;
  }
  return m;
}

/** FFT size of {@link bandEnergy}: 2048 samples (7.8 Hz bins at 16 kHz). */
export const BAND_FFT_SIZE = 2048;

/**
 * Energy of `x` between `loHz` and `hiHz` (inclusive bins), from a Hann-windowed Welch
 * periodogram (2048-sample frames, 50 % overlap), summed over frames. Absolute scale is
 * arbitrary but the same for every call, so differences in dB ({@link bandEnergyDb}) between two
 * signals or two bands are meaningful.
 */
export function bandEnergy(x: Float32Array, rateHz: number, loHz: number, hiHz: number): number {
  const n = BAND_FFT_SIZE;
  const hop = n / 2;
  const win = new Float64Array(n);
  for (let i = 0; i < n; i++) win[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
  const lo = Math.max(0, Math.ceil((loHz * n) / rateHz));
  const hi = Math.min(n / 2, Math.floor((hiHz * n) / rateHz));
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  let total = 0;
  for (let start = 0; start + n <= Math.max(n, x.length); start += hop) {
    for (let i = 0; i < n; i++) {
      re[i] = ((x[start + i] as number | undefined) ?? 0) * (win[i] as number);
      im[i] = 0;
    }
    fft(re, im);
    for (let k = lo; k <= hi; k++) total += (re[k] as number) ** 2 + (im[k] as number) ** 2;
  }
  return total;
}

/** {@link bandEnergy} in dB (`10·log10`). */
export function bandEnergyDb(x: Float32Array, rateHz: number, loHz: number, hiHz: number): number {
  return 10 * Math.log10(bandEnergy(x, rateHz, loHz, hiHz));
}
