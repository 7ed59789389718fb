import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../../src/core/env/environment.ts';
import { InfrastructureError, type Judge, type JudgeItem } from '../../../src/core/participants/types.ts';
import type { TaskInput } from '../../../src/core/schema/task.ts';
import { evaluate, isSuccess, replayGold, rewardBasis } from '../../../src/core/scoring/index.ts';
import { bankRuntime, bankTask, Recorder } from './fixture.ts';

type Criteria = NonNullable<TaskInput['evaluation_criteria']>;

const payWater30 = { name: 'pay', arguments: { account_id: 'A1', payee: 'Water', amount: 30 } };
const confirmPay = {
  id: 'confirm-pay',
  rule: 'R1',
  text: 'The agent asks the caller to confirm before paying.',
  check: { kind: 'confirm_before_write' as const, tool: 'pay' },
};
const R2_PASSED = {
  id: 'rule:R2',
  rule: 'R2',
  status: 'passed',
  reason: 'no violation after any agent write',
  turn: null,
};
const R2_SKIPPED = { id: 'rule:R2', rule: 'R2', status: 'skipped', reason: 'no agent write', turn: null };

let bank: DomainRuntime;
beforeAll(async () => {
  bank = await bankRuntime();
});

/** The confirmed payment of 30 to Water: a correct episode. Turns 0–6 (the write at turn 5). */
async function confirmedPayment(runtime: DomainRuntime, criteria: Criteria) {
  const r = await Recorder.open(runtime, bankTask(criteria));
  r.agent('Hello, this is the bank. How can I help you?');
  r.user('I want to pay my water bill of 30 from account A1.');
  r.agent('I will pay 30 to Water from account A1. Do you confirm?');
  r.user('Yes, please go ahead.');
  await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
  r.agent('Done, 30 has been paid to Water. Your balance is 70.');
  return r;
}

