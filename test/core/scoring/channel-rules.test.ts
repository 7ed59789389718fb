import { beforeAll, describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { gateDomain } from '../../../src/core/gate/gate.ts';
import type { Domain } from '../../../src/core/schema/domain.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';
import { evaluate } from '../../../src/core/scoring/evaluate.ts';
import { scoreTurnCandidate } from '../../../src/core/training/turn-level.ts';
import { bankRuntime, bankTask, Recorder } from './fixture.ts';

const FULL = 'I want to pay my water bill of thirty from account A1.';
const HEARD = 'I want to pay my water bill of thirty from acc';
const GOOD = "Sorry, I heard 'water bill of thirty from', could you say the rest again?";
const BAD = 'Let me start over. Please tell me everything from the beginning: your name, account and the bill.';

const task = bankTask({
  actions: [{ name: 'pay', arguments: { account_id: 'A1', payee: 'Water', amount: 30 } }],
  reward_basis: ['DB'],
  assertions: [{ id: 'confirm-pay', rule: 'R1', text: 'confirm first', check: { kind: 'confirm_before_write' } }],
});

let plain: Domain;
beforeAll(async () => {
  plain = (await bankRuntime()).domain;
});

/** The bank domain with channel rules (R4 dropout, R5 barge-in added to its policy), native or imported. */
async function runtimeWith(origin: 'native' | 'imported', channelRules = { dropout: 'R4', bargeIn: 'R5' }) {
  const rules = [
    ...plain.rules,
    { id: 'R4', text: 'After a dropout, repeat what was heard and ask for the rest.' },
    { id: 'R5', text: 'After a barge-in, answer the interruption.' },
  ];
  return DomainRuntime.create({ ...plain, rules, channelRules, taskOrigin: origin } as Domain, await sqlJsFactory());
}

const dropoutTurn = (t_ms: number): Turn => ({
  role: 'user',
  text: HEARD,
  tool_calls: [],
  t_ms,
  dropout: { full_text: FULL, cut_char: HEARD.length, mode: 'mid_word', cut_ms: null },
});

/** A confirmed payment whose first caller turn (turn 1) was cut off; the agent's reaction is turn 2. */
async function call(rt: DomainRuntime, reaction: string) {
  const r = await Recorder.open(rt, task);
  r.agent('Hello, this is the bank. How can I help you?');
  r.turns.push(dropoutTurn(1000));
  r.agent(reaction);
  r.user('From account A1.');
  r.agent('I will pay 30 to Water from account A1. Do you confirm?');
  r.user('Yes, please go ahead.');
  await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
  r.agent('Done.');
  return r.done();
}

describe('channel reactions: assertions of our own domains, reported beside for imported tasks', () => {
  it('our domain: a good reaction to a dropout passes R4, reward 1', async () => {
    const rt = await runtimeWith('native');
    const info = await evaluate(rt, task, await call(rt, GOOD));
    expect(info.reward).toBe(1);
    expect(info.assertions.find((a) => a.id === 'channel:dropout@1')).toEqual({
      id: 'channel:dropout@1',
      rule: 'R4',
      status: 'passed',
      reason: `short follow-up ${JSON.stringify(`${GOOD.slice(0, 50)}…`)} keeps "from" and asks for the rest`,
      turn: 2,
    });
  });

  it('our domain: starting the form over fails R4 and the reward is 0', async () => {
    const rt = await runtimeWith('native');
    const info = await evaluate(rt, task, await call(rt, BAD));
    expect([info.reward, info.components.DB?.score, info.components.ASSERTIONS?.score]).toEqual([0, 1, 0]);
    expect(info.components.ASSERTIONS?.details).toEqual([
      `channel:dropout@1 (R4) failed at turn 2: reply ${JSON.stringify(`${BAD.slice(0, 50)}…`)}: does not ask for the rest; starts the form over`,
    ]);
  });

  it('imported tasks: the same failure is reported beside the reward (rule "channel"), which stays 1', async () => {
    const rt = await runtimeWith('imported');
    const info = await evaluate(rt, task, await call(rt, BAD));
    expect([info.reward, info.components.ASSERTIONS?.score]).toEqual([1, 1]);
    expect(info.assertions.find((a) => a.id === 'channel:dropout@1')?.rule).toBe('channel');
    expect(info.assertions.find((a) => a.id === 'channel:dropout@1')?.status).toBe('failed');
  });

  it('a domain without channel rules keeps them beside the reward', async () => {
    const rt = await DomainRuntime.create(plain, await sqlJsFactory());
    const info = await evaluate(rt, task, await call(rt, BAD));
    expect(info.reward).toBe(1);
  });

  it('turn rubric: channel_reaction judges the candidate that answers the dropout', async () => {
    const rt = await runtimeWith('native');
    const context = (await call(rt, GOOD)).slice(0, 2);
    const score = async (text: string) =>
      (await scoreTurnCandidate(rt, task, context, { seed: 0, agent: 't', text, tool_calls: [] })).items.find(
        (i) => i.id === 'channel_reaction',
      );
    expect(await score(GOOD)).toMatchObject({ status: 'passed', veto: false });
    expect(await score(BAD)).toMatchObject({
      status: 'failed',
      reason: `R4: reply ${JSON.stringify(`${BAD.slice(0, 50)}…`)}: does not ask for the rest; starts the form over`,
    });
    const plainRt = await DomainRuntime.create(plain, await sqlJsFactory());
    expect(
      (await scoreTurnCandidate(plainRt, task, context, { seed: 0, agent: 't', text: BAD, tool_calls: [] })).items.find(
        (i) => i.id === 'channel_reaction',
      )?.status,
    ).toBe('not_applicable');
  });

  it('the gate counts channel rules as citations and refuses unknown ones', async () => {
    const ok = await gateDomain(await runtimeWith('native'));
    // The bank has no tasks here, so R1–R3 are uncited; R4 and R5 are cited by the channel rules.
    expect(ok.domain_problems).toEqual([
      'policy rule R1 is cited by no assertion',
      'policy rule R2 is cited by no assertion',
      'policy rule R3 is cited by no assertion',
    ]);
    const bad = await gateDomain(await runtimeWith('native', { dropout: 'R9', bargeIn: 'R5' }));
    expect(bad.domain_problems).toContain('channel rule dropout cites unknown rule R9');
  });
});
