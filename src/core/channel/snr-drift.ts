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
  // An indexed loop: destructuring each component through the iterator cost more than its sine.
  for (let k = 0; k < DRIFT_COMPONENTS.length; k++) {
    const c = DRIFT_COMPONENTS[k] as readonly [number, number];
    e += c[0] * Math.sin(2 * Math.PI * d.driftSpeedHz * c[1] * t);
  }
  return d.snrDb + (d.driftDb * e) / AMPLITUDE_SUM;
}

/** Step between the points of the drift envelope: 25 ms (the fastest component's period is 0.74 s). */
export const DRIFT_STEP_MS = 25;

/**
 * The drift as linear ramps, one per {@link DRIFT_STEP_MS} step of `n` samples at `rateHz`: for
 * step k, samples i in [from_k, to_k) have gain `at0_k + slope_k · i`, relative to the gain at the
 * mean SNR (10^(−(SNR(t) − mean)/20) at the step's ends, linear between them). Flat 1 without
 * drift. Returned as a Float64Array of [from, to, at0, slope] per step.
 */
export function driftRamps(d: SnrDrift, n: number, rateHz: number): Float64Array {
  if (d.driftDb === 0) return Float64Array.of(0, n, 1, 0);
  const step = (DRIFT_STEP_MS * rateHz) / 1000;
  let count = 0;
  for (let start = 0; start < n; start += step) count++;
  const ramps = new Float64Array(4 * count);
  let a = driftGainAt(d, 0, rateHz);
  for (let start = 0, k = 0; start < n; start += step, k += 4) {
    const b = driftGainAt(d, start + step, rateHz);
    const slope = (b - a) / step;
    ramps[k] = Math.ceil(start);
    ramps[k + 1] = Math.min(n, Math.ceil(start + step));
    ramps[k + 2] = a - slope * start;
    ramps[k + 3] = slope;
    a = b;
  }
  return ramps;
}

/** The noise gain at sample `i` (at `rateHz`) relative to the gain at the mean SNR: 10^(−(SNR(t) − mean)/20). */
function driftGainAt(d: SnrDrift, i: number, rateHz: number): number {
  return 10 ** (-(driftSnrDb(d, (i * 1000) / rateHz) - d.snrDb) / 20);
}

/** Mean of the squared gains of {@link driftRamps} over its `n` samples (closed form per ramp). */
export function rampsMeanSquare(ramps: Float64Array, n: number): number {
  let sum = 0;
  for (let k = 0; k < ramps.length; k += 4) {
    const from = ramps[k] as number;
    const to = ramps[k + 1] as number;
    const a = ramps[k + 2] as number;
    const b = ramps[k + 3] as number;
    // Σ (a + b·i)² over i in [from, to): a²·m + 2ab·Σi + b²·Σi².
    const m = to - from;
    const s1 = ((from + to - 1) * m) / 2;
    const s2 = squaresBelow(to) - squaresBelow(from);
    sum += a * a * m + 2 * a * b * s1 + b * b * s2;
  }
  return sum / (n || 1);
}

/** Σ i² for the integers 0 ≤ i < x: (x − 1)·x·(2x − 1) / 6. */
function squaresBelow(x: number): number {
  return ((x - 1) * x * (2 * x - 1)) / 6;
}

/**
 * The noise gain the drift asks for at each of `n` samples at `rateHz` ({@link driftRamps}),
 * written into `out` (length `n`; a new array by default). Returns `out`.
 */
export function driftGains(d: SnrDrift, n: number, rateHz: number, out = new Float32Array(n)): Float32Array {
  if (out.length !== n) throw new RangeError(`driftGains: ${out.length} slots for ${n} samples`);
  const ramps = driftRamps(d, n, rateHz);
  // The ends as integers (`| 0`): a double loop index costs a conversion check per array access.
  for (let k = 0; k < ramps.length; k += 4)
    rampInto(
      out,
      (ramps[k] as number) | 0,
      (ramps[k + 1] as number) | 0,
      ramps[k + 2] as number,
      ramps[k + 3] as number,
    );
  return out;
}

/** `out[i] = at0 + slope · i` for i in [from, to). */
function rampInto(out: Float32Array, from: number, to: number, at0: number, slope: number): void {
  for (let i = from; i < to; i++) out[i] = at0 + slope * i;
}
