/**
 * A platform-neutral description of a WebAudio effect graph. Core builds it as plain data;
 * {@link renderGraph} instantiates it on any `OfflineAudioContext` (the page's own, or
 * node-web-audio-api's in Node), so both platforms run the same graph.
 */

/** A parameter's value over time: set at the first point, then linear ramps between points (times in s). */
export type Automation = readonly { timeS: number; value: number }[];

/** One node of the graph. Ids are unique within a graph. */
export type GraphNode =
  /** A mono buffer played once from `startS` (seconds on the render timeline). */
  | { kind: 'buffer'; id: string; samples: Float32Array; startS: number }
  /** Linear gain, constant or automated. */
  | { kind: 'gain'; id: string; gain: number; automation?: Automation }
  /**
   * A second-order section. `q` is the linear quality factor (Butterworth sections of a
   * 4th-order filter: 0.5412 and 1.3066); the renderer converts it to the dB value WebAudio
   * expects for low- and high-pass types.
   */
  | { kind: 'biquad'; id: string; type: 'lowpass' | 'highpass'; frequencyHz: number; q: number }
  /** Convolution with an impulse response (not normalized). */
  | { kind: 'convolver'; id: string; impulse: Float32Array }
  /** Hard clip to [-1, 1] (a converter at full scale): a WaveShaper with the identity curve. */
  | { kind: 'clip'; id: string };

/** A whole graph: mono, `length` samples at `sampleRate` Hz; `output` feeds the destination. */
export interface AudioGraph {
  sampleRate: number;
  length: number;
  nodes: GraphNode[];
  /** Connections [from id, to id]. */
  edges: [string, string][];
  output: string;
}

/** Butterworth section Qs of a 4th-order filter (poles at 22.5° and 67.5°): 0.5412, 1.3066. */
export const BUTTERWORTH4_Q: readonly [number, number] = [
  1 / (2 * Math.cos(Math.PI / 8)),
  1 / (2 * Math.cos((3 * Math.PI) / 8)),
];

// ---- minimal structural view of a WebAudio OfflineAudioContext (no DOM types in core) ----

/** The part of `AudioParam` the renderer uses. */
export interface ParamLike {
  value: number;
  setValueAtTime(value: number, time: number): unknown;
  linearRampToValueAtTime(value: number, time: number): unknown;
}
/** The part of `AudioNode` the renderer uses. */
export interface NodeLike {
  connect(destination: never): unknown;
}
/** The part of `AudioBuffer` the renderer uses. */
export interface BufferLike {
  readonly length: number;
  getChannelData(channel: number): Float32Array;
}
/** The part of `OfflineAudioContext` the renderer uses. */
export interface OfflineContextLike {
  readonly destination: unknown;
  createBuffer(channels: number, length: number, sampleRate: number): BufferLike;
  createBufferSource(): NodeLike & { buffer: unknown; start(when?: number): void };
  createGain(): NodeLike & { gain: ParamLike };
  createBiquadFilter(): NodeLike & { type: unknown; frequency: ParamLike; Q: ParamLike };
  createConvolver(): NodeLike & { buffer: unknown; normalize: boolean };
  createWaveShaper(): NodeLike & { curve: unknown };
  startRendering(): Promise<BufferLike>;
}

/** Renders graphs on some platform (an adapter). */
export interface GraphRenderer {
  /** Render the graph and return its mono output (`graph.length` samples). */
  render(graph: AudioGraph): Promise<Float32Array>;
}

/** Creates a fresh offline context: mono, `length` samples at `sampleRate` Hz. */
export type OfflineContextFactory = (channels: number, length: number, sampleRate: number) => OfflineContextLike;

/** A {@link GraphRenderer} over a platform's `OfflineAudioContext` constructor. */
export function offlineRenderer(createContext: OfflineContextFactory): GraphRenderer {
  return {
    render: (graph) => {
      const direct = renderGraphDirect(graph);
      return direct ? Promise.resolve(direct) : renderGraph(createContext(1, graph.length, graph.sampleRate), graph);
    },
  };
}

/**
 * Render `graph` in plain JavaScript when it has only what WebAudio computes exactly in float32
 * (buffers starting on a sample frame, constant gains, sums, the hard clip): the samples equal
 * an `OfflineAudioContext` render's, without the cost of building and running one. `null` when
 * the graph needs WebAudio (convolver, biquad, automated gain, a buffer starting between two
 * sample frames), so one graph description serves both paths.
 */
