/**
 * The drifting SNR of the background noise, after tau2-bench's noise generator
 * (`generate_snr_envelope` in `tau2/voice/synthesis/audio_effects/noise_generator.py`, read at
 * commit a2c024725189): a sum of three sinusoids — amplitudes 1, 0.3 and 0.2 at 1×, 2.7× and
 * 0.4× a variation speed of 0.5 Hz (periods 2 s, 0.74 s and 5 s) — normalized by the sum of the
 * amplitudes to [−1, 1] and mapped to mean ± drift in dB. tau2 runs it on the time since the
 * call started; each turn here starts at its own seeded time on the curve, so turns differ.
 */

/** tau2-bench `NOISE_VARIATION_SPEED`: 0.5 Hz. */
export const DRIFT_SPEED_HZ = 0.5;

/** (amplitude, frequency multiple of the speed) of the three components (tau2-bench's defaults). */
export const DRIFT_COMPONENTS: readonly (readonly [number, number])[] = [
  [1, 1],
  [0.3, 2.7],
  [0.2, 0.4],
];

const AMPLITUDE_SUM = DRIFT_COMPONENTS.reduce((a, [amp]) => a + amp, 0);

/** The drift of one turn's noise (the plan's `noise` fields it needs). */
export interface SnrDrift {
  /** Mean SNR, dB. */
  snrDb: number;
  /** Peak deviation from the mean, dB. */
  driftDb: number;
  /** Variation speed, Hz. */
  driftSpeedHz: number;
  /** Where on the curve the turn starts, s. */
  driftStartS: number;
}

/** SNR in dB at `tMs` from the start of the turn: mean + drift · (normalized three-sine envelope). */
export function driftSnrDb(d: SnrDrift, tMs: number): number {
  if (d.driftDb === 0) return d.snrDb;
  const t = d.driftStartS + tMs / 1000;
  let e = 0;
  for (const [amp, mult] of DRIFT_COMPONENTS) e += amp * Math.sin(2 * Math.PI * d.driftSpeedHz * mult * t);
  return d.snrDb + (d.driftDb * e) / AMPLITUDE_SUM;
}

/** Step between the points of the drift envelope: 25 ms (the fastest component's period is 0.74 s). */
export const DRIFT_STEP_MS = 25;

/**
 * The noise gain the drift asks for at each of `n` samples at `rateHz`, relative to the gain at
 * the mean SNR: 10^(−(SNR(t) − mean)/20), linear between points every {@link DRIFT_STEP_MS}.
 * Written into `out` (length `n`; a new array by default). Returns `out`.
 */
export function driftGains(d: SnrDrift, n: number, rateHz: number, out = new Float32Array(n)): Float32Array {
  if (out.length !== n) throw new RangeError(`driftGains: ${out.length} slots for ${n} samples`);
  if (d.driftDb === 0) return out.fill(1);
  const step = (DRIFT_STEP_MS * rateHz) / 1000;
  const gainAt = (i: number) => 10 ** (-(driftSnrDb(d, (i * 1000) / rateHz) - d.snrDb) / 20);
  let a = gainAt(0);
  for (let start = 0; start < n; start += step) {
    const b = gainAt(start + step);
    rampInto(out, Math.ceil(start), Math.min(n, Math.ceil(start + step)), a - ((b - a) / step) * start, (b - a) / step);
    a = b;
  }
  return out;
}

/** `out[i] = at0 + slope · i` for i in [from, to). */
function rampInto(out: Float32Array, from: number, to: number, at0: number, slope: number): void {
  for (let i = from; i < to; i++) out[i] = at0 + slope * i;
}
