/**
 * Opening a tau2-bench data folder from disk in Browse (real chromium): the airline data folder (test/fixtures/data.ts)
 * through the folder input, parsed in the worker by the Node loader's own code, then browsed
 * and called like a built-in domain.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { chromiumSession } from './harness.ts';
import { testData } from '../fixtures/data.ts';

const AIRLINE = testData('airline').replace(/\/$/, '');
let url = '';
let context: BrowserContext;
let shots = '';
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
  shots = await mkdtemp(join(tmpdir(), 'switchboard-e2e-tau2-shots-'));
  console.log(`e2e tau2 screenshots: ${shots}`);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('a tau2-bench folder opened in chromium', () => {
  it('loads airline from disk, browses it and runs a reference call', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}#/browse`);
    await page.waitForSelector('#tau2-folder');
    await page.setInputFiles('#tau2-folder', AIRLINE);
    await page.waitForFunction(
      () => document.querySelector('#tau2-status')?.textContent?.includes('loaded as tau2-airline'),
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.textContent('#tau2-status')).toBe('airline loaded as tau2-airline (50 tasks)');
    await page.waitForFunction(() => document.querySelector('.lede strong')?.textContent === 'tau2-airline');
    expect(await page.inputValue('#domain')).toBe('tau2-airline');
    expect(await page.textContent('.lede')).toContain('50 tasks');
    // The executable policy (domains/tau2-airline/rules.ts), each check with the policy text it quotes.
    expect(await page.$$eval('#rule-checks dt', (d) => d.map((x) => x.textContent))).toEqual([
      'max-five-passengers',
      'payment-method-limits',
      'bag-allowance',
      'basic-economy-no-flight-change',
      'modify-keep-route',
      'cabin-not-after-flown',
      'bags-add-not-remove',
      'cancel-not-flown',
      'cancel-eligible',
      'compensation-eligible',
      'compensation-case',
    ]);
    expect(await page.textContent('#rule-checks .rule:nth-child(8) q')).toBe(
      'If any portion of the flight has already been flown, the agent cannot help and transfer is needed.',
    );
    await page.selectOption('#db-table', { index: 0 });
    await page.waitForSelector('#db-rows tbody tr');
    await page.screenshot({ path: join(shots, 'tau2-browse.png') });
    // Watch a call on it (the worker that loaded it runs the call).
    await page.click('a[data-view="watch"]');
    await page.waitForSelector('#run');
    await page.selectOption('#pace', '0');
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 30_000 });
    expect(await page.locator('#transcript li').count()).toBeGreaterThan(2);
    await page.screenshot({ path: join(shots, 'tau2-watch.png'), fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('runs a batch over the opened folder in the worker pool', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}#/browse`);
    await page.waitForSelector('#tau2-folder');
    await page.setInputFiles('#tau2-folder', AIRLINE);
    await page.waitForFunction(
      () => document.querySelector('.lede strong')?.textContent === 'tau2-airline',
      undefined,
      { timeout: 30_000 },
    );
    await page.click('a[data-view="batch"]');
    await page.waitForSelector('#batch-run');
    const ids = (await page.$$eval('input[name="task"]', (els) => els.map((e) => (e as HTMLInputElement).value))).slice(
      0,
      2,
    );
    expect(ids).toHaveLength(2);
    await page.click('text=none');
    for (const id of ids) await page.check(`input[name="task"][value="${id}"]`);
    await page.fill('#trials', '1');
    await page.fill('#workers', '2');
    await page.selectOption('#batch-agent', 'reference');
    await page.click('#batch-run');
    await page.waitForFunction(
      () =>
        / · (done|cancelled)$/.test(document.querySelector('#batch-status')?.textContent ?? '') ||
        !!document.querySelector('.batch [role="alert"]'),
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.locator('[role="alert"]').count()).toBe(0);
    expect(await page.textContent('#batch-status')).toBe('2 / 2 rollouts · done');
    const rows = await page.$$eval('#batch-results tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent)),
    );
    // Task, valid, passed, mean reward.
    expect(rows.map((r) => r.slice(0, 4))).toEqual(ids.map((id) => [id, '1', '1', '1']));
    await page.screenshot({ path: join(shots, 'tau2-batch.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
