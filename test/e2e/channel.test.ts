/**
 * The phone channel in a real browser (Debian chromium): a scripted call with channel audio —
 * espeak-ng (WASM, loaded as its own chunk) speaks each caller turn, the page renders the
 * preset's graph with OfflineAudioContext, every caller turn gets playback and a waveform with
 * its channel events — then the WAVs are found in IndexedDB from the history and exported in
 * one zip (CLI `--out` layout). Screenshots go to a temp folder (printed once).
 */
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testData } from '../fixtures/data.ts';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { chromiumSession, openPage } from './harness.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

let url = '';
let context: BrowserContext;
let shots = '';
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  // The models folder beside the page: the manifest only (no weights in the repository).
  const models = await mkdtemp(join(tmpdir(), 'switchboard-e2e-channel-models-'));
  cleanup.push(() => rm(models, { recursive: true, force: true }));
  await copyFile(new URL('../../models/manifest.json', import.meta.url), join(models, 'manifest.json'));
  const session = await chromiumSession({ mounts: { '/models/': models } });
  cleanup.push(session.close);
  ({ url, context } = session);
  shots = await mkdtemp(join(tmpdir(), 'switchboard-e2e-channel-shots-'));
  console.log(`e2e channel screenshots: ${shots}`);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const open = (hash = ''): Promise<Page> => openPage(context, url, pageErrors, hash);

const NOISE = (f: string) => `${testData('noise')}${f}`;
const CALL =
  '#/watch?domain=carrier&task=carrier-pay-balance-1&seed=3&preset=harsh&agent=reference&user=scripted&audio=1&dropout=0.5&pace=0';

