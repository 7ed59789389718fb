import { describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { createRolloutService } from '../../src/adapters/browser/rollout-service.ts';
import { builtinDomainNames } from '../../src/adapters/browser/domains.ts';
import { describeChanges } from '../../src/adapters/browser/live-score.ts';
import type { CallEvent, CallerPrompt, Trajectory } from '../../src/adapters/browser/rollout-types.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { completion, startOpenAiServer, wireToolCall } from '../fixtures/openai-server.ts';

const service = createRolloutService(() => sqlJsFactory());
const CALL = {
  domain: 'carrier',
  taskId: 'carrier-pay-balance-1',
  seed: 0,
  preset: 'clean',
  agent: { kind: 'reference' },
  user: { kind: 'scripted' },
} as const;

describe('rollout service (the page worker, driven in Node)', () => {
  it('lists the built-in domains that have their data files (not the tau2 folders)', () => {
    expect(builtinDomainNames()).toEqual(['carrier', 'debt-negotiation', 'insurance-renewal']);
  });

  it('describes carrier: rules, tools with kinds and params, tables with row counts', async () => {
    const d = await service.describe('carrier');
    expect(d.rules.map((r) => r.id)).toEqual(['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9', 'R10', 'R11']);
    const pay = d.tools.find((t) => t.name === 'pay_bill_from_balance')!;
    expect([pay.kind, pay.side, pay.params.map((p) => `${p.name}: ${p.type}`)]).toEqual([
      'write',
      'agent',
      ['customer_id: string', 'bill_id: string', 'amount: number'],
    ]);
    expect(d.tools.find((t) => t.name === 'pay_bill_with_wallet')?.side).toBe('user');
    expect(d.tables.find((t) => t.name === 'customers')).toEqual({
      name: 'customers',
      columns: ['customer_id', 'name', 'phone', 'plan_id', 'next_plan_id', 'prepaid_balance_fen', 'status'],
      primaryKey: ['customer_id'],
      rows: 30,
    });
    const rows = await service.tableRows('carrier', 'customers', { limit: 2 });
    expect([rows.total, rows.rows.map((r) => r.customer_id)]).toEqual([30, ['C1001', 'C1002']]);
    await expect(service.tableRows('carrier', 'nope')).rejects.toThrow('domain carrier has no table "nope"');
  });

  it('runs a reference call: one event per turn in order, live score, scored end', async () => {
    const events: CallEvent[] = [];
    const t = await service.runCall(CALL, (e) => void events.push(e));
    expect(t.reward_info?.reward).toBe(1);
    expect(events.map((e) => (e.type === 'turn' ? e.index : 'end'))).toEqual([...t.turns.keys(), 'end']);
    const firstCall = events.find((e) => e.type === 'turn' && e.turn.role === 'tool')!;
    expect(firstCall.live.calls).toEqual([
      {
        turn: 5,
        name: 'find_customer_by_phone',
        requestor: 'assistant',
        kind: 'read',
        ok: true,
        process: 0.1,
        whitelist: 'no-writes',
        offending: [],
        writes: 0,
      },
    ]);
    // Before any write the behaviour checks that need one are undecided.
    expect(firstCall.live.assertions.find((a) => a.id === 'confirm-first')?.status).toBe('skipped');
    const end = events.at(-1)!;
    expect(end.live.calls.map((c) => [c.turn, c.name, c.whitelist, c.process])).toEqual([
      [5, 'find_customer_by_phone', 'no-writes', 0.1],
      [7, 'get_bills', 'no-writes', 0.1],
      [11, 'pay_bill_from_balance', 'inside', 0.1],
    ]);
    expect(end.live.processTotal).toBe(0.3);
    expect(end.live.diff).toEqual([
      'customers[C1002].prepaid_balance_fen: 10000 → 3650',
      'payments[P0090]: inserted {"amount_fen":6350,"bill_id":"B10008","customer_id":"C1002","method":"prepaid_balance","paid_at":"2025-03-15T10:00:00+08:00","payment_id":"P0090"}',
      'bills[B10008].paid_fen: 0 → 6350',
      'bills[B10008].status: "unpaid" → "paid"',
    ]);
    expect(end.live.quality).toEqual([]);
  });

  it('replays a seeded scripted call identically (what share links rely on)', async () => {
    const a = await service.runCall(CALL, () => undefined);
    const b = await service.runCall(CALL, () => undefined);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it('takes the caller turns from askCaller and ends on the stop token', async () => {
    const said = ['我想交二月份的话费', '15867452301', '是的，确认。', '没有了，谢谢，再见。###STOP###'];
    const prompts: CallerPrompt[] = [];
    const t = await service.runCall(
      { ...CALL, user: { kind: 'human' } },
      () => undefined,
      async (p) => {
        prompts.push(p);
        return said.shift()!;
      },
    );
    expect(prompts.map((p) => p.agentText)).toEqual([
      '您好，这里是畅联通信客服，请问有什么可以帮您？',
      '请问您的手机号码是多少？',
      '我将为您用话费余额缴纳账单：客户C1002，账单B10008，金额63.5元。请问您确认吗？',
      '跟您说明一下：63.5；36.5。请问还有什么可以帮您？',
    ]);
    expect([t.participants.user, t.termination, t.reward_info?.reward]).toEqual(['human', 'user_stop', 1]);
  });

  it('ends a call invalid when the caller leaves (never scored 0)', async () => {
    const t = await service.runCall(
      { ...CALL, user: { kind: 'human' } },
      () => undefined,
      () => Promise.reject(new Error('call stopped by the user')),
    );
    expect([t.valid, t.termination, t.reward_info]).toEqual([false, 'infrastructure_error', null]);
  });

  it('runs K rollouts of a task through runBatch and reports each trajectory before resolving', async () => {
    const got: Trajectory[] = [];
    const s = await service.runTask(
      {
        domain: 'carrier',
        taskId: 'carrier-pay-balance-1',
        trials: 3,
        seed: 5,
        agent: { kind: 'noop' },
        user: { kind: 'scripted' },
      },
      async (t) => {
        await new Promise((r) => setTimeout(r, 5));
        got.push(t);
      },
    );
    expect(s).toEqual({
      task_id: 'carrier-pay-balance-1',
      rewards: [0, 0, 0],
      invalid: 0,
      mean: 0,
      partial: false,
      pass_hat: { 1: 0, 2: 0, 3: 0 },
      rule_breaks: [0, 0, 0],
    });
    expect(got.map((t) => t.seed)).toEqual([5, 6, 7]);
  });
});

describe('rollout service batches with a model caller', () => {
  it('gives every rollout of a batch its own model caller at the endpoint', async () => {
    // Each rollout's caller opens, then hangs up after the agent's reply: two requests per rollout.
    const server = await startOpenAiServer((body) => {
      const heard = (body.messages as { role: string }[]).filter((m) => m.role === 'user').length;
      return {
        json: completion({
          model: 'u',
          content: heard > 1 ? '好的，谢谢，再见。###STOP###' : '你好，我想用话费余额交二月份的账单。',
        }),
      };
    });
    try {
      const got: Trajectory[] = [];
      const s = await service.runTask(
        {
          domain: 'carrier',
          taskId: 'carrier-pay-balance-1',
          trials: 2,
          seed: 0,
          agent: { kind: 'noop' },
          user: { kind: 'remote', flavor: 'openai', baseURL: server.url, model: 'u', apiKey: 'sk-caller-key' },
        },
        (t) => void got.push(t),
      );
      expect(s.rewards).toEqual([0, 0]);
      expect(server.requests).toHaveLength(4);
      // A fresh caller per rollout: each rollout's first request carries no earlier call.
      expect(server.requests.map((r) => (r.body.messages as unknown[]).length)).toEqual([
        server.requests[0]!.body.messages.length,
        server.requests[1]!.body.messages.length,
        server.requests[0]!.body.messages.length,
        server.requests[1]!.body.messages.length,
      ]);
      expect(got.map((t) => [t.seed, t.participants.user, t.termination, t.turns.length])).toEqual([
        [0, 'openai:u', 'user_stop', 4],
        [1, 'openai:u', 'user_stop', 4],
      ]);
      expect(JSON.stringify(got)).not.toContain('sk-caller-key');
    } finally {
      await server.close();
    }
  });
});

describe('rollout service with a remote agent', () => {
  it('calls the endpoint with the key, runs its tool calls, and records no key', async () => {
    const replies = [
      completion({ model: 'm', content: '您好，请问您的手机号码是多少？' }),
      completion({
        model: 'm',
        content: null,
        tool_calls: [wireToolCall('c1', 'find_customer_by_phone', { phone: '15867452301' })],
      }),
      completion({ model: 'm', content: '查到了，再见。###STOP###' }),
    ];
    const server = await startOpenAiServer((_body, i) => ({ json: replies[Math.min(i, replies.length - 1)] }));
    try {
      const events: CallEvent[] = [];
      const t = await service.runCall(
        {
          ...CALL,
          agent: { kind: 'remote', flavor: 'openai', baseURL: server.url, model: 'm', apiKey: 'sk-test-key' },
        },
        (e) => void events.push(e),
      );
      expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-key');
      expect(t.participants.agent_card).toMatchObject({ kind: 'remote', model: 'm' });
      expect(JSON.stringify(t)).not.toContain('sk-test-key');
      expect(
        t.turns.map((x) => (x.role === 'tool' ? `tool:${x.name}:${x.error ? 'error' : 'ok'}` : `${x.role}:${x.text}`)),
      ).toEqual([
        'assistant:您好，请问您的手机号码是多少？',
        'user:你好，我想用话费余额把二月份的账单交了。',
        'assistant:',
        'tool:find_customer_by_phone:ok',
        'assistant:查到了，再见。',
      ]);
      expect([t.termination, t.reward_info?.reward]).toEqual(['agent_stop', 0]);
      expect(events.at(-1)?.live.calls.map((c) => [c.name, c.process])).toEqual([['find_customer_by_phone', 0.1]]);
    } finally {
      await server.close();
    }
  });
});

describe('rollout service with a remote (model-backed) caller', () => {
  it('asks the endpoint for every caller turn with the key, and records no key', async () => {
    const replies = [
      completion({ model: 'u', content: '你好，我想用话费余额交二月份的账单。' }),
      completion({ model: 'u', content: '好的，谢谢，再见。###STOP###' }),
    ];
    const server = await startOpenAiServer((_body, i) => ({ json: replies[Math.min(i, replies.length - 1)] }));
    try {
      const events: CallEvent[] = [];
      const t = await service.runCall(
        {
          ...CALL,
          agent: { kind: 'noop' },
          user: {
            kind: 'remote',
            flavor: 'openai',
            baseURL: server.url,
            model: 'u',
            apiKey: 'sk-caller-key',
            temperature: 0.3,
          },
        },
        (e) => void events.push(e),
      );
      expect(server.requests).toHaveLength(2);
      expect(server.requests.map((r) => r.headers.authorization)).toEqual([
        'Bearer sk-caller-key',
        'Bearer sk-caller-key',
      ]);
      const first = server.requests[0]!.body;
      expect([first.model, first.temperature, first.messages[0].role]).toEqual(['u', 0.3, 'system']);
      // The caller hears the agent: its second request holds the agent's reply.
      expect(JSON.stringify(server.requests[1]!.body.messages)).toContain('好的，我明白了。');
      expect(t.participants.user).toBe('openai:u');
      expect(t.participants.user_card).toMatchObject({ kind: 'remote', model: 'u' });
      expect(JSON.stringify(t)).not.toContain('sk-caller-key');
      expect(JSON.stringify(events)).not.toContain('sk-caller-key');
      expect(t.turns.map((x) => `${x.role}:${x.role === 'tool' ? x.name : x.text}`)).toEqual([
        'assistant:您好，这里是畅联通信客服，请问有什么可以帮您？',
        'user:你好，我想用话费余额交二月份的账单。',
        'assistant:好的，我明白了。',
        'user:好的，谢谢，再见。',
      ]);
      expect([t.valid, t.termination, t.reward_info?.reward]).toEqual([true, 'user_stop', 0]);
    } finally {
      await server.close();
    }
  });

  it('ends the call invalid (never scored) when the caller model invents a value', async () => {
    const server = await startOpenAiServer(() => ({
      json: completion({ model: 'u', content: '我的号码是13900001111。' }),
    }));
    try {
      const t = await service.runCall(
        {
          ...CALL,
          agent: { kind: 'noop' },
          user: { kind: 'remote', flavor: 'openai', baseURL: server.url, model: 'u' },
        },
        () => undefined,
      );
      expect([t.valid, t.termination, t.reward_info]).toEqual([false, 'infrastructure_error', null]);
      expect(server.requests[0]?.headers).not.toHaveProperty('authorization'); // no key: no header at all
    } finally {
      await server.close();
    }
  });
});

describe('describeChanges', () => {
  const w = (p: Partial<WriteEntry>): WriteEntry => ({
    seq: 1,
    turn: 3,
    actor: 'assistant',
    tool: 't',
    table: 'bills',
    op: 'update',
    key: { bill_id: 'B1' },
    column: 'status',
    before: 'unpaid',
    after: 'paid',
    ...p,
  });
  it('nets out repeated writes and drops columns written back', () => {
    expect(
      describeChanges([
        w({}),
        w({ before: 'paid', after: 'overdue' }),
        w({ column: 'paid_fen', before: 0, after: 10 }),
        w({ column: 'paid_fen', before: 10, after: 0 }),
        w({
          table: 'disputes',
          op: 'delete',
          key: { dispute_id: 'D1' },
          column: 'status',
          before: 'open',
          after: null,
        }),
      ]),
    ).toEqual(['bills[B1].status: "unpaid" → "overdue"', 'disputes[D1]: deleted {"status":"open"}']);
  });
});
