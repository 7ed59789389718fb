import { describe, expect, it } from 'vitest';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { activeRms, bandEnergyDb, peak, rms } from '../../src/core/audio/measure.ts';
import { decodeWav, encodeWav } from '../../src/core/audio/wav.ts';
import { floatToInt16, int16ToFloat } from '../../src/core/audio/pcm.ts';
import { driftGains, driftRamps, rampsMeanSquare } from '../../src/core/channel/snr-drift.ts';
import { pinkNoise, whiteNoise } from '../../src/core/audio/noise.ts';
import {
  buildChannelGraph,
  driftSnrDb,
  isPassThrough,
  muffleInPlace,
  muffleLowPass,
  runChannel,
  TELEPHONY_HEADROOM,
  type NoiseBank,
} from '../../src/core/channel/chain.ts';
import { renderGraph, renderGraphDirect, type AudioGraph } from '../../src/core/channel/graph.ts';
import { planChannel, type ChannelPlan } from '../../src/core/channel/plan.ts';
import { mixInto } from '../../src/core/channel/mix.ts';
import { PRESETS, PRESET_NAMES, type ChannelPreset } from '../../src/core/channel/presets.ts';
import { EffectEvent } from '../../src/core/channel/timeline.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import { OfflineAudioContext } from 'node-web-audio-api';
import { biquadCascadeInPlace } from '../../src/core/audio/biquad.ts';
import type { OfflineContextLike } from '../../src/core/channel/graph.ts';
import { diff, loadNoise, sine, speechLike } from './helpers.ts';
import { HAVE_NOISE } from '../fixtures/data.ts';

const OFF: ChannelPreset = PRESETS.clean;
const bankNames = { continuous: ['people_talking'], bursts: ['car_horn', 'dog_bark', 'ringing_phone'] };
let loadedBank: NoiseBank | undefined;
/**
 * tau2-bench's recordings by name; without them (no data, see test/fixtures/data.ts) seeded pink
 * noise of the same names and lengths stands in, for the tests that only need some noise.
 */
function noiseBank(): NoiseBank {
  const load = (name: string, seconds: number, seed: number) =>
    HAVE_NOISE ? loadNoise(name) : pinkNoise(seconds * 16000, 16000, seededRng(seed));
  loadedBank ??= {
    continuous: { people_talking: load('people_talking', 40.5, 1) },
    bursts: Object.fromEntries(bankNames.bursts.map((n, i) => [n, load(n, 4, 2 + i)])),
  };
  return loadedBank;
}
const render = (g: AudioGraph) => nodeGraphRenderer.render(g);

describe('graph renderer (node-web-audio-api)', () => {
  it('hard-clips at the ADC stage', async () => {
    const x = sine(440, 0.5, 0.5);
    const ctx = new OfflineAudioContext(1, x.length, 16000) as unknown as OfflineContextLike;
    const y = await renderGraph(ctx, {
      sampleRate: 16000,
      length: x.length,
      nodes: [
        { kind: 'buffer', id: 's', samples: x, startS: 0 },
        { kind: 'gain', id: 'g', gain: 4 },
        { kind: 'clip', id: 'c' },
      ],
      edges: [
        ['s', 'g'],
        ['g', 'c'],
      ],
      output: 'c',
    });
    expect(peak(y)).toBeCloseTo(1, 5);
    expect(y.length).toBe(x.length);
  });
});

