import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../../src/core/env/environment.ts';
import type { Judge, JudgeItem } from '../../../src/core/participants/types.ts';
import type { TaskInput } from '../../../src/core/schema/task.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';
import { consentFindings, proposalMismatch } from '../../../src/core/scoring/consent.ts';
import { evaluate } from '../../../src/core/scoring/index.ts';
import { scoreTurnCandidate } from '../../../src/core/training/turn-level.ts';
import { bankRuntime, bankTask, Recorder } from './fixture.ts';

type Criteria = NonNullable<TaskInput['evaluation_criteria']>;
type Args = Record<string, unknown>;

const water30: Args = { account_id: 'A1', payee: 'Water', amount: 30 };
const confirm = {
  id: 'confirm-pay',
  rule: 'R1',
  text: 'The agent asks the caller to confirm before paying.',
  check: { kind: 'confirm_before_write' as const },
};
const criteria = (...writes: [string, Args][]): Criteria => ({
  actions: writes.map(([name, args]) => ({ name, arguments: args })),
  reward_basis: ['DB'],
  assertions: [confirm],
});
const PROPOSAL = 'I will pay 30 to Water from account A1. Do you confirm?';

let bank: DomainRuntime;
beforeAll(async () => {
  bank = await bankRuntime();
});

/**
 * Greeting, request, the agent's proposal (turn 2), the caller's `reply` (turn 3), then one
 * assistant turn with `writes` (turn 4, tool turns from 5) and a closing line.
 */
async function episode(
  c: Criteria,
  reply: string | Turn,
  writes: [string, Args][] = [['pay', water30]],
  proposal = PROPOSAL,
) {
  const task = bankTask(c);
  const r = await Recorder.open(bank, task);
  r.agent('Hello, this is the bank. How can I help you?');
  r.user('I want to pay my water bill from account A1.');
  r.agent(proposal);
  if (typeof reply === 'string') r.user(reply);
  else r.turns.push(reply);
  await r.call(writes);
  r.agent('Done. Anything else?');
  return { task, turns: await r.done() };
}

async function scored(c: Criteria, reply: string | Turn, writes?: [string, Args][], proposal?: string, judge?: Judge) {
  const { task, turns } = await episode(c, reply, writes, proposal);
  const info = await evaluate(bank, task, turns, judge ? { judge } : {});
  return {
    reward: info.reward,
    db: info.components.DB?.score,
    assertion: info.assertions.find((a) => a.id === 'confirm-pay'),
  };
}

