/**
 * The page in chromium (the e2e harness: a production build served from 127.0.0.1, Debian
 * chromium, --disable-gpu): the first usable view (the start view with the built-in domain
 * described) in ms from navigation start and the bytes received before it (every request of the
 * tab and its workers, headers and bodies), and, with the generated tiny on-device model
 * (test/models/tiny-model.ts, WASM, downloaded from a local Hub-layout server; the first tab
 * downloads, later ones read the browser's cache), the time from "load" to the agent being ready and from
 * "Run call" to the first agent turn. Medians of a few fresh tabs.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Request } from 'playwright-core';
import { writeTinyModel } from '../test/models/tiny-model.ts';
import { buildPage, launch, serve } from '../test/e2e/harness.ts';
import { median } from './harness.ts';

const RUNS = 3;

/** Bytes of the requests of `context` that finished, counted by `track`. */
function byteCounter(context: BrowserContext) {
  let bytes = 0;
  let on = false;
  const done = async (r: Request) => {
    if (!on) return;
    const s = await r.sizes().catch(() => null);
    if (s) bytes += s.responseBodySize + s.responseHeadersSize;
  };
  context.on('requestfinished', (r) => void done(r));
  return {
    start() {
      bytes = 0;
      on = true;
    },
    stop(): number {
      on = false;
      return bytes;
    },
  };
}

/** Lines of the page benchmark. */
export async function pageBenchLines(): Promise<string[]> {
  const models = await mkdtemp(join(tmpdir(), 'switchboard-bench-models-'));
  const files = writeTinyModel(models, 'tiny-llama');
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
        files: files.map((f) => ({ path: f, sha256: null })),
      },
    ],
    agents: [],
  };
  // The page downloads it from a local server with the Hub's URL layout.
  const hub = join(models, 'model-hub.ts');
  await writeFile(
    hub,
    `export const MODEL_HUB = '/hub/';\nexport const MODEL_MANIFEST: unknown = ${JSON.stringify(manifest)};\n`,
  );
  const dist = await buildPage({ 'src/adapters/browser/model-hub.ts': hub });
  const server = await serve(dist, { '/hub/switchboard/tiny-llama/resolve/test/': join(models, 'tiny-llama') });
  const browser = await launch();
  try {
    const counter = byteCounter(browser.context);
    const firstView: number[] = [];
    const firstBytes: number[] = [];
    const load: number[] = [];
    const firstTurn: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const page = await browser.context.newPage();
      counter.start();
      await page.goto(`${server.url}#/`);
      await page.waitForFunction(() => document.querySelector('#domain-status')?.textContent?.startsWith('carrier:'));
      const ms = await page.evaluate(() => performance.now());
      // Requests still arriving belong to the view too; give them a moment to finish.
      await page.waitForTimeout(200);
      firstBytes.push(counter.stop());
      firstView.push(ms);

      await page.goto(
        `${server.url}#/watch?domain=carrier&task=carrier-pay-balance-1&agent=local&local=tiny-llama&pace=0`,
      );
      await page.reload();
      await page.waitForSelector('#local-load');
      const t0 = Date.now();
      await page.click('#local-load');
      await page.waitForFunction(
        () => document.querySelector('#local-device')?.textContent?.includes('(loaded)'),
        null,
        {
          timeout: 120_000,
        },
      );
      load.push(Date.now() - t0);
      const t1 = Date.now();
      await page.click('#run');
      await page.waitForSelector('#transcript li[data-role="assistant"]', { timeout: 120_000 });
      firstTurn.push(Date.now() - t1);
      await page.close();
    }
    const kb = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
    return [
      `  first usable view (start view, carrier described)   median ${median(firstView).toFixed(0)} ms  (${RUNS} fresh tabs)`,
      `  bytes received before it (tab and workers)          median ${kb(median(firstBytes))}`,
      `  on-device tiny agent: load on first use (WASM)      median ${median(load).toFixed(0)} ms`,
      `  "Run call" → first agent turn (tiny agent, WASM)    median ${median(firstTurn).toFixed(0)} ms`,
    ];
  } finally {
    await browser.close();
    await server.close();
    await rm(dist, { recursive: true, force: true });
    await rm(models, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await pageBenchLines()).join('\n'));
