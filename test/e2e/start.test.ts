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
import { testData } from '../fixtures/data.ts';
import { chromiumSession, openPage } from './harness.ts';

const dataOf = (folder: 'airline' | 'retail' | 'telecom') => testData(folder);
const COMMIT = 'a2c024725189473d2d7cea3a5cfdbcc67478e41f';
const FILES = ['db.json', 'tasks.json', 'policy.md', 'split_tasks.json'];
/** The telecom files the page's loader reads (tau2-bench's folder has a few more). */
const TELECOM_FILES = [
  'db.toml',
  'user_db.toml',
  'tasks.json',
  'split_tasks.json',
  'main_policy.md',
  'tech_support_manual.md',
];

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
  for (const folder of ['airline', 'retail', 'telecom'] as const) {
    for (const f of folder === 'telecom' ? TELECOM_FILES : FILES) {
      const bytes = await readFile(join(dataOf(folder), f)).catch(() => Buffer.alloc(0));
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
  const session = await chromiumSession({ replace: { 'src/adapters/browser/tau2-pin.ts': pin } });
  cleanup.push(session.close);
  ({ url, context } = session);
  await context.route('https://raw.githubusercontent.com/**', async (route) => {
    const path = new URL(route.request().url()).pathname;
    fetched.push(path);
    const m = /^\/sierra-research\/tau2-bench\/([0-9a-f]{40})\/data\/tau2\/domains\/(\w+)\/([\w.]+)$/.exec(path);
    const part = m?.[2] === 'airline' || m?.[2] === 'retail' || m?.[2] === 'telecom' ? m[2] : undefined;
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
      'tau2-telecom',
    ]);
    await page.click('#start-watch');
    await page.waitForSelector('#run');
    expect(await page.locator('a[data-view="watch"][aria-current="page"]').count()).toBe(1);
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});

/** Turn lines of the transcript: `role: text` (tool turns by name). */
const lines = (page: Page) =>
  page.$$eval('#transcript > li', (items) =>
    items.map((li) =>
      li.getAttribute('data-role') === 'tool'
        ? `tool: ${li.querySelector('code.call')?.textContent?.replace(/\(.*$/, '')}`
        : `${li.getAttribute('data-role')}: ${li.querySelector('p.text')?.textContent ?? ''}`,
    ),
  );