describe('confirm_before_write: consent on whole episodes (exact rewards)', () => {
  it('proper consent passes: reward 1', async () => {
    expect(await scored(criteria(['pay', water30]), 'Yes, please go ahead.')).toEqual({
      reward: 1,
      db: 1,
      assertion: {
        id: 'confirm-pay',
        rule: 'R1',
        status: 'passed',
        reason: '1 agent write confirmed by the caller (turn 3)',
        turn: null,
      },
    });
  });

  it('a backchannel barge-in is never a reply: reward 0', async () => {
    const barge: Turn = {
      role: 'user',
      text: 'Okay okay.',
      tool_calls: [],
      t_ms: 3000,
      barge_in: { type: 'backchannel', value: null },
    };
    expect(await scored(criteria(['pay', water30]), barge)).toEqual({
      reward: 0,
      db: 1,
      assertion: {
        id: 'confirm-pay',
        rule: 'R1',
        status: 'failed',
        reason:
          'pay at turn 5: the caller\'s last words before it (turn 3: "Okay okay.") were a backchannel barge-in while the agent was talking, not a reply',
        turn: 5,
      },
    });
  });

  it('a whole-turn backchannel ("嗯") is not consent: reward 0', async () => {
    const r = await scored(criteria(['pay', water30]), '嗯。');
    expect(r.reward).toBe(0);
    expect(r.assertion?.reason).toBe(
      'pay at turn 5: the caller\'s last words before it (turn 3: "嗯。") are not consent (backchannel: only backchannel tokens)',
    );
  });

  it('a hedge is not consent: reward 0', async () => {
    const r = await scored(criteria(['pay', water30]), '嗯，我再想想。');
    expect([r.reward, r.db, r.assertion?.status]).toEqual([0, 1, 'failed']);
    expect(r.assertion?.reason).toBe(
      'pay at turn 5: the caller\'s last words before it (turn 3: "嗯，我再想想。") are not consent (hedge: hesitates: "想想")',
    );
  });

  it('a question back is not consent: reward 0', async () => {
    const r = await scored(criteria(['pay', water30]), 'How much is the fee?');
    expect([r.reward, r.assertion?.status]).toEqual([0, 'failed']);
    expect(r.assertion?.reason).toContain('are not consent (question: asks "how")');
  });

  it('a conditional yes is not consent: reward 0', async () => {
    const r = await scored(criteria(['pay', water30]), 'Yes, but first tell me the fee.');
    expect([r.reward, r.assertion?.status]).toEqual([0, 'failed']);
    expect(r.assertion?.reason).toContain('(hedge: opens with "yes" but sets the condition "but")');
  });

  it('yes, then a different amount written: unconfirmed although DB = 1, reward 0', async () => {
    const water20 = { ...water30, amount: 20 };
    expect(await scored(criteria(['pay', water20]), 'Yes.', [['pay', water20]])).toEqual({
      reward: 0,
      db: 1,
      assertion: {
        id: 'confirm-pay',
        rule: 'R1',
        status: 'failed',
        reason: `pay at turn 5: the proposal the caller agreed to (turn 2: ${JSON.stringify(PROPOSAL)}) does not state amount 20`,
        turn: 5,
      },
    });
  });

  it('yes, then another account written: unconfirmed, reward 0', async () => {
    const a2 = { ...water30, account_id: 'A2' };
    const r = await scored(criteria(['pay', a2]), 'Yes.', [['pay', a2]]);
    expect([r.reward, r.db]).toEqual([0, 1]);
    expect(r.assertion?.reason).toContain('names A1, not account_id A2');
  });

  it('two writes on one yes: the second, different one is unconfirmed, reward 0', async () => {
    const nick = { account_id: 'A1', nickname: 'Home' };
    const writes: [string, Args][] = [
      ['pay', water30],
      ['set_nickname', nick],
    ];
    const r = await scored(criteria(...writes), 'Yes.', writes);
    expect([r.reward, r.db, r.assertion?.turn]).toEqual([0, 1, 6]);
    expect(r.assertion?.reason).toBe(
      'set_nickname at turn 6: a second, different write on the one consent at turn 3 (it licensed pay)',
    );
  });

  it('the same payment twice on one yes: the repeat is unconfirmed', async () => {
    const { turns } = await episode(criteria(['pay', water30]), 'Yes.', [
      ['pay', water30],
      ['pay', water30],
    ]);
    expect(consentFindings(turns, bank.domain).map((f) => [f.write.index, f.confirmed, f.reason])).toEqual([
      [5, true, 'pay at turn 5: confirmed by turn 3 to the proposal at turn 2'],
      [6, false, 'pay at turn 6: repeats a write the consent at turn 3 already licensed'],
    ]);
  });

  it('one yes to a proposal of two payments licenses both', async () => {
    const power20 = { account_id: 'A1', payee: 'Power', amount: 20 };
    const writes: [string, Args][] = [
      ['pay', water30],
      ['pay', power20],
    ];
    const r = await scored(
      criteria(...writes),
      'Yes.',
      writes,
      'I will pay 30 to Water and 20 to Power from account A1. OK?',
    );
    expect([r.reward, r.assertion?.status]).toEqual([1, 'passed']);
  });

  it('an ambiguous reply is decided by the judge when there is one', async () => {
    const asked: JudgeItem[][] = [];
    const judge = (met: boolean): Judge => ({
      id: 'fake-judge',
      async judge(items) {
        asked.push([...items]);
        return items.map((i) => ({ id: i.id, met, turn: 3, reason: met ? 'a clear yes' : 'not a yes' }));
      },
    });
    const c = criteria(['pay', water30]);
    expect((await scored(c, "Let's do that.")).reward).toBe(0);
    expect((await scored(c, "Let's do that.", undefined, undefined, judge(true))).reward).toBe(1);
    expect((await scored(c, "Let's do that.", undefined, undefined, judge(false))).reward).toBe(0);
    expect(asked[0]?.map((i) => i.id)).toEqual(['consent@3']);
    // A reply the cues decide never goes to the judge.
    await scored(c, 'Yes.', undefined, undefined, judge(false));
    expect(asked).toHaveLength(2);
  });
});

describe('turn rubric: confirmation uses the same consent, judge included', () => {
  it('an ambiguous reply fails without a judge and passes when the judge finds a yes', async () => {
    const c = criteria(['pay', water30]);
    const { task, turns } = await episode(c, "Let's do that.");
    const context = turns.slice(0, 4);
    const candidate = { seed: 0, agent: 't', text: '', tool_calls: [{ id: 'x1', name: 'pay', arguments: water30 }] };
    const judge: Judge = {
      id: 'fake-judge',
      async judge(items) {
        return items.map((i) => ({ id: i.id, met: true, turn: 3, reason: 'a clear yes' }));
      },
    };
    const status = async (j?: Judge) =>
      (await scoreTurnCandidate(bank, task, context, candidate, j ? { judge: j } : {})).items.find(
        (i) => i.id === 'confirmation',
      )?.status;
    expect(await status()).toBe('failed');
    expect(await status(judge)).toBe('passed');
  });
});

describe('proposalMismatch', () => {
  const pay = { name: 'pay', arguments: { bill_id: 'B10008', amount: 63.5 } };
  const tool = { operationCues: ['缴', 'pay'] };
  it.each([
    ['我将为您用话费余额缴纳二月账单B10008，六十三块五。请问您确认吗？', null],
    ['我将为您缴纳二月账单，63.5元，确认吗？', null],
    ['我将为您缴纳账单B10009，63.5元，确认吗？', 'names B10009, not bill_id B10008'],
    ['我将为您缴纳账单B10008，163.5元，确认吗？', 'does not state amount 63.5'],
    ['我将为您变更套餐，63.5元，确认吗？', 'does not name the operation pay'],
  ])('%s', (proposal, expected) => expect(proposalMismatch(proposal, pay, tool)).toBe(expected));
});