describe('DB', () => {
  const criteria: Criteria = {
    actions: [
      { name: 'pay', arguments: { account_id: 'A1', payee: 'Water', amount: 10 } },
      { name: 'pay', arguments: { account_id: 'A1', payee: 'Power', amount: 20 } },
    ],
    reward_basis: ['DB'],
    vetoes: false,
  };

  async function oppositeOrder(runtime: DomainRuntime) {
    const r = await Recorder.open(runtime, bankTask(criteria));
    r.agent('Hello, how can I help?');
    await r.call([['pay', { account_id: 'A1', payee: 'Power', amount: 20 }]]);
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 10 }]]);
    r.agent('Both bills are paid.');
    return r.done();
  }

  it('the same two payments in the opposite order are equal in an unordered table', async () => {
    const info = await evaluate(bank, bankTask(criteria), await oppositeOrder(bank));
    expect(info.basis).toEqual(['DB', 'ASSERTIONS']);
    expect(info.components.DB).toEqual({ score: 1, details: [], judged: true });
    expect(info.reward).toBe(1);
    expect(info.partial).toBe(false);
  });

  it('…and differ when the payments table is not declared unordered', async () => {
    const ordered = await bankRuntime({});
    const info = await evaluate(ordered, bankTask(criteria), await oppositeOrder(ordered));
    expect(info.components.DB).toEqual({
      score: 0,
      judged: true,
      details: [
        'payments[1].payee: expected "Water", got "Power"',
        'payments[1].amount: expected 10, got 20',
        'payments[2].payee: expected "Power", got "Water"',
        'payments[2].amount: expected 20, got 10',
      ],
    });
    expect(info.reward).toBe(0);
  });

  it('reports a missing write with the readable diff', async () => {
    const task = bankTask({ actions: [payWater30], reward_basis: ['DB'] });
    const r = await Recorder.open(bank, task);
    r.agent('Hello, how can I help?').user('Pay 30 to Water from A1.').agent('Sorry, I cannot do that.');
    const info = await evaluate(bank, task, await r.done());
    expect(info.components.DB).toEqual({
      score: 0,
      judged: true,
      details: [
        'accounts[A1].balance: expected 70, got 100',
        'payments: missing row {"account_id":"A1","amount":30,"payee":"Water"}',
      ],
    });
    expect(info.reward).toBe(0);
  });

  it('uses a precomputed gold replay when given', async () => {
    const criteria: Criteria = { actions: [payWater30], reward_basis: ['DB'] };
    const task = bankTask(criteria);
    const gold = await replayGold(bank, task);
    expect(gold.errors).toEqual([]);
    expect(gold.violations).toEqual([]);
    expect(gold.writes.map((w) => `${w.table}.${w.column}:${w.op}`)).toEqual([
      'payments.id:insert',
      'payments.account_id:insert',
      'payments.payee:insert',
      'payments.amount:insert',
      'accounts.balance:update',
    ]);
    const turns = await (await confirmedPayment(bank, criteria)).done();
    expect((await evaluate(bank, task, turns, { gold })).components.DB?.score).toBe(1);
    // The gold state travels as the rows the reference wrote, before and after.
    const a1 = gold.changes.rows.accounts!['["A1"]']!;
    expect(a1).toEqual({
      key: ['A1'],
      before: { id: 'A1', owner: 'Li', balance: 100, nickname: null },
      after: { id: 'A1', owner: 'Li', balance: 70, nickname: null },
    });
    const forgedAccounts = {
      '["A1"]': { ...a1, after: { ...a1.after!, balance: 1 } },
      '["A2"]': {
        key: ['A2'],
        before: { id: 'A2', owner: 'Wang', balance: 50, nickname: null },
        after: { id: 'A2', owner: 'Wang', balance: 1, nickname: null },
      },
    };
    const forged = { ...gold, changes: { ...gold.changes, rows: { ...gold.changes.rows, accounts: forgedAccounts } } };
    expect((await evaluate(bank, task, turns, { gold: forged })).components.DB).toEqual({
      score: 0,
      judged: true,
      details: ['accounts[A1].balance: expected 1, got 70', 'accounts[A2].balance: expected 1, got 50'],
    });
    // A gold replay of another task is refused rather than compared.
    await expect(evaluate(bank, task, turns, { gold: { ...gold, task_id: 'other' } })).rejects.toThrow(
      /gold replay of task other, not of t1/,
    );
  });

  it('replays the trajectory instead of trusting recorded outcomes', async () => {
    const task = bankTask({ actions: [payWater30], reward_basis: ['DB'] });
    const turns = await (await confirmedPayment(bank, { actions: [payWater30] })).done();
    // A tampered recording that claims the payment failed and wrote nothing still scores by what the call does.
    const tampered = turns.map((t) =>
      t.role === 'tool' ? { ...t, error: true, content: 'Error: nope', writes: [] } : t,
    );
    const info = await evaluate(bank, task, tampered);
    expect(info.components.DB?.score).toBe(1);
    expect(info.step_rewards[2]).toBeCloseTo(0.1, 10); // the replayed call succeeded
  });
});

