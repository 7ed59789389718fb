/**
 * The admission gate on tau2-bench's airline and retail domains, all 164 tasks: reference
 * solutions replay, failing lookups are information, failing writes refuse the task, and the
 * reference agent with the scripted caller scores 1 on every task.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gateDomain } from '../../src/core/gate/gate.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { tau2DataDir, tau2Runtime } from './tau2-helpers.ts';

/** The golden list of failing reference calls (test/golden/tau2-reference-failures.json). */
type Failure = { task_id: string; action_index: number; tool: string; kind: string };
const golden = JSON.parse(readFileSync(new URL('../golden/tau2-reference-failures.json', import.meta.url), 'utf8')) as {
  airline: Failure[];
  retail: Failure[];
};

describe('gate on tau2-bench domains', () => {
  it('airline: every task accepted; the reference agent scores 1 on all 50', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const report = await gateDomain(runtime);
    expect(report.tasks).toHaveLength(50);
    expect(report.tasks.filter((t) => !t.accepted).map((t) => [t.task_id, t.reasons])).toEqual([]);
    expect(report.tasks.every((t) => t.reference_reward === 1)).toBe(true);
    expect(report.accepted).toBe(true);
    expect(golden.airline).toEqual([]);
    expect(report.tasks.flatMap((t) => t.info.filter((i) => i.startsWith('reference action #')))).toEqual([]);
    // Tasks a do-nothing agent passes are reported, not refused (tau2's tasks are kept as they are).
    const nonDiscriminating = report.tasks.filter((t) => t.noop_reward === 1);
    expect(nonDiscriminating.length).toBeGreaterThan(0);
    for (const t of nonDiscriminating)
      expect(t.info).toContain('do-nothing agent scores 1, not 0 (task does not discriminate; kept as imported)');
  });

  it('retail: exactly the tasks with a failing reference write are refused; failing lookups are information', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const report = await gateDomain(runtime);
    expect(report.tasks).toHaveLength(114);
    const writes = golden.retail.filter((f) => f.kind === 'write');
    expect(report.tasks.filter((t) => !t.accepted).map((t) => t.task_id)).toEqual(writes.map((f) => f.task_id));
    expect(writes.map((f) => f.task_id)).toEqual(['64', '105']);
    expect(report.tasks.find((t) => t.task_id === '105')!.reasons[0]).toMatch(
      /^reference action #0 exchange_delivered_order_items\(.*\) fails: Error: /,
    );
    const infoFailures = report.tasks.flatMap((t) =>
      t.info.flatMap((i) => {
        const m = /^reference action #(\d+) (\w+)\(/.exec(i);
        return m ? [`${t.task_id}/${m[1]} ${m[2]}`] : [];
      }),
    );
    const reads = golden.retail.filter((f) => f.kind === 'read').map((f) => `${f.task_id}/${f.action_index} ${f.tool}`);
    expect(infoFailures).toEqual(reads);
    expect(reads).toHaveLength(16);
    expect(report.tasks.every((t) => t.reference_reward === 1)).toBe(true);
  });

  it('`switchboard run` plays tau2 tasks end to end from the data folder, by split', async () => {
    const io = capture();
    const code = await main(
      ['run', '--domain', 'tau2-airline', '--data', tau2DataDir('airline'), '--split', 'test', '--json'],
      io,
    );
    expect(code).toBe(0);
    const summary = JSON.parse(io.stdout);
    const splits = JSON.parse(readFileSync(`${tau2DataDir('airline')}split_tasks.json`, 'utf8'));
    expect(summary.settings.task_ids).toEqual(splits.test);
    expect(summary.totals).toMatchObject({ valid: splits.test.length, invalid: 0, mean_reward: 1 });
  });
});
