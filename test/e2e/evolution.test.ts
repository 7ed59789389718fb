/**
 * The page's Evolution view in chromium: an evolve report.json loaded from a file and from a URL
 * (`#/evolution?report=…`), the difficulty chart per round, each task's lineage, a bad file
 * named in an error; screenshots at 1400 and 390 px (test-output/screenshots/) with no
 * horizontal overflow.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/index.ts';
import { evolve, type EvolveReport } from '../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { chromiumSession, openPage } from './harness.ts';

const OUT =
  process.env.SWITCHBOARD_SCREENSHOTS ?? fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));
let session: Awaited<ReturnType<typeof chromiumSession>>;
let report: EvolveReport;
const errors: string[] = [];

beforeAll(async () => {
  const domain = await loadBuiltinDomain('carrier');
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const ids = ['carrier-pay-balance-1', 'carrier-wallet-pay-1', 'carrier-dispute-recent-1'];
  ({ report } = await evolve({
    runtime,
    tasks: domain.tasks.filter((t) => ids.includes(t.id)),
    agent: () => new NoisyAgent({ p: 0, tasks: { 'carrier-dispute-recent-1': 1 } }),
    user: () => new ScriptedUser(),
    k: 2,
    rounds: 2,
    seed: 0,
    concurrency: 2,
    clock: () => steppingClock(domain.now, 1000),
    harden: {},
  }));
  session = await chromiumSession();
  await mkdir(OUT, { recursive: true });
}, 240_000);
afterAll(async () => {
  await session?.close();
});

const overflow = (page: import('playwright-core').Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('Evolution view', () => {
  it('loads a report from a file and from a URL: chart per round, lineage, errors; screenshots', async () => {
    const page = await openPage(session.context, session.url, errors, '#/evolution');
    await page.setInputFiles('#evolution-file', {
      name: 'report.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(report)),
    });
    await page.waitForSelector('#evolution-chart');
    expect(await page.textContent('#evolution-status')).toBe(
      'carrier · agent noisy:0+1tasks · K=2 · 2 rounds · report.json',
    );
    const bars = await page.$$eval('#evolution-chart g[data-round] rect', (rs) =>
      rs.map((r) => [
        r.closest('g')!.getAttribute('data-round'),
        r.getAttribute('data-label'),
        r.getAttribute('data-n'),
      ]),
    );
    expect(bars).toEqual(
      ['0', '1'].flatMap((round) => [
        [round, 'always_pass', '2'],
        [round, 'boundary', '0'],
        [round, 'always_fail', '1'],
        [round, 'flaky-infra', '0'],
      ]),
    );
    const rows = await page.$$eval('#lineage tbody tr', (trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-task'),
        tr.getAttribute('data-generation'),
        ...[...tr.children].slice(1, 3).map((td) => td.textContent),
      ]),
    );
    const pay = 'carrier-pay-balance-1~near_duplicate_record.0';
    expect(rows.slice(0, 3)).toEqual([
      ['carrier-pay-balance-1', '0', 'always pass', '–'],
      [pay, '1', '–', 'always pass'],
      [`${pay}~withhold_until_asked_twice.2`, '2', '–', '–'],
    ]);
    expect(rows.at(-1)).toEqual(['carrier-dispute-recent-1', '0', 'always fail (hard)', 'always fail (hard)']);
    expect(await page.textContent('#evolution-before-after')).toBe(
      'Labels before → after: always pass 2 → 2, boundary 0 → 0, always fail 1 → 1, flaky infra 0 → 0',
    );
    const widths: number[] = [];
    for (const width of [1400, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      await page.waitForTimeout(150);
      widths.push(await overflow(page));
      await page.screenshot({ path: join(OUT, `evolution-${width}.png`), fullPage: width === 390 });
    }
    expect(widths).toEqual([0, 0]);

    // A file that is not a report: the error names it and the field.
    await page.setInputFiles('#evolution-file', {
      name: 'weights.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"format": "switchboard.sampling-weights"}'),
    });
    await page.waitForSelector('#evolution-error');
    expect(await page.textContent('#evolution-error')).toBe(
      'weights.json: not an evolve report.json (field "rounds" is missing or empty)',
    );
    await page.close();

    // From a URL in the link.
    await session.context.route('**/runs/report.json', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(report) }),
    );
    const linked = await openPage(
      session.context,
      session.url,
      errors,
      `#/evolution?report=${encodeURIComponent(`${session.url}runs/report.json`)}`,
    );
    await linked.waitForSelector('#evolution-chart');
    expect(await linked.textContent('#evolution-status')).toContain(`${session.url}runs/report.json`);
    await linked.close();
    expect(errors).toEqual([]);
  }, 120_000);

  it('shows the task issues after the last round: status, resolution, evidence trajectory', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const ids = ['carrier-pay-balance-1', 'carrier-dispute-recent-1'];
    const skipDispute = () => new NoisyAgent({ p: 0, tasks: { 'carrier-dispute-recent-1': 1 } });
    // An issue of an earlier run on a task that now passes (resolved), and two policies that fail
    // carrier-dispute-recent-1 the same way (a new open issue).
    const earlier = {
      id: 'carrier-pay-balance-1#1',
      task_id: 'carrier-pay-balance-1',
      finding: 'ambiguous_communicate' as const,
      field: 'evaluation_criteria.communicate_info[1]',
      detail: 'planted',
      status: 'open' as const,
      resolution: null,
      evidence_trajectory: 'carrier/carrier-pay-balance-1/0/0',
      evidence_trajectories: ['carrier/carrier-pay-balance-1/0/0'],
    };
    const { report: withIssues } = await evolve({
      runtime,
      tasks: domain.tasks.filter((t) => ids.includes(t.id)),
      agent: skipDispute,
      user: () => new ScriptedUser(),
      crossPolicies: [skipDispute],
      issues: [earlier],
      k: 2,
      seed: 0,
      concurrency: 2,
      clock: () => steppingClock(domain.now, 1000),
    });
    const expected = withIssues.rounds[0]!.issues;
    expect(expected.map((i) => [i.id, i.status])).toEqual([
      ['carrier-pay-balance-1#1', 'resolved'],
      ['carrier-dispute-recent-1#1', 'open'],
    ]);
    const page = await openPage(session.context, session.url, errors, '#/evolution');
    await page.setInputFiles('#evolution-file', {
      name: 'report.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(withIssues)),
    });
    await page.waitForSelector('#task-issues');
    const rows = await page.$$eval('#task-issues tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-issue'), ...[...tr.children].map((td) => td.textContent)]),
    );
    expect(rows).toEqual([
      [
        'carrier-pay-balance-1#1',
        'carrier-pay-balance-1#1',
        'ambiguous_communicate (evaluation_criteria.communicate_info[1])',
        'resolved',
        expected[0]!.resolution,
        'carrier/carrier-pay-balance-1/0/0',
      ],
      [
        'carrier-dispute-recent-1#1',
        'carrier-dispute-recent-1#1',
        'cross_policy_agreement',
        'open',
        '–',
        'carrier/carrier-dispute-recent-1/0/0 +3',
      ],
    ]);
    expect(expected[0]!.resolution).toBe('round 0: the task is always_pass (pass rate 1)');
    expect(await overflow(page)).toBe(0);
    // The first report has no issues: the view says so.
    await page.setInputFiles('#evolution-file', {
      name: 'report.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(report)),
    });
    await page.waitForSelector('#task-issues-none');
    await page.close();
    expect(errors).toEqual([]);
  }, 120_000);
});
