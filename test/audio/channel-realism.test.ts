/**
 * Issue 17 item 5: the channel measured as the agent hears it — in-band SNR (after the telephony
 * band and far field) against the recorded value, noise variety across seeds, and headroom.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { fft } from '../../src/core/audio/fft.ts';
import { activeRms, peak, rms } from '../../src/core/audio/measure.ts';
import { runChannel, TELEPHONY_HEADROOM, type NoiseBank } from '../../src/core/channel/chain.ts';
import { planChannel, type ChannelPlan, type SourceRef } from '../../src/core/channel/plan.ts';
import { HAVE_NOISE } from '../fixtures/data.ts';
import { diff, loadNoise, sine } from './helpers.ts';

const SENTENCES = [
  'I would like to change my flight to Friday morning, please.',
  'My booking number is four seven two nine, and the name is Garcia.',
  'Could you also check whether my bag allowance includes a second suitcase?',
];
let speech: Float32Array;
beforeAll(async () => {
  const tts = espeakTts();
  const parts = await Promise.all(SENTENCES.map((s) => tts.synthesize(s)));
  speech = new Float32Array(parts.reduce((a, p) => a + p.samples.length, 0));
  let at = 0;
  for (const p of parts) {
    speech.set(p.samples, at);
    at += p.samples.length;
  }
});

/** The plan with only background noise of `source` (and far field when given): nothing else changes the level. */
function noiseOnly(plan: ChannelPlan, source: SourceRef): ChannelPlan {
  return { ...plan, noise: { ...plan.noise!, source }, bursts: [], muffle: null, packetLoss: null, wind: null };
}

/**
 * SNR in dB of the degraded turn as the agent hears it: the turn rendered without noise is the
 * speech the agent hears; the difference to the turn with noise is the noise it hears.
 */
async function heardSnrDb(plan: ChannelPlan, bank: NoiseBank = {}) {
  const withNoise = await runChannel(nodeGraphRenderer, speech, plan, bank);
  const without = await runChannel(nodeGraphRenderer, speech, { ...plan, noise: null }, bank);
  const noise = diff(withNoise.samples, without.samples);
  const event = withNoise.timeline.find((e) => e.type === 'background_noise')!;
  return { measured: 20 * Math.log10(activeRms(without.samples, 16000) / rms(noise)), event };
}

describe('SNR as the agent hears it', () => {
  // The recording's case carries the `noise-data` tag (not a runIf), so that without the data it
  // is skipped and counted in the run's closing line like every other test that needs the data.
  const sources: [SourceRef, string[]][] = [
    ['procedural:pink', []],
    ['procedural:brown', []],
    ['file:people_talking', ['noise-data']],
  ];
  for (const [source, tags] of sources) {
    it(`regular, ${source}: in-band SNR of the degraded turn within ±1 dB of the recorded snr_db (seeds 1–4)`, {
      timeout: 60_000,
      tags,
    }, async () => {
      const bank: NoiseBank = HAVE_NOISE ? { continuous: { people_talking: loadNoise('people_talking') } } : {};
      for (const seed of [1, 2, 3, 4]) {
        const plan = noiseOnly(planChannel('regular', { seed, taskId: 'snr' }, speech.length), source);
        const { measured, event } = await heardSnrDb(plan, bank);
        expect(event.params.snr_db).toBe(15);
        expect(event.params.snr_band).toBe('telephony');
        expect(event.params.snr_in_band_db).toBe(15);
        expect(Math.abs(measured - 15)).toBeLessThan(1);
        // The full-band figure is recorded too; brown noise sits mostly below the band.
        const full = event.params.snr_full_band_db as number;
        if (source === 'procedural:brown') expect(full).toBeLessThan(5);
        if (source === 'procedural:pink') expect(full).toBeLessThan(14);
      }
    });
  }

  it('far field: the SNR is set against the far-field speech (quieter direct sound plus reverb), within ±1 dB in band', {
    timeout: 60_000,
  }, async () => {
    for (const seed of [1, 2, 3]) {
      const base = planChannel('harsh', { seed, taskId: 'far' }, speech.length);
      const plan = {
        ...noiseOnly(base, 'procedural:pink'),
        farField: { gainDb: -10, rt60Ms: 300 + 100 * seed, wetDb: -3, seed },
      };
      const { measured, event } = await heardSnrDb(plan);
      expect(Math.abs(measured - (event.params.snr_db as number))).toBeLessThan(1);
    }
  });
});

/**
 * Best match of `a` (unit RMS) inside `b` (unit RMS, at least as long) over all lags where `a`
 * lies wholly in `b`, as a correlation coefficient: Σ a·b_lag / len(a) (FFT, zero-padded).
 */
