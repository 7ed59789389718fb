/**
 * The on-device agent in a real browser (Debian chromium through playwright-core, --disable-gpu):
 * the generated tiny causal LM (test/models/tiny-model.ts) is served by a local server with the
 * Hugging Face Hub's URL layout (`/hub/<repo>/resolve/<revision>/<file>`), and the page is built
 * with a manifest naming it and that host; the page shows the exact download size, downloads the
 * model with a progress bar into its model worker on WASM (onnxruntime-web's files served by this
 * site, never a CDN), runs a carrier call with it, and a second tab loads it from the browser's
 * cache without downloading again. The caller's speech recognizers — the tiny CTC, Whisper and
 * Moonshine models (tiny-model.ts, tiny-seq2seq.ts) — load the same way and hear a WAV file, and
 * the live microphone (getUserMedia on Chromium's fake capture device playing a generated WAV).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import {
  TINY_ASR_RATE,
  TINY_ASR_TEXT,
  tinyAsrSpeech,
  writeTinyAsrModel,
  writeTinyModel,
} from '../models/tiny-model.ts';
import { tinySeq2SeqSpeech, TINY_S2S_RATE, writeTinyMoonshine, writeTinyWhisper } from '../models/tiny-seq2seq.ts';
import { encodeWav } from '../../src/core/audio/wav.ts';
import { chromiumSession } from './harness.ts';

let url = '';
let context: BrowserContext;
const cleanup: (() => Promise<void>)[] = [];
/** Requests that tried to leave 127.0.0.1 (aborted). */
const offsite: string[] = [];
/** Requests to the Hub-layout host. */
const hubRequests: string[] = [];
let totalBytes = 0;
let asrBytes = 0;
/** The tiny recognizer's synthetic speech as a 16 kHz WAV file (what the caller opens). */
let voiceWav = '';
/** What the caller says to the tiny Whisper and Moonshine recognizers, as a 16 kHz WAV file. */
const S2S_TEXT = 'please pay my bill';
let s2sWav = '';

