/**
 * On-device neural TTS (`--tts local:<id>`) with a generated tiny VITS-layout model: transformers.js's
 * `text-to-speech` pipeline loads it from a temp models folder (no downloads), the adapter resamples
 * its 24 kHz waveform to 16 kHz, and the measured audio matches the model's construction: one
 * 100 ms tone burst per kept character, at that character's frequency.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env } from '@huggingface/transformers';
import { main } from '../../src/cli/main.ts';
import { ttsFromSpec } from '../../src/cli/channel.ts';
import { parseManifest, resolveLocalAgent, resolveLocalTts } from '../../src/adapters/shared/local-model-manifest.ts';
import { localTts, UNSPEAKABLE_SAMPLES, type LocalTts } from '../../src/adapters/shared/local-tts.ts';
import { decodeWav, resample } from '../../src/core/audio/wav.ts';
import { expectPeakLimited } from '../audio/helpers.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { TINY_TTS_BURST, TINY_TTS_RATE, tinyTtsTokens, tinyTtsToneHz, writeTinyTtsModel } from './tiny-model.ts';

const ID = 'tiny-vits';
/** The same model at full scale (amplitude 1): its 24 → 16 kHz resampling overshoots 1. */
const LOUD = 'tiny-vits-loud';
/** One character's burst at 16 kHz. */
const SEG = (TINY_TTS_BURST * 16_000) / TINY_TTS_RATE;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let dir: string;
let manifest: unknown;
let tts: LocalTts;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-tts-model-'));
  const entry = (id: string, files: string[]) => ({
    id,
    repo: `switchboard/${id}`,
    revision: 'test',
    task: 'text-to-speech',
    dtype: 'fp32',
    license: 'Apache-2.0',
    files: files.map((f) => ({ path: f, sha256: sha(readFileSync(join(dir, id, f))) })),
  });
  manifest = {
    version: 1,
    models: [entry(ID, writeTinyTtsModel(dir, ID)), entry(LOUD, writeTinyTtsModel(dir, LOUD, 1))],
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  tts = localTts(resolveLocalTts(parseManifest(manifest), ID), { modelsPath: dir, device: 'cpu' });
});
afterAll(async () => {
  await tts?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The frequency (10 Hz grid, the resolution of a 100 ms segment) with the most energy in `x[start, start + n)`. */
function dominantHz(x: Float32Array, start: number, n: number, rate = 16_000): number {
  let best = 0;
  let bestPower = -1;
  for (let k = 1; k < n / 2; k++) {
    let re = 0;
    let im = 0;
    for (let i = 0; i < n; i++) {
      const w = (2 * Math.PI * k * i) / n;
      const v = x[start + i] as number;
      re += v * Math.cos(w);
      im -= v * Math.sin(w);
    }
    const p = re * re + im * im;
    if (p > bestPower) {
      bestPower = p;
      best = k;
    }
  }
  return (best * rate) / n;
}

describe('on-device TTS (tiny VITS layout, transformers.js text-to-speech pipeline)', () => {
  it('is a manifest model kind of its own: resolvable for --tts, not as an agent', () => {
    const m = parseManifest(manifest);
    expect(resolveLocalTts(m, ID)).toMatchObject({ id: ID, task: 'text-to-speech' });
    expect(() => resolveLocalTts(m, 'nope')).toThrow(
      'unknown on-device TTS model "nope" (manifest has: tiny-vits, tiny-vits-loud)',
    );
    expect(() => resolveLocalAgent(m, ID)).toThrow('unknown on-device agent "tiny-vits" (manifest has: nothing)');
    // The repository's manifest lists MMS-TTS English.
    const repo = parseManifest(
      JSON.parse(readFileSync(new URL('../../models/manifest.json', import.meta.url), 'utf8')),
    );
    expect(resolveLocalTts(repo, 'mms-tts-eng')).toMatchObject({ repo: 'Xenova/mms-tts-eng', task: 'text-to-speech' });
  });

  it('speaks 16 kHz audio: one 100 ms burst per kept character, at that character’s tone', async () => {
    const text = "Hi, I'd like plan 42!";
    const tokens = tinyTtsTokens(text);
    expect(tokens.length).toBe(19); // "hi i'd like plan 42": punctuation but the apostrophe dropped, case folded
    const a = await tts.synthesize(text, { language: 'en' });
    expect(env.allowRemoteModels).toBe(false);
    expect(tts.id).toBe(`local:${ID}`);
    expect(a.sampleRate).toBe(16_000);
    expect(SEG).toBe(1600);
    expect(a.samples.length).toBe(tokens.length * SEG);
    const measured = tokens.map((_, i) => dominantHz(a.samples, i * SEG, SEG));
    expect(measured).toEqual(tokens.map(tinyTtsToneHz));
    // Amplitude survives the 24 → 16 kHz resampling (0.5 sine: RMS 0.354) away from burst edges.
    let e = 0;
    for (let i = 400; i < 1200; i++) e += (a.samples[i] as number) ** 2;
    expect(Math.sqrt(e / 800)).toBeCloseTo(0.5 / Math.SQRT2, 2);
    // Deterministic for this graph.
    expect(Array.from((await tts.synthesize(text)).samples)).toEqual(Array.from(a.samples));
  });

  it('a full-scale model is peak-limited like espeak speech: measured peak exactly 0.9 FS (29,491), the waveform only scaled', async () => {
    const loud = localTts(resolveLocalTts(parseManifest(manifest), LOUD), { modelsPath: dir, device: 'cpu' });
    try {
      const text = 'plan 42';
      const a = await loud.synthesize(text);
      // The model's own waveform (full-scale bursts at 24 kHz) resampled without a limit overshoots full scale.
      const raw = new Float32Array(tinyTtsTokens(text).length * TINY_TTS_BURST);
      tinyTtsTokens(text).forEach((id, i) => {
        for (let n = 0; n < TINY_TTS_BURST; n++)
          raw[i * TINY_TTS_BURST + n] = Math.sin((2 * Math.PI * tinyTtsToneHz(id) * n) / TINY_TTS_RATE);
      });
      // …and clips at the int16 limits; through the adapter it is the same samples × 0.9 / peak.
      expectPeakLimited(a.samples, resample(raw, TINY_TTS_RATE, 16_000));
    } finally {
      await loud.dispose();
    }
  });

  it('returns 20 ms of silence for text the tokenizer keeps nothing of', async () => {
    for (const text of ['?!…', '您好', '']) {
      const a = await tts.synthesize(text);
      expect(a.samples.length).toBe(UNSPEAKABLE_SAMPLES);
      expect(a.samples.every((v) => v === 0)).toBe(true);
    }
  });
});

describe('run --tts local:<id>', () => {
  it('speaks every caller turn with the on-device model (SWITCHBOARD_MODELS) and stores WAVs of its length', async () => {
    const before = process.env.SWITCHBOARD_MODELS;
    process.env.SWITCHBOARD_MODELS = dir;
    try {
      const io = capture();
      const out = join(dir, 'run');
      const code = await main(
        [
          'run',
          '--domain',
          'carrier',
          '--task-ids',
          'carrier-change-plan-1',
          '--preset',
          'clean',
          '--tts',
          `local:${ID}`,
          '--out',
          out,
          '--json',
        ],
        io,
      );
      expect(code, io.stderr).toBe(0);
      const t = Trajectory.parse(JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim()));
      const spoken = t.turns.filter((x) => x.role === 'user' && x.audio);
      expect(spoken.length).toBeGreaterThan(0);
      let spokenDigits = 0;
      for (const u of spoken) {
        if (u.role !== 'user' || !u.audio) continue;
        expect(u.audio.tts).toBe(`local:${ID}`);
        const wav = decodeWav(new Uint8Array(await readFile(join(out, u.audio.clean))));
        expect(wav.sampleRate).toBe(16000);
        // The carrier task is in Mandarin: the tiny English-style model speaks only its digits.
        const tokens = tinyTtsTokens(u.text);
        expect(wav.samples.length).toBe(tokens.length ? tokens.length * SEG : UNSPEAKABLE_SAMPLES);
        expect(u.audio.duration_ms).toBe(wav.samples.length / 16);
        // Each character's burst is at its tone (measured from the 16-bit WAV).
        expect(tokens.map((_, i) => dominantHz(wav.samples, i * SEG, SEG))).toEqual(tokens.map(tinyTtsToneHz));
        if (tokens.length) spokenDigits++;
      }
      expect(spokenDigits).toBeGreaterThan(0); // the phone number turn at least
    } finally {
      if (before === undefined) delete process.env.SWITCHBOARD_MODELS;
      else process.env.SWITCHBOARD_MODELS = before;
    }
  }, 60_000);

  it('rejects an unknown or missing on-device TTS model with a usage error', () => {
    expect(() => ttsFromSpec('local:nope', { SWITCHBOARD_MODELS: dir })).toThrow(
      '--tts local:nope: unknown on-device TTS model "nope" (manifest has: tiny-vits, tiny-vits-loud)',
    );
    const empty = mkdtempSync(join(tmpdir(), 'sb-tts-empty-'));
    try {
      writeFileSync(join(empty, 'manifest.json'), JSON.stringify(manifest));
      expect(() => ttsFromSpec(`local:${ID}`, { SWITCHBOARD_MODELS: empty })).toThrow(
        `needs files that are not in ${empty}: ${ID}/config.json`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