describe('channel audio in chromium', () => {
  it('speaks, degrades and draws every caller turn, keeps the WAVs and exports one zip', async () => {
    const page = await open(`${CALL}&run=1`);
    await page.waitForSelector('#termination', { timeout: 60_000 });
    expect(await page.isChecked('#channel-audio')).toBe(true);
    const callerTurns = await page.locator('#transcript li[data-role="user"]').count();
    expect(callerTurns).toBeGreaterThanOrEqual(3);
    // Every caller turn has playback and a drawn waveform.
    await page.waitForFunction(
      (n) => document.querySelectorAll('#transcript .turn-audio audio[src^="blob:"]').length === n,
      callerTurns,
    );
    expect(await page.locator('#transcript .turn-audio svg path.wave').count()).toBe(callerTurns);
    const pathLen = await page.$eval(
      '#transcript .turn-audio svg path.wave',
      (p) => (p.getAttribute('d') ?? '').length,
    );
    expect(pathLen).toBeGreaterThan(1000);
    // The harsh preset drops packets; the marks come from the effect timeline.
    expect(await page.locator('#transcript [data-mark="packet_loss"]').count()).toBeGreaterThan(0);
    const hasDropout = await page.locator('#transcript [data-mark="dropout"]').count();
    // The marks have a legend beside the waveform, one entry per kind shown.
    expect(await page.locator('#transcript .turn-audio').first().locator('.wave-legend li').count()).toBeGreaterThan(0);
    expect(await page.locator('#transcript [data-legend="packet_loss"]').first().textContent()).toBe('packet loss');
    expect((await page.locator('#transcript [data-legend="dropout"]').count()) > 0).toBe(hasDropout > 0);
    // The audio plays in the browser: its duration matches the timeline's.
    const dur = await page.$eval(
      '#transcript .turn-audio audio',
      (a) =>
        new Promise<number>((r) => {
          const el = a as HTMLAudioElement;
          if (Number.isFinite(el.duration) && el.duration > 0) r(el.duration);
          else el.addEventListener('loadedmetadata', () => r(el.duration), { once: true });
        }),
    );
    expect(dur).toBeGreaterThan(0.3);
    await page.locator('#transcript .turn-audio').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'channel-watch.png'), fullPage: true });

    // Kept in IndexedDB with the trajectory: the history shows the same audio after a reload.
    const hist = await open('#/history');
    await hist.waitForSelector('#history tbody tr');
    await hist.locator('#history tbody tr').first().locator('button').click();
    await hist.waitForFunction(
      (n) => document.querySelectorAll('#history-transcript .turn-audio audio[src^="blob:"]').length === n,
      callerTurns,
    );

    const [download] = await Promise.all([hist.waitForEvent('download'), hist.click('#export-zip')]);
    const zip = unzipSync(new Uint8Array(await readFile((await download.path())!)));
    const names = Object.keys(zip).sort();
    expect(names[names.length - 1]).toBe('trajectories.jsonl');
    const lines = strFromU8(zip['trajectories.jsonl']!)
      .trimEnd()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(lines).toHaveLength(1);
    const t = lines[0]!;
    const refs = t.turns.flatMap((x) => (x.role === 'user' && x.audio ? [x.audio] : []));
    expect(refs).toHaveLength(callerTurns);
    for (const r of refs) {
      expect(r.degraded).toMatch(/^audio\/carrier\/carrier-pay-balance-1\/0-3\/turn-\d{3}\.degraded\.wav$/);
      expect(r.tts).toBe('espeak-ng');
      expect(r.preset).toBe('harsh');
      const wav = decodeWav(zip[r.degraded]!);
      expect(wav.sampleRate).toBe(16000);
      expect(Math.abs(wav.samples.length / 16 - r.duration_ms)).toBeLessThanOrEqual(1);
      expect(zip[r.clean]).toBeDefined();
    }
    expect(names).toHaveLength(1 + 2 * callerTurns);
    const cut = t.turns.find((x) => x.role === 'user' && x.dropout);
    expect(Boolean(cut)).toBe(hasDropout > 0);
    await hist.screenshot({ path: join(shots, 'channel-history.png'), fullPage: true });
    await hist.close();
    await page.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('two fresh runs of one link give byte-identical channel audio, babble noise included', async () => {
    /** Each caller turn's degraded WAV bytes (hex, compared whole), its noise bed and its marks' titles. */
    const run = async () => {
      const page = await open(`${CALL}&run=1`);
      await page.waitForSelector('#termination', { timeout: 60_000 });
      const n = await page.locator('#transcript li[data-role="user"]').count();
      await page.waitForFunction(
        (k) => document.querySelectorAll('#transcript .turn-audio audio[src^="blob:"]').length === k,
        n,
      );
      const got = await page.$$eval('#transcript .turn-audio', async (turns) =>
        Promise.all(
          turns.map(async (t) => {
            const src = t.querySelector('audio')!.getAttribute('src')!;
            const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
            return {
              wav: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''),
              noise: t.getAttribute('data-noise'),
              marks: [...t.querySelectorAll('[data-mark] title')].map((x) => x.textContent ?? ''),
            };
          }),
        ),
      );
      await page.close();
      return got;
    };
    const a = await run();
    const b = await run();
    expect(a.length).toBeGreaterThanOrEqual(3);
    // The link's plan uses babble (several espeak-ng talkers), the case that used to differ.
    expect(a.some((t) => t.noise === 'procedural:babble')).toBe(true);
    expect(b.map((t) => [t.noise, t.marks])).toEqual(a.map((t) => [t.noise, t.marks]));
    expect(b.map((t) => t.wav.length)).toEqual(a.map((t) => t.wav.length));
    expect(b.filter((t, i) => t.wav !== a[i]!.wav).length).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('uses the noise files the user adds as the noise bank, and the link says so', {
    tags: ['noise-data'],
    timeout: 120_000,
  }, async () => {
    const page = await open(
      '#/watch?domain=carrier&task=carrier-pay-balance-1&seed=1&preset=regular&agent=reference&user=scripted&audio=1&pace=0',
    );
    await page.waitForSelector('#noise-files');
    await page.setInputFiles('#noise-files', [NOISE('people_talking.wav'), NOISE('car_horn.wav')]);
    await page.waitForFunction(() =>
      document.querySelector('#noise-status')?.textContent?.includes('custom noise bank'),
    );
    expect(await page.textContent('#noise-status')).toContain('people_talking.wav, car_horn.wav');
    const link = (await page.getAttribute('#share-link', 'href')) ?? '';
    expect(link).toContain('noise=custom');
    expect(link).not.toContain('people_talking');
    expect(await page.textContent('#share-note')).toContain('custom noise bank');
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 60_000 });
    const callerTurns = await page.locator('#transcript li[data-role="user"]').count();
    expect(callerTurns).toBeGreaterThanOrEqual(2);
    await page.waitForFunction((n) => document.querySelectorAll('#transcript .turn-audio').length === n, callerTurns);
    // The ≥ 10 s recording is the bed (car_horn, 4 s, is a burst sound): every turn's timeline names it.
    const beds = await page.$$eval('#transcript .turn-audio', (els) => els.map((e) => e.getAttribute('data-noise')));
    expect(beds).toEqual(Array(callerTurns).fill('file:people_talking'));
    await page.screenshot({ path: join(shots, 'channel-noise-files.png'), fullPage: true });
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  it('offers the on-device agent with the device, and says what is missing when its files are absent', async () => {
    const page = await open('#/watch?domain=carrier&agent=local&local=whisper-base%2Bqwen3-0.6b');
    await page.waitForSelector('#local-id');
    expect(await page.inputValue('#agent')).toBe('local');
    expect(await page.inputValue('#local-id')).toBe('whisper-base+qwen3-0.6b');
    const ids = await page.$$eval('#local-id option', (o) => o.map((x) => x.textContent));
    expect(ids).toContain('qwen3-0.6b');
    await page.waitForFunction(() =>
      /WebGPU|WASM/.test(document.querySelector('#local-device strong')?.textContent ?? ''),
    );
    const offered = (await page.textContent('#local-device strong')) ?? '';
    expect(offered).toMatch(/^(WebGPU|WASM \(CPU\)) \(this browser\)$/);
    expect(await page.getAttribute('#share-link', 'href')).toContain('agent=local&local=whisper-base%2Bqwen3-0.6b');
    // The repository's manifest is not pinned yet (no internet here): the page says so before a download.
    expect(await page.textContent('#local-unpinned')).toBe(
      "Not pinned: onnx-community/whisper-base, onnx-community/Qwen3-0.6B-ONNX have no commit or sha256 in the page's model manifest, so the files downloaded are whatever the Hub serves now and are not checked. On a machine with internet, npm run models:fetch -- --pin records them.",
    );
    await page.click('#local-load');
    await page.waitForSelector('#local-error', { timeout: 30_000 });
    expect(await page.textContent('#local-error')).toMatch(/whisper-base|qwen3|models/);
    await page.screenshot({ path: join(shots, 'local-agent.png') });
    await page.close();
  }, 60_000);

  it('a batch shows the channel hurting the calls: clean passes every rollout, harsh with dropout and barge-in scores as the CLI does', async () => {
    const tasks = ['carrier-pay-balance-1', 'carrier-wallet-pay-1', 'carrier-pay-split-limit-1'];
    const page = await open('#/batch');
    await page.waitForSelector('#batch-run');
    await page.click('text=none');
    for (const id of tasks) await page.check(`input[value="${id}"]`);
    await page.fill('#trials', '2');
    await page.fill('#workers', '2');
    await page.check('#channel-audio');
    const rows = () =>
      page.$$eval('#batch-results tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent)),
      );
    const runBatch = async () => {
      await page.click('#batch-run');
      await page.waitForFunction(
        () => document.querySelector('#batch-status')?.textContent === '6 / 6 rollouts · done',
        undefined,
        { timeout: 120_000 },
      );
      return rows();
    };
    expect(await page.inputValue('#preset')).toBe('clean');
    expect(await runBatch()).toEqual(tasks.map((id) => [id, '2', '2', '1', '1', '1', 'always passed']));

    await page.selectOption('#preset', 'harsh');
    await page.fill('#dropout', '0.3');
    await page.fill('#barge-in', '0.3');
    const harsh = await runBatch();
    // The CLI's scores of the same batch (same seeds, preset, dropout and barge-in).
    const io = capture();
    const args = ['run', '--domain', 'carrier', '--task-ids', tasks.join(','), '--trials', '2'];
    const out = await mkdtemp(join(tmpdir(), 'switchboard-e2e-batch-cli-'));
    cleanup.push(() => rm(out, { recursive: true, force: true }));
    const flags = ['--preset', 'harsh', '--dropout', '0.3', '--barge-in', '0.3'];
    expect(await main([...args, ...flags, '--json', '--out', out], io)).toBe(0);
    const cli = (
      JSON.parse(io.stdout) as { tasks: { task_id: string; rewards: number[]; pass_hat: Record<string, number> }[] }
    ).tasks;
    const num = (x: number) => String(Math.round(x * 1000) / 1000);
    const difficulty = (ok: number) => (ok === 2 ? 'always passed' : ok === 0 ? 'always failed' : 'boundary');
    expect(harsh).toEqual(
      cli.map((t) => {
        const ok = t.rewards.filter((r) => r === 1).length;
        const mean = t.rewards.reduce((a, b) => a + b, 0) / t.rewards.length;
        return [t.task_id, '2', String(ok), num(mean), num(t.pass_hat['1']!), num(t.pass_hat['2']!), difficulty(ok)];
      }),
    );
    // The channel hurt: not every harsh rollout passed.
    expect(harsh.map((r) => r[2])).not.toEqual(['2', '2', '2']);
    // The batch keeps every rollout's channel WAVs and downloads them with its trajectories in
    // the CLI's --out layout: the same files as the CLI writes for the same flags, at the same
    // rate, each as long as its trajectory records. (Lengths are not the CLI's: the page speaks
    // with espeak-ng 1.52-dev compiled to WASM, the CLI with the system's espeak-ng 1.51, whose
    // Mandarin timing differs.)
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#batch-export')]);
    const zip = unzipSync(new Uint8Array(await readFile((await download.path())!)));
    const pageTrajectories = strFromU8(zip['trajectories.jsonl']!)
      .trimEnd()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(pageTrajectories.map((t) => `${t.task_id}/${t.trial}`).sort()).toEqual(
      tasks.flatMap((id) => [`${id}/0`, `${id}/1`]).sort(),
    );
    const cliWavs = (await readdir(join(out, 'audio'), { recursive: true }))
      .filter((f) => f.endsWith('.wav'))
      .map((f) => `audio/${f}`)
      .sort();
    expect(cliWavs.length).toBeGreaterThanOrEqual(12);
    expect(
      Object.keys(zip)
        .filter((n) => n.endsWith('.wav'))
        .sort(),
    ).toEqual(cliWavs);
    for (const turn of pageTrajectories.flatMap((t) => t.turns)) {
      if (turn.role !== 'user' || !turn.audio) continue;
      const { clean, degraded, duration_ms } = turn.audio;
      const cliRate = decodeWav(new Uint8Array(await readFile(join(out, degraded)))).sampleRate;
      for (const name of [clean, degraded]) {
        const wav = decodeWav(zip[name]!);
        expect([name, wav.sampleRate]).toEqual([name, cliRate]);
        expect(Math.abs((wav.samples.length / wav.sampleRate) * 1000 - duration_ms)).toBeLessThanOrEqual(1);
      }
    }
    await page.screenshot({ path: join(shots, 'batch-harsh.png'), fullPage: true });
    await page.close();
    expect(pageErrors).toEqual([]);
  }, 300_000);
});
