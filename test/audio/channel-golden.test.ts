/**
 * The degraded turn's exact bytes, pinned: runChannel's WAV, its samples and its timeline for
 * seeded plans that run every effect (procedural noise of each kind, bursts, wind, far field,
 * muffled spans, frame drops, telephony with the peak rescale of a loud caller), the presets, the
 * path without telephony and the clean preset's quantization. Hashes recorded at f5023b8, before
 * the chain's buffers were reused and its samples decoded on read; an optimization of the chain
 * that changes one sample fails here (a deliberate change of the audio records new hashes and
 * says why). Also the noise drift's ramps (recorded at c79cf19). SB_GOLDEN_DUMP=1 prints the hashes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runChannel, type ChannelOutput } from '../../src/core/channel/chain.ts';
import { driftRamps, driftSnrDb, rampsMeanSquare } from '../../src/core/channel/snr-drift.ts';
import { planChannel, type ChannelPlan } from '../../src/core/channel/plan.ts';
import { speechLike } from './helpers.ts';
import { seededRng } from '../../src/core/ports/rng.ts';

const N = 48_000; // 3 s at 16 kHz
const speech = speechLike(3, 16000, seededRng(11));
/** The same caller 10× louder: clipped at the ADC, so the telephony leg rescales its peak. */
const loud = speech.map((v) => v * 10);

/** The `harsh` plan of `seed` with every effect on (those its draw left off are set). */
function everyEffect(seed: number, kind: 'pink' | 'brown' | 'white'): ChannelPlan {
  const p = planChannel('harsh', { seed, taskId: 'golden' }, N);
  return {
    ...p,
    noise: { ...p.noise!, source: `procedural:${kind}` },
    bursts: p.bursts.length ? p.bursts : [{ atMs: 1000, source: 'procedural:knock', snrDb: 0, seed }],
    wind: p.wind ?? { snrDb: 5, seed: seed + 1 },
    muffle: p.muffle ?? {
      cutoffHz: 1000,
      startMs: 1200,
      endMs: 2200,
      transitionMs: 150,
      segments: [{ startMs: 1200, endMs: 2200 }],
    },
    farField: p.farField ?? { gainDb: -9, rt60Ms: 500, wetDb: -3, seed: seed + 2 },
    packetLoss: p.packetLoss ?? {
      lossRate: 0.05,
      meanBurstMs: 100,
      frameMs: 20,
      spans: [{ startMs: 600, endMs: 660, frames: 3 }],
    },
  };
}

const regular = (seed: number) => planChannel('regular', { seed, taskId: 'golden' }, N);

const CASES: [string, Float32Array, ChannelPlan][] = [
  ['every effect, pink', speech, everyEffect(1, 'pink')],
  ['every effect, brown', speech, everyEffect(2, 'brown')],
  ['every effect, white', speech, everyEffect(3, 'white')],
  ['every effect, loud caller (peak rescale)', loud, everyEffect(4, 'pink')],
  ['every effect, no telephony', speech, { ...everyEffect(5, 'pink'), telephony: null }],
  ['regular preset', speech, regular(6)],
  ['regular preset, another seed', speech, regular(7)],
  ['control preset (telephony only)', speech, planChannel('control', { seed: 8, taskId: 'golden' }, N)],
  ['clean preset (quantization only)', speech, planChannel('clean', { seed: 9, taskId: 'golden' }, N)],
];

const GOLDEN: Record<string, string> = {
  'every effect, pink': 'd2ef5d8b0fb02116b15701794780d00e',
  'every effect, brown': 'bf6cfef1e63504279bfd242acb84aff8',
  'every effect, white': '84b76cc2010aa093983ce991c287d3a2',
  'every effect, loud caller (peak rescale)': 'b9a6302e7e687dc35b41c9d8c8e3dd8d',
  'every effect, no telephony': '50421a7caf213deec994936cee8c15d4',
  'regular preset': 'ca82255bf8764a2663bce849be5adbb0',
  'regular preset, another seed': 'ddfa6ad441f05bbaf7e83188df6bb916',
  'control preset (telephony only)': 'f6ade7859f9a118ebaca47ea6cba0d1b',
  'clean preset (quantization only)': 'bd10c79323dc297f773e6b0827e60cf6',
};

