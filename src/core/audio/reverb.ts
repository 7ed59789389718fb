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

/** Settings of {@link farFieldMix}. */
export interface ReverbSettings {
  /** Time for the tail to fall by 60 dB, ms. */
  rt60Ms: number;
  /** Seed of the line-length jitter (±10 %) and the input/output signs: each room sounds a little different. */
  seed: number;
}

/** Line lengths (samples), loop gains and input/output signs of one seeded network. */
function network(rateHz: number, { rt60Ms, seed }: ReverbSettings) {
  const rng = rngFromState(seed);
  // Integers (`| 0`): as doubles, every line index computed from them went through a
  // double-to-integer check in the kernel (a sixth of its time).
  const lengths = FDN_LINES_MS.map(
    (ms) => Math.max(1, Math.round((ms * (0.9 + 0.2 * rng.next()) * rateHz) / 1000)) | 0,
  );
  const rt60 = Math.max(1, (rt60Ms * rateHz) / 1000);
  const gains = lengths.map((d) => 10 ** ((-3 * d) / rt60));
  const signs = [0, 1, 2, 3, 4, 5, 6, 7].map(() => (rng.next() < 0.5 ? -1 : 1));
  return { lengths, gains, inSigns: signs.slice(0, 4), outSigns: signs.slice(4) };
}

/**
 * The constants {@link fdnBlock} reads: the loop gains times the Hadamard matrix's ½, the input
 * signs, the output signs relative to the first (o₀·o_k) with o₀ and the 2 moved onto the wet
 * gain (`2·o₀·wet`), and `dry`: ±1 and powers of two scale exactly in floating point (above the
 * subnormal range), so the kernel computes the same values as the plain formula with five
 * multiplies per sample fewer.
 */
function kernelConstants(net: ReturnType<typeof network>, dry: number, wet: number): Float64Array {
  const [o0, o1, o2, o3] = net.outSigns as [number, number, number, number];
  return Float64Array.from([
    ...net.gains.map((g) => 0.5 * g),
    ...net.inSigns,
    o0 * o1,
    o0 * o2,
    o0 * o3,
    2 * o0 * wet,
    dry,
  ]);
}

/**
 * Run the network over `x` (length kept: the tail past the end is cut) into `out` (same length):
 * `out[n] = dry · (x[n] + wet · tail[n])`, where `tail` is the network's output. The delay lines
 * run in blocks that wrap none of them (no index test per sample), each block a call of
 * {@link fdnBlock}.
 */
function runNetwork(
  x: Float32Array,
  out: Float32Array,
  net: ReturnType<typeof network>,
  dry: number,
  wet: number,
): void {
  const [d0, d1, d2, d3] = net.lengths as [number, number, number, number];
  const lines = new Float64Array(d0 + d1 + d2 + d3);
  const c = kernelConstants(net, dry, wet);
  // Line k occupies lines[base_k, base_k + d_k); st[k] is its read/write position. Integers in
  // an Int32Array: read from a Float64Array they were doubles, and every index computed from
  // them went through a double-to-integer check (a sixth of the kernel's time).
  const st = new Int32Array(4);
  const n = x.length;
  for (let k = 0; k < n; ) {
    const len = Math.min(
      n - k,
      d0 - (st[0] as number),
      d1 - (st[1] as number),
      d2 - (st[2] as number),
      d3 - (st[3] as number),
    );
    fdnBlock(x, out, lines, c, st, k, len, d0, d1, d2);
    k += len;
    if (st[0] === d0) st[0] = 0;
    if (st[1] === d1) st[1] = 0;
    if (st[2] === d2) st[2] = 0;
    if (st[3] === d3) st[3] = 0;
  }
}

/**
 * `len` samples of the network from sample `k`, no line wrapping inside (see {@link runNetwork}),
 * with the constants of {@link kernelConstants}: a, b, c, d are half the lines' outputs, so the
 * output `dry · (x + wet · Σ o_k·line_k)` is `dry · (x + 2·o₀·wet · (a + o₀o₁·b + o₀o₂·c + o₀o₃·d))`
 * and the Hadamard feedback ½·H·line is sums and differences of a, b, c, d.
 */
function fdnBlock(
  x: Float32Array,
  out: Float32Array,
  lines: Float64Array,
  c: Float64Array,
  st: Int32Array,
  k: number,
  len: number,
  d0: number,
  d1: number,
  d2: number,
): void {
  const g0 = c[0] as number;
  const g1 = c[1] as number;
  const g2 = c[2] as number;
  const g3 = c[3] as number;
  const i0 = c[4] as number;
  const i1 = c[5] as number;
  const i2 = c[6] as number;
  const i3 = c[7] as number;
  const o1 = c[8] as number;
  const o2 = c[9] as number;
  const o3 = c[10] as number;
  const wet = c[11] as number;
  const dry = c[12] as number;
  const q0 = st[0] as number;
  const q1 = d0 + (st[1] as number);
  const q2 = d0 + d1 + (st[2] as number);
  const q3 = d0 + d1 + d2 + (st[3] as number);
  for (let j = 0; j < len; j++) {
    const a = (lines[q0 + j] as number) * g0;
    const b = (lines[q1 + j] as number) * g1;
    const cc = (lines[q2 + j] as number) * g2;
    const d = (lines[q3 + j] as number) * g3;
    const v = x[k + j] as number;
    out[k + j] = dry * (v + wet * (a + o1 * b + o2 * cc + o3 * d));
    // Hadamard 4×4 / 2 (orthogonal): feedback without gain of its own (the ½ is in a, b, c, d).
    const s = a + b;
    const t = a - b;
    const u = cc + d;
    const w = cc - d;
    lines[q0 + j] = s + u + i0 * v;
    lines[q1 + j] = t + w + i1 * v;
    lines[q2 + j] = s - u + i2 * v;
    lines[q3 + j] = t - w + i3 * v;
  }
  st[0] = (st[0] as number) + len;
  st[1] = (st[1] as number) + len;
  st[2] = (st[2] as number) + len;
  st[3] = (st[3] as number) + len;
}

/**
 * The far-field talker: `dry · (x + wet · tail)`, where `tail` is the reverberant part (no direct
 * sound) of `x` in a room of the given RT60, scaled so its impulse response has unit energy
 * over 1.5 RT60 (≥ 90 dB down): for a noise-like input the tail has the input's power, and `wet`
 * sets its level against the direct sound. Length kept (the tail past the end is cut), into
 * `out` (same length as `x`, not `x` itself; a new array by default). Deterministic for (x, settings).
 * @throws RangeError when `out` has another length.
 */
export function farFieldMix(
  x: Float32Array,
  rateHz: number,
  settings: ReverbSettings,
  dry: number,
  wet: number,
  out: Float32Array = new Float32Array(x.length),
): Float32Array {
  if (out.length !== x.length) throw new RangeError(`farFieldMix: ${out.length} output samples for ${x.length}`);
  const net = network(rateHz, settings);
  // The impulse response over 1.5 RT60 (its tail alone: dry 1 and the impulse subtracted) gives the normalization.
  const probe = new Float32Array(Math.max(1, Math.ceil((1.5 * settings.rt60Ms * rateHz) / 1000)));
  probe[0] = 1;
  const ir = new Float32Array(probe.length);
  runNetwork(probe, ir, net, 1, 1);
  ir[0] = (ir[0] as number) - 1;
  let e = 0;
  for (let i = 0; i < ir.length; i++) e += (ir[i] as number) ** 2;
  runNetwork(x, out, net, dry, e > 0 ? wet / Math.sqrt(e) : 0);
  return out;
}