describe('graph rendered in core', () => {
  it('places a buffer whose start is frame / rate on that frame, as WebAudio does, though frame / rate · rate misses it by a rounding step', async () => {
    const frame = 1001;
    expect(Number.isInteger((frame / 16000) * 16000)).toBe(false);
    const rng = seededRng(3);
    const x = int16ToFloat(Int16Array.from({ length: 1600 }, () => rng.int(65536) - 32768));
    const graph: AudioGraph = {
      sampleRate: 16000,
      length: 4000,
      nodes: [
        { kind: 'buffer', id: 'b', samples: x, startS: frame / 16000 },
        { kind: 'gain', id: 'g', gain: 0.5 },
      ],
      edges: [['b', 'g']],
      output: 'g',
    };
    const direct = renderGraphDirect(graph);
    expect(direct).not.toBeNull();
    expect(direct!.subarray(0, frame).every((v) => v === 0)).toBe(true);
    expect(direct![frame + 10]).toBe(Math.fround((x[10] as number) * 0.5));
    const ctx = new OfflineAudioContext(1, graph.length, 16000) as unknown as OfflineContextLike;
    // node-web-audio-api adds a ~1e-11 residue on the sample after a buffer's end, whatever the
    // start; up to there the renders are the same samples.
    const web = await renderGraph(ctx, graph);
    const end = frame + x.length;
    expect(Array.from(direct!.subarray(0, end))).toEqual(Array.from(web.subarray(0, end)));
    // Half a frame off is between frames: WebAudio's to render.
    expect(
      renderGraphDirect({
        ...graph,
        nodes: [{ ...graph.nodes[0]!, startS: (frame + 0.5) / 16000 } as never, graph.nodes[1]!],
      }),
    ).toBeNull();
  });
});

describe('the mix computed in core (mixInto) is its graph rendered', () => {
  const speech = speechLike(3, 16000, seededRng(5));
  const n = speech.length;
  const bank = (): NoiseBank => ({ ...noiseBank(), babble: noiseBank().continuous!.people_talking! });
  /** Plans over every kind of layer: procedural and recorded noise, bursts with and without wind, overlapping bursts, no noise. */
  const plans = (): ChannelPlan[] => {
    const out: ChannelPlan[] = [];
    for (const seed of [1, 2, 3]) {
      for (const name of ['control', 'regular', 'harsh'] as const) {
        out.push(planChannel(name, { seed, taskId: 'mix' }, n, bankNames));
        out.push(planChannel(name, { seed, taskId: 'mix' }, n));
      }
      const base = planChannel('harsh', { seed, taskId: 'mix' }, n);
      const burst = (atMs: number, source: ChannelPlan['bursts'][number]['source']) => ({
        atMs,
        source,
        snrDb: 2,
        seed: seed + atMs,
      });
      const noise = (source: `procedural:${string}` | `file:${string}`) => ({
        source,
        snrDb: 8,
        driftDb: 3,
        driftSpeedHz: 0.5,
        driftStartS: 1.7,
        offset: 0.2,
        seed,
      });
      const bursts = [burst(300, 'procedural:knock'), burst(400, 'procedural:ring'), burst(2900, 'procedural:knock')];
      for (const kind of ['white', 'pink', 'brown', 'wind', 'babble'])
        out.push({ ...base, noise: noise(`procedural:${kind}`), bursts, wind: { snrDb: 4, seed } });
      out.push({ ...base, noise: noise('file:people_talking'), bursts, wind: null });
      out.push({ ...base, noise: noise('procedural:pink'), bursts, wind: null, telephony: null });
      out.push({ ...base, noise: null, bursts, wind: null, farField: { gainDb: -6, rt60Ms: 400, wetDb: -3, seed } });
      out.push({ ...base, noise: null, bursts: [], wind: { snrDb: 6, seed } });
      out.push({ ...base, noise: noise('procedural:brown'), bursts: [], wind: null });
    }
    return out;
  };

  it('gives the float32 samples of its graph rendered in core, for every kind of layer', () => {
    let compared = 0;
    for (const plan of plans()) {
      const mixed = new Float32Array(n);
      mixInto(speech, plan, bank(), mixed);
      const rendered = renderGraphDirect(buildChannelGraph(speech, plan, bank()));
      expect(rendered).not.toBeNull();
      expect(Buffer.from(mixed.buffer).equals(Buffer.from(rendered!.buffer))).toBe(true);
      compared++;
    }
    expect(compared).toBe(3 * (6 + 10));
    expect(() => mixInto(speech, plans()[0]!, bank(), new Float32Array(n - 1))).toThrow(/47999 output samples/);
  });

  it('gives the samples node-web-audio-api renders its graph to (but for a float32 step where its residue after a buffer ends tips a rounding)', async () => {
    let equal = 0;
    for (const plan of plans().slice(0, 8)) {
      const mixed = new Float32Array(n);
      mixInto(speech, plan, bank(), mixed);
      const graph = buildChannelGraph(speech, plan, bank());
      const web = await renderGraph(new OfflineAudioContext(1, n, 16000) as unknown as OfflineContextLike, graph);
      // Equal samples but for a float32 step where the residue after a buffer's end tips a rounding.
      const d = diff(mixed, web);
      const buffers = graph.nodes.filter((node) => node.kind === 'buffer').length;
      expect(Array.from(d).filter((v) => v !== 0).length).toBeLessThanOrEqual(2 * buffers);
      expect(Math.max(...Array.from(d, Math.abs))).toBeLessThan(1e-8);
      equal += d.every((v) => v === 0) ? 1 : 0;
    }
    // Plans without bursts render to the very same samples.
    expect(equal).toBeGreaterThanOrEqual(4);
  });
});