describe('ASSERTIONS: confirm_before_write', () => {
  const criteria: Criteria = { actions: [payWater30], reward_basis: ['DB'], assertions: [confirmPay] };

  it('an agent that writes first and asks "confirm?" afterwards fails although DB = 1', async () => {
    const task = bankTask(criteria);
    const r = await Recorder.open(bank, task);
    r.agent('Hello, this is the bank. How can I help you?');
    r.user('Please pay 30 to Water from account A1.');
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
    r.agent('I have paid 30 to Water. Can you confirm?');
    r.user('Yes.');
    r.agent('Thank you, goodbye.');
    const info = await evaluate(bank, task, await r.done());
    expect(info.basis).toEqual(['DB', 'QUALITY', 'ASSERTIONS']);
    expect(info.components.DB?.score).toBe(1);
    expect(info.components.QUALITY?.score).toBe(1);
    const failed = {
      id: 'confirm-pay',
      rule: 'R1',
      status: 'failed',
      reason:
        'pay at turn 3: the caller\'s last words before it (turn 1: "Please pay 30 to Water from account A1.") are not consent (other: ambiguous, no judge)',
      turn: 3,
    };
    expect(info.assertions).toEqual([failed, R2_PASSED]);
    expect(info.components.ASSERTIONS).toEqual({
      score: 0,
      judged: true,
      details: [`confirm-pay (R1) failed at turn 3: ${failed.reason}`],
    });
    expect(info.reward).toBe(0);
  });

  it('passes when the agent asks first and the caller agrees', async () => {
    const info = await evaluate(bank, bankTask(criteria), await (await confirmedPayment(bank, criteria)).done());
    expect(info.assertions).toEqual([
      {
        id: 'confirm-pay',
        rule: 'R1',
        status: 'passed',
        reason: '1 pay write confirmed by the caller (turn 3)',
        turn: null,
      },
      R2_PASSED,
    ]);
    expect(info.reward).toBe(1);
    expect(isSuccess(info)).toBe(true);
  });

  it('one confirmation licenses one write turn only', async () => {
    const task = bankTask({
      ...criteria,
      actions: [payWater30, { ...payWater30, arguments: { ...payWater30.arguments, amount: 10 } }],
    });
    const r = await confirmedPayment(bank, criteria);
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 10 }]]); // turns 7, 8
    const info = await evaluate(bank, task, await r.done());
    expect(info.components.DB?.score).toBe(1);
    expect(info.assertions[0]).toEqual({
      id: 'confirm-pay',
      rule: 'R1',
      status: 'failed',
      reason: 'pay at turn 8: the consent at turn 3 was already used by the writes of turn 4',
      turn: 8,
    });
    expect(info.reward).toBe(0);
  });

  it('a refusal is not a confirmation', async () => {
    const task = bankTask(criteria);
    const r = await Recorder.open(bank, task);
    r.agent('I will pay 30 to Water from account A1. Do you confirm?');
    r.user('No, please do not do that.');
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
    const info = await evaluate(bank, task, await r.done());
    expect(info.assertions[0]?.status).toBe('failed');
    expect(info.assertions[0]?.turn).toBe(3);
  });

  it('is skipped, not failed, when the agent never writes', async () => {
    const task = bankTask({
      actions: [],
      reward_basis: ['DB'],
      assertions: [
        confirmPay,
        { ...confirmPay, id: 'look-first', rule: 'R3', check: { kind: 'read_before_write', tool: 'get_account' } },
      ],
    });
    const r = await Recorder.open(bank, task);
    r.agent('Hello, how can I help?');
    r.user('What is my balance on A1?');
    await r.call([['get_account', { account_id: 'A1' }]]);
    r.agent('Your balance is 100.');
    const info = await evaluate(bank, task, await r.done());
    expect(info.assertions).toEqual([
      { id: 'confirm-pay', rule: 'R1', status: 'skipped', reason: 'no pay write', turn: null },
      { id: 'look-first', rule: 'R3', status: 'skipped', reason: 'no agent write', turn: null },
      R2_SKIPPED,
    ]);
    expect(info.components.ASSERTIONS).toEqual({ score: 1, judged: true, details: [] });
    expect(info.reward).toBe(1);
  });
});

