/**
 * Smoke test of the page in Firefox (Debian's firefox-esr through puppeteer-core, WebDriver
 * BiDi): browse carrier, watch a scripted call to its final reward, and replay its share link.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { buildPage, launchFirefox, serve } from './harness.ts';

let url = '';
let browser: Browser;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  const dist = await buildPage();
  cleanup.push(() => rm(dist, { recursive: true, force: true }));
  const server = await serve(dist);
  cleanup.push(server.close);
  url = server.url;
  const firefox = await launchFirefox();
  cleanup.push(firefox.close);
  browser = firefox.browser;
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

async function open(hash = ''): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e instanceof Error ? e.message : String(e)));
  await page.goto(`${url}${hash}`);
  return page;
}

const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent);
const attr = (page: Page, selector: string, name: string) => page.$eval(selector, (e, n) => e.getAttribute(n), name);
/** Transcript lines of non-tool turns as `role: text`. */
const lines = (page: Page) =>
  page.$$eval('#transcript > li:not([data-role="tool"])', (items) =>
    items.map((li) => `${li.getAttribute('data-role')}: ${li.querySelector('p.text')?.textContent ?? ''}`),
  );

describe('the page in firefox', () => {
  it('browses carrier', async () => {
    const page = await open('#/browse');
    await page.waitForSelector('#rules .rule');
    expect(await page.$$eval('#rules dt', (d) => d.map((x) => x.textContent))).toEqual([
      'R1',
      'R2',
      'R3',
      'R4',
      'R5',
      'R6',
      'R7',
      'R8',
      'R9',
      'R10',
      'R11',
    ]);
    await page.waitForSelector('#tools tr');
    expect(
      await page.$$eval('#tools tr', (rows) => rows.some((r) => r.textContent?.includes('pay_bill_from_balance'))),
    ).toBe(true);
    await page.close();
  });

  it('watches a scripted call to reward 1, and its share link replays it', async () => {
    const page = await open('#/watch');
    await page.waitForSelector('#task');
    await page.select('#task', 'carrier-pay-balance-1');
    await page.select('#pace', '0');
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 20_000 });
    expect(await text(page, '#termination')).toContain('user_stop');
    expect(await attr(page, '#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    const said = await lines(page);
    expect(said[0]).toBe('assistant: 您好，这里是畅联通信客服，请问有什么可以帮您？');
    expect(said).toContain('user: 15867452301');

    const link = await attr(page, '#share-link', 'href');
    expect(link).toBe(
      `${url}#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=clean&agent=reference&user=scripted&run=1`,
    );
    await page.close();
    const shared = await open(link!.slice(url.length));
    await shared.waitForSelector('#termination', { timeout: 20_000 });
    expect(await attr(shared, '#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    expect(await lines(shared)).toEqual(said);
    await shared.close();
    expect(pageErrors).toEqual([]);
  });
});