const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex').slice(0, 32);
};
const bytes = (x: Float32Array) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
const digest = (o: ChannelOutput) => sha(o.wav, bytes(o.samples), new TextEncoder().encode(JSON.stringify(o.timeline)));

describe('the channel chain, byte for byte', () => {
  it('gives the recorded WAV, samples and timeline for every case', async () => {
    const got: Record<string, string> = {};
    for (const [name, input, plan] of CASES) got[name] = digest(await runChannel(null as never, input, plan));
    if (process.env.SB_GOLDEN_DUMP) console.log(JSON.stringify(got, null, 2));
    expect(got).toEqual(GOLDEN);
  });

  it('rescales the loud caller: its peak is at the 0.9 headroom (29,487–29,491), so that path is pinned too', async () => {
    const { samples } = await runChannel(null as never, loud, everyEffect(4, 'pink'));
    const peak = Math.max(...Array.from(samples, (v) => Math.abs(v * 32768)));
    expect(peak).toBeGreaterThanOrEqual(29_487);
    expect(peak).toBeLessThanOrEqual(29_491);
  });

  it("keeps each turn's samples and WAV its own while later turns of other lengths run", async () => {
    const first = await runChannel(null as never, speech, everyEffect(1, 'pink'));
    const clean = await runChannel(null as never, speech, planChannel('clean', { seed: 9, taskId: 'golden' }, N));
    // A shorter and a longer turn in between (the chain's buffers are sized per turn).
    const short = speech.subarray(0, 20_000);
    await runChannel(null as never, short, { ...everyEffect(2, 'brown'), length: short.length, durationMs: 1250 });
    const long = new Float32Array(2 * N);
    long.set(speech);
    long.set(speech, N);
    await runChannel(null as never, long, { ...everyEffect(3, 'white'), length: 2 * N, durationMs: 6000 });
    const again = await runChannel(null as never, speech, everyEffect(1, 'pink'));
    expect(digest(first)).toBe(GOLDEN['every effect, pink']);
    expect(digest(clean)).toBe(GOLDEN['clean preset (quantization only)']);
    expect(digest(again)).toBe(GOLDEN['every effect, pink']);
    // The samples are the WAV's 16-bit values over 32768, the same array each time they are read.
    const pcm = new Int16Array(first.wav.buffer, first.wav.byteOffset + 44, N);
    expect(first.samples).toBe(first.samples);
    expect(Array.from(first.samples.subarray(10_000, 10_050))).toEqual(
      Array.from(pcm.subarray(10_000, 10_050), (v) => v / 32768),
    );
    expect(first.samples.every((v, i) => v === (pcm[i] as number) / 32768)).toBe(true);
  });

  it('gives the recorded drift ramps, their mean square and the drift curve at rates whose 25 ms step is fractional', () => {
    const h = createHash('sha256');
    const rates = [16_000, 8000, 22_050, 44_100, 48_000, 11_025];
    for (let k = 0; k < 60; k++) {
      const d = {
        snrDb: (k % 11) - 3,
        driftDb: k % 5 === 0 ? 0 : 0.5 + (k % 7),
        driftSpeedHz: 0.1 + k / 50,
        driftStartS: k * 0.731,
      };
      const rate = rates[k % rates.length] as number;
      const n = 1 + ((k * 7919) % 90_000);
      const ramps = driftRamps(d, n, rate);
      h.update(new Uint8Array(ramps.buffer));
      h.update(new Uint8Array(Float64Array.of(rampsMeanSquare(ramps, n), driftSnrDb(d, k * 37.5)).buffer));
    }
    if (process.env.SB_GOLDEN_DUMP) console.log(h.copy().digest('hex').slice(0, 32));
    expect(h.digest('hex').slice(0, 32)).toBe('a6f2737a516ad5b50bf4636746352d29');
  });
});