describe('background noise at a target SNR (real recording: people_talking.wav)', { tags: ['noise-data'] }, () => {
  const speech = speechLike(8);
  const preset = (snr: number, drift: number): ChannelPreset => ({
    ...OFF,
    noise: { procedural: ['pink'], snrDb: [snr, snr], driftDb: drift, driftSpeedHz: 0.5 },
  });

  it('mixes within ±0.5 dB of the target (no drift)', async () => {
    for (const target of [0, 15, 25]) {
      const plan = planChannel(preset(target, 0), { seed: 1, taskId: 'snr' }, speech.length, bankNames);
      expect(plan.noise?.source).toBe('file:people_talking');
      const mixed = await render(buildChannelGraph(speech, plan, noiseBank()));
      const noise = diff(mixed, speech);
      const measured = 20 * Math.log10(activeRms(speech, 16000) / rms(noise));
      expect(Math.abs(measured - target)).toBeLessThan(0.5);
    }
  });

  it('drifts as tau2-bench does: the level follows the planned three-sine curve (±0.75 dB per 100 ms), turns every second or two, within mean ± drift', async () => {
    const plan = planChannel(preset(15, 3), { seed: 2, taskId: 'drift' }, speech.length, bankNames);
    const mixed = await render(buildChannelGraph(speech, plan, noiseBank()));
    const noise = diff(mixed, speech);
    const raw = noiseBank().continuous!.people_talking!;
    const off = Math.floor(plan.noise!.offset * raw.length);
    const src = Float32Array.from({ length: speech.length }, (_, i) => raw[(off + i) % raw.length] as number);
    // Gain of the noise per 100 ms window against the recording, relative to its turn mean.
    const win = 1600;
    const gains: number[] = [];
    const expected: number[] = [];
    for (let s = 0; s + win <= speech.length; s += win) {
      gains.push(20 * Math.log10(rms(noise, s, s + win) / rms(src, s, s + win)));
      expected.push(-driftSnrDb(plan.noise!, ((s + win / 2) * 1000) / 16000));
    }
    const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
    const g0 = mean(gains);
    const e0 = mean(expected);
    for (const [i, g] of gains.entries()) expect(Math.abs(g - g0 - ((expected[i] as number) - e0))).toBeLessThan(0.75);
    for (const e of expected) {
      expect(-e).toBeGreaterThanOrEqual(12 - 1e-9);
      expect(-e).toBeLessThanOrEqual(18 + 1e-9);
    }
    // Turning points of the level (a slow single sine of 8–20 s had at most one in 8 s).
    let turns = 0;
    for (let i = 1; i + 1 < gains.length; i++) {
      const a = (gains[i] as number) - (gains[i - 1] as number);
      const b = (gains[i + 1] as number) - (gains[i] as number);
      if (a * b < 0 && Math.abs(a) + Math.abs(b) > 0.3) turns++;
    }
    expect(turns).toBeGreaterThanOrEqual(6);
    expect(Math.max(...gains) - Math.min(...gains)).toBeGreaterThan(3);
  });
});

