import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { gateDomain } from '../../../src/core/gate/gate.ts';
import { buildDomain, type DomainSources } from '../../../src/core/schema/domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { builtinDomainDir, DOMAIN_FILES } from '../../../src/adapters/node/load-domain.ts';
import { carrier } from '../../../domains/carrier/domain.ts';
import type { SqlDbFactory } from '../../../src/core/ports/sql-db.ts';
import { miniDomain, payTask } from '../../fixtures/mini-domain.ts';

type RawTask = {
  id: string;
  evaluation_criteria: {
    actions: Record<string, unknown>[];
    write_whitelist?: unknown[];
    assertions?: { id: string; rule: string }[];
  };
};

let sources: DomainSources;
let factory: SqlDbFactory;

beforeAll(async () => {
  const dir = builtinDomainDir('carrier');
  const entries = await Promise.all(
    Object.entries(DOMAIN_FILES).map(async ([k, f]) => [k, await readFile(join(dir, f), 'utf8')] as const),
  );
  sources = Object.fromEntries(entries) as unknown as DomainSources;
  factory = await sqlJsFactory();
});

/** The carrier domain with its tasks edited by `edit`, gated on the tasks `ids`. */
async function gateCarrier(edit: (tasks: RawTask[]) => void, ids: string[]) {
  const tasks = JSON.parse(sources.tasks) as RawTask[];
  edit(tasks);
  const domain = buildDomain(carrier, { ...sources, tasks: JSON.stringify(tasks) });
  return gateDomain(await DomainRuntime.create(domain, factory), { taskIds: ids });
}

