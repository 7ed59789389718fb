/**
 * The page's security and robustness in Debian chromium: a saved API key never goes to an
 * endpoint named by a crafted share link (and nothing is sent there before the user confirms),
 * and a call whose tab is closed mid-call is found again as `interrupted`, turns kept, and
 * exported as an invalid trajectory.
 */
import { readFile } from 'node:fs/promises';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { INTERRUPTED_REASON } from '../../src/adapters/browser/trajectory-store.ts';
import { completion, httpError, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { chromiumSession, openPage, storedRecords } from './harness.ts';

let url = '';
let context: BrowserContext;
let endpointA: TestServer;
let endpointB: TestServer;
let endpointC: TestServer;
let endpointD: TestServer;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];
const KEY_A = 'sk-e2e-saved-for-A';
const KEY_C = 'sk-e2e-typed-last-for-C';
const KEY_D = 'sk-e2e-typed-last-for-D';

beforeAll(async () => {
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
  const reply = () => ({ json: completion({ model: 'm', content: '您好，请问有什么可以帮您？' }) });
  endpointA = await startOpenAiServer(reply, { cors: true });
  endpointB = await startOpenAiServer(reply, { cors: true });
  endpointC = await startOpenAiServer(reply, { cors: true });
  endpointD = await startOpenAiServer(reply, { cors: true });
  cleanup.push(endpointA.close, endpointB.close, endpointC.close, endpointD.close);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const open = (hash = ''): Promise<Page> => openPage(context, url, pageErrors, hash);
const posts = (s: TestServer) => s.requests.filter((r) => r.method === 'POST');
const watchLink = (base: string, extra = '') =>
  `#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&agent=remote&flavor=openai&model=m` +
  `&base=${encodeURIComponent(base)}&max_steps=2&pace=0${extra}&run=1`;

describe('share links and saved API keys (chromium)', () => {
  it('saves a key for endpoint A through the form, bound to its origin', async () => {
    const page = await open('#/watch');
    await page.selectOption('#agent', 'remote');
    const form = page.locator('fieldset[data-endpoint="agent"]');
    await form.locator('input[type="url"]').fill(endpointA.url);
    await form.locator('label', { hasText: 'Model' }).locator('input').fill('m');
    await form.locator('input[type="password"]').fill(KEY_A);
    expect(await form.locator('.key-origin').textContent()).toBe(`sent only to ${new URL(endpointA.url).origin}`);
    const stored = await page.evaluate(() => ({
      keys: localStorage.getItem('switchboard.keys'),
      endpoint: localStorage.getItem('switchboard.endpoint'),
    }));
    expect(JSON.parse(stored.keys!)).toEqual({ [new URL(endpointA.url).origin]: KEY_A });
    expect(JSON.parse(stored.endpoint!)).toEqual({ flavor: 'openai', baseURL: endpointA.url, model: 'm' });
    // Typing another base URL shows that origin's key (none), never A's.
    await form.locator('input[type="url"]').fill(endpointB.url);
    expect(await form.locator('input[type="password"]').inputValue()).toBe('');
    await form.locator('input[type="url"]').fill(endpointA.url);
    expect(await form.locator('input[type="password"]').inputValue()).toBe(KEY_A);
    await page.close();
    expect(endpointA.requests).toHaveLength(0);
  });

  it('a crafted link naming endpoint B with run=1 sends nothing, shows B and asks; B never gets the key', async () => {
    const page = await open(watchLink(endpointB.url));
    await page.waitForSelector('#confirm-endpoints');
    expect(await page.locator('#confirm-endpoints li').allTextContents()).toEqual([`agent → ${endpointB.url}`]);
    expect(await page.locator('#run').isDisabled()).toBe(true);
    // Give an auto-run every chance to happen: nothing reaches B (not even a preflight), nor A.
    await page.waitForTimeout(1500);
    expect(endpointB.requests).toHaveLength(0);
    expect(endpointA.requests).toHaveLength(0);
    expect(await page.locator('#call-status').textContent()).toBe('not started');

    await page.click('#confirm-endpoints-call');
    await page.waitForSelector('#call-status:has-text("ended")');
    expect(posts(endpointB).length).toBeGreaterThan(0);
    for (const r of endpointB.requests) {
      expect(r.headers).not.toHaveProperty('authorization');
      expect(String(r.headers['access-control-request-headers'] ?? '')).not.toContain('authorization');
      expect(JSON.stringify(r)).not.toContain(KEY_A);
    }
    expect(endpointA.requests).toHaveLength(0);
    await page.close();
  });

  it('a link naming the saved endpoint A runs at once, with A’s key', async () => {
    const before = endpointB.requests.length;
    const page = await open(watchLink(endpointA.url));
    await page.waitForSelector('#call-status:has-text("ended")');
    expect(await page.locator('#confirm-endpoints').count()).toBe(0);
    expect(posts(endpointA).length).toBeGreaterThan(0);
    expect(posts(endpointA).every((r) => r.headers.authorization === `Bearer ${KEY_A}`)).toBe(true);
    expect(endpointB.requests.length).toBe(before);
    await page.close();
  });

  it('"Use my saved endpoints" replaces the link’s endpoint and runs nothing', async () => {
    const before = endpointB.requests.length;
    const page = await open(watchLink(endpointB.url));
    await page.click('#confirm-endpoints-mine');
    const form = page.locator('fieldset[data-endpoint="agent"]');
    expect(await form.locator('input[type="url"]').inputValue()).toBe(endpointA.url);
    expect(await page.locator('#run').isDisabled()).toBe(false);
    expect(endpointB.requests.length).toBe(before);
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  it('an endpoint that refuses the key shows its error above the conversation, in view after Run', async () => {
    const refusing = await startOpenAiServer(() => httpError(401, 'Incorrect API key provided'), { cors: true });
    cleanup.push(refusing.close);
    const page = await open('#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&pace=0');
    await page.selectOption('#agent', 'remote');
    const form = page.locator('fieldset[data-endpoint="agent"]');
    await form.locator('input[type="url"]').fill(refusing.url);
    await form.locator('label', { hasText: 'Model' }).locator('input').fill('m');
    await page.click('#run');
    await page.waitForSelector('#call-error', { timeout: 60_000 });
    const text = (await page.textContent('#call-error')) ?? '';
    expect(text.startsWith('The call could not be completed: ')).toBe(true);
    expect(text).toContain('401');
    expect(text).toContain('Incorrect API key provided');
    expect(posts(refusing).length).toBeGreaterThan(0);
    // Where the user looks: inside the window without scrolling, before the conversation.
    const box = (await page.locator('#call-error').boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    expect(
      await page.$eval('#call-error', (e) =>
        Boolean(
          e.compareDocumentPosition(document.querySelector('section.conversation')!) & Node.DOCUMENT_POSITION_FOLLOWING,
        ),
      ),
    ).toBe(true);
    await page.close();
  }, 120_000);
});

describe('a call whose tab is closed mid-call (chromium)', () => {
  it('is marked interrupted on the next visit, keeps its turns and is exported as an invalid trajectory', async () => {
    // A slow-paced scripted call (1.2 s before every participant turn): closed after 3 turns.
    const page = await open(
      '#/watch?domain=carrier&task=carrier-change-plan-1&seed=5&agent=reference&user=scripted&pace=1200&run=1',
    );
    await page.waitForFunction(() => document.querySelectorAll('#transcript > li').length >= 3, null, {
      timeout: 30_000,
    });
    await page.close();

    const history = await open('#/history');
    // The closed tab's Web Lock is released asynchronously: refresh until the sweep sees it gone.
    const row = history.locator('#history tbody tr[data-task="carrier-change-plan-1"]');
    for (let i = 0; i < 50; i++) {
      await history.click('text=Refresh');
      if ((await row.locator('td').nth(7).textContent()) === 'interrupted') break;
      await history.waitForTimeout(200);
    }
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(1)).toEqual([
      'call',
      'carrier-change-plan-1',
      'reference',
      'scripted',
      '5',
      cells[6],
      'interrupted',
      '—',
    ]);
    const turns = Number(cells[6]);
    expect(turns).toBeGreaterThanOrEqual(3);
    await row.locator('button').click();
    expect(await history.locator('#history-transcript > li').count()).toBe(turns);

    const [download] = await Promise.all([history.waitForEvent('download'), history.click('#export-zip')]);
    const zip = unzipSync(new Uint8Array(await readFile((await download.path())!)));
    const lines = strFromU8(zip['trajectories.jsonl']!)
      .trimEnd()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    const cut = lines.filter((t) => t.task_id === 'carrier-change-plan-1');
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({
      valid: false,
      termination: 'infrastructure_error',
      invalid_reason: INTERRUPTED_REASON,
      reward_info: null,
      seed: 5,
      participants: { agent: 'reference', user: 'scripted' },
    });
    expect(cut[0]!.turns).toHaveLength(turns);
    expect(cut[0]!.turns[0]).toMatchObject({ role: 'assistant' });
    await history.close();
    expect(pageErrors).toEqual([]);
  }, 90_000);
});

// Last: typing into the forms saves C and D as this profile's endpoints.
describe('keys typed last in the Watch form (chromium)', () => {
  it('a key typed last, then Run: the agent’s and the model caller’s requests carry their keys; no link or record holds them', async () => {
    const page = await open('#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&max_steps=2&pace=0');
    await page.selectOption('#agent', 'remote');
    await page.selectOption('#caller', 'remote');
    for (const [who, server, key] of [
      ['agent', endpointC, KEY_C],
      ['caller', endpointD, KEY_D],
    ] as const) {
      const form = page.locator(`fieldset[data-endpoint="${who}"]`);
      await form.locator('input[type="url"]').fill(server.url);
      await form.locator('label', { hasText: 'Model' }).locator('input').fill('m');
      await form.locator('input[type="password"]').fill(key);
    }
    await page.click('#run');
    await page.waitForSelector('#call-status:has-text("ended")');
    for (const [server, key] of [
      [endpointC, KEY_C],
      [endpointD, KEY_D],
    ] as const) {
      expect(posts(server).length).toBeGreaterThan(0);
      expect(posts(server).map((r) => r.headers.authorization)).toEqual(posts(server).map(() => `Bearer ${key}`));
    }
    const link = (await page.getAttribute('#share-link', 'href'))!;
    const stored = await storedRecords(page);
    expect(stored).toContain(`"agent":"openai:m"`);
    for (const key of [KEY_C, KEY_D]) {
      expect(link).not.toContain(key);
      expect(stored).not.toContain(key);
    }
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
