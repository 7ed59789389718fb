/**
 * Issue 17 item 5 (headroom), the degraded path: the telephony leg's 8 → 16 kHz interpolator
 * overshoots a mu-law signal near full scale (a loud caller clipped at the ADC, harsh noise) and
 * its 16-bit quantization clipped at the int16 limits. channelTail now scales such a turn as a
 * whole back to the 0.9 headroom: measured on worst-case inputs (full-scale square waves and
 * sines, speech driven 10× into the ADC's clip) and as a property over seeds, presets and loud
 * inputs, no sample of a degraded turn sits at 32,767 or −32,768.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { muLawRoundTripTable } from '../../src/core/audio/mulaw.ts';
import { interpolate2IirQuantize16Into } from '../../src/core/audio/resample.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { babbleBed } from '../../src/core/channel/babble.ts';
import { DEGRADED_PEAK_LIMIT, runChannel, TELEPHONY_HEADROOM } from '../../src/core/channel/chain.ts';
import { planChannel } from '../../src/core/channel/plan.ts';
import type { PresetName } from '../../src/core/channel/presets.ts';
import { peakOf, sine, speechLike } from './helpers.ts';

/** The largest value the mu-law round trip gives: 32,124 / 32,768 (G.711's top segment). */
const MU_MAX = 32_124 / 32_768;
/** Where the limiter puts a turn's peak: round(0.9 · 32768) = 29,491, less at most 4 (see channelTail). */
const CEILING = 29_491;

let babble: Float32Array;
beforeAll(async () => {
  babble = await babbleBed(espeakTts(), 'en', 0);
}, 60_000);

/** The degraded turn's 16-bit samples (from its WAV) for `speech` through `preset` with `seed`. */
async function degraded(preset: PresetName, seed: number, speech: Float32Array): Promise<Int16Array> {
  const plan = planChannel(preset, { seed, taskId: 'headroom', turn: 0 }, speech.length);
  const out = await runChannel(nodeGraphRenderer, speech, plan, { babble });
  const { samples } = decodeWav(out.wav);
  return Int16Array.from(samples, (v) => Math.round(v * 32768));
}

const atLimits = (pcm: Int16Array) => pcm.filter((v) => v === 32767 || v === -32768).length;

/** Full-scale square wave of `hz` (a whole number of samples per half period at 16 kHz). */
const square = (hz: number, seconds: number) =>
  Float32Array.from({ length: seconds * 16_000 }, (_, i) => (Math.floor((i * 2 * hz) / 16_000) % 2 ? -1 : 1));

