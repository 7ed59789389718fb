/**
 * The attribution checks of issue 16 beyond the gate and the reference: ambiguous communicate
 * items (two readings of the task text), a model caller's inventions and early hang-ups, and
 * DB-comparison brittleness under an extra or a removed read.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';
import { attributeTasks, evolve, readVariant } from '../../../src/core/evolution/index.ts';
import { ambiguousCommunicateItems, communicateReadings } from '../../../src/core/gate/index.ts';
import { ModelUser } from '../../../src/core/participants/model-user.ts';
import { ReferenceAgent } from '../../../src/core/participants/scripted.ts';
import type { ModelClient, ModelResponse } from '../../../src/core/ports/model-client.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { buildDomain, defineDomain, defineTool } from '../../../src/core/schema/domain.ts';
import type { Task } from '../../../src/core/schema/task.ts';
import type { Trajectory } from '../../../src/core/schema/trajectory.ts';
import { evaluate } from '../../../src/core/scoring/index.ts';
import {
  MINI_POLICY,
  MINI_SCHEMA,
  MINI_SEED,
  miniDefinition,
  miniDomain,
  payTask,
} from '../../fixtures/mini-domain.ts';
import { conversation, handTrajectory } from '../../fixtures/turns.ts';

async function carrier() {
  const domain = await loadBuiltinDomain('carrier');
  return { domain, runtime: await DomainRuntime.create(domain, await sqlJsFactory()) };
}

function withInstructions(task: Task, id: string, taskInstructions: string): Task {
  const t = structuredClone(task);
  t.id = id;
  if (typeof t.user_scenario.instructions !== 'string')
    t.user_scenario.instructions.task_instructions = taskInstructions;
  return t;
}

describe('ambiguous communicate items (the gate lint)', () => {
  it('gives both readings of the reference reads and flags an item only when the caller text does not say which', async () => {
    const { domain, runtime } = await carrier();
    const pay = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const readings = await communicateReadings(runtime, pay);
    expect(readings.start.get('find_customer_by_phone#0.prepaid_balance')).toBe(100);
    expect(readings.end.get('find_customer_by_phone#0.prepaid_balance')).toBe(36.5);
    expect(readings.start.get('get_bills#1.bills[3].outstanding')).toBe(63.5);
    expect(readings.end.get('get_bills#1.bills[3].outstanding')).toBe(0);
    expect(readings.end.get('get_bills#1.bills[3].amount')).toBe(63.5);
    // "缴完后想知道余额还剩多少": the end reading, named; 63.5 is the bill's amount in both readings.
    expect(await ambiguousCommunicateItems(runtime, pay)).toEqual([]);
    const unsaid = withInstructions(pay, 'pay-unsaid', '客服说明金额并征求同意时，回答同意。想知道话费余额是多少。');
    expect(await ambiguousCommunicateItems(runtime, unsaid)).toEqual([
      {
        index: 1,
        field: 'evaluation_criteria.communicate_info[1]',
        item: '36.5',
        at: 'find_customer_by_phone#0.prepaid_balance',
        reading: 'end',
        start: 100,
        end: 36.5,
        message:
          'communicate item "36.5" is ambiguous: the caller\'s text does not say whether it means find_customer_by_phone#0.prepaid_balance when the call starts (100) or after the reference\'s writes (36.5)',
      },
    ]);
    // An item of the start reading needs a start cue ("缴费之前").
    const before = structuredClone(unsaid);
    before.evaluation_criteria!.communicate_info = ['100'];
    expect((await ambiguousCommunicateItems(runtime, before)).map((a) => [a.item, a.reading])).toEqual([
      ['100', 'start'],
    ]);
    const named = withInstructions(before, 'pay-before', '缴费之前想知道话费余额是多少。');
    named.evaluation_criteria!.communicate_info = ['100'];
    expect(await ambiguousCommunicateItems(runtime, named)).toEqual([]);
    // Every built-in carrier task passes the lint.
    for (const t of domain.tasks) expect(await ambiguousCommunicateItems(runtime, t), t.id).toEqual([]);
  });

  it('reads English cues the same way (mini domain: 20 is the balance after paying 10 off 30)', async () => {
    const domain = miniDomain([
      payTask,
      { ...payTask, id: 'pay-unsaid', user_scenario: { ...payTask.user_scenario, instructions: 'Pay 10 off.' } },
    ]);
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const [sound, unsaid] = domain.tasks;
    expect(await ambiguousCommunicateItems(runtime, sound!)).toEqual([]);
    expect((await ambiguousCommunicateItems(runtime, unsaid!)).map((a) => [a.at, a.start, a.end])).toEqual([
      ['find_account#0.balance', 30, 20],
    ]);
  });
});

/** A model caller whose replies are scripted per rollout seed (fact check off, so inventions get through). */
function scriptedModelCaller(scripts: Record<number, string[]>) {
  return () => {
    let n = 0;
    let script: string[] | undefined;
    const client: ModelClient = {
      id: 'fake:caller',
      kind: 'remote',
      flavor: 'vllm',
      endpoint: null,
      model: 'caller',
      async complete(req): Promise<ModelResponse> {
        script ??= scripts[req.sampling?.seed ?? 0] ?? [];
        return {
          text: script[n++] ?? '###STOP###',
          tool_calls: [],
          tool_call_source: 'none',
          audio: null,
          finish_reason: 'stop',
          model: 'caller',
          token_ids: null,
          prompt_token_ids: null,
          logprobs: null,
          usage: null,
          attempts: 1,
        };
      },
    };
    return new ModelUser(client, { factCheck: false });
  };
}

