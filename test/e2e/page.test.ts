/**
 * The page in a real browser (Debian chromium through playwright-core): browse carrier, watch a
 * scripted call scored live, open its share link, run a small batch, call as the caller by
 * keyboard, find everything again in the history after a reload (and export it as JSONL), and
 * stay responsive while a 16-rollout batch runs in workers.
 * Screenshots go to a temp folder (printed once).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { chromiumSession, openPage, PAY_BALANCE_TRANSCRIPT, transcript } from './harness.ts';

let url = '';
let context: BrowserContext;
let shots = '';
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
  shots = await mkdtemp(join(tmpdir(), 'switchboard-e2e-shots-'));
  console.log(`e2e screenshots: ${shots}`);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const open = (hash = ''): Promise<Page> => openPage(context, url, pageErrors, hash);

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

describe('the page in chromium', () => {
  it('browses carrier: rules, tools, tasks, live tables', async () => {
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
    const pay = page.locator('#tools tr', { hasText: 'pay_bill_from_balance' });
    await expect.poll(() => pay.locator('td').nth(1).textContent()).toBe('write');
    expect(await pay.locator('.params li').allTextContents()).toEqual([
      'customer_id: string',
      'bill_id: string',
      'amount: number',
    ]);
    const taskIds = (
      JSON.parse(await readFile(new URL('../../domains/carrier/tasks.json', import.meta.url), 'utf8')) as {
        id: string;
      }[]
    ).map((t) => t.id);
    expect(await page.$$eval('#tasks > li summary code', (c) => c.map((x) => x.textContent))).toEqual(taskIds);
    await page.selectOption('#db-table', 'customers');
    await page.waitForFunction(() =>
      document.querySelector('#db-count')?.textContent?.startsWith('30 rows in customers'),
    );
    expect(await page.locator('#db-rows tbody tr').count()).toBe(30);
    expect(
      await page.locator('#db-rows tbody tr', { hasText: '15867452301' }).locator('td').first().textContent(),
    ).toBe('C1002');
    await shot(page, '1-browse');
    await page.close();
  });

  it('watches a scripted call scored live, then its share link replays it', async () => {
    const page = await open('#/watch');
    await page.waitForSelector('#task');
    await page.selectOption('#task', 'carrier-pay-balance-1');
    await page.selectOption('#pace', '150');
    await page.click('#run');
    // Live: the first tool call is scored while the call still runs.
    await page.waitForSelector('#tool-calls tbody tr');
    expect(await page.locator('#termination').count()).toBe(0);
    await shot(page, '2-watch-live');
    await page.waitForSelector('#termination', { timeout: 20_000 });
    expect(await transcript(page)).toEqual(PAY_BALANCE_TRANSCRIPT);
    const calls = await page.$$eval('#tool-calls tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(calls).toEqual([
      ['5', 'find_customer_by_phone', 'read', 'ok', '+0.1', 'no writes'],
      ['7', 'get_bills', 'read', 'ok', '+0.1', 'no writes'],
      ['11', 'pay_bill_from_balance', 'write', 'ok', '+0.1', 'inside'],
    ]);
    expect(await page.textContent('#process-total')).toContain('+0.3');
    const diff = await page.locator('#db-diff li').allTextContents();
    expect(diff).toContain('customers[C1002].prepaid_balance_fen: 10000 → 3650');
    expect(diff).toContain('bills[B10008].status: "unpaid" → "paid"');
    expect(await page.locator('#assertions tr[data-assertion="confirm-first"] .state').textContent()).toBe('passed');
    expect(await page.textContent('#quality-none')).toBe('No hit.');
    expect(await page.textContent('#termination')).toContain('user_stop');
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    const components = await page.$$eval('#reward-breakdown tbody tr', (rows) =>
      rows.map((r) => `${r.getAttribute('data-component')}=${r.querySelectorAll('td')[0]?.textContent}`),
    );
    expect(components).toEqual([
      'DB=1',
      'COMMUNICATE=1',
      'ENV_ASSERTION=1',
      'ACTION=1',
      'WRITE_WHITELIST=1',
      'QUALITY=1',
      'ASSERTIONS=1',
    ]);
    await shot(page, '3-watch-done');

    const link = await page.getAttribute('#share-link', 'href');
    expect(link).toBe(
      `${url}#/watch?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=clean&agent=reference&user=scripted&run=1`,
    );
    await page.selectOption('#pace', '0'); // remembered: the shared call below runs at once
    const shared = await open(link!.slice(url.length));
    await shared.waitForSelector('#termination', { timeout: 20_000 });
    expect(await transcript(shared)).toEqual(PAY_BALANCE_TRANSCRIPT);
    expect(await shared.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    await shot(shared, '4-shared');
    await shared.close();

    // The do-nothing agent on the same task: reward 0, and the panel says why.
    await page.selectOption('#agent', 'noop');
    await page.click('#run');
    await page.waitForFunction(() => document.querySelector('#termination')?.textContent?.includes('user_stop'));
    expect(await transcript(page)).toEqual([
      'assistant: 您好，这里是畅联通信客服，请问有什么可以帮您？',
      'user: 你好，我想用话费余额把二月份的账单交了。',
      'assistant: 好的，我明白了。',
      'user: 嗯，好的。',
      'assistant: 好的，我明白了。',
      'user: 嗯，好的。',
      'assistant: 好的，我明白了。',
      'user: 算了，那就先这样吧，再见。',
    ]);
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('0');
    expect(await page.textContent('#reward-breakdown tr[data-component="DB"] td')).toBe('0');
    expect(await page.textContent('#db-diff-empty')).toBe('No change.');
    await shot(page, '5-watch-noop');
    await page.close();
  });

  it('runs a small batch in a worker pool', async () => {
    const page = await open('#/batch');
    await page.waitForSelector('#batch-run');
    await page.click('text=none');
    for (const id of ['carrier-pay-balance-1', 'carrier-dispute-recent-1', 'carrier-bill-inquiry-1'])
      await page.check(`input[value="${id}"]`);
    await page.fill('#trials', '3');
    await page.fill('#workers', '2');
    await page.click('#batch-run');
    await page.waitForFunction(
      () => document.querySelector('#batch-status')?.textContent?.includes('done'),
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.textContent('#batch-status')).toBe('9 / 9 rollouts · done');
    const rows = await page.$$eval('#batch-results tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent)),
    );
    expect(rows).toEqual([
      ['carrier-pay-balance-1', '3', '3', '1', '1', '1', '1', 'always passed'],
      ['carrier-dispute-recent-1', '3', '3', '1', '1', '1', '1', 'always passed'],
      ['carrier-bill-inquiry-1', '3', '3', '1', '1', '1', '1', 'always passed'],
    ]);
    expect(await page.$$eval('#batch-results tfoot td[data-k]', (tds) => tds.map((t) => t.textContent))).toEqual([
      '1',
      '1',
      '1',
    ]);
    expect(await page.locator('#pass-chart rect').count()).toBe(3);
    expect(await page.textContent('#batch-components tr[data-component="DB"] td')).toBe('1');
    expect(await page.textContent('#difficulty [data-group="always passed"] dd')).toBe(
      'carrier-pay-balance-1, carrier-dispute-recent-1, carrier-bill-inquiry-1',
    );
    await shot(page, '6-batch-reference');

    await page.selectOption('#batch-agent', 'noop');
    await page.fill('#trials', '2');
    await page.click('#batch-run');
    await page.waitForFunction(
      () => document.querySelector('#batch-status')?.textContent === '6 / 6 rollouts · done',
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.$$eval('#batch-results tfoot td[data-k]', (tds) => tds.map((t) => t.textContent))).toEqual([
      '0',
      '0',
    ]);
    expect(await page.textContent('#difficulty [data-group="always failed"] dt')).toBe('always failed (3)');
    await shot(page, '7-batch-noop');
    await page.close();
  });

  it('lets a person call as the caller by keyboard (text shown as text, never HTML)', async () => {
    const page = await open('#/call');
    await page.waitForSelector('#task');
    await page.selectOption('#task', 'carrier-pay-balance-1');
    await page.click('#run');
    const say = async (text: string) => {
      await page.waitForSelector('#say:not([disabled])');
      await page.fill('#say', text);
      await page.keyboard.press('Enter');
    };
    await say('<img src=x onerror="window.__owned=1">我想交二月份的话费');
    await say('15867452301');
    await say('是的，确认。');
    await page.waitForSelector('#say:not([disabled])');
    await page.fill('#say', '没有了，谢谢，再见。');
    await page.click('#hang-up');
    await page.waitForSelector('#termination');
    const lines = await transcript(page);
    expect(lines[1]).toBe('user: <img src=x onerror="window.__owned=1">我想交二月份的话费');
    expect(lines.at(-1)).toBe('user: 没有了，谢谢，再见。');
    expect(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned)).toBeUndefined();
    expect(await page.locator('#transcript img').count()).toBe(0);
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    await shot(page, '8-call-as-caller');
    await page.close();
  });

  it('finds the calls and rollouts in the history after a reload, and exports JSONL', async () => {
    const page = await open('#/history');
    await page.reload();
    await page.waitForSelector('#history tbody tr');
    // 2 watched + 1 shared + 1 human call, 9 + 6 batch rollouts.
    expect(await page.locator('#history tbody tr').count()).toBe(19);
    await page.selectOption('#history-filter', 'call');
    const calls = await page.$$eval('#history tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((c) => c.textContent)),
    );
    expect(calls).toEqual([
      ['call', 'carrier-pay-balance-1', 'reference', 'human', '0', '14', 'user_stop', '1'],
      ['call', 'carrier-pay-balance-1', 'noop', 'scripted', '0', '8', 'user_stop', '0'],
      ['call', 'carrier-pay-balance-1', 'reference', 'scripted', '0', '14', 'user_stop', '1'],
      ['call', 'carrier-pay-balance-1', 'reference', 'scripted', '0', '14', 'user_stop', '1'],
    ]);
    await page.locator('#history tbody tr').nth(3).locator('button').click();
    expect(await transcript(page, 'history-transcript')).toEqual(PAY_BALANCE_TRANSCRIPT);
    await page.selectOption('#history-filter', 'all');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-jsonl')]);
    const text = await readFile((await download.path())!, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(lines).toHaveLength(19);
    expect(lines.filter((t) => t.participants.user === 'scripted' && t.reward_info?.reward === 1)).toHaveLength(11);
    await shot(page, '9-history');
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  it("keeps the batch table's total row in view at 1400 px and 390 px", async () => {
    for (const [width, height] of [
      [1400, 1000],
      [390, 844],
    ] as const) {
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.setViewportSize({ width, height });
      await page.goto(`${url}#/batch`);
      await page.waitForSelector('#batch-run');
      await page.getByRole('button', { name: 'all', exact: true }).click();
      await page.fill('#trials', '1');
      await page.fill('#workers', '2');
      await page.click('#batch-run');
      await page.waitForFunction(
        () => document.querySelector('#batch-status')?.textContent?.includes('done'),
        undefined,
        { timeout: 60_000 },
      );
      expect(await page.textContent('#batch-status')).toBe('15 / 15 rollouts · done');
      // The user scrolls to the results: the table is taller than its scroll area (15 task rows),
      // yet the total row's cells (sticky; the row box itself stays below) show at the area's bottom,
      // inside the viewport, every value's text inside the visible area.
      await page.locator('#batch-results').scrollIntoViewIfNeeded();
      const m = await page.evaluate(() => {
        const box = (r: DOMRect) => ({ top: r.top, bottom: r.bottom, left: r.left, right: r.right });
        const table = document.querySelector('#batch-results')!;
        const scroll = table.closest('.scroll')!;
        const range = document.createRange();
        return {
          rows: table.querySelectorAll('tbody tr').length,
          scrolls: scroll.scrollHeight > scroll.clientHeight,
          area: box(scroll.getBoundingClientRect()),
          cells: [...table.querySelectorAll('tfoot tr > *')].map((c) => {
            range.selectNodeContents(c);
            return { text: c.textContent, ...box(range.getBoundingClientRect()) };
          }),
        };
      });
      expect(m.rows).toBe(15);
      expect(m.scrolls).toBe(true);
      expect(m.cells.map((c) => c.text)).toEqual(['All tasks', '15', '15', '1', '1', '']);
      expect(m.area.top).toBeGreaterThanOrEqual(0);
      expect(m.area.bottom).toBeLessThanOrEqual(height);
      for (const c of m.cells.filter((x) => x.text)) {
        expect(c.left, `${width} px: "${c.text}"`).toBeGreaterThanOrEqual(m.area.left);
        expect(c.right, `${width} px: "${c.text}"`).toBeLessThanOrEqual(Math.min(m.area.right, width));
        expect(c.top).toBeGreaterThanOrEqual(m.area.top);
        expect(c.bottom).toBeLessThanOrEqual(m.area.bottom);
      }
      await shot(page, `6b-batch-total-${width}`);
      await page.close();
    }
    expect(pageErrors).toEqual([]);
  });

  it('stays responsive while 16 rollouts run in workers', async () => {
    const page = await open('#/batch');
    await page.waitForSelector('#batch-run');
    await page.click('text=none');
    // tasks × trials = 16 rollouts, one worker per task.
    for (const id of [
      'carrier-pay-balance-1',
      'carrier-dispute-recent-1',
      'carrier-bill-inquiry-1',
      'carrier-change-plan-1',
    ])
      await page.check(`input[value="${id}"]`);
    const trials = 4;
    await page.fill('#trials', String(trials));
    await page.fill('#workers', '4');
    await page.selectOption('#batch-agent', 'reference');
    // Probes in the page: long tasks, frame gaps, and the delay from a click to its handler,
    // each stamped with whether the batch was running (rollouts pending) at that moment.
    await page.evaluate(() => {
      type Probe = {
        longTasks: number[];
        gaps: number[];
        clicks: number[];
        runningFrames: number;
        partial: Set<string>;
      };
      const probe: Probe = { longTasks: [], gaps: [], clicks: [], runningFrames: 0, partial: new Set() };
      (window as unknown as { __probe: Probe }).__probe = probe;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) probe.longTasks.push(e.duration);
      }).observe({ type: 'longtask' });
      const status = () => document.querySelector('#batch-status')?.textContent ?? '';
      let last = performance.now();
      const frame = (now: number) => {
        const s = status();
        if (s.includes('running')) {
          probe.gaps.push(now - last);
          probe.runningFrames++;
          probe.partial.add(s.replace(/ ·.*$/, ''));
        }
        last = now;
        if (!s.includes('done')) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
      document.addEventListener('click', (e) => {
        if ((e.target as Element).id === 'batch-status' && status().includes('running'))
          probe.clicks.push(performance.now() - e.timeStamp);
      });
    });
    // The long-task probe works: a deliberate 250 ms task before the batch is seen (then forgotten).
    await page.evaluate(() => {
      setTimeout(() => {
        const end = performance.now() + 250;
        while (performance.now() < end);
      });
    });
    await expect
      .poll(() =>
        page.evaluate(() =>
          (window as unknown as { __probe: { longTasks: number[] } }).__probe.longTasks.some((d) => d >= 250),
        ),
      )
      .toBe(true);
    await page.evaluate(
      () => void ((window as unknown as { __probe: { longTasks: number[] } }).__probe.longTasks.length = 0),
    );
    await page.click('#batch-run');
    while (!(await page.textContent('#batch-status'))?.includes('done')) {
      await page.click('#batch-status', { timeout: 5_000 }).catch(() => undefined);
    }
    expect(await page.textContent('#batch-status')).toBe('16 / 16 rollouts · done');
    const probe = await page.evaluate(() => {
      const p = (
        window as unknown as {
          __probe: {
            longTasks: number[];
            gaps: number[];
            clicks: number[];
            runningFrames: number;
            partial: Set<string>;
          };
        }
      ).__probe;
      return {
        longTasks: p.longTasks,
        maxGap: Math.max(0, ...p.gaps),
        clicks: p.clicks,
        runningFrames: p.runningFrames,
        partial: [...p.partial],
      };
    });
    console.log(`responsiveness during a 16-rollout batch: ${JSON.stringify(probe)}`);
    // The batch really ran while we measured: frames and clicks landed while rollouts were pending,
    // and progress was seen part-way.
    expect(probe.runningFrames).toBeGreaterThan(10);
    expect(probe.clicks.length).toBeGreaterThan(0);
    expect(probe.partial.some((s) => /^([1-9]|1[0-5]) \/ 16 rollouts$/.test(s))).toBe(true);
    // The structural checks above are the test: frames and clicks landed while rollouts were
    // pending. The bounds below only catch gross blocking (a rollout batch on the main thread
    // stalls it for seconds) and leave room for a loaded 2-core machine; the measured figures
    // are printed in the responsiveness line above, not asserted here.
    expect(probe.longTasks.filter((d) => d > 1500)).toEqual([]);
    expect(probe.maxGap).toBeLessThan(1500);
    expect(Math.max(...probe.clicks)).toBeLessThan(1000);
    await shot(page, '10-batch-16');
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
