import { describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { loadTau2Domain } from '../../../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';
import { gateDomain } from '../../../src/core/gate/index.ts';
import {
  applyPattern,
  HARD_PATTERNS,
  hardenTasks,
  harsherChannel,
  taskPatternIds,
} from '../../../src/core/evolution/index.ts';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import type { Task } from '../../../src/core/schema/task.ts';
import type { Agent } from '../../../src/core/participants/types.ts';
import { evaluate } from '../../../src/core/scoring/index.ts';
import { testData } from '../../fixtures/data.ts';

async function carrier() {
  const domain = await loadBuiltinDomain('carrier');
  return { domain, runtime: await DomainRuntime.create(domain, await sqlJsFactory()) };
}

/** Reward of one scripted episode of `task` on `runtime`. */
async function rewardOf(runtime: DomainRuntime, task: Task, agent: Agent = new ReferenceAgent()) {
  const t = await runEpisode({
    runtime,
    task,
    agent,
    user: new ScriptedUser(),
    seed: 0,
    clock: steppingClock(runtime.domain.now, 1000),
  });
  return (await evaluate(runtime, task, t.turns, { termination: t.termination })).reward;
}

const variant = async (id: string, pattern: string, seed = 0) => {
  const { domain, runtime } = await carrier();
  const base = domain.tasks.find((t) => t.id === id)!;
  const before = structuredClone(base);
  const out = await applyPattern(base, pattern, { domain, runtime, seed });
  expect(base, 'the base task is never modified').toEqual(before);
  if ('skip' in out) throw new Error(out.skip);
  return { ...out, runtime, base };
};

describe('the hard-pattern library file', () => {
  it('names every pattern of issue 16 with its axis', () => {
    expect(HARD_PATTERNS.patterns.map((p) => [p.id, p.axis])).toEqual([
      ['db_contradicts_claim', 'task'],
      ['serial_multi_intent', 'task'],
      ['misremembered_value', 'task'],
      ['withhold_until_asked_twice', 'task'],
      ['near_duplicate_record', 'task'],
      ['value_past_threshold', 'task'],
      ['mid_call_change_of_mind', 'task'],
      ['harsher_channel', 'channel'],
    ]);
    expect(taskPatternIds()).toHaveLength(7);
  });

  it('harsher_channel climbs the preset ladder, then barge-in, then stops', () => {
    expect(harsherChannel({ preset: 'clean', barge_in: 0 })).toEqual({ preset: 'control', barge_in: 0 });
    expect(harsherChannel({ preset: 'harsh', barge_in: 0 })).toEqual({ preset: 'harsh', barge_in: 0.15 });
    expect(harsherChannel({ preset: 'harsh', barge_in: 0.5 })).toBeNull();
    expect(() => harsherChannel({ preset: 'loud', barge_in: 0 })).toThrow(/not on the harsher_channel ladder/);
  });
});

describe('task mutators on carrier (seed 0)', () => {
  it('db_contradicts_claim: a false claim about the first write, and the agent must say 未查到', async () => {
    const { task, reason } = await variant('carrier-pay-balance-1', 'db_contradicts_claim');
    expect(task.id).toBe('carrier-pay-balance-1~db_contradicts_claim.0');
    expect(task.user_scenario.false_claims).toEqual([
      {
        claim: '其实我之前已经用话费余额缴纳账单了。',
        contradict_cues: ['未查到'],
        concede: '是吗？那可能是我记错了。',
      },
    ]);
    expect(task.evaluation_criteria!.communicate_info).toEqual(['63.5', '36.5', '未查到']);
    expect(reason).toBe(
      'the caller claims "其实我之前已经用话费余额缴纳账单了。"; the records contradict it and the agent must say "未查到"',
    );
    expect(task.lineage).toEqual({
      version: 1,
      parent: { task_id: 'carrier-pay-balance-1', version: 1 },
      generation: 1,
      changes: [
        {
          version: 1,
          reason,
          by: 'hard-pattern:db_contradicts_claim',
          pattern: 'db_contradicts_claim',
          params: {},
          seed: 0,
        },
      ],
    });
  });

  it('serial_multi_intent: a second request after the first, served by a repeated read and a number to tell', async () => {
    const { task, runtime } = await variant('carrier-bill-inquiry-1', 'serial_multi_intent');
    expect(task.user_scenario.requests).toEqual([
      task.user_scenario.requests![0],
      '另外，麻烦再帮我查一下账户现在的情况，跟我说一下。',
    ]);
    expect(task.evaluation_criteria!.actions!.map((a) => [a.name, a.intent])).toEqual([
      ['find_customer_by_phone', 0],
      ['get_bills', 0],
      ['get_bill_details', 0],
      ['get_bill_details', 1],
    ]);
    expect(task.evaluation_criteria!.communicate_info).toEqual(['32', '流量', '96.5']);
    // The reference serves both intents in order and scores 1; doing nothing scores 0.
    expect(await rewardOf(runtime, task)).toBe(1);
    expect(await rewardOf(runtime, task, new NoopAgent())).toBe(0);
  });

  it('misremembered_value: two adjacent digits of the phone swapped, a number no account has', async () => {
    const { task } = await variant('carrier-pay-balance-1', 'misremembered_value');
    expect(task.user_scenario.misremembers).toEqual([
      { fact: 'phone', wrong: '15867452310', check_cues: ['查不到', '没有找到', '核对'] },
    ]);
    const instr = task.user_scenario.instructions as { task_instructions: string };
    expect(instr.task_instructions).toMatch(
      /一开始会把phone说成15867452310，客服说查不到或请您核对时，改口说15867452301。$/,
    );
  });

  it('withhold_until_asked_twice: the phone is deflected once', async () => {
    const { task } = await variant('carrier-pay-balance-1', 'withhold_until_asked_twice');
    expect(task.user_scenario.withholds).toEqual([{ fact: 'phone', deflect: '这个一定要告诉你吗？' }]);
  });

  it('near_duplicate_record: a copy of the customer one digit off, gold state unchanged', async () => {
    const { task, reason, runtime } = await variant('carrier-pay-balance-1', 'near_duplicate_record');
    expect(task.initial_state?.rows).toEqual({
      customers: [
        {
          customer_id: 'C1000',
          name: '黄丽',
          phone: '15867452305',
          plan_id: 'PL58',
          next_plan_id: null,
          prepaid_balance_fen: 10000,
          status: 'active',
        },
      ],
    });
    expect(reason).toBe('a near-duplicate of customers C1002 (phone 15867452301 → 15867452305, customer_id C1000)');
    expect(await rewardOf(runtime, task)).toBe(1);
  });

  it('value_past_threshold: the disputed charge dated one day past the 60-day window, the gold is the refusal', async () => {
    const { task, reason, runtime, base } = await variant('carrier-dispute-recent-1', 'value_past_threshold');
    expect(task.id).toBe('carrier-dispute-recent-1~value_past_threshold.0');
    expect(reason).toBe(
      'charges CH00020: charge_date 2025-02-03 → 2025-01-13, one day past the 60-day window (R4); the agent must refuse file_dispute and say "60天"',
    );
    expect(task.initial_state?.rows).toEqual({
      charges: [
        {
          charge_id: 'CH00020',
          bill_id: 'B10016',
          description: '视频彩铃包月费',
          amount_fen: 1000,
          charge_date: '2025-01-13',
          disputed: 0,
        },
      ],
    });
    const ec = task.evaluation_criteria!;
    expect(ec.actions?.map((a) => a.name)).toEqual(['find_customer_by_phone', 'get_bills', 'get_bill_details']);
    expect(ec.communicate_info).toEqual(['60天']);
    expect(ec.write_whitelist).toEqual([]);
    expect(ec.assertions?.map((a) => [a.id, a.rule, a.check?.kind])).toEqual([
      ['identify-first', 'R1', 'read_before_write'],
      ['confirm-first', 'R2', 'confirm_before_write'],
      ['past-threshold', 'R4', 'tool_not_called'],
    ]);
    expect(await rewardOf(runtime, task)).toBe(1);
    expect(await rewardOf(runtime, task, new NoopAgent())).toBe(0);
    // The base's reference (which files the dispute) now breaks the policy.
    const filing = { ...task, evaluation_criteria: { ...ec, actions: base.evaluation_criteria!.actions } };
    expect(await rewardOf(runtime, filing)).toBe(0);
    // The domain's executable R4 check agrees with the limit table: filing on the moved charge
    // (the base's reference and whitelist) breaks the rule at exactly this date.
    const gate = await gateDomain(runtime.withTasks([{ ...filing, evaluation_criteria: base.evaluation_criteria }]));
    expect(gate.tasks[0]!.reasons).toEqual([
      'reference action #3 file_dispute breaks R4: charge CH00020 dated 2025-01-13 is outside the 60-day dispute window (earliest 2025-01-14)',
      'reference agent with scripted caller scores 0, not 1',
    ]);
    // Gated: hardenTasks admits it; a task without a governed write is skipped with the reason.
    const { domain } = await carrier();
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base, domain.tasks.find((t) => t.id === 'carrier-bill-inquiry-1')!],
      seed: 0,
      patterns: ['value_past_threshold'],
    });
    expect(variants.map((v) => v.id)).toEqual(['carrier-dispute-recent-1~value_past_threshold.0']);
    expect(report.rejected).toEqual([]);
    expect(report.skipped).toEqual([
      {
        parent: 'carrier-bill-inquiry-1',
        pattern: 'value_past_threshold',
        reason: 'no agent write governed by a carrier limit',
      },
    ]);
  });

  it('value_past_threshold (amount_limit): the bill moved 0.5 past the ¥200/day balance limit, the gold pays exactly 200', async () => {
    const { task, reason, runtime, base } = await variant('carrier-pay-balance-1', 'value_past_threshold');
    expect(task.id).toBe('carrier-pay-balance-1~value_past_threshold.0');
    expect(reason).toBe(
      'bills B10008: due 63.5 → 200.5, 0.5 past the 200 limit of pay_bill_from_balance (R3); the agent must pay 200 and tell the rest 0.5',
    );
    // The bill is due 200.5 yuan; the balance (100) is raised by 137 so that it covers the whole bill.
    expect(task.initial_state?.rows).toEqual({
      bills: [
        {
          bill_id: 'B10008',
          customer_id: 'C1002',
          period: '2025-02',
          amount_fen: 20050,
          paid_fen: 0,
          due_date: '2025-03-25',
          status: 'unpaid',
        },
      ],
      customers: [
        {
          customer_id: 'C1002',
          name: '黄丽',
          phone: '15867452301',
          plan_id: 'PL58',
          next_plan_id: null,
          prepaid_balance_fen: 23700,
          status: 'active',
        },
      ],
    });
    const ec = task.evaluation_criteria!;
    expect(ec.actions!.map((a) => [a.name, a.arguments])).toEqual([
      ['find_customer_by_phone', { phone: '15867452301' }],
      ['get_bills', { customer_id: 'C1002' }],
      ['pay_bill_from_balance', { customer_id: 'C1002', bill_id: 'B10008', amount: 200 }],
    ]);
    expect(ec.communicate_info).toEqual(['200', '0.5']);
    expect(ec.assertions!.map((a) => [a.id, a.rule, a.check?.kind, a.check?.args])).toEqual([
      ['identify-first', 'R1', 'read_before_write', undefined],
      ['confirm-first', 'R2', 'confirm_before_write', undefined],
      ['at-limit', 'R3', 'tool_called', { bill_id: 'B10008', amount: 200 }],
      ['past-limit', 'R3', 'tool_not_called', { amount: 200.5 }],
    ]);
    expect(await rewardOf(runtime, task)).toBe(1);
    expect(await rewardOf(runtime, task, new NoopAgent())).toBe(0);
    // Paying the whole 200.5 from the balance breaks the domain's own executable R3 check.
    const whole = structuredClone(task);
    whole.evaluation_criteria!.actions![2]!.arguments.amount = 200.5;
    const gate = await gateDomain(runtime.withTasks([whole]));
    expect(gate.tasks[0]!.reasons[0]).toBe(
      'reference action #2 pay_bill_from_balance breaks R3: bill B10008 received 200.5 yuan from the prepaid balance on 2025-03-15, above the 200 yuan daily limit',
    );
    // Gated: a task whose later write the moved bill makes illegal (R5: plan change with an
    // overdue bill) is rejected with the gate's reason; a task at the limit already is skipped.
    const { domain } = await carrier();
    const pick = (id: string) => domain.tasks.find((t) => t.id === id)!;
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base, pick('carrier-pay-then-change-1'), pick('carrier-pay-split-limit-1')],
      seed: 0,
      patterns: ['value_past_threshold'],
    });
    expect(variants.map((v) => v.id)).toEqual(['carrier-pay-balance-1~value_past_threshold.0']);
    expect(report.rejected.map((r) => [r.task_id, r.gate_reasons])).toEqual([
      [
        'carrier-pay-then-change-1~value_past_threshold.0',
        [
          'reference action #4 change_plan breaks R5: plan change scheduled for customer C1010 while bills B10039 are overdue',
          'reference agent with scripted caller scores 0, not 1',
        ],
      ],
    ]);
    expect(report.skipped).toEqual([
      {
        parent: 'carrier-pay-split-limit-1',
        pattern: 'value_past_threshold',
        reason: 'no agent write governed by a carrier limit',
      },
    ]);
  });

  it('mid_call_change_of_mind: the caller changes the plan at the first confirmation; only the final intent passes', async () => {
    const { task, reason, runtime, base } = await variant('carrier-change-plan-1', 'mid_call_change_of_mind');
    expect(task.id).toBe('carrier-change-plan-1~mid_call_change_of_mind.0');
    expect(reason).toBe(
      'the caller first asks for change_plan with plan_id "PL58", then at the confirmation changes it to "PL18"; only the final intent passes',
    );
    expect(task.user_scenario.change_of_mind).toEqual({
      action_id: 'a4',
      first: { plan_id: 'PL58' },
      say: '等一下，我改主意了，改成套餐PL18吧。',
    });
    const ec = task.evaluation_criteria!;
    expect(ec.actions!.map((a) => [a.name, a.arguments])).toEqual([
      ['find_customer_by_phone', { phone: '13601357924' }],
      ['get_bills', { customer_id: 'C1008' }],
      ['list_plans', {}],
      ['change_plan', { customer_id: 'C1008', plan_id: 'PL18' }],
    ]);
    expect(ec.assertions!.map((a) => [a.id, a.rule, a.check?.kind, a.check?.args])).toEqual([
      ['identify-first', 'R1', 'read_before_write', undefined],
      ['confirm-first', 'R2', 'confirm_before_write', undefined],
      ...base
        .evaluation_criteria!.assertions!.slice(2)
        .map((a) => [a.id, a.rule, a.check?.kind, { ...a.check?.args, plan_id: 'PL18' }]),
      ['final-intent', 'R2', 'tool_not_called', { plan_id: 'PL58' }],
    ]);
    // The changed write's assertion quotes the new plan (PL18, 18 元), not the first (58 元).
    expect(base.evaluation_criteria!.assertions![2]!.text).toBe('为没有逾期账单的客户安排下月生效的 58 元套餐');
    expect(ec.assertions![2]!.text).toBe('为没有逾期账单的客户安排下月生效的 18 元套餐');
    // The reference agent first proposes PL58, hears the change, proposes PL18 and gets a yes.
    const episode = await runEpisode({
      runtime,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 0,
      clock: steppingClock(runtime.domain.now, 1000),
    });
    const callerSaid = episode.turns.filter((t) => t.role === 'user').map((t) => (t as { text: string }).text);
    expect(callerSaid.slice(2, 4)).toEqual(['等一下，我改主意了，改成套餐PL18吧。', '是的，确认。']);
    expect(await rewardOf(runtime, task)).toBe(1);
    expect(await rewardOf(runtime, task, new NoopAgent())).toBe(0);
    // An agent that keeps the first intent (the base's reference, PL58) scores 0 on the variant.
    const stale = { ...task, evaluation_criteria: { ...ec, actions: base.evaluation_criteria!.actions } };
    const kept = await runEpisode({
      runtime,
      task: stale,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 0,
      clock: steppingClock(runtime.domain.now, 1000),
    });
    expect((await evaluate(runtime, task, kept.turns, { termination: kept.termination })).reward).toBe(0);
    // An enum argument changes before any record: the dispute's reason.
    const dispute = await variant('carrier-dispute-recent-1', 'mid_call_change_of_mind');
    expect(dispute.task.user_scenario.change_of_mind).toEqual({
      action_id: 'a4',
      first: { reason: 'not_subscribed' },
      say: '等一下，我改主意了，改成原因未收到服务吧。',
    });
    expect(await rewardOf(dispute.runtime, dispute.task)).toBe(1);
    // Gated: admitted; a task without an agent write is skipped with the reason.
    const { domain } = await carrier();
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base, domain.tasks.find((t) => t.id === 'carrier-bill-inquiry-1')!],
      seed: 0,
      patterns: ['mid_call_change_of_mind'],
    });
    expect(variants.map((v) => v.id)).toEqual(['carrier-change-plan-1~mid_call_change_of_mind.0']);
    expect(report.skipped).toEqual([
      { parent: 'carrier-bill-inquiry-1', pattern: 'mid_call_change_of_mind', reason: 'no agent write to change' },
    ]);
  });

  it('a task without a second fact is skipped; unknown and channel patterns throw', async () => {
    const { domain, runtime } = await carrier();
    const base = domain.tasks.find((t) => t.id === 'carrier-misremember-phone-1')!;
    const opts = { domain, runtime, seed: 0 };
    expect(await applyPattern(base, 'mid_call_change_of_mind', opts)).toEqual({
      skip: 'pay_bill_from_balance fails with every other value of its arguments',
    });
    expect(await applyPattern(base, 'withhold_until_asked_twice', opts)).toEqual({
      skip: 'no needed fact the caller could hold back',
    });
    await expect(applyPattern(base, 'harsher_channel', opts)).rejects.toThrow(/not a task mutator/);
    await expect(applyPattern(base, 'nope', opts)).rejects.toThrow(/unknown hard pattern "nope"/);
  });
});