describe('model caller checks', () => {
  it('finds an invented goal, an invented fact and a hang-up on a pending confirmation, with evidence', async () => {
    const { domain, runtime } = await carrier();
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const { report, trajectories } = await evolve({
      runtime,
      tasks: [task],
      agent: () => new ReferenceAgent(),
      user: scriptedModelCaller({
        // Asks for a plan change its task does not have, then answers the phone question and leaves.
        0: ['你好，我想用话费余额交二月份的账单，顺便把套餐也换了。', '我的手机号是 15867452301。###STOP###'],
        // States a phone number found nowhere, then hangs up on the payment proposal.
        1: ['你好，我想用话费余额把二月份的账单交了。', '我的手机号是 13900000000。', '###STOP###'],
      }),
      k: 2,
      seed: 0,
      concurrency: 1,
      clock: () => steppingClock(domain.now, 1000),
    });
    const round = report.rounds[0]!;
    expect(round.labels.histogram.always_fail).toBe(1);
    const t1 = trajectories[0]!.find((t) => t.seed === 1)!;
    const asked = t1.turns.findLastIndex((t) => t.role === 'assistant' && t.text !== '');
    expect(round.attribution).toEqual([
      {
        task_id: 'carrier-pay-balance-1',
        verdict: 'broken',
        findings: [
          {
            kind: 'caller_invented',
            component: 'caller',
            field: 'user_scenario',
            detail:
              'the caller asks for "套餐" (change_plan), an operation its task does not have (turn 1 of carrier/carrier-pay-balance-1/0/0; 2 of 2 failed rollouts)',
            trajectory_ids: ['carrier/carrier-pay-balance-1/0/0', 'carrier/carrier-pay-balance-1/1/1'],
          },
          {
            kind: 'caller_hung_up_early',
            component: 'caller',
            field: 'user_scenario',
            detail: `the caller hung up after the agent asked at turn ${asked} to confirm pay_bill_from_balance, which the reference still needs (turn ${asked + 1} of carrier/carrier-pay-balance-1/1/1; 1 of 2 failed rollouts)`,
            trajectory_ids: ['carrier/carrier-pay-balance-1/1/1'],
          },
        ],
      },
    ]);
    expect((t1.turns[asked] as { text: string }).text).toMatch(/63\.5/);
    // Rollout 1's invention is the phone number (its first invention; the goal check comes after it).
    const [only1] = await attributeTasks({
      runtime,
      tasks: [task],
      policies: [{ agent: 'reference', trajectories: [t1] }],
      clock: () => steppingClock(domain.now, 1000),
    });
    expect(only1!.findings[0]!.detail).toBe(
      'the caller states "13900000000", in neither its task card, the call so far nor the database (turn 3 of carrier/carrier-pay-balance-1/1/1; 1 of 1 failed rollouts)',
    );
    // The scripted caller is never checked.
    const scripted = { ...t1, participants: { agent: 'reference', user: 'scripted' } } as Trajectory;
    const [none] = await attributeTasks({
      runtime,
      tasks: [task],
      policies: [{ agent: 'reference', trajectories: [scripted] }],
      clock: () => steppingClock(domain.now, 1000),
    });
    expect(none!.findings.filter((f) => f.component === 'caller')).toEqual([]);
  });
});