describe('links and calls', () => {
  it('a link with an unknown task id is an error and runs nothing', async () => {
    const page = await open(
      '#/watch?domain=carrier&task=no-such-task&seed=0&agent=reference&user=scripted&run=1&pace=0',
    );
    await page.waitForSelector('#task-error');
    expect(await page.textContent('#task-error')).toBe(
      'Task “no-such-task” is not in domain carrier; pick one of its 15 tasks above.',
    );
    expect(await page.isDisabled('#run')).toBe(true);
    await page.waitForTimeout(500);
    expect(await page.textContent('#call-status')).toBe('not started');
    expect(await page.locator('#transcript li').count()).toBe(0);
    await page.close();
  });

  it("a person's call: its link replays their words, and the replay scores the same", async () => {
    const page = await open('#/call?domain=carrier&task=carrier-pay-balance-1');
    await page.waitForSelector('#task');
    expect(await page.getAttribute('#share-link', 'href')).not.toContain('said=');
    await page.click('#run');
    const say = async (text: string, hangUp = false) => {
      await page.waitForSelector('#say:not([disabled])');
      await page.fill('#say', text);
      if (hangUp) await page.click('#hang-up');
      else await page.keyboard.press('Enter');
    };
    await say('我想交二月份的话费');
    await say('15867452301');
    await say('是的，确认。');
    await say('没有了，谢谢，再见。', true);
    await page.waitForSelector('#termination');
    const said = await lines(page);
    const link = (await page.getAttribute('#share-link', 'href')) ?? '';
    const q = new URLSearchParams(link.slice(link.indexOf('?') + 1));
    expect(link.startsWith(`${url}#/watch?`)).toBe(true);
    expect(q.get('user')).toBe('replay');
    expect(q.getAll('said')).toEqual([
      '我想交二月份的话费',
      '15867452301',
      '是的，确认。',
      '没有了，谢谢，再见。###STOP###',
    ]);
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    await page.close();

    const replay = await open(`${link.slice(url.length)}&pace=0`);
    await replay.waitForSelector('#termination', { timeout: 30_000 });
    expect(await replay.inputValue('#caller')).toBe('replay');
    expect(await lines(replay)).toEqual(said);
    expect(await replay.textContent('#termination')).toContain('user_stop');
    expect(await replay.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    await replay.close();
  });

  it('Stop says stopped (no error), and the agent is not failed before it could act', async () => {
    const page = await open(
      '#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&agent=reference&user=scripted&pace=1200',
    );
    await page.waitForSelector('#run');
    expect(await page.locator('#preset').count()).toBe(0); // channel controls only with audio on
    await page.click('#run');
    await page.waitForSelector('#assertions tbody tr');
    // After the greeting the agent has not acted: nothing is failed yet.
    const states = await page.$$eval('#assertions .state', (c) => c.map((x) => x.textContent));
    expect(states.length).toBeGreaterThan(0);
    expect(states.filter((s) => s?.startsWith('failed'))).toEqual([]);
    await page.click('#stop');
    await page.waitForSelector('#termination', { timeout: 20_000 });
    expect(await page.textContent('#termination')).toBe('Ended: stopped — you stopped the call; it is not scored');
    expect(await page.textContent('#call-status')).toBe('stopped');
    expect(await page.locator('#call-error').count()).toBe(0);
    await page.check('#channel-audio');
    expect(await page.locator('#preset').count()).toBe(1);
    await page.close();

    // A call made by a person, stopped while the page waits for their words, ends the same way.
    const call = await open(
      '#/call?domain=carrier&task=carrier-pay-balance-1&seed=0&agent=reference&audio=1&preset=regular',
    );
    await call.click('#run');
    await call.waitForSelector('#send:not([disabled])');
    await call.click('#stop');
    await call.waitForSelector('#termination', { timeout: 20_000 });
    expect(await call.textContent('#termination')).toBe('Ended: stopped — you stopped the call; it is not scored');
    expect(await call.textContent('#call-status')).toBe('stopped');
    expect(await call.locator('#call-error').count()).toBe(0);
    await call.close();
    expect(pageErrors).toEqual([]);
  });
});

describe('the score panel after a watched call', () => {
  it('labels the reference agent for what it is, and shows the final reward and every final assertion state', async () => {
    const page = await open('#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&agent=reference&user=scripted');
    await page.waitForSelector('#agent');
    expect(
      await page.$$eval('#agent option', (o) => o.map((x) => `${x.getAttribute('value')}=${x.textContent}`)),
    ).toEqual([
      'reference=reference (replays the gold solution; does not listen)',
      'noop=do-nothing',
      'remote=remote endpoint',
      'local=on-device model',
      'realtime=realtime voice agent (OpenAI-Realtime WebSocket)',
    ]);
    expect(await page.inputValue('#agent')).toBe('reference');
    await page.selectOption('#pace', '150');
    await page.click('#run');
    await page.waitForSelector('#assertions tbody tr');
    // While the call runs the panel is live: the payment the agent has not made yet is pending.
    expect(await page.textContent('#h-score')).toBe('Live score');
    expect(await page.textContent('#assertions tr[data-assertion="pay-full"] .state')).toBe('pending');
    await page.waitForSelector('#termination', { timeout: 30_000 });
    expect(await page.getAttribute('#score', 'data-final')).toBe('true');
    expect(await page.textContent('#h-score')).toBe('Score');
    expect(await page.textContent('#process-total')).toBe('Process reward: +0.3 (3 agent tool calls)');
    expect(await page.textContent('#termination')).toBe('Ended: user_stop');
    expect(await page.textContent('#reward-breakdown .reward-value')).toBe('1');
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    const states = await page.$$eval('#assertions tbody tr', (rows) =>
      rows.map((r) => `${r.getAttribute('data-assertion')}=${r.querySelector('.state')?.textContent}`),
    );
    expect(states).toEqual([
      'identify-first=passed',
      'confirm-first=passed',
      'pay-full=passed',
      'rule:R3=passed',
      'rule:R4=passed',
      'rule:R5=passed',
    ]);
    expect(await page.locator('#assertions .state:not(.good)').count()).toBe(0);
    expect(await page.textContent('#call-status')).toBe('ended (user_stop)');
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});

describe('tau2-bench data on demand', { tags: ['tau2-data'] }, () => {
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
    // And telecom, whose page loader keeps its base split.
    await again.click('#load-tau2-telecom');
    await again.waitForFunction(
      () => document.querySelector('#domain-status')?.textContent?.startsWith('tau2-telecom: 114 tasks'),
      undefined,
      { timeout: 90_000 },
    );
    expect(fetched.filter((p) => p.includes('/telecom/'))).toHaveLength(6);
    await again.close();
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