/** The gate's reasons for every variant of the planted task. */
const WHITELIST_REASONS = [
  'gold write outside the whitelist: customers[C1002].prepaid_balance_fen (update by pay_bill_from_balance at turn 2)',
  'gold write outside the whitelist: payments[P0090] (insert by pay_bill_from_balance at turn 2)',
  'gold write outside the whitelist: bills[B10008].paid_fen (update by pay_bill_from_balance at turn 2)',
  'gold write outside the whitelist: bills[B10008].status (update by pay_bill_from_balance at turn 2)',
  'reference agent with scripted caller scores 0, not 1',
];

describe('hardenTasks: every variant goes through the gate', () => {
  it('admits gated variants, reports rejected ones with the gate reason and skipped patterns', async () => {
    const { domain, runtime } = await carrier();
    // A planted task whose reference writes outside its whitelist (an empty one: no write
    // allowed): every variant inherits the defect and the gate refuses it.
    const broken = structuredClone(domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!);
    broken.id = 'planted-no-whitelist';
    broken.evaluation_criteria!.write_whitelist = [];
    const tasks = [domain.tasks.find((t) => t.id === 'carrier-transfer-human-1')!, broken];
    const { variants, report } = await hardenTasks({
      runtime,
      tasks,
      seed: 3,
      patterns: ['db_contradicts_claim', 'withhold_until_asked_twice', 'near_duplicate_record'],
    });
    expect(variants.map((v) => v.id)).toEqual(['carrier-transfer-human-1~withhold_until_asked_twice.3']);
    expect(report.admitted).toEqual([
      {
        task_id: 'carrier-transfer-human-1~withhold_until_asked_twice.3',
        parent: 'carrier-transfer-human-1',
        pattern: 'withhold_until_asked_twice',
        reason: 'the caller holds back phone until asked a second time',
      },
    ]);
    expect(report.rejected.map((r) => [r.task_id, r.gate_reasons])).toEqual([
      ['planted-no-whitelist~near_duplicate_record.3', WHITELIST_REASONS],
      ['planted-no-whitelist~db_contradicts_claim.3', WHITELIST_REASONS],
      ['planted-no-whitelist~withhold_until_asked_twice.3', WHITELIST_REASONS],
    ]);
    expect(report.skipped).toEqual([]);
    // The bank itself is unchanged.
    expect(runtime.domain.tasks.map((t) => t.id)).not.toContain(variants[0]!.id);
  });
});