export function renderGraphDirect(graph: AudioGraph): Float32Array | null {
  const byId = new Map<string, GraphNode>();
  for (const n of graph.nodes) {
    if (byId.has(n.id)) throw new Error(`duplicate graph node id "${n.id}"`);
    if (n.kind === 'convolver' || n.kind === 'biquad' || (n.kind === 'gain' && n.automation && n.automation.length > 0))
      return null;
    if (n.kind === 'buffer' && startFrame(n.startS, graph.sampleRate) === null) return null;
    byId.set(n.id, n);
  }
  const inputs = new Map<string, string[]>();
  const fanOut = new Map<string, number>();
  for (const [from, to] of graph.edges) {
    if (!byId.has(from) || !byId.has(to)) throw new Error(`graph edge ${from} → ${to} names an unknown node`);
    const list = inputs.get(to);
    if (list) list.push(from);
    else inputs.set(to, [from]);
    fanOut.set(from, (fanOut.get(from) ?? 0) + 1);
  }
  if (!byId.has(graph.output)) throw new Error(`graph output "${graph.output}" is not a node`);
  const length = graph.length;
  const done = new Map<string, Float32Array>();
  const once = (id: string) => (fanOut.get(id) ?? 0) === 1;
  // `n` as a buffer feeding only its consumer, or a constant gain fed only by such a buffer and
  // feeding only its consumer: the buffer and the gain to add it with (1 for the buffer itself).
  const soleBufferInput = (n: GraphNode): { buffer: Extract<GraphNode, { kind: 'buffer' }>; gain: number } | null => {
    if (!once(n.id)) return null;
    if (n.kind === 'buffer') return { buffer: n, gain: 1 };
    if (n.kind !== 'gain' || (n.automation && n.automation.length > 0)) return null;
    const ins = inputs.get(n.id) ?? [];
    const b = ins.length === 1 ? byId.get(ins[0]!) : undefined;
    return b?.kind === 'buffer' && once(b.id) ? { buffer: b, gain: Math.fround(n.gain) } : null;
  };
  const visiting = new Set<string>();
  // Output of node `id` as a buffer the caller may overwrite (shared outputs are copied).
  const evaluate = (id: string): Float32Array => {
    const hit = done.get(id);
    if (hit) return hit.slice();
    if (visiting.has(id)) throw new Error(`graph has a cycle through "${id}"`);
    visiting.add(id);
    const n = byId.get(id)!;
    let out: Float32Array;
    if (n.kind === 'buffer') {
      out = new Float32Array(length);
      const at = startFrame(n.startS, graph.sampleRate) as number;
      if (at < length)
        out.set(at >= 0 ? n.samples.subarray(0, length - at) : n.samples.subarray(-at, length - at), Math.max(0, at));
    } else {
      // A node's input is the float32 sum of everything connected to it; node-web-audio-api
      // adds the inputs from the last connection to the first (checked against its renders).
      const from = (inputs.get(id) ?? []).slice().reverse();
      out = from.length > 0 ? evaluate(from[0]!) : new Float32Array(length);
      for (let k = 1; k < from.length; k++) {
        // A buffer feeding only this node is added straight from its samples (no copy), and so
        // is a constant gain on one such buffer (scaled as it is added).
        const src = byId.get(from[k]!)!;
        const direct = soleBufferInput(src);
        if (direct)
          addAt(out, direct.buffer.samples, startFrame(direct.buffer.startS, graph.sampleRate) as number, direct.gain);
        else addInto(out, evaluate(from[k]!));
      }
      if (n.kind === 'gain') scaleInPlace(out, Math.fround(n.gain));
      else if (n.kind === 'clip') clipInPlace(out);
    }
    visiting.delete(id);
    if ((fanOut.get(id) ?? 0) > 1) done.set(id, out.slice());
    return out;
  };
  return evaluate(graph.output);
}

/**
 * The sample frame a buffer starting at `startS` seconds plays its first sample on, or `null`
 * when that is between two frames. A start computed as `frame / rate` is on its frame even when
 * `startS · rate` misses the integer by a rounding step (e.g. 53333 / 16000 · 16000 =
 * 53332.99999999999): within 10⁻⁶ of a frame counts as on it.
 */
function startFrame(startS: number, rateHz: number): number | null {
  const at = startS * rateHz;
  const frame = Math.round(at);
  return Math.abs(at - frame) < 1e-6 ? frame : null;
}

