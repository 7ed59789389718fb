/**
 * Expected power of filtered noise, from the filters' frequency responses instead of a pass over
 * the samples: white noise of power σ² through a filter F has power σ² · (1/π) ∫₀^π |F(e^{jω})|² dω
 * (Parseval's theorem for a stationary input; e.g. Oppenheim and Schafer, *Discrete-Time Signal
 * Processing*, on the response of LTI systems to random signals).
 */
import type { BiquadCoefficients } from './biquad.ts';

/** |H(e^{jω})|² of a cascade of second-order sections at `omega` (radians per sample). */
export function cascadePowerResponse(sections: readonly BiquadCoefficients[], omega: number): number {
  const c1 = Math.cos(omega);
  const s1 = Math.sin(omega);
  const c2 = Math.cos(2 * omega);
  const s2 = Math.sin(2 * omega);
  let g = 1;
  for (const { b0, b1, b2, a1, a2 } of sections) {
    // H = (b0 + b1 e^{−jω} + b2 e^{−2jω}) / (1 + a1 e^{−jω} + a2 e^{−2jω})
    const nr = b0 + b1 * c1 + b2 * c2;
    const ni = -(b1 * s1 + b2 * s2);
    const dr = 1 + a1 * c1 + a2 * c2;
    const di = -(a1 * s1 + a2 * s2);
    g *= (nr * nr + ni * ni) / (dr * dr + di * di);
  }
  return g;
}

/** Points of the midpoint rule over [0, π] in {@link meanPowerResponse}: 8192 (0.98 Hz apart at 16 kHz). */
export const POWER_RESPONSE_POINTS = 8192;

/**
 * (1/π) ∫₀^π |F(ω)|² · |H(ω)|² dω by the midpoint rule: the power of white noise of unit power
 * through the filter F and the cascade H.
 */
export function meanPowerResponse(f: (omega: number) => number, sections: readonly BiquadCoefficients[]): number {
  const m = POWER_RESPONSE_POINTS;
  let sum = 0;
  for (let j = 0; j < m; j++) {
    const w = (Math.PI * (j + 0.5)) / m;
    sum += f(w) * cascadePowerResponse(sections, w);
  }
  return sum / m;
}