function maxCorrelation(a: Float32Array, b: Float32Array): number {
  let n = 1;
  while (n < a.length + b.length) n <<= 1;
  const ar = new Float64Array(n);
  const ai = new Float64Array(n);
  const br = new Float64Array(n);
  const bi = new Float64Array(n);
  ar.set(a);
  br.set(b);
  fft(ar, ai);
  fft(br, bi);
  // c[lag] = Σ a[i]·b[i + lag] = IFFT(conj(A)·B)[lag]; the inverse as a forward FFT of the conjugate / n.
  for (let k = 0; k < n; k++) {
    const re = (ar[k] as number) * (br[k] as number) + (ai[k] as number) * (bi[k] as number);
    const im = (ar[k] as number) * (bi[k] as number) - (ai[k] as number) * (br[k] as number);
    ar[k] = re;
    ai[k] = -im;
  }
  fft(ar, ai);
  let m = 0;
  for (let lag = 0; lag + a.length <= b.length; lag++) m = Math.max(m, Math.abs(ar[lag] as number) / n / a.length);
  return m;
}

describe('noise variety', () => {
  it('each seed gets its own procedural noise: 16 turns of 2 s (more than a 30 s loop holds) share no stretch of noise at any lag', {
    timeout: 60_000,
  }, async () => {
    const quiet = new Float32Array(16000 * 2);
    const noiseOf = async (seed: number) => {
      const plan = noiseOnly(planChannel('regular', { seed, taskId: 'variety' }, quiet.length), 'procedural:pink');
      const x = (await runChannel(nodeGraphRenderer, quiet, { ...plan, telephony: null })).samples;
      const r = rms(x);
      return x.map((v) => v / r);
    };
    const turns: Float32Array[] = [];
    for (let seed = 1; seed <= 16; seed++) turns.push(await noiseOf(seed));
    // Each turn against everything before it: the best match at any lag, as a correlation.
    for (let k = 1; k < turns.length; k++) {
      const before = new Float32Array(k * quiet.length);
      turns.slice(0, k).forEach((t, i) => before.set(t, i * quiet.length));
      expect(maxCorrelation(turns[k]!, before)).toBeLessThan(0.2);
    }
    // The measure finds a repeat: a stretch of an earlier turn correlates fully.
    const earlier = turns[3]!.subarray(8000, 24000);
    const before = new Float32Array(8 * quiet.length);
    turns.slice(0, 8).forEach((t, i) => before.set(t, i * quiet.length));
    expect(maxCorrelation(earlier, before)).toBeGreaterThan(0.99);
    expect(Array.from(await noiseOf(1))).toEqual(Array.from(turns[0]!));
  });
});

describe('headroom', () => {
  const atLimit = (x: Float32Array) => x.reduce((c, v) => c + (Math.abs(v) >= 32767 / 32768 ? 1 : 0), 0);

  it('a full-scale tone leaves the telephony leg at the 0.9 headroom, never at the int16 limits', async () => {
    const tone = sine(1000, 2, 1);
    const out = await runChannel(
      nodeGraphRenderer,
      tone,
      planChannel('control', { seed: 1, taskId: 'h' }, tone.length),
    );
    // After the band-pass's onset transient (100 ms), the tone sits at the headroom.
    const steady = out.samples.subarray(1600);
    expect(peak(steady)).toBeGreaterThan(TELEPHONY_HEADROOM - 0.02);
    expect(peak(steady)).toBeLessThan(TELEPHONY_HEADROOM + 0.02);
    expect(atLimit(out.samples)).toBe(0);
  });

  it('regular and harsh with espeak-ng speech: no sample at the int16 limits over 40 turns', {
    timeout: 120_000,
  }, async () => {
    const bank: NoiseBank = HAVE_NOISE ? { continuous: { people_talking: loadNoise('people_talking') } } : {};
    let clipped = 0;
    let turns = 0;
    for (const preset of ['regular', 'harsh'] as const) {
      for (let seed = 0; seed < 20; seed++) {
        const plan = planChannel(preset, { seed, taskId: 'headroom' }, speech.length, {
          continuous: Object.keys(bank.continuous ?? {}),
        });
        if (plan.noise?.source === 'procedural:babble') plan.noise = { ...plan.noise, source: 'procedural:brown' };
        clipped += atLimit((await runChannel(nodeGraphRenderer, speech, plan, bank)).samples);
        turns++;
      }
    }
    expect(turns).toBe(40);
    expect(clipped).toBe(0);
  });
});