describe('ASSERTIONS: other checks and rules', () => {
  const checks = [
    {
      id: 'looked-up',
      rule: 'R3',
      text: 'looks the account up',
      check: { kind: 'tool_called' as const, tool: 'get_account', args: { account_id: 'A1' } },
    },
    {
      id: 'no-nick',
      rule: 'R3',
      text: 'no nickname change',
      check: { kind: 'tool_not_called' as const, tool: 'set_nickname' },
    },
    {
      id: 'read-first',
      rule: 'R3',
      text: 'reads before writing',
      check: { kind: 'read_before_write' as const, tool: 'get_account' },
    },
  ];

  it('tool_called, tool_not_called and read_before_write pass on a careful agent', async () => {
    const task = bankTask({ actions: [payWater30], reward_basis: ['DB'], assertions: checks });
    const r = await Recorder.open(bank, task);
    r.agent('Hello, how can I help?');
    await r.call([['get_account', { account_id: 'A1' }]]);
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
    r.agent('Paid.');
    const info = await evaluate(bank, task, await r.done());
    expect(info.assertions).toEqual([
      {
        id: 'looked-up',
        rule: 'R3',
        status: 'passed',
        reason: 'get_account({"account_id":"A1"}) called at turn 2',
        turn: 2,
      },
      {
        id: 'no-nick',
        rule: 'R3',
        status: 'passed',
        reason: 'no successful call matching set_nickname({})',
        turn: null,
      },
      {
        id: 'read-first',
        rule: 'R3',
        status: 'passed',
        reason: 'get_account({}) at turn 2 before the first write (pay at turn 4)',
        turn: 2,
      },
      R2_PASSED,
    ]);
    expect(info.reward).toBe(1);
  });

  it('…and fail on a careless one; a broken rule is a failed verdict naming the turn', async () => {
    const task = bankTask({ actions: [], reward_basis: ['DB'], assertions: checks });
    const r = await Recorder.open(bank, task);
    r.agent('Hello, how can I help?');
    await r.call([
      ['get_account', { account_id: 'A2' }],
      ['pay', { account_id: 'A1', payee: 'Water', amount: 90 }],
    ]);
    await r.call([['set_nickname', { account_id: 'A1', nickname: 'main' }]]);
    const info = await evaluate(bank, task, await r.done());
    expect(info.assertions).toEqual([
      {
        id: 'looked-up',
        rule: 'R3',
        status: 'failed',
        reason: 'no successful call matching get_account({"account_id":"A1"})',
        turn: null,
      },
      { id: 'no-nick', rule: 'R3', status: 'failed', reason: 'set_nickname({}) called at turn 5', turn: 5 },
      // Issued in the same turn as the write: its result was not in before the write.
      {
        id: 'read-first',
        rule: 'R3',
        status: 'failed',
        reason: 'no successful call matching get_account({}) before the first write (pay at turn 3)',
        turn: 3,
      },
      {
        id: 'rule:R2',
        rule: 'R2',
        status: 'failed',
        reason: 'payment of 90 exceeds the limit of 80 (pay at turn 3)',
        turn: 3,
      },
    ]);
    expect(info.components.ASSERTIONS?.score).toBe(0);
    expect(info.components.ASSERTIONS?.details).toHaveLength(4);
    expect(info.reward).toBe(0);
  });

  it('counts rule checks even when the task has no assertions', async () => {
    expect(rewardBasis(bankTask({ reward_basis: ['DB'] }), true)).toEqual(['DB', 'QUALITY', 'ASSERTIONS']);
    expect(rewardBasis(bankTask({ reward_basis: ['DB'] }), false)).toEqual(['DB', 'QUALITY']);
    expect(rewardBasis(bankTask({ reward_basis: ['DB'], vetoes: false, write_whitelist: [] }), false)).toEqual(['DB']);
    expect(rewardBasis(bankTask({ reward_basis: ['DB', 'QUALITY'], write_whitelist: [] }), false)).toEqual([
      'DB',
      'QUALITY',
      'WRITE_WHITELIST',
    ]);
    // Imported task banks (tau2-bench) keep their own basis unless the task asks for vetoes.
    expect(rewardBasis(bankTask({ reward_basis: ['DB'], write_whitelist: [] }), false, 'imported')).toEqual(['DB']);
    expect(rewardBasis(bankTask({ reward_basis: ['DB'], vetoes: true }), false, 'imported')).toEqual(['DB', 'QUALITY']);
  });
});

describe('QUALITY', () => {
  it('a markdown reply trips formatting, naming the turn, and vetoes the reward', async () => {
    const criteria: Criteria = { actions: [payWater30], reward_basis: ['DB'] };
    const r = await confirmedPayment(bank, criteria);
    r.user('How much was it?');
    r.agent('Refund is **$42.10**:\n- item A\n- item B'); // turn 8
    const info = await evaluate(bank, bankTask(criteria), await r.done());
    expect(info.components.DB?.score).toBe(1);
    expect(info.components.QUALITY).toEqual({
      score: 0,
      judged: true,
      details: ['turn 8: formatting (bold/italic, bullet list)'],
    });
    expect(info.reward).toBe(0);
  });

  it('is not in the basis when vetoes are off', async () => {
    const criteria: Criteria = { actions: [payWater30], reward_basis: ['DB'], vetoes: false };
    const r = await confirmedPayment(bank, criteria);
    r.agent('# Done');
    const info = await evaluate(bank, bankTask(criteria), await r.done());
    expect(info.basis).toEqual(['DB', 'ASSERTIONS']);
    expect(info.components.QUALITY?.score).toBe(0);
    expect(info.reward).toBe(1);
  });
});