describe('degraded-path headroom: no sample at the int16 limits', () => {
  it('the quarter-scale peak run cannot clip: the interpolator branches have L1 norms 2.98 and 3.72, the mu-law output peaks at 32,124', () => {
    expect(peakOf(muLawRoundTripTable())).toBe(MU_MAX);
    const impulse = new Float64Array(1000);
    impulse[0] = 1;
    const out = new Float32Array(2000);
    // Its return says whether a value may have reached the limits: not for an impulse.
    expect(interpolate2IirQuantize16Into(impulse, out, new Int16Array(2000))).toBe(false);
    const l1 = [0, 1].map((k) => out.filter((_, i) => i % 2 === k).reduce((a, v) => a + Math.abs(v), 0));
    expect(l1.map((v) => v.toFixed(2))).toEqual(['2.98', '3.72']);
    // At ¼ scale the worst output is under full scale (0.91 FS).
    expect(0.25 * MU_MAX * Math.max(...l1)).toBeLessThan(0.92);
    // Without the limiter the same interpolator, fed mu-law's full-scale square, clips.
    const saturated = Float64Array.from({ length: 4000 }, (_, m) => (Math.floor(m / 4) % 2 ? -MU_MAX : MU_MAX));
    const pcm = new Int16Array(8000);
    expect(interpolate2IirQuantize16Into(saturated, new Float32Array(8000), pcm)).toBe(true);
    expect(atLimits(pcm)).toBeGreaterThan(0);
    // Just under the limits (the same square at 0.65 of its level peaks at 32,691) it says so too.
    const under = new Int16Array(8000);
    expect(
      interpolate2IirQuantize16Into(
        saturated.map((v) => v * 0.65),
        new Float32Array(8000),
        under,
      ),
    ).toBe(false);
    expect(atLimits(under)).toBe(0);
    expect(peakOf(under)).toBe(32_691);
    // With a lower limit it says so from that value on, and writes the same samples.
    const flagged = (limit: number, sign = 1) => {
      const pcm = new Int16Array(8000);
      const said = interpolate2IirQuantize16Into(
        saturated.map((v) => sign * v * 0.65),
        new Float32Array(8000),
        pcm,
        limit,
      );
      if (sign === 1) expect(Array.from(pcm)).toEqual(Array.from(under));
      return { said, pcm };
    };
    expect(flagged(32_691).said).toBe(true);
    expect(flagged(32_692).said).toBe(false);
    expect(flagged(DEGRADED_PEAK_LIMIT).said).toBe(true);
    // Negative values count from −limit − 1: the negated square peaks at −32,691 (and +32,268).
    const negated = flagged(32_767, -1).pcm;
    expect([Math.min(...negated), Math.max(...negated)]).toEqual([-32_691, 32_268]);
    expect(flagged(32_690, -1).said).toBe(true);
    expect(flagged(32_691, -1).said).toBe(false);
    expect(() => interpolate2IirQuantize16Into(saturated, new Float32Array(8000), pcm, 32_768)).toThrow(/limit 32768/);
  });

  it('worst-case inputs (full-scale square waves and sines) under regular and harsh: each turn scaled to peak within [29,487, 29,491]; speech 10× into the ADC clip: none at the limits', async () => {
    const worst: [string, () => Float32Array][] = [
      ['1 kHz square', () => square(1000, 2)],
      ['500 Hz square', () => square(500, 2)],
      ['1 kHz sine', () => sine(1000, 2, 1)],
    ];
    const off: string[] = [];
    for (const preset of ['regular', 'harsh'] as const) {
      for (const [name, make] of worst)
        for (let seed = 0; seed < 4; seed++) {
          const pcm = await degraded(preset, seed, make());
          const peak = peakOf(pcm);
          if (atLimits(pcm) || peak < CEILING - 4 || peak > CEILING)
            off.push(`${preset} ${name} seed ${seed}: ${peak}`);
        }
      for (let seed = 0; seed < 4; seed++) {
        const pcm = await degraded(
          preset,
          seed,
          speechLike(2).map((v) => 10 * v),
        );
        if (atLimits(pcm) || peakOf(pcm) > 32766) off.push(`${preset} speech ×10 seed ${seed}: ${peakOf(pcm)}`);
      }
    }
    expect(off).toEqual([]);
    expect(Math.round(TELEPHONY_HEADROOM * 32768)).toBe(CEILING);
  }, 120_000);

  it('property: any seed, preset and loud input (gain 0.5–8, speech, square or sine) gives a degraded turn with no sample at the int16 limits, none at 0.99 FS or above', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom<PresetName>('control', 'regular', 'harsh'),
        fc.constantFrom('speech', 'square', 'sine'),
        fc.double({ min: 0.5, max: 8, noNaN: true }),
        async (seed, preset, kind, gain) => {
          const base =
            kind === 'speech'
              ? speechLike(1).map((v) => v / 0.3)
              : kind === 'square'
                ? square(800, 1)
                : sine(700, 1, 1);
          const pcm = await degraded(
            preset,
            seed,
            base.map((v) => gain * v),
          );
          expect(atLimits(pcm)).toBe(0);
          // Every preset here has telephony: each turn stays below 0.99 FS (32,440).
          expect(peakOf(pcm)).toBeLessThan(DEGRADED_PEAK_LIMIT);
        },
      ),
      { numRuns: 60, seed: 17 },
    );
  }, 300_000);
});