describe('gate on the built-in carrier domain', () => {
  it('accepts every task: reference 1, do-nothing 0, every rule cited', async () => {
    const domain = buildDomain(carrier, sources);
    const report = await gateDomain(await DomainRuntime.create(domain, factory));
    expect(report.domain_problems).toEqual([]);
    expect(report.tasks.filter((t) => !t.accepted)).toEqual([]);
    expect(report.tasks).toHaveLength(15);
    expect(report.tasks.every((t) => t.reference_reward === 1 && t.noop_reward === 0)).toBe(true);
    expect(report.accepted).toBe(true);
  });

  it('(d) refuses a reference that pays ¥21.10 from a prepaid balance of ¥17.00', async () => {
    const report = await gateCarrier(
      (tasks) => {
        const t = tasks.find((x) => x.id === 'carrier-wallet-pay-1')!;
        t.evaluation_criteria.actions = [
          { requestor: 'assistant', name: 'find_customer_by_phone', arguments: { phone: '13812345678' } },
          {
            requestor: 'assistant',
            name: 'pay_bill_from_balance',
            arguments: { customer_id: 'C1001', bill_id: 'B10004', amount: 21.1 },
          },
        ];
      },
      ['carrier-wallet-pay-1'],
    );
    const verdict = report.tasks[0]!;
    expect(verdict.accepted).toBe(false);
    expect(report.accepted).toBe(false);
    expect(verdict.reasons[0]).toMatch(/^reference action #1 pay_bill_from_balance\(.*\) fails: Error: .*/);
    expect(verdict.reasons).toContain('reference solution has writes but leaves the database unchanged');
  });

  it('(e) refuses a reference that breaks an executable rule check (R4: 60-day dispute window)', async () => {
    const report = await gateCarrier(
      (tasks) => {
        const t = tasks.find((x) => x.id === 'carrier-dispute-expired-1')!;
        // CH00022: the roaming charge of 2024-11-20 on bill B10017, outside the 60-day window.
        t.evaluation_criteria.actions.push({
          requestor: 'assistant',
          name: 'file_dispute',
          arguments: { charge_id: 'CH00022', reason: 'service_not_received' },
        });
        t.evaluation_criteria.write_whitelist = [{ table: 'disputes' }, { table: 'charges' }];
      },
      ['carrier-dispute-expired-1'],
    );
    const verdict = report.tasks[0]!;
    expect(verdict.accepted).toBe(false);
    expect(verdict.reasons.filter((r) => / breaks R4: /.test(r))).toEqual([
      'reference action #3 file_dispute breaks R4: charge CH00022 dated 2024-11-20 is outside the 60-day dispute window (earliest 2025-01-14)',
    ]);
  });

  it('refuses gold writes outside the whitelist and assertions citing unknown rules', async () => {
    const report = await gateCarrier(
      (tasks) => {
        const t = tasks.find((x) => x.id === 'carrier-pay-balance-1')!;
        t.evaluation_criteria.write_whitelist = [{ table: 'payments', ops: ['insert'] }];
        t.evaluation_criteria.assertions![0]!.rule = 'R99';
      },
      ['carrier-pay-balance-1'],
    );
    const reasons = report.tasks[0]!.reasons;
    expect(reasons.some((r) => r.startsWith('gold write outside the whitelist: bills['))).toBe(true);
    expect(reasons.some((r) => r.startsWith('gold write outside the whitelist: customers['))).toBe(true);
    expect(reasons).toContain(
      `assertion ${JSON.parse(sources.tasks).find((x: RawTask) => x.id === 'carrier-pay-balance-1').evaluation_criteria.assertions[0].id} cites unknown rule R99`,
    );
  });
});

describe('gate on a hand-made domain', () => {
  it('reports a policy rule no assertion cites, and a task the do-nothing agent passes', async () => {
    const idle = {
      ...payTask,
      id: 'idle',
      evaluation_criteria: { actions: [], communicate_info: [], reward_basis: ['DB' as const] },
    };
    const domain = miniDomain([payTask, idle], `${'- **R1** identify\n- **R2** confirm\n'}- **R3** an orphan rule\n`);
    const report = await gateDomain(await DomainRuntime.create(domain, factory));
    expect(report.domain_problems).toEqual(['policy rule R3 is cited by no assertion']);
    const v = report.tasks.find((t) => t.task_id === 'idle')!;
    expect(v).toMatchObject({ accepted: false, noop_reward: 1, reference_reward: 1 });
    expect(v.reasons).toEqual(['do-nothing agent scores 1, not 0']);
    expect(report.tasks.find((t) => t.task_id === 'pay-10')).toMatchObject({
      accepted: true,
      reference_reward: 1,
      noop_reward: 0,
    });
    expect(report.accepted).toBe(false);
  });

  it('refuses tasks with static defects or a setup that throws, without stopping the gate', async () => {
    const sloppy = {
      ...payTask,
      id: 'sloppy',
      evaluation_criteria: {
        ...payTask.evaluation_criteria!,
        assertions: [
          { id: 'a', rule: 'R1', text: 'x', check: { kind: 'tool_called' as const, tool: 'teleport' } },
          { id: 'a', rule: 'R2', text: 'y', check: { kind: 'read_before_write' as const } },
        ],
        write_whitelist: [{ table: 'ghosts' }, { table: 'accounts', columns: ['colour'] }],
        env_assertions: [{ func_name: 'nope', arguments: {} }],
      },
    };
    const broken = { ...payTask, id: 'broken', initial_state: { rows: { ghosts: [{ id: 1 }] } } };
    const report = await gateDomain(await DomainRuntime.create(miniDomain([sloppy, broken, payTask]), factory));
    expect(report.tasks.find((t) => t.task_id === 'sloppy')!.reasons.slice(0, 6)).toEqual([
      'assertion a: unknown agent tool "teleport"',
      'assertion id a is used twice',
      'assertion a: check read_before_write needs "tool"',
      'write_whitelist names unknown table "ghosts"',
      'write_whitelist names unknown column accounts.colour',
      'env assertion names unknown function "nope"',
    ]);
    expect(report.tasks.find((t) => t.task_id === 'broken')!.reasons).toEqual([
      'task cannot be run: tasks.json: [1].initial_state.rows.ghosts: unknown table "ghosts" (task broken)',
    ]);
    expect(report.tasks.find((t) => t.task_id === 'pay-10')!.accepted).toBe(true);
  });

  it('checks rule binding when the policy has no rule ids but assertions cite rules', async () => {
    const report = await gateDomain(await DomainRuntime.create(miniDomain([payTask], '# no rules here\n'), factory));
    expect(report.tasks[0]!.reasons).toEqual([
      'assertion confirm cites unknown rule R2',
      'assertion identify cites unknown rule R1',
    ]);
  });
});