function addInto(acc: Float32Array, x: Float32Array): void {
  for (let i = 0; i < acc.length; i++) acc[i] = (acc[i] as number) + (x[i] as number);
}

/**
 * Add `x` times `gain` (a float32 value) into `acc` starting at sample `at` (x is silent outside
 * its own span): `fround(x · gain)` is the gain node's float32 output, the sum is rounded to
 * float32 by the store, as WebAudio computes a gain node feeding a sum (with gain 1, `x` itself).
 */
export function addAt(acc: Float32Array, x: Float32Array, at: number, gain: number): void {
  const from = Math.max(0, at);
  const to = Math.min(acc.length, at + x.length);
  if (gain === 1) for (let i = from; i < to; i++) acc[i] = (acc[i] as number) + (x[i - at] as number);
  else {
    const fround = Math.fround;
    for (let i = from; i < to; i++) acc[i] = (acc[i] as number) + fround((x[i - at] as number) * gain);
  }
}

function scaleInPlace(x: Float32Array, g: number): void {
  if (g === 1) return;
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) * g;
}

/**
 * The `clip` node's WaveShaper with curve [-1, 1], as WebAudio computes it in float32:
 * v = (x + 1) / 2, then (1 − v)·(−1) + v·1 inside, the curve's ends outside (so not quite the
 * identity: a sample may move by one float32 step).
 */
function clipInPlace(x: Float32Array): void {
  const fround = Math.fround;
  for (let i = 0; i < x.length; i++) {
    const v = fround(0.5 * fround((x[i] as number) + 1));
    x[i] = v <= 0 ? -1 : v >= 1 ? 1 : v - fround(1 - v);
  }
}

function automate(param: ParamLike, value: number, automation: Automation | undefined): void {
  if (!automation || automation.length === 0) {
    param.value = value;
    return;
  }
  const [first, ...rest] = automation;
  param.setValueAtTime(first!.value, first!.timeS);
  for (const p of rest) param.linearRampToValueAtTime(p.value, p.timeS);
}

/** Instantiate `graph` on `ctx` (a fresh offline context of the graph's length and rate) and render it. */
export async function renderGraph(ctx: OfflineContextLike, graph: AudioGraph): Promise<Float32Array> {
  const nodes = new Map<string, NodeLike>();
  const sources: { node: NodeLike & { start(when?: number): void }; startS: number }[] = [];
  const toBuffer = (samples: Float32Array) => {
    const buffer = ctx.createBuffer(1, Math.max(1, samples.length), graph.sampleRate);
    buffer.getChannelData(0).set(samples);
    return buffer;
  };
  for (const n of graph.nodes) {
    if (nodes.has(n.id)) throw new Error(`duplicate graph node id "${n.id}"`);
    switch (n.kind) {
      case 'buffer': {
        const src = ctx.createBufferSource();
        src.buffer = toBuffer(n.samples);
        sources.push({ node: src, startS: n.startS });
        nodes.set(n.id, src);
        break;
      }
      case 'gain': {
        const g = ctx.createGain();
        automate(g.gain, n.gain, n.automation);
        nodes.set(n.id, g);
        break;
      }
      case 'biquad': {
        const f = ctx.createBiquadFilter();
        f.type = n.type;
        f.frequency.value = n.frequencyHz;
        // WebAudio's low/high-pass Q is in dB (Audio EQ Cookbook α = sin ω / (2·10^(Q/20))).
        f.Q.value = 20 * Math.log10(n.q);
        nodes.set(n.id, f);
        break;
      }
      case 'convolver': {
        const c = ctx.createConvolver();
        c.normalize = false;
        c.buffer = toBuffer(n.impulse);
        nodes.set(n.id, c);
        break;
      }
      case 'clip': {
        const w = ctx.createWaveShaper();
        // Inputs beyond ±1 take the curve's end values: identity inside, clamped outside.
        w.curve = Float32Array.from([-1, 1]);
        nodes.set(n.id, w);
        break;
      }
    }
  }
  for (const [from, to] of graph.edges) {
    const a = nodes.get(from);
    const b = nodes.get(to);
    if (!a || !b) throw new Error(`graph edge ${from} → ${to} names an unknown node`);
    a.connect(b as never);
  }
  const out = nodes.get(graph.output);
  if (!out) throw new Error(`graph output "${graph.output}" is not a node`);
  out.connect(ctx.destination as never);
  for (const s of sources) s.node.start(s.startS);
  const rendered = await ctx.startRendering();
  return rendered.getChannelData(0).slice(0, graph.length);
}
