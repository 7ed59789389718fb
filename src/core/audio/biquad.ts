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
export function biquadCoefficients(
  type: 'lowpass' | 'highpass',
  frequencyHz: number,
  q: number,
  rateHz: number,
): BiquadCoefficients {
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
  return biquadCascadeInto(x, x, sections);
}

/**
 * {@link biquadCascadeInPlace} reading `x` and writing `out` (same length; may be `x`): the same
 * samples, without copying `x` first. Returns `out`.
 */
export function biquadCascadeInto(
  x: Float32Array,
  out: Float32Array,
  sections: readonly BiquadCoefficients[],
): Float32Array {
  if (out.length !== x.length) throw new RangeError(`biquadCascadeInto: ${out.length} output samples for ${x.length}`);
  if (sections.length === 4)
    return biquadCascade4Into(
      x,
      out,
      sections as readonly [BiquadCoefficients, BiquadCoefficients, BiquadCoefficients, BiquadCoefficients],
    );
  if (out !== x) out.set(x);
  x = out;
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

/**
 * Four sections in one pass (e.g. the telephony band-pass), in float64 from section to section:
 * only the last section's output is rounded to float32 (stored in `out`). Rounding between the
 * sections, as four separate passes over a Float32Array do, would put a float32 conversion on
 * every section's path (about 40 % of the loop's time) for no audible difference (the values
 * differ by float32 rounding steps, ~2^-24 of the signal).
 */
function biquadCascade4Into(
  x: Float32Array,
  out: Float32Array,
  [s0, s1, s2, s3]: readonly [BiquadCoefficients, BiquadCoefficients, BiquadCoefficients, BiquadCoefficients],
): Float32Array {
  const { b0: p0, b1: p1, b2: p2, a1: pa1, a2: pa2 } = s0;
  const { b0: q0, b1: q1, b2: q2, a1: qa1, a2: qa2 } = s1;
  const { b0: r0, b1: r1, b2: r2, a1: ra1, a2: ra2 } = s2;
  const { b0: t0, b1: t1, b2: t2, a1: ta1, a2: ta2 } = s3;
  let u1 = 0,
    u2 = 0,
    v1 = 0,
    v2 = 0,
    w1 = 0,
    w2 = 0,
    z1 = 0,
    z2 = 0;
  for (let i = 0; i < x.length; i++) {
    const a = x[i] as number;
    const b = p0 * a + u1;
    u1 = p1 * a - pa1 * b + u2;
    u2 = p2 * a - pa2 * b;
    const c = q0 * b + v1;
    v1 = q1 * b - qa1 * c + v2;
    v2 = q2 * b - qa2 * c;
    const d = r0 * c + w1;
    w1 = r1 * c - ra1 * d + w2;
    w2 = r2 * c - ra2 * d;
    const yd = t0 * d + z1;
    z1 = t1 * d - ta1 * yd + z2;
    z2 = t2 * d - ta2 * yd;
    out[i] = yd;
  }
  return out;
}

/** Four sections as in {@link biquadCascadeInPlace}. */
export type BiquadCascade4 = readonly [BiquadCoefficients, BiquadCoefficients, BiquadCoefficients, BiquadCoefficients];
