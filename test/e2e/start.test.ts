/**
 * The page on a URL (real chromium): the start view says what this is and offers call / watch /
 * batch; a share link to a tau2-bench task downloads the pinned data by itself (GitHub's raw URL
 * layout, answered here from the tests' tau2 data (test/fixtures/data.ts) with a pin of those files' hashes), checks it, keeps
 * it in IndexedDB, and runs the call; the second visit needs no download.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { HAVE_TAU2, testData } from '../fixtures/data.ts';
import { buildPage, launch, openPage, serve } from './harness.ts';

const dataOf = (folder: 'airline' | 'retail') => testData(folder);
const COMMIT = 'a2c024725189473d2d7cea3a5cfdbcc67478e41f';
const FILES = ['db.json', 'tasks.json', 'policy.md', 'split_tasks.json'];

let url = '';
let context: BrowserContext;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];
/** Requests to GitHub's raw host, by path. */
const fetched: string[] = [];

beforeAll(async () => {
  const work = await mkdtemp(join(tmpdir(), 'switchboard-e2e-start-'));
  cleanup.push(() => rm(work, { recursive: true, force: true }));
  // A manifest of the local copies (same commit and URL layout as the real one).
  const files = [];
  for (const folder of ['airline', 'retail']) {
    for (const f of FILES) {
      const bytes = await readFile(join(dataOf(folder as 'airline' | 'retail'), f)).catch(() => Buffer.alloc(0));
      files.push({
        path: `${folder}/${f}`,
        source: `data/tau2/domains/${folder}/${f}`,
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        gitBlob: createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex'),
      });
    }
  }
  const pin = join(work, 'tau2-pin.ts');
  await writeFile(
    pin,
    `export const TAU2_PIN = ${JSON.stringify({ repo: 'sierra-research/tau2-bench', commit: COMMIT, license: 'MIT', files })};\n`,
  );
  const dist = await buildPage({ 'src/adapters/browser/tau2-pin.ts': pin });
  cleanup.push(() => rm(dist, { recursive: true, force: true }));
  const server = await serve(dist);
  cleanup.push(server.close);
  url = server.url;
  const browser = await launch();
  cleanup.push(browser.close);
  context = browser.context;
  await context.route('https://raw.githubusercontent.com/**', async (route) => {
    const path = new URL(route.request().url()).pathname;
    fetched.push(path);
    const m = /^\/sierra-research\/tau2-bench\/([0-9a-f]{40})\/data\/tau2\/domains\/(\w+)\/([\w.]+)$/.exec(path);
    const part = m?.[2] === 'airline' || m?.[2] === 'retail' ? m[2] : undefined;
    const body = m && part && m[1] === COMMIT ? await readFile(join(dataOf(part), m[3]!)).catch(() => null) : null;
    await route.fulfill(
      body
        ? { status: 200, body, headers: { 'access-control-allow-origin': '*' } }
        : { status: 404, body: 'not found' },
    );
  });
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const open = (hash = ''): Promise<Page> => openPage(context, url, pageErrors, hash);

describe('the start view', () => {
  it('says what this is in three lines and offers call, watch and batch', async () => {
    const page = await open();
    await page.waitForSelector('#intro-lines');
    expect(await page.locator('#intro-lines > span').count()).toBe(3);
    expect(await page.locator('.actions a.action').allTextContents()).toEqual([
      'Call a task yourself',
      'Watch a call',
      'Run a batch',
    ]);
    await page.waitForFunction(() => document.querySelector('#domain-status')?.textContent?.startsWith('carrier:'));
    expect(await page.getAttribute('#start-watch', 'href')).toBe('#/watch?domain=carrier');
    expect(await page.locator('#domains li').evaluateAll((l) => l.map((x) => x.getAttribute('data-domain')))).toEqual([
      'carrier',
      'tau2-airline',
      'tau2-retail',
    ]);
    await page.click('#start-watch');
    await page.waitForSelector('#run');
    expect(await page.locator('a[data-view="watch"][aria-current="page"]').count()).toBe(1);
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!HAVE_TAU2)('tau2-bench data on demand', () => {
  it('a share link to a tau2 task downloads the pinned data, runs the call, and the next visit uses the cache', async () => {
    const link = '#/watch?domain=tau2-airline&task=1&seed=0&preset=clean&agent=reference&user=scripted&run=1&pace=0';
    const page = await open(link);
    await page.waitForSelector('#termination', { timeout: 90_000 });
    expect(fetched.filter((p) => p.includes('/airline/')).sort()).toEqual(
      FILES.map((f) => `/sierra-research/tau2-bench/${COMMIT}/data/tau2/domains/airline/${f}`).sort(),
    );
    expect(await page.inputValue('#domain')).toBe('tau2-airline');
    expect(await page.inputValue('#task')).toBe('1');
    expect(await page.locator('#transcript li').count()).toBeGreaterThan(2);
    const reward = await page.getAttribute('#reward-breakdown .reward-value', 'data-reward');
    expect(reward).not.toBeNull();
    await page.close();

    // Again, in a new tab: from IndexedDB, no request; the start view says it is here.
    const before = fetched.length;
    const again = await open(link);
    await again.waitForSelector('#termination', { timeout: 60_000 });
    expect(await again.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe(reward);
    await again.goto(`${url}#/`);
    await again.waitForFunction(() =>
      document.querySelector('#domains [data-domain="tau2-airline"]')?.textContent?.includes('in this browser'),
    );
    expect(fetched.length).toBe(before);
    // Retail loads with one click from the start view.
    await again.click('#load-tau2-retail');
    await again.waitForFunction(
      () => document.querySelector('#domain-status')?.textContent?.startsWith('tau2-retail: 114 tasks'),
      undefined,
      { timeout: 90_000 },
    );
    expect(fetched.filter((p) => p.includes('/retail/'))).toHaveLength(4);
    await again.close();
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
