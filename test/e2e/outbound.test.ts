/**
 * The outbound debt-negotiation domain in the page (chromium): its share link watches the
 * reference agent negotiate with the scripted callee, scored, to the full reward
 * without a deal (a callback registered).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { chromiumSession, openPage } from './harness.ts';

let url = '';
let context: BrowserContext;
let close: () => Promise<void> = async () => undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  ({ url, context, close } = await chromiumSession());
}, 180_000);

afterAll(async () => {
  await close();
});

describe('debt-negotiation in chromium', () => {
  it('watches the reference agent negotiate a plan with the scripted callee', async () => {
    const page = await openPage(
      context,
      url,
      pageErrors,
      '#/watch?domain=debt-negotiation&task=dn-hard-no-ability&seed=0&preset=clean&agent=reference&user=scripted&run=1',
    );
    await page.waitForSelector('#termination', { timeout: 60_000 });
    const calls = await page.$$eval('#tool-calls tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent)),
    );
    // No ability to pay now: the agent reads the callee's finances (the callee's own look-up),
    // checks affordability and registers a callback — a correct ending without a deal.
    expect(calls).toEqual([
      ['find_account_by_phone', 'read', 'ok'],
      ['get_balance', 'read', 'ok'],
      ['share_finances (caller)', 'write', 'ok'],
      ['assess_affordability', 'read', 'ok'],
      ['register_callback', 'write', 'ok'],
    ]);
    expect(await page.textContent('#termination')).toContain('user_stop');
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    expect(pageErrors).toEqual([]);
  });
});