describe('a second domain: the same library on tau2-retail (derived bank)', { tags: ['tau2-data'] }, () => {
  it('misremembered_value makes a fact from the lookup and the variant passes the gate; tau2 tasks stay as they are', async () => {
    const domain = await loadTau2Domain('tau2-retail', testData('retail'));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const base = domain.tasks.find((t) => t.id === '0')!;
    const before = structuredClone(base);
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base],
      seed: 0,
      patterns: ['misremembered_value', 'serial_multi_intent'],
      perTask: 2,
    });
    expect(base).toEqual(before);
    expect(report.admitted.map((a) => [a.task_id, a.reason])).toEqual([
      ['0~misremembered_value.0', 'the caller first gives zip as 91122 (digits swapped; the right value is 19122)'],
      ['0~serial_multi_intent.0', 'a second intent after the first is done: get_product_details again and tell 272.33'],
    ]);
    const m = variants[0]!;
    expect(m.user_scenario.facts).toEqual([{ key: 'zip', value: '19122', cues: ['zip'] }]);
    expect(m.user_scenario.misremembers).toEqual([
      {
        fact: 'zip',
        wrong: '91122',
        check_cues: ["can't find", 'cannot find', 'could not find', 'double-check', 'check again'],
      },
    ]);
    const s = variants[1]!;
    expect(s.user_scenario.requests![1]).toBe(
      'One more thing: could you check my account again and tell me where it stands now?',
    );
    expect(s.evaluation_criteria!.reward_basis).toEqual(['DB', 'NL_ASSERTION', 'COMMUNICATE']);
    await runtime.close();
  });

  it('mid_call_change_of_mind cancels another order of the same caller; gated and scored 1 / 0', async () => {
    const domain = await loadTau2Domain('tau2-retail', testData('retail'));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const base = domain.tasks.find((t) => t.id === '31')!;
    const before = structuredClone(base);
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base],
      seed: 0,
      patterns: ['mid_call_change_of_mind'],
    });
    expect(base).toEqual(before);
    expect(report.admitted.map((a) => [a.task_id, a.reason])).toEqual([
      [
        '31~mid_call_change_of_mind.0',
        'the caller first asks for cancel_pending_order with order_id "#W9373487", then at the confirmation changes it to "#W5481803"; only the final intent passes',
      ],
    ]);
    const v = variants[0]!;
    expect(v.user_scenario.change_of_mind?.say).toBe("Wait, I've changed my mind: make it order #W5481803 instead.");
    // Both orders belong to the caller.
    const env = await runtime.open(v);
    const owners = await env.query('SELECT order_id, user_id FROM orders WHERE order_id IN (?, ?) ORDER BY order_id', [
      '#W5481803',
      '#W9373487',
    ] as never);
    await env.close();
    expect(new Set(owners.map((o) => o.user_id)).size).toBe(1);
    expect(await rewardOf(runtime, v)).toBe(1);
    expect(await rewardOf(runtime, v, new NoopAgent())).toBe(0);
    await runtime.close();
  });

  it('mid_call_change_of_mind never moves a write to another caller (task 39: modify_user_address keeps the user)', async () => {
    const domain = await loadTau2Domain('tau2-retail', testData('retail'));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const base = domain.tasks.find((t) => t.id === '39')!;
    const { variants, report } = await hardenTasks({
      runtime,
      tasks: [base],
      seed: 0,
      patterns: ['mid_call_change_of_mind'],
    });
    // The first lookup (zip 85033) fails; the second finds fatima_taylor_3452, the user whose
    // address is modified: that user_id is who the caller is, and the address has no other value.
    expect(variants).toEqual([]);
    expect(report).toEqual({
      seed: 0,
      admitted: [],
      rejected: [],
      skipped: [
        {
          parent: '39',
          pattern: 'mid_call_change_of_mind',
          reason: 'no argument of modify_user_address with another value to change to',
        },
      ],
    });
    await runtime.close();
  });
});
