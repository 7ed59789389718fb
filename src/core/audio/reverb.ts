/**
 * Room reverberation for the far-field talker: a four-line feedback delay network (FDN, Jot and
 * Chaigne 1991; Smith, "Physical Audio Signal Processing", FDN reverberation). Each line's loop
 * gain sets its decay so the tail falls by 60 dB in RT60 (g = 10^(−3·d / (RT60·fs)) for a line
 * of d samples); an orthogonal Hadamard matrix mixes the lines, so the network is lossless but
 * for those gains. Cost is a few operations per sample, whatever the RT60 (a convolution with an
 * impulse response of RT60 length costs thousands).
 */
import { rngFromState } from '../ports/rng.ts';

/** Base line lengths in ms (mutually prime at 16 kHz, ~30–45 ms: a small room's mean free path). */
export const FDN_LINES_MS: readonly [number, number, number, number] = [29.7, 37.1, 41.1, 43.7];

/** Settings of {@link reverbTail}. */
export interface ReverbSettings {
  /** Time for the tail to fall by 60 dB, ms. */
  rt60Ms: number;
  /** Seed of the line-length jitter (±10 %) and the input/output signs: each room sounds a little different. */
  seed: number;
}

/** Line lengths (samples), loop gains and input/output signs of one seeded network. */
function network(rateHz: number, { rt60Ms, seed }: ReverbSettings) {
  const rng = rngFromState(seed);
  const lengths = FDN_LINES_MS.map((ms) => Math.max(1, Math.round((ms * (0.9 + 0.2 * rng.next()) * rateHz) / 1000)));
  const rt60 = Math.max(1, (rt60Ms * rateHz) / 1000);
  const gains = lengths.map((d) => 10 ** ((-3 * d) / rt60));
  const signs = [0, 1, 2, 3, 4, 5, 6, 7].map(() => (rng.next() < 0.5 ? -1 : 1));
  return { lengths, gains, inSigns: signs.slice(0, 4), outSigns: signs.slice(4) };
}

/** Run the network over `x` (length kept: the tail past the end is cut), into a new array. */
function runNetwork(x: Float32Array, net: ReturnType<typeof network>): Float32Array {
  const [d0, d1, d2, d3] = net.lengths as [number, number, number, number];
  const [g0, g1, g2, g3] = net.gains as [number, number, number, number];
  const [i0, i1, i2, i3] = net.inSigns as [number, number, number, number];
  const [o0, o1, o2, o3] = net.outSigns as [number, number, number, number];
  const l0 = new Float64Array(d0);
  const l1 = new Float64Array(d1);
  const l2 = new Float64Array(d2);
  const l3 = new Float64Array(d3);
  let p0 = 0;
  let p1 = 0;
  let p2 = 0;
  let p3 = 0;
  const out = new Float32Array(x.length);
  for (let n = 0; n < x.length; n++) {
    const a = (l0[p0] as number) * g0;
    const b = (l1[p1] as number) * g1;
    const c = (l2[p2] as number) * g2;
    const d = (l3[p3] as number) * g3;
    out[n] = o0 * a + o1 * b + o2 * c + o3 * d;
    const v = x[n] as number;
    // Hadamard 4×4 / 2 (orthogonal): feedback without gain of its own.
    const s = a + b;
    const t = a - b;
    const u = c + d;
    const w = c - d;
    l0[p0] = 0.5 * (s + u) + i0 * v;
    l1[p1] = 0.5 * (t + w) + i1 * v;
    l2[p2] = 0.5 * (s - u) + i2 * v;
    l3[p3] = 0.5 * (t - w) + i3 * v;
    if (++p0 === d0) p0 = 0;
    if (++p1 === d1) p1 = 0;
    if (++p2 === d2) p2 = 0;
    if (++p3 === d3) p3 = 0;
  }
  return out;
}

/**
 * The reverberant part (no direct sound) of `x` in a room of the given RT60, scaled so its
 * impulse response has unit energy: for a noise-like input the tail has the input's power, and
 * the far-field mixer sets its level with a wet gain in dB. Deterministic for (x, settings).
 */
export function reverbTail(x: Float32Array, rateHz: number, settings: ReverbSettings): Float32Array {
  const net = network(rateHz, settings);
  // Energy of the impulse response over 1.5 RT60 (≥ 90 dB down): the normalization.
  const probe = new Float32Array(Math.max(1, Math.ceil((1.5 * settings.rt60Ms * rateHz) / 1000)));
  probe[0] = 1;
  const ir = runNetwork(probe, net);
  let e = 0;
  for (let i = 0; i < ir.length; i++) e += (ir[i] as number) ** 2;
  const out = runNetwork(x, net);
  const g = e > 0 ? 1 / Math.sqrt(e) : 0;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * g;
  return out;
}