describe('WRITE_WHITELIST', () => {
  const whitelist = [
    { table: 'payments', ops: ['insert' as const] },
    { table: 'accounts', ops: ['update' as const], columns: ['balance'], where: { id: 'A1' } },
  ];

  it('lists every offending agent write; caller writes are not checked', async () => {
    const task = bankTask({ actions: [payWater30], reward_basis: ['DB'], write_whitelist: whitelist });
    const r = await confirmedPayment(bank, { actions: [payWater30] }); // allowed: payment + A1 balance
    await r.call([['top_up', { account_id: 'A2', amount: 5 }]], '', 'user'); // turns 7, 8: the caller's own
    await r.call([['set_nickname', { account_id: 'A1', nickname: 'main' }]]); // turns 9, 10
    await r.call([['pay', { account_id: 'A2', payee: 'Gas', amount: 5 }]]); // turns 11, 12
    const info = await evaluate(bank, task, await r.done());
    expect(info.basis).toEqual(['DB', 'WRITE_WHITELIST', 'QUALITY', 'ASSERTIONS']);
    expect(info.components.WRITE_WHITELIST).toEqual({
      score: 0,
      judged: true,
      details: [
        'write not allowed: accounts[A1].nickname (update by set_nickname at turn 10)',
        'write not allowed: accounts[A2].balance (update by pay at turn 12)',
      ],
    });
    expect(info.reward).toBe(0);
  });

  it('passes allowed writes; an empty whitelist allows none; an absent one is skipped', async () => {
    const allowed = await evaluate(
      bank,
      bankTask({ actions: [payWater30], write_whitelist: whitelist }),
      await (await confirmedPayment(bank, {})).done(),
    );
    expect(allowed.components.WRITE_WHITELIST).toEqual({ score: 1, judged: true, details: [] });
    const none = await evaluate(
      bank,
      bankTask({ actions: [payWater30], write_whitelist: [] }),
      await (await confirmedPayment(bank, {})).done(),
    );
    expect(none.components.WRITE_WHITELIST?.details).toEqual([
      'write not allowed: payments[1] (insert by pay at turn 5)',
      'write not allowed: accounts[A1].balance (update by pay at turn 5)',
    ]);
    const absent = await evaluate(
      bank,
      bankTask({ actions: [payWater30] }),
      await (await confirmedPayment(bank, {})).done(),
    );
    expect(absent.components.WRITE_WHITELIST).toBeUndefined();
    expect(absent.basis).not.toContain('WRITE_WHITELIST');
  });
});

describe('COMMUNICATE, ENV_ASSERTION, ACTION', () => {
  it('COMMUNICATE ignores case and commas (ASCII and full-width) on both sides', async () => {
    const criteria: Criteria = {
      actions: [payWater30],
      communicate_info: ['1,000.50', '参考号PX-7', 'balance IS 70'],
      reward_basis: ['DB', 'COMMUNICATE'],
    };
    const r = await confirmedPayment(bank, criteria);
    r.agent('您的积分是1000.50，参考号，px-7。');
    const info = await evaluate(bank, bankTask(criteria), await r.done());
    expect(info.components.COMMUNICATE).toEqual({ score: 1, judged: true, details: [] });
    expect(info.reward).toBe(1);

    const missing = await evaluate(bank, bankTask({ ...criteria, communicate_info: ['1,000.50', 'Wang'] }), r.turns);
    expect(missing.components.COMMUNICATE).toEqual({ score: 0, judged: true, details: ['not communicated: "Wang"'] });
    expect(missing.reward).toBe(0);
  });

  it('ENV_ASSERTION runs domain functions on the predicted state', async () => {
    const criteria: Criteria = {
      actions: [payWater30],
      env_assertions: [
        { func_name: 'balance_of', arguments: { account_id: 'A1' }, assert_value: 70 },
        { func_name: 'payment_count', arguments: { account_id: 'A2' }, assert_value: 1, message: 'A2 paid once' },
        { func_name: 'no_such_fn', arguments: {} },
      ],
      reward_basis: ['ENV_ASSERTION'],
    };
    const info = await evaluate(bank, bankTask(criteria), await (await confirmedPayment(bank, criteria)).done());
    expect(info.components.ENV_ASSERTION).toEqual({
      score: 0,
      judged: true,
      details: [
        'payment_count({"account_id":"A2"}): expected 1, got 0 (A2 paid once)',
        'no_such_fn({}): unknown env function "no_such_fn"',
      ],
    });
    expect(info.reward).toBe(0);
  });

  it('ACTION matches on compare_args, all gold arguments when absent', async () => {
    const turns = await (await confirmedPayment(bank, {})).done();
    const loose = {
      name: 'pay',
      arguments: { account_id: 'A1', payee: 'Water Co', amount: 30 },
      compare_args: ['account_id', 'amount'],
    };
    const strict = { name: 'pay', arguments: { account_id: 'A1', payee: 'Water Co', amount: 30 } };
    const userSide = { name: 'top_up', requestor: 'user' as const, arguments: { account_id: 'A1', amount: 1 } };
    const ok = await evaluate(bank, bankTask({ actions: [loose, userSide], reward_basis: ['ACTION'] }), turns);
    expect(ok.components.ACTION).toEqual({ score: 1, judged: true, details: [] });
    const bad = await evaluate(bank, bankTask({ actions: [strict], reward_basis: ['ACTION'] }), turns);
    expect(bad.components.ACTION).toEqual({
      score: 0,
      judged: true,
      details: ['no matching call for pay({"account_id":"A1","amount":30,"payee":"Water Co"})'],
    });
  });
});

