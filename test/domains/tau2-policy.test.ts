/**
 * tau2-bench's airline and retail policies as executable rule checks: every quote is in the
 * policy, the gate reports exactly the findings of test/golden/tau2-policy-findings.json on the
 * real task files (kept, not refused), planted violations are caught with their rule ids, and the
 * checks run on agent trajectories beside the reward without changing it.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gateDomain, type GateReport } from '../../src/core/gate/gate.ts';
import { evaluate } from '../../src/core/scoring/index.ts';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import type { Action, Task } from '../../src/core/schema/task.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';
import { renderGate } from '../../src/cli/reports.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { tau2DataDir, tau2File, tau2Runtime } from './tau2-helpers.ts';

type Finding = { task_id: string; action_index: number; tool: string; rule: string; refused: boolean; why: string };
const golden = JSON.parse(readFileSync(new URL('../golden/tau2-policy-findings.json', import.meta.url), 'utf8')) as {
  airline: { findings: Finding[]; unchecked: string[] };
  retail: { findings: Finding[]; unchecked: string[] };
};

const findings = (report: GateReport) =>
  report.tasks.flatMap((t) =>
    t.policy.violations.map((v) => ({
      task_id: t.task_id,
      action_index: v.action_index,
      tool: v.tool,
      rule: v.rule,
      refused: v.refused,
    })),
  );

/** Gate one planted task (a copy of task `baseId` with `actions`) on the domain's runtime. */
async function gatePlanted(runtime: DomainRuntime, baseId: string, id: string, actions: Action[]) {
  const base = runtime.domain.tasks.find((t) => t.id === baseId)!;
  const task: Task = structuredClone(base);
  task.id = id;
  task.evaluation_criteria!.actions = actions;
  if (!runtime.domain.tasks.some((t) => t.id === id)) runtime.domain.tasks.push(task);
  const report = await gateDomain(runtime, { taskIds: [id], episodes: false });
  return report.tasks[0]!;
}

const act = (name: string, args: Record<string, unknown>): Action =>
  ({ requestor: 'assistant', name, arguments: args }) as Action;

