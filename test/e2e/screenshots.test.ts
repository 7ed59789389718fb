/**
 * Every view of the page at 1400 px and 390 px wide (real chromium), saved as PNGs to
 * `test-output/screenshots/` (git-ignored; `SWITCHBOARD_SCREENSHOTS` picks another folder), and
 * checked for horizontal overflow at 1400, 820 and 390 px: the document is never wider than the
 * window (wide tables scroll inside their own box).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumSession, openPage } from './harness.ts';

const OUT =
  process.env.SWITCHBOARD_SCREENSHOTS ?? fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));
let url = '';
let context: BrowserContext;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
  await mkdir(OUT, { recursive: true });
  console.log(`page screenshots: ${OUT}`);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const CALL =
  '#/watch?domain=carrier&task=carrier-pay-balance-1&seed=3&preset=harsh&agent=reference&user=scripted&audio=1&dropout=0.5&pace=0&run=1';

/** The views, each opened and brought to a state worth seeing. */
const VIEWS: { name: string; hash: string; ready(page: Page): Promise<void> }[] = [
  {
    name: 'start',
    hash: '#/',
    ready: (p) => p.waitForSelector('#domain-status:text-matches("^carrier:")').then(() => {}),
  },
  { name: 'browse', hash: '#/browse', ready: (p) => p.waitForSelector('#db-rows tbody tr').then(() => {}) },
  {
    name: 'watch',
    hash: CALL,
    ready: async (p) => {
      await p.waitForSelector('#termination', { timeout: 60_000 });
      await p.waitForSelector('#transcript .turn-audio svg path.wave');
    },
  },
  {
    name: 'call',
    hash: '#/call?domain=carrier&task=carrier-pay-balance-1',
    ready: async (p) => {
      await p.click('#run');
      await p.waitForSelector('#say:not([disabled])');
      await p.fill('#say', '我想交二月份的话费');
      await p.keyboard.press('Enter');
      await p.waitForSelector('#say:not([disabled])');
    },
  },
  {
    name: 'batch',
    hash: '#/batch',
    ready: async (p) => {
      await p.waitForSelector('#batch-run');
      await p.fill('#trials', '2');
      await p.click('#batch-run');
      await p.waitForFunction(() => document.querySelector('#batch-status')?.textContent?.includes('done'), undefined, {
        timeout: 60_000,
      });
    },
  },
  {
    name: 'history',
    hash: '#/history',
    ready: async (p) => {
      await p.waitForSelector('#history tbody tr');
      await p.locator('#history tbody tr').first().locator('button').click();
      await p.waitForSelector('#history-transcript li');
    },
  },
];

/** How far the document is wider than the window, px (0 when it fits). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('screenshots of every view', () => {
  it('saves every view at 1400 and 390 px, none wider than the window at 1400, 820 or 390 px', async () => {
    const widths: Record<string, number[]> = {};
    for (const view of VIEWS) {
      const page = await openPage(context, url, pageErrors, view.hash);
      await page.setViewportSize({ width: 1400, height: 1000 });
      await view.ready(page);
      widths[view.name] = [];
      for (const width of [1400, 820, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
        await page.waitForTimeout(150);
        widths[view.name]!.push(await overflow(page));
        if (width !== 820)
          await page.screenshot({ path: join(OUT, `${view.name}-${width}.png`), fullPage: width === 390 });
      }
      await page.close();
    }
    expect(widths).toEqual(Object.fromEntries(VIEWS.map((v) => [v.name, [0, 0, 0]])));
    expect(pageErrors).toEqual([]);
  }, 240_000);
});
