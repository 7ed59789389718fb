/**
 * The on-device agent in a real browser (Debian chromium through playwright-core, --disable-gpu):
 * the generated tiny causal LM (test/models/tiny-model.ts) is served by a local server with the
 * Hugging Face Hub's URL layout (`/hub/<repo>/resolve/<revision>/<file>`), and the page is built
 * with a manifest naming it and that host; the page shows the exact download size, downloads the
 * model with a progress bar into its model worker on WASM (onnxruntime-web's files served by this
 * site, never a CDN), runs a carrier call with it, and a second tab loads it from the browser's
 * cache without downloading again.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { writeTinyModel } from '../models/tiny-model.ts';
import { chromiumSession } from './harness.ts';

let url = '';
let context: BrowserContext;
const cleanup: (() => Promise<void>)[] = [];
/** Requests that tried to leave 127.0.0.1 (aborted). */
const offsite: string[] = [];
/** Requests to the Hub-layout host. */
const hubRequests: string[] = [];
let totalBytes = 0;

beforeAll(async () => {
  const models = await mkdtemp(join(tmpdir(), 'switchboard-e2e-models-'));
  cleanup.push(() => rm(models, { recursive: true, force: true }));
  const files = writeTinyModel(models, 'tiny-llama');
  const sha = async (f: string) =>
    createHash('sha256')
      .update(await readFile(join(models, 'tiny-llama', f)))
      .digest('hex');
  const manifest = {
    version: 1,
    models: [
      {
        id: 'tiny-llama',
        repo: 'switchboard/tiny-llama',
        revision: 'test',
        task: 'text-generation',
        dtype: 'fp32',
        license: 'Apache-2.0',
        files: await Promise.all(
          files.map(async (f) => ({
            path: f,
            sha256: await sha(f),
            size: (await readFile(join(models, 'tiny-llama', f))).length,
          })),
        ),
      },
    ],
    agents: [],
  };
  totalBytes = manifest.models[0]!.files.reduce((n, f) => n + f.size, 0);
  const hub = join(models, 'model-hub.ts');
  await writeFile(
    hub,
    `export const MODEL_HUB = '/hub/';\nexport const MODEL_MANIFEST: unknown = ${JSON.stringify(manifest)};\n`,
  );
  const session = await chromiumSession({
    replace: { 'src/adapters/browser/model-hub.ts': hub },
    mounts: { '/hub/switchboard/tiny-llama/resolve/test/': join(models, 'tiny-llama') },
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
    expect(await page.$$eval('#local-id option', (o) => o.map((x) => x.textContent))).toEqual(['tiny-llama']);
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
});
