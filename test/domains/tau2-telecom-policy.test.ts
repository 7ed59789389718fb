/**
 * tau2-bench's telecom policy as executable rule checks (domains/tau2-telecom/rules.ts): every
 * quote is in main_policy.md, the gate reports exactly the findings of
 * test/golden/tau2-policy-findings.json (`telecom.base`) on the base split's reference solutions
 * (kept, not refused: telecom tasks are imported), and planted violations are caught with their
 * rule ids. Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTau2Domain, type Tau2Domain } from '../../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { gateDomain } from '../../src/core/gate/gate.ts';
import type { Action, Task } from '../../src/core/schema/task.ts';
import { testData } from '../fixtures/data.ts';

type Finding = { task_id: string; action_index: number; tool: string; rule: string; refused: boolean; why: string };
const golden = JSON.parse(readFileSync(new URL('../golden/tau2-policy-findings.json', import.meta.url), 'utf8')) as {
  telecom: { base: { findings: Finding[]; unchecked: string[] } };
};

const DIR = testData('telecom');
let domain: Tau2Domain;
let runtime: DomainRuntime;
beforeAll(async () => {
  domain = await loadTau2Domain('tau2-telecom', DIR);
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
});

const act = (name: string, args: Record<string, unknown>, requestor: 'assistant' | 'user' = 'assistant'): Action =>
  ({ requestor, name, arguments: args }) as Action;

/** Gate one planted task (a copy of task `baseId` with `actions`). */
async function planted(baseId: string, id: string, actions: Action[]) {
  const task: Task = structuredClone(domain.tasks.find((t) => t.id === baseId)!);
  task.id = id;
  task.evaluation_criteria!.actions = actions;
  if (!domain.tasks.some((t) => t.id === id)) domain.tasks.push(task);
  return (await gateDomain(runtime, { taskIds: [id], episodes: false })).tasks[0]!;
}

const SUSPENDED = '[service_issue]overdue_bill_suspension|unseat_sim_card[PERSONA:Easy]';
const CONTRACT_ENDED = '[service_issue]contract_end_suspension|unseat_sim_card[PERSONA:Hard]';
const REFUEL = '[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]';

describe('tau2-telecom executable policy', () => {
  it('every rule check quotes text of main_policy.md', () => {
    const policy = readFileSync(`${DIR}main_policy.md`, 'utf8').replace(/\s+/g, ' ');
    expect(domain.ruleChecks!.map((r) => r.rule)).toEqual([
      'payment-request-overdue-only',
      'resume-after-overdue-paid',
      'resume-contract-not-ended',
      'refuel-max-2gb',
    ]);
    for (const rc of domain.ruleChecks!) expect(policy).toContain(rc.policy!.replace(/\s+/g, ' '));
  });

  it('base split: exactly the fixture findings, tasks kept as imported', async () => {
    const report = await gateDomain(runtime, { episodes: false });
    expect(report.domain_problems).toEqual([]);
    const findings = report.tasks.flatMap((t) =>
      t.policy.violations.map((v) => ({
        task_id: t.task_id,
        action_index: v.action_index,
        tool: v.tool,
        rule: v.rule,
        refused: v.refused,
      })),
    );
    expect(findings).toEqual(golden.telecom.base.findings.map(({ why: _, ...f }) => f));
    expect(report.tasks.filter((t) => t.policy.status === 'unchecked').map((t) => t.task_id)).toEqual(
      golden.telecom.base.unchecked,
    );
    expect(report.tasks.every((t) => t.accepted)).toBe(true);
    expect(report.tasks.filter((t) => t.policy.status === 'clean')).toHaveLength(108);
  });

  it('planted: a payment request for a bill that is not overdue breaks payment-request-overdue-only', async () => {
    const v = await planted(SUSPENDED, 'planted-paid-bill', [
      act('send_payment_request', { customer_id: 'C1001', bill_id: 'B1001' }),
    ]);
    expect(v.policy.violations.map((x) => [x.rule, x.message])).toEqual([
      ['payment-request-overdue-only', "payment request for bill B1001 with status 'Paid'"],
    ]);
  });

  it('planted: resuming before the overdue bill is paid, or after the contract ended, breaks its rule', async () => {
    const unpaid = await planted(SUSPENDED, 'planted-unpaid', [
      act('resume_line', { customer_id: 'C1001', line_id: 'L1002' }),
    ]);
    expect(unpaid.policy.violations.map((x) => [x.rule, x.message])).toEqual([
      ['resume-after-overdue-paid', 'line L1002 resumed while customer C1001 has unpaid bills B1234321 (Overdue)'],
    ]);
    const ended = await planted(CONTRACT_ENDED, 'planted-contract-ended', [
      act('resume_line', { customer_id: 'C1001', line_id: 'L1002' }),
    ]);
    expect(ended.policy.violations.map((x) => x.rule)).toContain('resume-contract-not-ended');
  });

  it('planted: refuelling 3 GB breaks refuel-max-2gb; 2 GB (the reference) does not', async () => {
    const v = await planted(REFUEL, 'planted-refuel', [
      act('refuel_data', { customer_id: 'C1001', line_id: 'L1002', gb_amount: 3 }),
    ]);
    expect(v.policy.violations.map((x) => [x.rule, x.message])).toEqual([
      ['refuel-max-2gb', 'refuel of 3 GB on line L1002'],
    ]);
    const ok = await planted(REFUEL, 'planted-refuel-ok', [
      act('refuel_data', { customer_id: 'C1001', line_id: 'L1002', gb_amount: 2 }),
    ]);
    expect(ok.policy.violations).toEqual([]);
  });
});
