/**
 * A full-duplex call in a real browser (Debian chromium): the page runs a scripted call with
 * channel audio and "Full duplex" from a share link, and the score panel shows the call's
 * interaction metrics table (issue 17).
 */
import { mkdtemp, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { chromiumSession, openPage } from './harness.ts';

let url = '';
let context: BrowserContext;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  const models = await mkdtemp(join(tmpdir(), 'switchboard-e2e-duplex-models-'));
  cleanup.push(() => rm(models, { recursive: true, force: true }));
  await copyFile(new URL('../../models/manifest.json', import.meta.url), join(models, 'manifest.json'));
  const session = await chromiumSession({ mounts: { '/models/': models } });
  cleanup.push(session.close);
  ({ url, context } = session);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('full duplex in chromium', () => {
  it('a duplex call from a link ends with its interaction metrics in the score panel', async () => {
    const page = await openPage(
      context,
      url,
      pageErrors,
      '#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=clean&agent=reference&user=scripted&audio=1&barge_in=1&duplex=1&pace=0&run=1',
    );
    await page.waitForSelector('#termination', { timeout: 120_000 });
    expect(await page.isChecked('#duplex')).toBe(true);
    await page.waitForSelector('#interaction-metrics', { timeout: 30_000 });
    const rows = await page.$$eval('#interaction-metrics tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-field'), tr.getAttribute('data-value')]),
    );
    expect(rows.map((r) => r[0])).toEqual([
      'response_latency_mean',
      'yield_latency_mean',
      'response_rate',
      'yield_rate',
      'agent_interruption_rate',
      'selectivity_backchannel',
      'selectivity_vocal_tic',
      'selectivity_non_directed',
    ]);
    // Every caller turn was answered; the agent never started over the caller.
    expect(Object.fromEntries(rows).response_rate).toBe('1');
    expect(Object.fromEntries(rows).agent_interruption_rate).toBe('0');
    expect(pageErrors).toEqual([]);
  }, 240_000);
});