describe('tau2 executable policies', () => {
  it('every rule check quotes text of its policy.md', async () => {
    for (const [name, dir] of [
      ['tau2-airline', 'airline'],
      ['tau2-retail', 'retail'],
    ] as const) {
      const { domain } = await tau2Runtime(name);
      const policy = tau2File(dir, 'policy.md').replace(/\s+/g, ' ');
      expect(domain.ruleChecks!.length).toBeGreaterThan(0);
      for (const rc of domain.ruleChecks!) expect(policy).toContain(rc.policy!.replace(/\s+/g, ' '));
    }
  });

  it('airline: the 50 reference solutions break no rule check; tasks stay accepted', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const report = await gateDomain(runtime, { episodes: false });
    expect(report.domain_problems).toEqual([]);
    expect(report.task_origin).toBe('imported');
    expect(findings(report)).toEqual(golden.airline.findings.map(({ why: _, ...f }) => f));
    expect(report.tasks.filter((t) => t.policy.status === 'unchecked').map((t) => t.task_id)).toEqual(
      golden.airline.unchecked,
    );
    expect(report.tasks.every((t) => t.policy.status === 'clean')).toBe(true);
  });

  it('retail: exactly the fixture findings, each a refused write that leaves its task unchecked', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const report = await gateDomain(runtime, { episodes: false });
    expect(report.domain_problems).toEqual([]);
    expect(findings(report)).toEqual(golden.retail.findings.map(({ why: _, ...f }) => f));
    const unchecked = report.tasks.filter((t) => t.policy.status === 'unchecked');
    expect(unchecked.map((t) => t.task_id)).toEqual(golden.retail.unchecked);
    expect(unchecked.map((t) => t.policy.unchecked)).toEqual([
      [
        'reference action #6 exchange_delivered_order_items fails (Error: Non-delivered order cannot be exchanged): the gold state lacks its write',
      ],
      [
        'reference action #0 exchange_delivered_order_items fails (Error: Insufficient gift card balance to pay for the price difference): the gold state lacks its write',
      ],
    ]);
    expect(report.tasks.filter((t) => t.policy.status === 'clean')).toHaveLength(112);
    const text = renderGate(report);
    expect(text).toContain(
      `policy 105: reference action #0 exchange_delivered_order_items breaks gift-card-covers-difference (refused by the tool): order #W4316152: price difference 21.1 charged to gift_card_7245904 with balance 17 — policy: "If the user provides a gift card, it must have enough balance to cover the price difference."`,
    );
    expect(text).toContain(
      'policy: 2 of 114 reference solutions break a rule (findings; tasks kept as imported); 2 not checked',
    );
  });

  it('planted: a gold that cancels a reservation with flown segments breaks cancel-not-flown and stays a finding', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    // I6M8JQ: economy with insurance (so cancel-eligible holds), both segments landed on 2024-05-09.
    const v = await gatePlanted(runtime, '39', 'planted-flown', [
      act('cancel_reservation', { reservation_id: 'I6M8JQ' }),
    ]);
    expect(v.accepted).toBe(true);
    expect(v.policy.status).toBe('violations');
    expect(v.policy.violations).toEqual([
      {
        rule: 'cancel-not-flown',
        policy: 'If any portion of the flight has already been flown, the agent cannot help and transfer is needed.',
        action_index: 0,
        tool: 'cancel_reservation',
        arguments: { reservation_id: 'I6M8JQ' },
        message:
          'reservation I6M8JQ cancelled with HAT115 on 2024-05-09 (landed), HAT192 on 2024-05-09 (landed) already flown',
        refused: false,
      },
    ]);
  });

  it('planted: changing the flights of a basic economy reservation breaks basic-economy-no-flight-change', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    // Task 32 without its upgrade to economy: OWZ4XL (basic economy, EWR-MIA-LAX) to nonstop HAT041.
    const v = await gatePlanted(runtime, '32', 'planted-basic', [
      act('update_reservation_flights', {
        reservation_id: 'OWZ4XL',
        cabin: 'basic_economy',
        flights: [{ flight_number: 'HAT041', date: '2024-05-21' }],
        payment_id: 'credit_card_9659780',
      }),
    ]);
    expect(v.policy.violations.map((x) => [x.rule, x.message])).toEqual([
      [
        'basic-economy-no-flight-change',
        'basic economy reservation OWZ4XL had its flights changed from HAT202 on 2024-05-21, HAT232 on 2024-05-21 to HAT041 on 2024-05-21',
      ],
    ]);
    // The same change after the upgrade (task 32 as tau2 has it) breaks nothing.
    const upgraded = await gatePlanted(runtime, '32', 'planted-basic-upgraded', [
      act('update_reservation_flights', {
        reservation_id: 'OWZ4XL',
        cabin: 'economy',
        flights: [
          { flight_number: 'HAT202', date: '2024-05-21' },
          { flight_number: 'HAT232', date: '2024-05-21' },
        ],
        payment_id: 'credit_card_9659780',
      }),
      act('update_reservation_flights', {
        reservation_id: 'OWZ4XL',
        cabin: 'economy',
        flights: [{ flight_number: 'HAT041', date: '2024-05-21' }],
        payment_id: 'credit_card_9659780',
      }),
    ]);
    expect(upgraded.policy).toEqual({ status: 'clean', violations: [], unchecked: [] });
  });

  it('planted: bags removed, a bag charged inside the allowance, an uncovered cancellation, an unearned certificate', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const rules = async (id: string, actions: Action[]) =>
      (await gatePlanted(runtime, '12', id, actions)).policy.violations.map((x) => x.rule);
    // 4WQ150 has 5 checked bags (business, 3 passengers, all free); lowering them to 3.
    expect(
      await rules('planted-bags', [
        act('update_reservation_baggages', {
          reservation_id: '4WQ150',
          total_baggages: 3,
          nonfree_baggages: 0,
          payment_id: 'gift_card_3576581',
        }),
      ]),
    ).toEqual(['bags-add-not-remove']);
    // A silver member in basic economy has 1 free bag per passenger (3 passengers): 4 bags → 1 charged, not 2.
    expect(
      await rules('planted-allowance', [
        act('update_reservation_baggages', {
          reservation_id: 'OWZ4XL',
          total_baggages: 4,
          nonfree_baggages: 2,
          payment_id: 'credit_card_9659780',
        }),
      ]),
    ).toEqual(['bag-allowance']);
    // OWZ4XL: basic economy, booked 2024-05-09, no insurance, nothing cancelled by the airline.
    expect(await rules('planted-uncovered', [act('cancel_reservation', { reservation_id: 'OWZ4XL' })])).toEqual([
      'cancel-eligible',
    ]);
    // olivia_jackson_4826: a regular member whose reservations are neither business nor insured.
    expect(
      await rules('planted-certificate', [act('send_certificate', { user_id: 'olivia_jackson_4826', amount: 150 })]),
    ).toEqual(['compensation-eligible', 'compensation-case']);
  });

  it('planted: exchanging into another product type breaks same-product-type (the tool refuses it too)', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    // #W2378156 (delivered): the Smart Thermostat 4983901480 for the Headphones item 4202497723.
    const v = await gatePlanted(runtime, '1', 'planted-exchange', [
      act('exchange_delivered_order_items', {
        order_id: '#W2378156',
        item_ids: ['4983901480'],
        new_item_ids: ['4202497723'],
        payment_method_id: 'credit_card_9513926',
      }),
    ]);
    expect(v.policy.status).toBe('unchecked');
    expect(v.policy.violations.map((x) => [x.rule, x.refused, x.message])).toEqual([
      [
        'same-product-type',
        true,
        'order #W2378156: item 4983901480 (Smart Thermostat) swapped for item 4202497723 (Headphones), another product',
      ],
    ]);
  });

  it("planted: an address change after the items were modified, and a write for another user's order", async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const address = { address1: '1 Elm St', address2: '', city: 'Austin', state: 'TX', country: 'USA', zip: '78701' };
    const v = await gatePlanted(runtime, '1', 'planted-modified', [
      // #W5918442 (sofia_rossi_8776, pending): a perfume for another perfume, then its address.
      act('modify_pending_order_items', {
        order_id: '#W5918442',
        item_ids: ['1725100896'],
        new_item_ids: ['9007697085'],
        payment_method_id: 'credit_card_5051208',
      }),
      act('modify_pending_order_address', { order_id: '#W5918442', ...address }),
      // #W2974929 belongs to fatima_anderson_2157.
      act('modify_pending_order_address', { order_id: '#W2974929', ...address }),
    ]);
    expect(v.policy.violations.map((x) => [x.action_index, x.rule, x.refused, x.message])).toEqual([
      [
        1,
        'modify-pending-only',
        false,
        "modify_pending_order_address on order #W5918442 with status 'pending (item modified)'",
      ],
      [
        2,
        'one-user',
        false,
        'modify_pending_order_address changed records of user fatima_anderson_2157 after writes for sofia_rossi_8776',
      ],
    ]);
  });

  it('on agent trajectories the checks appear beside the tau2 reward and never change it', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const task = runtime.domain.tasks.find((t) => t.id === '39')!;
    const call = (i: number, name: string, args: Record<string, unknown>): Turn[] => [
      {
        role: 'assistant',
        text: '',
        tool_calls: [{ id: `c${i}`, name, arguments: args }],
      } as unknown as Turn,
      {
        role: 'tool',
        tool_call_id: `c${i}`,
        name,
        arguments: args,
        requestor: 'assistant',
        content: '',
        error: false,
      } as unknown as Turn,
    ];
    // The reference solution of task 39 plus a cancellation of I6M8JQ, whose segments were flown.
    const turns = (task.evaluation_criteria!.actions ?? []).flatMap((a, i) => call(i, a.name, a.arguments));
    const clean = await evaluate(runtime, task, turns);
    const broken = await evaluate(runtime, task, [
      ...turns,
      ...call(99, 'cancel_reservation', { reservation_id: 'I6M8JQ' }),
    ]);
    expect(clean.basis).not.toContain('ASSERTIONS');
    expect(broken.basis).toEqual(clean.basis);
    expect(clean.assertions.filter((a) => a.status === 'failed')).toEqual([]);
    const failed = broken.assertions.filter((a) => a.status === 'failed');
    expect(failed.map((a) => a.id)).toEqual(['rule:cancel-not-flown']);
    expect(failed[0]!.turn).toBe(turns.length + 1);
  });

  it('`run` reports a pass that broke a rule: the reference of retail 64 repeats its refused exchange', async () => {
    const io = capture();
    const args = [
      'run',
      '--domain',
      'tau2-retail',
      '--data',
      tau2DataDir('retail'),
      '--task-ids',
      '63,64',
      '--trials',
      '2',
    ];
    expect(await main([...args, '--json'], io)).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.tasks.map((t: { rewards: number[]; rule_breaks: number[] }) => [t.rewards, t.rule_breaks])).toEqual([
      [
        [1, 1],
        [0, 0],
      ],
      [
        [1, 1],
        [1, 1],
      ],
    ]);
    expect(summary.totals).toMatchObject({ rule_breaking: 2, rule_breaking_passes: 2 });
    const text = capture();
    expect(await main(args, text)).toBe(0);
    expect(text.stdout).toContain(
      'policy: 2 episode(s) broke a rule check, 2 of them passed; rule breaks per trial: 64 (1 1)',
    );
  });

  it('`replay` of tau2-bench results reports the rule an agent broke beside the reward', async () => {
    // The results fixture with sim-a's cancellation (the tool message at index 9) pointed at I6M8JQ,
    // whose segments were flown.
    const results = JSON.parse(readFileSync(new URL('../fixtures/tau2-results-airline.json', import.meta.url), 'utf8'));
    for (const m of results.simulations[0].messages)
      for (const c of m.tool_calls ?? []) if (c.name === 'cancel_reservation') c.arguments.reservation_id = 'I6M8JQ';
    const file = join(mkdtempSync(join(tmpdir(), 'sb-policy-')), 'results.json');
    writeFileSync(file, JSON.stringify(results));
    const io = capture();
    await main(['replay', file, '--domain', 'tau2-airline', '--data', tau2DataDir('airline'), '--json'], io);
    const doc = JSON.parse(io.stdout);
    expect(doc.rewards.map((r: { task_id: string; rule_breaks: string[] }) => [r.task_id, r.rule_breaks])).toEqual([
      [
        '19',
        [
          'cancel-not-flown: reservation I6M8JQ cancelled with HAT115 on 2024-05-09 (landed), HAT192 on 2024-05-09 (landed) already flown (cancel_reservation at turn 9)',
        ],
      ],
      ['6', []],
      ['13', []],
    ]);
    expect(doc.summary.policy).toEqual({ breaking: 1, breaking_passes: 0 });
  });
});
