/**
 * Second-order IIR sections (Audio EQ Cookbook low- and high-pass, R. Bristow-Johnson), run in
 * place on Float32Array with Float64 state. These are the formulas WebAudio's BiquadFilterNode
 * uses, so a section here matches the graph's `biquad` node with the same frequency and Q.
 */

/** Normalized coefficients of one section: y = b0·x + b1·x1 + b2·x2 − a1·y1 − a2·y2. */
export interface BiquadCoefficients {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/** Cookbook low- or high-pass at `frequencyHz` with linear quality factor `q`, for `rateHz`. */
export function biquadCoefficients(type: 'lowpass' | 'highpass', frequencyHz: number, q: number, rateHz: number): BiquadCoefficients {
  const w = (2 * Math.PI * frequencyHz) / rateHz;
  const cos = Math.cos(w);
  const alpha = Math.sin(w) / (2 * q);
  const a0 = 1 + alpha;
  const b1 = type === 'lowpass' ? 1 - cos : -(1 + cos);
  const b0 = type === 'lowpass' ? b1 / 2 : -b1 / 2;
  return { b0: b0 / a0, b1: b1 / a0, b2: b0 / a0, a1: (-2 * cos) / a0, a2: (1 - alpha) / a0 };
}

/** Run a cascade of sections over `x` in place (transposed direct form II, zero initial state). Returns `x`. */
export function biquadCascadeInPlace(x: Float32Array, sections: readonly BiquadCoefficients[]): Float32Array {
  for (const { b0, b1, b2, a1, a2 } of sections) {
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < x.length; i++) {
      const v = x[i] as number;
      const y = b0 * v + s1;
      s1 = b1 * v - a1 * y + s2;
      s2 = b2 * v - a2 * y;
      x[i] = y;
    }
  }
  return x;
}