describe('judge', () => {
  const criteria: Criteria = {
    actions: [payWater30],
    nl_assertions: ['The agent greets the caller.', 'The agent tells the new balance in words.'],
    reward_basis: ['DB', 'NL_ASSERTION'],
    assertions: [confirmPay, { id: 'polite', rule: 'R1', text: 'The agent stays polite.' }],
  };

  /** A judge that answers from a table and records its calls. */
  function scriptedJudge(met: Record<string, boolean>): Judge & { calls: JudgeItem[][] } {
    const calls: JudgeItem[][] = [];
    return {
      id: 'scripted',
      calls,
      async judge(items) {
        calls.push([...items]);
        return items.map((i) => ({
          id: i.id,
          met: met[i.id] ?? true,
          turn: met[i.id] === false ? 7 : null,
          reason: `scripted: ${i.id}`,
        }));
      },
    };
  }

  it('without a judge the reward is partial, over the other components, and not a success', async () => {
    const info = await evaluate(bank, bankTask(criteria), await (await confirmedPayment(bank, criteria)).done());
    expect(info.components.NL_ASSERTION).toEqual({
      score: null,
      judged: false,
      details: ['not judged: no judge configured'],
    });
    expect(info.assertions[1]).toEqual({
      id: 'polite',
      rule: 'R1',
      status: 'not_judged',
      reason: 'not judged: no judge configured',
      turn: null,
    });
    expect(info.components.ASSERTIONS).toEqual({
      score: null,
      judged: false,
      details: ['polite (R1) not_judged: not judged: no judge configured'],
    });
    expect(info.reward).toBe(1);
    expect(info.partial).toBe(true);
    expect(isSuccess(info)).toBe(false);
  });

  it('a scripted judge decides NL assertions and unchecked assertions in one call', async () => {
    const judge = scriptedJudge({ 'nl:1': false });
    const info = await evaluate(bank, bankTask(criteria), await (await confirmedPayment(bank, criteria)).done(), {
      judge,
    });
    expect(judge.calls).toEqual([
      [
        { id: 'nl:0', text: 'The agent greets the caller.' },
        { id: 'nl:1', text: 'The agent tells the new balance in words.' },
        { id: 'polite', text: 'The agent stays polite.' },
      ],
    ]);
    expect(info.components.NL_ASSERTION).toEqual({
      score: 0,
      judged: true,
      details: ['not met: "The agent tells the new balance in words." (turn 7): scripted: nl:1'],
    });
    expect(info.assertions[1]).toEqual({
      id: 'polite',
      rule: 'R1',
      status: 'passed',
      reason: 'scripted: polite',
      turn: null,
    });
    expect(info.components.ASSERTIONS?.score).toBe(1);
    expect(info.partial).toBe(false);
    expect(info.reward).toBe(0);

    const all = await evaluate(bank, bankTask(criteria), await (await confirmedPayment(bank, criteria)).done(), {
      judge: scriptedJudge({}),
    });
    expect(all.reward).toBe(1);
    expect(isSuccess(all)).toBe(true);
  });

  it('a judge failure propagates (the rollout is invalid, not scored 0)', async () => {
    const turns = await (await confirmedPayment(bank, criteria)).done();
    const down: Judge = {
      id: 'down',
      judge: async () => {
        throw new InfrastructureError('judge endpoint down');
      },
    };
    await expect(evaluate(bank, bankTask(criteria), turns, { judge: down })).rejects.toThrow('judge endpoint down');
    const forgetful: Judge = { id: 'forgetful', judge: async () => [] };
    await expect(evaluate(bank, bankTask(criteria), turns, { judge: forgetful })).rejects.toThrow(InfrastructureError);
  });
});