describe('DB-comparison brittleness', () => {
  /** The mini domain with a lookup that counts itself: a read with a side effect. */
  async function countingDomain() {
    const counting = defineTool({
      name: 'find_account',
      kind: 'read',
      description: 'Find an account by phone number.',
      params: z.object({ phone: z.string() }),
      run: async (ctx, { phone }) => {
        await ctx.db.run('UPDATE accounts SET lookups = lookups + 1 WHERE phone = ?', [phone]);
        return ctx.db.one('SELECT account_id, name, balance FROM accounts WHERE phone = ?', [phone]);
      },
    });
    const def = defineDomain({
      ...miniDefinition,
      tools: [counting, ...miniDefinition.tools.filter((t) => t.name !== 'find_account')],
    });
    const task = structuredClone(payTask);
    task.evaluation_criteria!.write_whitelist![0]!.columns = ['balance', 'lookups'];
    const domain = buildDomain(def, {
      policy: MINI_POLICY,
      schema: MINI_SCHEMA.replace(
        'balance INTEGER NOT NULL);',
        'balance INTEGER NOT NULL, lookups INTEGER NOT NULL DEFAULT 0);',
      ),
      seed: JSON.stringify(MINI_SEED),
      tasks: JSON.stringify([task]),
    });
    return { domain, runtime: await DomainRuntime.create(domain, await sqlJsFactory()) };
  }

  it('a read that writes makes the DB verdict flip with one more or one less read', async () => {
    const { domain, runtime } = await countingDomain();
    const task = domain.tasks[0]!;
    // Right payment, but the remaining balance is never said: DB 1, COMMUNICATE 0.
    const turns = conversation([
      'Hello, how can I help you today?',
      'I would like to pay ten dollars off my balance.',
      { call: 'find_account', args: { phone: '5550001' } },
      'Shall I pay 10 off the balance of account A1?',
      'Yes.',
      { call: 'pay', args: { account_id: 'A1', amount: 10 } },
      'Done.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect([info.reward, info.components.DB?.score, info.components.COMMUNICATE?.score]).toEqual([0, 1, 0]);
    const t = handTrajectory('mini/pay-10/0/0', turns, info);
    const isRead = (name: string) => name === 'find_account';
    const extra = readVariant(turns, 'extra_read', isRead, undefined)!;
    expect(extra.filter((x) => x.role === 'tool').map((x) => (x.role === 'tool' ? x.name : ''))).toEqual([
      'find_account',
      'find_account',
      'pay',
    ]);
    expect(readVariant(turns, 'removed_read', isRead, undefined)!.filter((x) => x.role === 'tool')).toHaveLength(1);
    const [a] = await attributeTasks({
      runtime,
      tasks: [task],
      policies: [{ agent: 'hand', trajectories: [t] }],
      clock: () => steppingClock(domain.now, 1000),
    });
    expect(a!.findings.map((f) => [f.kind, f.component, f.field, f.detail, f.trajectory_ids])).toEqual([
      [
        'db_brittle',
        'DB',
        'extra_read',
        'the DB verdict of mini/pay-10/0/0 flips from 1 to 0 with one more read (1 of 1 failed rollouts)',
        ['mini/pay-10/0/0'],
      ],
      [
        'db_brittle',
        'DB',
        'removed_read',
        'the DB verdict of mini/pay-10/0/0 flips from 1 to 0 with one read removed (1 of 1 failed rollouts)',
        ['mini/pay-10/0/0'],
      ],
    ]);
    // The same rollout on the sound mini domain: no flip, and the task is hard.
    const sound = miniDomain([payTask]);
    const soundRuntime = await DomainRuntime.create(sound, await sqlJsFactory());
    const soundInfo = await evaluate(soundRuntime, sound.tasks[0]!, turns, { termination: 'user_stop' });
    const [hard] = await attributeTasks({
      runtime: soundRuntime,
      tasks: [sound.tasks[0]!],
      policies: [{ agent: 'hand', trajectories: [{ ...t, reward_info: soundInfo }] }],
      clock: () => steppingClock(sound.now, 1000),
    });
    expect(hard).toEqual({ task_id: 'pay-10', verdict: 'hard', findings: [] });
  });
});