beforeAll(async () => {
  const models = await mkdtemp(join(tmpdir(), 'switchboard-e2e-models-'));
  cleanup.push(() => rm(models, { recursive: true, force: true }));
  /** A manifest entry with every file's size and sha256 pinned, as `models:fetch --pin` writes them. */
  const entry = async (id: string, task: string, files: string[], folder = id, revision = 'test') => ({
    id,
    repo: `switchboard/${folder}`,
    revision,
    task,
    dtype: 'fp32',
    license: 'Apache-2.0',
    files: await Promise.all(
      files.map(async (f) => {
        const bytes = await readFile(join(models, folder, f));
        return { path: f, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
      }),
    ),
  });
  const llm = await entry('tiny-llama', 'text-generation', writeTinyModel(models, 'tiny-llama'));
  // The same files at another revision, with the manifest pinning another sha256 for the weights.
  const tampered = await entry(
    'tiny-llama-tampered',
    'text-generation',
    llm.files.map((f) => f.path),
    'tiny-llama',
    'tampered',
  );
  tampered.files = tampered.files.map((f) => (f.path === 'onnx/model.onnx' ? { ...f, sha256: '0'.repeat(64) } : f));
  const asr = await entry('tiny-ctc', 'automatic-speech-recognition', writeTinyAsrModel(models, 'tiny-ctc'));
  const whisper = await entry('tiny-whisper', 'automatic-speech-recognition', writeTinyWhisper(models, 'tiny-whisper'));
  const moonshine = await entry(
    'tiny-moonshine',
    'automatic-speech-recognition',
    writeTinyMoonshine(models, 'tiny-moonshine'),
  );
  const manifest = { version: 1, models: [llm, tampered, asr, whisper, moonshine], agents: [] };
  totalBytes = llm.files.reduce((n, f) => n + f.size, 0);
  asrBytes = asr.files.reduce((n, f) => n + f.size, 0);
  voiceWav = join(models, 'caller.wav');
  await writeFile(voiceWav, encodeWav(tinyAsrSpeech(), TINY_ASR_RATE));
  s2sWav = join(models, 'caller-s2s.wav');
  await writeFile(s2sWav, encodeWav(tinySeq2SeqSpeech(S2S_TEXT), TINY_S2S_RATE));
  // Chromium's fake microphone plays this file: 0.3 s of silence, the tiny CTC recognizer's
  // speech, then 10 s of silence (the device loops the file; a take is shorter than the loop).
  const speech = tinyAsrSpeech();
  const mic = new Float32Array(TINY_ASR_RATE * 10.3 + speech.length);
  mic.set(speech, TINY_ASR_RATE * 0.3);
  const micWav = join(models, 'mic.wav');
  await writeFile(micWav, encodeWav(mic, TINY_ASR_RATE));
  const hub = join(models, 'model-hub.ts');
  await writeFile(
    hub,
    `export const MODEL_HUB = '/hub/';\nexport const MODEL_MANIFEST: unknown = ${JSON.stringify(manifest)};\n`,
  );
  const session = await chromiumSession({
    args: [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${micWav}`,
    ],
    replace: { 'src/adapters/browser/model-hub.ts': hub },
    mounts: {
      '/hub/switchboard/tiny-llama/resolve/test/': join(models, 'tiny-llama'),
      '/hub/switchboard/tiny-llama/resolve/tampered/': join(models, 'tiny-llama'),
      '/hub/switchboard/tiny-ctc/resolve/test/': join(models, 'tiny-ctc'),
      '/hub/switchboard/tiny-whisper/resolve/test/': join(models, 'tiny-whisper'),
      '/hub/switchboard/tiny-moonshine/resolve/test/': join(models, 'tiny-moonshine'),
    },
  });
  cleanup.push(session.close);
  ({ url, context } = session);
  context.on('request', (r) => {
    if (r.url().includes('/hub/')) hubRequests.push(r.url());
  });
  await context.route(
    (u) => !u.href.startsWith(url),
    (route) => {
      offsite.push(route.request().url());
      return route.abort();
    },
  );
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

/** A new tab on the carrier call view as the caller, channel audio on (clean), recognizer picker shown. */
async function openCall(): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}#/call?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=clean&agent=reference&audio=1`);
  await page.waitForSelector('#asr-id');
  return { page, errors };
}

/** Pick recognizer `id` in the call view, load it, and check it loaded on WASM after downloading `weights`. */
async function loadRecognizerIn(page: Page, id: string, weights: string): Promise<void> {
  await page.selectOption('#asr-id', id);
  await page.click('#asr-load');
  await page.waitForFunction(
    () =>
      document.querySelector('#asr-device')?.textContent?.includes('(loaded)') || document.querySelector('#asr-error'),
    null,
    { timeout: 90_000 },
  );
  expect(await page.locator('#asr-error').count(), (await page.textContent('#asr-error').catch(() => '')) ?? '').toBe(
    0,
  );
  expect(await page.textContent('#asr-device')).toBe('Device: WASM (CPU) (loaded)');
  expect(hubRequests.some((u) => u.endsWith(`/hub/switchboard/${id}/resolve/test/${weights}`))).toBe(true);
}

/**
 * The recognizer's exact words in the draft, sent: the caller turn holds them, with the take's
 * audio through the clean preset.
 */
async function sendHeardTurn(page: Page, text: string): Promise<void> {
  await page.waitForSelector('#heard-text', { timeout: 30_000 });
  expect(await page.textContent('#heard-text')).toBe(text);
  expect(await page.inputValue('#say')).toBe(text);
  await page.click('#send');
  const caller = page.locator('#transcript li[data-role="user"]').first();
  await caller.locator('.turn-audio audio').waitFor();
  expect(await caller.locator('p.text').textContent()).toBe(text);
  expect(await caller.locator('.audio-meta .muted').textContent()).toContain('clean · microphone');
}

/** Stop the call, see it ended, with no page error and nothing fetched off this host; close the tab. */
async function stopCall(page: Page, errors: string[]): Promise<void> {
  await page.click('#stop');
  await page.waitForSelector('#termination', { timeout: 20_000 });
  expect(errors).toEqual([]);
  expect(offsite).toEqual([]);
  await page.close();
}

describe('the on-device agent in chromium', () => {
  it('loads the tiny model on WASM and its tool call runs in a carrier call', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}#/watch`);
    await page.waitForSelector('#task');
    await page.selectOption('#task', 'carrier-pay-balance-1');
    await page.selectOption('#pace', '0');
    await page.selectOption('#agent', 'local');
    await page.waitForSelector('#local-id');
    expect(await page.$$eval('#local-id option', (o) => o.map((x) => x.textContent))).toEqual([
      'tiny-llama',
      'tiny-llama-tampered',
    ]);
    await expect.poll(() => page.textContent('#local-device')).toBe('Device: WASM (CPU) (this browser)');
    // The exact download size and the pinned revision, before anything is fetched.
    expect(await page.textContent('#local-size')).toBe(
      `${(totalBytes / 1e6).toFixed(1)} MB from switchboard/tiny-llama@test`,
    );
    expect(hubRequests).toEqual([]);
    await page.click('#local-load');
    await page.waitForFunction(
      () =>
        document.querySelector('#local-device')?.textContent?.includes('(loaded)') ||
        document.querySelector('#local-error'),
      null,
      { timeout: 60_000 },
    );
    expect(
      await page.locator('#local-error').count(),
      (await page.textContent('#local-error').catch(() => '')) ?? '',
    ).toBe(0);
    expect(await page.textContent('#local-device')).toBe('Device: WASM (CPU) (loaded)');
    expect(hubRequests.some((u) => u.endsWith('/hub/switchboard/tiny-llama/resolve/test/onnx/model.onnx'))).toBe(true);

    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 60_000 });
    const lines = await page.$$eval('#transcript > li', (items) =>
      items.map((li) => {
        const role = li.getAttribute('data-role');
        if (role === 'tool')
          return `tool: ${li.querySelector('code.call')?.textContent?.replace(/\(.*$/, '')} ${li.querySelector('.badge')?.textContent}`;
        const calls = [...li.querySelectorAll('p.calls code')].map((c) => c.textContent).join(' ');
        return `${role}: ${li.querySelector('p.text')?.textContent ?? ''}${calls ? `→ ${calls}` : ''}`;
      }),
    );
    // The tiny model's exact reply: its tool call really runs, then it reports and ends the call.
    expect(lines).toEqual([
      'assistant: Let me check.→ get_bills({"customer_id":"C1002"})',
      'tool: get_bills ok',
      'assistant: Your bill is paid.',
    ]);
    expect(await page.textContent('#termination')).toContain('agent_stop');
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);
    await page.close();

    // Another tab: the browser's cache has the files, nothing is downloaded again.
    const before = hubRequests.filter((u) => u.endsWith('.onnx')).length;
    const again = await context.newPage();
    await again.goto(`${url}#/watch?domain=carrier&agent=local&local=tiny-llama`);
    await again.click('#local-load');
    await again.waitForFunction(
      () => document.querySelector('#local-device')?.textContent?.includes('(loaded)'),
      null,
      {
        timeout: 60_000,
      },
    );
    expect(hubRequests.filter((u) => u.endsWith('.onnx')).length).toBe(before);
    await again.close();
  }, 180_000);

  it('refuses a downloaded file whose sha256 is not the manifest’s, naming it', async () => {
    const page = await context.newPage();
    await page.goto(`${url}#/watch?domain=carrier&agent=local&local=tiny-llama-tampered`);
    await page.click('#local-load');
    await page.waitForSelector('#local-error', { timeout: 60_000 });
    const text = (await page.textContent('#local-error')) ?? '';
    expect(text).toContain(
      'on-device agent "tiny-llama-tampered": could not download switchboard/tiny-llama@tampered from',
    );
    expect(text).toContain(
      `switchboard/tiny-llama@tampered/onnx/model.onnx: sha256 ${createHash('sha256')
        .update(await readFile(voiceWav.replace(/caller\.wav$/, 'tiny-llama/onnx/model.onnx')))
        .digest('hex')} does not match the manifest's ${'0'.repeat(64)}; file not loaded`,
    );
    expect(await page.textContent('#local-device')).not.toContain('(loaded)');
    await page.close();
  }, 120_000);

  it('a person calls by voice: the tiny recognizer’s words become the caller turn, and the agent’s replies are spoken', async () => {
    const { page, errors } = await openCall();
    expect(await page.$$eval('#asr-id option', (o) => o.map((x) => x.textContent))).toEqual([
      'tiny-ctc',
      'tiny-whisper',
      'tiny-moonshine',
    ]);
    expect(await page.textContent('#asr-size')).toBe(
      `${(asrBytes / 1e6).toFixed(1)} MB from switchboard/tiny-ctc@test`,
    );
    await loadRecognizerIn(page, 'tiny-ctc', 'onnx/model.onnx');

    await page.check('#speak-agent');
    await page.click('#run');
    await page.waitForSelector('#voice-file:not([disabled])');
    // A file that is not a WAV is refused by name; the turn waits for a good one.
    await page.setInputFiles('#voice-file', {
      name: 'notes.wav',
      mimeType: 'audio/wav',
      buffer: Buffer.from('not audio'),
    });
    await page.waitForSelector('#call-error');
    expect(await page.textContent('#call-error')).toMatch(/^notes\.wav: not a readable WAV file \(.+\)$/);
    await page.setInputFiles('#voice-file', voiceWav);
    await sendHeardTurn(page, TINY_ASR_TEXT);

    // The agent's greeting and its reply to the caller, each spoken: WAVs of measured length.
    await page.waitForFunction(
      () => document.querySelectorAll('#transcript li[data-role="assistant"] .agent-speech').length >= 2,
      null,
      {
        timeout: 30_000,
      },
    );
    const spoken = await page.$$eval('#transcript li[data-role="assistant"] .agent-speech', (ps) =>
      ps.map((p) => Number(p.getAttribute('data-ms'))),
    );
    for (const ms of spoken) expect(ms).toBeGreaterThan(300);
    const greeting = page.locator('#transcript li[data-role="assistant"] .agent-speech audio').first();
    const seconds = await greeting.evaluate(
      (a) =>
        new Promise<number>((r) => {
          const el = a as HTMLAudioElement;
          if (Number.isFinite(el.duration) && el.duration > 0) r(el.duration);
          else el.addEventListener('loadedmetadata', () => r(el.duration), { once: true });
        }),
    );
    expect(Math.abs(seconds * 1000 - spoken[0]!)).toBeLessThan(20);
    await stopCall(page, errors);
  }, 180_000);

  /** Open a call as the caller with recognizer `id` loaded, and start it; returns the page. */
  async function callWithRecognizer(id: string) {
    const { page, errors } = await openCall();
    await loadRecognizerIn(page, id, id === 'tiny-ctc' ? 'onnx/model.onnx' : 'onnx/decoder_model_merged.onnx');
    await page.click('#run');
    await page.waitForSelector('#voice-file:not([disabled])');
    return { page, errors };
  }

  for (const id of ['tiny-whisper', 'tiny-moonshine']) {
    it(`${id} (encoder–decoder) hears the caller's words exactly in chromium`, async () => {
      const { page, errors } = await callWithRecognizer(id);
      await page.setInputFiles('#voice-file', s2sWav);
      await sendHeardTurn(page, S2S_TEXT);
      await stopCall(page, errors);
    }, 180_000);
  }

  it('the live microphone (getUserMedia, Chromium’s fake capture device) goes through the recognizer into the caller turn', async () => {
    const { page, errors } = await callWithRecognizer('tiny-ctc');
    await page.click('#record');
    await page.waitForSelector('#record[aria-pressed="true"]');
    await page.waitForTimeout(2500);
    await page.click('#record');
    await page.waitForSelector('#take');
    await sendHeardTurn(page, TINY_ASR_TEXT);
    await stopCall(page, errors);
  }, 180_000);

  it('a share link carries agent speech and the recognizer at its revision; a crafted one is refused by name', async () => {
    const page = await context.newPage();
    await page.goto(
      `${url}#/call?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=clean&agent=reference&audio=1&speak=1&asr=tiny-moonshine&asr_rev=test`,
    );
    await page.waitForSelector('#asr-id');
    expect(await page.inputValue('#asr-id')).toBe('tiny-moonshine');
    expect(await page.isChecked('#speak-agent')).toBe(true);
    expect(await page.locator('#speech-link-error').count()).toBe(0);
    const link = (await page.getAttribute('#share-link', 'href')) ?? '';
    expect(link).toContain('&speak=1&asr=tiny-moonshine&asr_rev=test&run=1');
    // The link reproduces them in another tab.
    const again = await context.newPage();
    await again.goto(link.replace('&run=1', ''));
    await again.waitForSelector('#asr-id');
    expect(await again.inputValue('#asr-id')).toBe('tiny-moonshine');
    expect(await again.isChecked('#speak-agent')).toBe(true);
    await again.close();
    // A recognizer this page does not have, at a revision it does not pin: named, not preselected.
    await page.goto(`${url}#/call?domain=carrier&task=carrier-pay-balance-1&audio=1&asr=whisper-large&speak=2`);
    await page.reload();
    await page.waitForSelector('#speech-link-error');
    expect(await page.textContent('#speech-link-error')).toBe(
      `The link's speak="2" is not 1 or 0: the agent's replies are not spoken. The link's speech recognizer "whisper-large" is not in this page's model manifest (it has: tiny-ctc, tiny-whisper, tiny-moonshine); pick one below.`,
    );
    expect(await page.inputValue('#asr-id')).toBe('tiny-ctc');
    expect(await page.isChecked('#speak-agent')).toBe(false);
    await page.goto(`${url}#/call?domain=carrier&task=carrier-pay-balance-1&audio=1&asr=tiny-whisper&asr_rev=main`);
    await page.reload();
    await page.waitForSelector('#speech-link-error');
    expect(await page.textContent('#speech-link-error')).toBe(
      `The link's speech recognizer tiny-whisper is at revision "main"; this page pins test, whose words may differ. Pick it below to use this page's.`,
    );
    await page.close();
  }, 60_000);

  it('runs a batch with the on-device agent, its workers loading the model from the browser cache', async () => {
    const page = await context.newPage();
    await page.goto(`${url}#/batch`);
    await page.waitForSelector('#batch-run');
    await page.click('text=none');
    await page.check('input[value="carrier-pay-balance-1"]');
    await page.fill('#trials', '2');
    await page.fill('#workers', '1');
    await page.selectOption('#batch-agent', 'local');
    await page.selectOption('#local-id', 'tiny-llama');
    await page.click('#local-load');
    await page.waitForFunction(() => document.querySelector('#local-device')?.textContent?.includes('(loaded)'), null, {
      timeout: 60_000,
    });
    const before = hubRequests.filter((u) => u.endsWith('.onnx')).length;
    await page.click('#batch-run');
    await page.waitForFunction(
      () => document.querySelector('#batch-status')?.textContent === '2 / 2 rollouts · done',
      undefined,
      { timeout: 120_000 },
    );
    // The tiny model reads the bills and says they are paid: nothing is paid, so both rollouts fail.
    expect(
      await page.$$eval('#batch-results tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent)),
      ),
    ).toEqual([['carrier-pay-balance-1', '2', '0', '0', '0', '0', 'always failed']]);
    expect(await page.locator('#batch-invalid').count()).toBe(0);
    expect(hubRequests.filter((u) => u.endsWith('.onnx')).length).toBe(before);
    await page.close();
  }, 180_000);
});