describe('muffled mic and telephony filters', () => {
  const white = whiteNoise(16000 * 5, seededRng(9));
  for (let i = 0; i < white.length; i++) white[i] = (white[i] as number) * 0.1;

  it("1500 Hz muffle as deep as tau2-bench's filtfilt(butter(4)): −6 dB at the cutoff, |H|² of the Butterworth within ±1 dB from 1 to 2.5 kHz", async () => {
    const p: ChannelPreset = { ...OFF, muffle: { probability: 1, cutoffHz: 1500, segmentMs: null, transitionMs: 100 } };
    const plan = planChannel(p, { seed: 1, taskId: 'lp' }, white.length);
    const y = (await runChannel(nodeGraphRenderer, white, plan)).samples;
    const drop = (lo: number, hi: number) => bandEnergyDb(white, 16000, lo, hi) - bandEnergyDb(y, 16000, lo, hi);
    // Digital Butterworth (bilinear, prewarped; scipy's butter and the cookbook sections alike):
    // |H(f)|² = 1 / (1 + (tan(πf/fs) / tan(πfc/fs))^8); a forward-backward pass squares it.
    const tau2Db = (f: number) =>
      2 * 10 * Math.log10(1 + (Math.tan((Math.PI * f) / 16000) / Math.tan((Math.PI * 1500) / 16000)) ** 8);
    for (const f of [1000, 1250, 1500, 1750, 2000, 2500])
      expect(Math.abs(drop(f - 20, f + 20) - tau2Db(f))).toBeLessThan(1);
    expect(tau2Db(1500)).toBeCloseTo(6.02, 2);
    expect(drop(3000, 8000)).toBeGreaterThan(45);
    expect(Math.abs(drop(100, 700))).toBeLessThan(0.5);
  });

  it('crossfades the muffle exactly as the per-sample formula: w = min(up, down), each clipped to [0, 1], for fractional, whole and sharp (0 ms) spans', () => {
    const x = white.subarray(0, 16000);
    const reference = (plan: ChannelPlan): Float32Array => {
      const m = plan.muffle!;
      const y = x.slice();
      const tr = (m.transitionMs * 16000) / 1000;
      for (const seg of m.segments) {
        const s = (seg.startMs * 16000) / 1000;
        const e = (seg.endMs * 16000) / 1000;
        const whole = s <= 0 && e >= y.length;
        const from = Math.max(0, Math.floor(s - tr / 2));
        const to = Math.min(y.length, Math.ceil(e + tr / 2));
        if (to <= from) continue;
        const start = Math.max(0, from - 800);
        const wet = biquadCascadeInPlace(y.slice(start, to), muffleLowPass(m.cutoffHz, 16000));
        for (let i = from; i < to; i++) {
          const up = whole || tr <= 0 ? 1 : Math.min(1, Math.max(0, (i - (s - tr / 2)) / tr));
          const down = whole || tr <= 0 ? 1 : Math.min(1, Math.max(0, (e + tr / 2 - i) / tr));
          y[i] = (y[i] as number) + Math.min(up, down) * ((wet[i - start] as number) - (y[i] as number));
        }
      }
      return y;
    };
    const base = planChannel('control', { seed: 1, taskId: 'xf' }, x.length);
    const spans: [number, number, number][][] = [
      [[100.03, 310.7, 37.3]],
      [[0, 1000, 150]],
      [[-20, 1200, 10]],
      [[200, 200.01, 0]],
      [
        [123.4, 345.6, 0],
        [500.5, 990.9, 99.9],
      ],
      [[900, 1000, 150]],
    ];
    for (const segs of spans) {
      const plan: ChannelPlan = {
        ...base,
        muffle: {
          cutoffHz: 1000,
          startMs: segs[0]![0],
          endMs: segs.at(-1)![1],
          transitionMs: segs[0]![2],
          segments: segs.map(([startMs, endMs]) => ({ startMs, endMs })),
        },
      };
      const got = muffleInPlace(x.slice(), plan);
      expect(Buffer.from(got.buffer).equals(Buffer.from(reference(plan).buffer))).toBe(true);
    }
  });

  it('telephony passes 300–3400 Hz (at the 0.9 headroom, −0.92 dB) and cuts below 150 Hz and above 4 kHz', async () => {
    const plan = planChannel('control', { seed: 1, taskId: 'tel' }, white.length);
    const out = await runChannel(nodeGraphRenderer, white, plan);
    const drop = (lo: number, hi: number) =>
      bandEnergyDb(white, 16000, lo, hi) - bandEnergyDb(out.samples, 16000, lo, hi);
    expect(Math.abs(drop(500, 3000) + 20 * Math.log10(TELEPHONY_HEADROOM))).toBeLessThan(0.5);
    expect(drop(20, 150)).toBeGreaterThan(15);
    expect(drop(4500, 8000)).toBeGreaterThan(40);
  });
});