describe('reward and process reward', () => {
  it('a task without evaluation_criteria scores 1 with an empty basis (tau2-bench)', async () => {
    const task = bankTask(null);
    const r = await Recorder.open(bank, task);
    r.agent('Hello');
    const info = await evaluate(bank, task, await r.done());
    expect(info).toEqual({
      reward: 1,
      partial: false,
      basis: [],
      components: {},
      assertions: [],
      step_rewards: [1],
      returns: [1],
      notes: [],
    });
  });

  it('an episode that hit max_steps or too_many_errors scores 0 whatever its components (tau2-bench)', async () => {
    const task = bankTask(null);
    const r = await Recorder.open(bank, task);
    r.agent('Hello');
    const turns = await r.done();
    const capped = await evaluate(bank, task, turns, { termination: 'max_steps' });
    expect([capped.reward, capped.step_rewards, capped.notes]).toEqual([
      0,
      [0],
      ['episode ended on max_steps: reward 0 (tau2-bench scores only episodes the agent or the caller ended)'],
    ]);
    expect((await evaluate(bank, task, turns, { termination: 'too_many_errors' })).reward).toBe(0);
    expect((await evaluate(bank, task, turns, { termination: 'transfer' })).reward).toBe(1);
  });

  it('step rewards and returns of a scored episode', async () => {
    const criteria: Criteria = { actions: [payWater30], reward_basis: ['DB'] };
    const task = bankTask(criteria);
    const r = await Recorder.open(bank, task);
    r.agent('Hello, this is the bank. How can I help you?'); // step 0
    r.user('Pay 30 to Water from A1, yes I confirm.');
    await r.call([
      ['get_account', { account_id: 'A1' }],
      ['pay', { account_id: 'A1', payee: 'Water', amount: 500 }],
    ]); // step 1: +0.1 −0.1
    await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]); // step 2: +0.1
    r.agent('Done.'); // step 3: + final reward 1
    const info = await evaluate(bank, task, await r.done());
    expect(info.reward).toBe(1);
    expect(info.step_rewards).toHaveLength(4);
    [0, 0, 0.1, 1].forEach((v, i) => expect(info.step_rewards[i]).toBeCloseTo(v, 10));
    [1.068309, 1.0791, 1.09, 1].forEach((v, i) => expect(info.returns[i]).toBeCloseTo(v, 10));

    const shaped = await evaluate(bank, task, r.turns, { process: { success: 0.5, failure: -1, gamma: 0.5 } });
    expect(shaped.step_rewards).toEqual([0, -0.5, 0.5, 1]);
    expect(shaped.returns).toEqual([0, 0, 1, 1]);
  });
});

describe('ASSERTIONS: plain_speech', () => {
  const plain = { id: 'plain', rule: 'R1', text: 'Speaks plainly.', check: { kind: 'plain_speech' as const } };
  const criteria: Criteria = {
    actions: [],
    communicate_info: [],
    reward_basis: ['COMMUNICATE'],
    assertions: [plain],
    vetoes: false,
  };

  it('fails on the first formatted agent turn and passes on plain speech', async () => {
    const task = bankTask(criteria);
    const r = await Recorder.open(bank, task);
    r.agent('Hello, this is the bank.');
    r.user('What do I owe?');
    r.agent('You owe:\n- water 30\n- power 20');
    const info = await evaluate(bank, task, await r.done());
    expect(info.assertions[0]).toEqual({
      id: 'plain',
      rule: 'R1',
      status: 'failed',
      reason: 'turn 2: formatting (bullet list)',
      turn: 2,
    });
    expect(info.reward).toBe(0);

    const ok = await Recorder.open(bank, task);
    ok.agent('Hello, this is the bank.');
    ok.user('What do I owe?');
    ok.agent('You owe thirty for water and twenty for power.');
    const good = await evaluate(bank, task, await ok.done());
    expect(good.assertions[0]).toEqual({
      id: 'plain',
      rule: 'R1',
      status: 'passed',
      reason: 'every agent turn is plain speech',
      turn: null,
    });
    expect(good.reward).toBe(1);
  });
});