describe('presets', () => {
  const speech = speechLike(12, 16000, seededRng(3));

  it('same (preset, seed, task id) → identical bytes; another seed → different bytes', async () => {
    for (const name of ['regular', 'harsh'] as const) {
      const a = await runChannel(
        nodeGraphRenderer,
        speech,
        planChannel(name, { seed: 7, taskId: 'task_1' }, speech.length, bankNames),
        noiseBank(),
      );
      const b = await runChannel(
        nodeGraphRenderer,
        speech,
        planChannel(name, { seed: 7, taskId: 'task_1' }, speech.length, bankNames),
        noiseBank(),
      );
      expect(Buffer.from(a.wav).equals(Buffer.from(b.wav))).toBe(true);
      expect(a.timeline).toEqual(b.timeline);
      const c = await runChannel(
        nodeGraphRenderer,
        speech,
        planChannel(name, { seed: 8, taskId: 'task_1' }, speech.length, bankNames),
        noiseBank(),
      );
      expect(Buffer.from(a.wav).equals(Buffer.from(c.wav))).toBe(false);
    }
  });

  it('preserves duration for every preset, odd lengths included, and logs a valid timeline', async () => {
    const odd = speech.subarray(0, 16000 * 3 + 7);
    for (const name of PRESET_NAMES) {
      for (const seed of [1, 2, 3]) {
        const plan = planChannel(name, { seed, taskId: 'dur' }, odd.length, bankNames);
        const out = await runChannel(nodeGraphRenderer, odd, plan, noiseBank());
        expect(out.samples.length).toBe(odd.length);
        const wav = decodeWav(out.wav);
        expect(wav.sampleRate).toBe(16000);
        expect(Array.from(wav.samples)).toEqual(Array.from(out.samples));
        for (const e of out.timeline) {
          EffectEvent.parse(e);
          expect(e.start_ms).toBeGreaterThanOrEqual(0);
          expect(e.end_ms).toBeLessThanOrEqual(plan.durationMs + 1e-9);
          expect(e.end_ms).toBeGreaterThanOrEqual(e.start_ms);
        }
        if (name === 'clean') {
          expect(out.timeline).toEqual([]);
          expect(Math.max(...Array.from(diff(out.samples, odd), Math.abs))).toBeLessThanOrEqual(0.51 / 32768); // 16-bit rounding only
        }
      }
    }
  });

  it('clean preset on 16-bit speech is a pass-through: the same array back, no events, the WAV of the speech', async () => {
    const q = int16ToFloat(floatToInt16(speech));
    const plan = planChannel('clean', { seed: 1, taskId: 'pass' }, q.length);
    expect(isPassThrough(plan)).toBe(true);
    expect(isPassThrough(planChannel('control', { seed: 1, taskId: 'pass' }, q.length))).toBe(false);
    const out = await runChannel(nodeGraphRenderer, q, plan);
    expect(out.samples).toBe(q);
    expect(out.timeline).toEqual([]);
    expect(Buffer.from(out.wav).equals(Buffer.from(encodeWav(q, 16000)))).toBe(true);
    // Off the 16-bit grid, the output is quantized (a new array).
    const off = await runChannel(
      nodeGraphRenderer,
      speech,
      planChannel('clean', { seed: 1, taskId: 'pass' }, speech.length),
    );
    expect(off.samples).not.toBe(speech);
    expect(Buffer.from(off.wav).equals(Buffer.from(out.wav))).toBe(true);
  });

  it("drift ramps' closed-form mean square equals the per-sample mean of the drift gains", () => {
    const d = { snrDb: 15, driftDb: 3, driftSpeedHz: 0.5, driftStartS: 7.3 };
    for (const n of [16000 * 10, 12345, 399]) {
      const g = driftGains(d, n, 16000);
      let s = 0;
      for (const v of g) s += v * v;
      expect(rampsMeanSquare(driftRamps(d, n, 16000), n)).toBeCloseTo(s / n, 6);
    }
    expect(rampsMeanSquare(driftRamps({ ...d, driftDb: 0 }, 1000, 16000), 1000)).toBe(1);
  });

  it('zeroes the dropped frames in the output and logs each drop burst', async () => {
    const p: ChannelPreset = {
      ...PRESETS.regular,
      noise: null,
      bursts: null,
      muffle: null,
      packetLoss: { lossRate: [0.05, 0.05], meanBurstMs: 100, frameMs: 20 },
    };
    const long = speechLike(60, 16000);
    const plan = planChannel(p, { seed: 4, taskId: 'loss' }, long.length);
    const out = await runChannel(nodeGraphRenderer, long, plan);
    const spans = plan.packetLoss!.spans;
    expect(spans.length).toBeGreaterThan(5);
    expect(out.timeline.filter((e) => e.type === 'packet_loss')).toHaveLength(spans.length);
    const droppedMs = spans.reduce((a, s) => a + s.endMs - s.startMs, 0);
    expect(droppedMs / plan.durationMs).toBeGreaterThan(0.02);
    expect(droppedMs / plan.durationMs).toBeLessThan(0.1);
    for (const s of spans) {
      // Interior of the span (beyond the 6 ms reach of the 8 → 16 kHz filter) is digital silence.
      const a = Math.round(((s.startMs + 6) * 16000) / 1000);
      const b = Math.round(((s.endMs - 6) * 16000) / 1000);
      expect(peak(out.samples.subarray(a, b))).toBe(0);
    }
  });

  it('places Poisson bursts from the real recordings at −5…+10 dB', () => {
    let bursts = 0;
    for (let seed = 0; seed < 200; seed++) {
      const plan = planChannel('regular', { seed, taskId: 'bursts' }, 16000 * 60, bankNames);
      for (const b of plan.bursts) {
        expect(b.snrDb).toBeGreaterThanOrEqual(-5);
        expect(b.snrDb).toBeLessThanOrEqual(10);
        expect(b.source.startsWith('file:')).toBe(true);
      }
      bursts += plan.bursts.length;
    }
    // 200 one-minute turns at 1/min: 200 ± ~3σ.
    expect(bursts).toBeGreaterThan(155);
    expect(bursts).toBeLessThan(245);
  });
});
