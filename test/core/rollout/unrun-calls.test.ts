/**
 * An episode that ends among the calls of one reply (200 calls at once, the 10th failure ends it
 * `too_many_errors`; a sandbox fault mid-reply) keeps the reply as sent and answers every call
 * that never ran with a `not_run` tool turn: the record is a well-formed OpenAI message sequence,
 * and the answers count for nothing (rewards, replay, writes).
 */
import { describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { callerMessages } from '../../../src/core/participants/model-messages.ts';
import type { Agent, ParticipantReply, UserSimulator } from '../../../src/core/participants/types.ts';
import { evaluate } from '../../../src/core/scoring/evaluate.ts';
import { replayTrajectory } from '../../../src/core/scoring/replay.ts';
import { chatMessages } from '../../../src/core/training/export.ts';
import type { ChatMessage } from '../../../src/core/schema/chat.ts';
import type { ToolCall, Turn } from '../../../src/core/schema/trajectory.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';

async function runtime() {
  return DomainRuntime.create(miniDomain(), await sqlJsFactory());
}

/** 10 failing lookups, then 190 calls that would succeed and write (a payment every other call). */
function twoHundredCalls(): ToolCall[] {
  return Array.from({ length: 200 }, (_, i) =>
    i < 10
      ? { id: `call_${i}`, name: 'find_account', arguments: { phone: 'nope' } }
      : i % 2
        ? { id: `call_${i}`, name: 'pay', arguments: { account_id: 'A1', amount: 1 } }
        : { id: `call_${i}`, name: 'find_account', arguments: { phone: '5550001' } },
  );
}

/** An agent whose first reply is `calls` (what a model sent in one message), then speech. */
function oneReply(calls: ToolCall[]): Agent {
  let first = true;
  return {
    id: 'burst',
    respond: async () => {
      if (!first) return { text: 'Anything else?' };
      first = false;
      return { text: '', tool_calls: structuredClone(calls) };
    },
  };
}

/**
 * The OpenAI rule: after an assistant message with `tool_calls`, one `tool` message per call, in
 * call order, before any other message. Returns the first break, or null.
 */
function firstBreak(messages: readonly { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[]) {
  let pending: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      if (m.tool_call_id !== pending[0]) return `message ${i} answers ${m.tool_call_id}, expected ${pending[0]}`;
      pending.shift();
      continue;
    }
    if (pending.length) return `message ${i}: ${pending.length} calls unanswered, first ${pending[0]}`;
    pending = (m.tool_calls ?? []).map((c) => c.id);
  }
  return pending.length ? `${pending.length} calls unanswered at the end, first ${pending[0]}` : null;
}

const turnMessages = (turns: readonly Turn[]) =>
  turns.map((t) => (t.role === 'tool' ? { role: 'tool', tool_call_id: t.tool_call_id } : t));

describe('calls that never ran are answered, and count for nothing', () => {
  it('200 calls in one reply, too_many_errors after 10 results: the reply kept, 190 answered not_run', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const calls = twoHundredCalls();
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: oneReply(calls),
      user: new ScriptedUser(),
      seed: 0,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect(t.termination).toBe('too_many_errors');
    expect(t.valid).toBe(true);
    expect(t.turns[0]).toMatchObject({ role: 'assistant', tool_calls: calls });
    expect(t.turns).toHaveLength(201);
    const tools = t.turns.slice(1).map((x) => (x.role === 'tool' ? x : null));
    expect(tools.map((x) => x?.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(tools.slice(0, 10).map((x) => [x?.content, x?.not_run])).toEqual(
      Array(10).fill(['Error: no account with phone nope', undefined]),
    );
    const ran = tools[9]!;
    for (const [i, x] of tools.slice(10).entries()) {
      expect(x).toEqual({
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: `call_${i + 10}`,
        name: calls[i + 10]!.name,
        arguments: calls[i + 10]!.arguments,
        content:
          "Error: not run: the episode ended (too_many_errors: 10 of the agent's tool calls failed) before this call ran",
        error: true,
        writes: [],
        t_ms: ran.t_ms,
        not_run: 'too_many_errors',
      });
    }
    expect(firstBreak(turnMessages(t.turns))).toBeNull();
    const messages: ChatMessage[] = chatMessages(rt.domain, task, t.turns);
    expect(firstBreak(messages)).toBeNull();
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(200);

    // Nothing of the 190: scored as the 10 that ran alone (−0.1 each), no pay replayed.
    const info = await evaluate(rt, task, t.turns, { termination: t.termination });
    const alone = await evaluate(rt, task, t.turns.slice(0, 11), { termination: t.termination });
    expect(info).toEqual(alone);
    expect(info.step_rewards).toEqual([-0.9999999999999999]);
    expect(info.reward).toBe(0);
    const replay = await replayTrajectory(rt, task, t.turns);
    await replay.env.close();
    expect(replay.writes).toEqual([]);
    expect(replay.diverged).toEqual([]);
  });

  it('calls sent with a stop token stay on the turn, answered not run; nothing is paid', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const calls = twoHundredCalls().slice(10, 12);
    const quitter: Agent = { id: 'quitter', respond: async () => ({ text: 'Goodbye. ###STOP###', tool_calls: calls }) };
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: quitter,
      user: new ScriptedUser(),
      seed: 0,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect(t.termination).toBe('agent_stop');
    expect(t.turns[0]).toMatchObject({ role: 'assistant', text: 'Goodbye.', tool_calls: calls });
    expect(t.turns.slice(1).map((x) => x.role === 'tool' && [x.tool_call_id, x.not_run, x.content])).toEqual(
      calls.map((c) => [
        c.id,
        'agent_stop',
        'Error: not run: the episode ended (agent_stop: the reply that made it ended the call) before this call ran',
      ]),
    );
    expect(firstBreak(turnMessages(t.turns))).toBeNull();
    const replay = await replayTrajectory(rt, task, t.turns);
    await replay.env.close();
    expect(replay.writes).toEqual([]);
    const info = await evaluate(rt, task, t.turns, { termination: t.termination });
    expect(info).toEqual(await evaluate(rt, task, t.turns.slice(0, 1), { termination: t.termination }));
  });

  it('a sandbox fault on the 3rd of 5 calls: invalid, calls 3 to 5 answered with the reason', async () => {
    const rt = await runtime();
    const open = rt.open.bind(rt);
    rt.open = async (task, options) => {
      const env = await open(task, options);
      const call = env.call.bind(env);
      let n = 0;
      env.call = async (...args) => {
        if (++n === 3) throw new Error('disk I/O error');
        return call(...args);
      };
      return env;
    };
    const calls = twoHundredCalls().slice(10, 15);
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: oneReply(calls),
      user: new ScriptedUser(),
      seed: 0,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect(t).toMatchObject({
      termination: 'infrastructure_error',
      valid: false,
      invalid_reason: 'Error: disk I/O error',
    });
    expect(t.turns.map((x) => (x.role === 'tool' ? `${x.tool_call_id} ${x.not_run ?? 'ran'}` : x.role))).toEqual([
      'assistant',
      'call_10 ran',
      'call_11 ran',
      'call_12 infrastructure_error',
      'call_13 infrastructure_error',
      'call_14 infrastructure_error',
    ]);
    expect(t.turns[3]).toMatchObject({
      content: 'Error: not run: the episode ended (infrastructure_error: Error: disk I/O error) before this call ran',
      error: true,
      writes: [],
    });
    expect(firstBreak(turnMessages(t.turns))).toBeNull();
  });
});

/** Replies in turn, then the last one again (a participant reading its lines). */
function lines(id: string, replies: ParticipantReply[]): Agent & UserSimulator {
  let n = 0;
  return { id, respond: async () => structuredClone(replies[Math.min(n++, replies.length - 1)]!) };
}

describe("a caller's yes-and-stop with tool calls", () => {
  it('keeps the calls on its turn, answers them not_run at once; the agent acts, then the call ends', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const wallet: ToolCall = { id: 'u1', name: 'check_wallet', arguments: {} };
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: lines('teller', [
        { text: 'Hello, how can I help you today?' },
        { text: '', tool_calls: [{ id: 'a1', name: 'find_account', arguments: { phone: '5550001' } }] },
        { text: 'I will pay 10 from account A1. Do you confirm?' },
        { text: '', tool_calls: [{ id: 'a2', name: 'pay', arguments: { account_id: 'A1', amount: 10 } }] },
        { text: 'Done. You paid 10, your balance is now 20. Goodbye.' },
      ]),
      user: lines('caller', [
        { text: 'I would like to pay ten dollars off my balance. My phone is 5550001.' },
        { text: 'Yes, go ahead. ###STOP###', tool_calls: [wallet] },
      ]),
      seed: 0,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect([t.valid, t.termination]).toEqual([true, 'user_stop']);
    const reason = 'the caller agreed to a pending write and said stop in the same message';
    expect(t.stop_deferred).toEqual({ turn: 5, reason });
    expect(
      t.turns.map((x) =>
        x.role === 'tool'
          ? `tool ${x.requestor} ${x.tool_call_id} ${x.not_run ?? 'ran'}: ${x.content}`
          : `${x.role} [${x.tool_calls.map((c) => c.id).join(',')}]: ${x.text}`,
      ),
    ).toEqual([
      'assistant []: Hello, how can I help you today?',
      'user []: I would like to pay ten dollars off my balance. My phone is 5550001.',
      'assistant [a1]: ',
      'tool assistant a1 ran: {"account_id":"A1","name":"Ada","balance":30}',
      'assistant []: I will pay 10 from account A1. Do you confirm?',
      'user [u1]: Yes, go ahead.',
      `tool user u1 user_stop: Error: not run: the episode ended (user_stop: ${reason}) before this call ran`,
      'assistant [a2]: ',
      'tool assistant a2 ran: {"account_id":"A1","paid":10}',
      'assistant []: Done. You paid 10, your balance is now 20. Goodbye.',
    ]);
    expect(t.turns[5]).toMatchObject({ role: 'user', tool_calls: [wallet] });
    expect(t.turns[6]).toMatchObject({ error: true, writes: [], name: 'check_wallet', arguments: {} });
    // Well-formed from every side: the whole record, the agent's view (the caller's calls hidden)
    // and the caller's own view (its call answered before the agent's next words).
    expect(firstBreak(turnMessages(t.turns))).toBeNull();
    expect(firstBreak(chatMessages(rt.domain, task, t.turns))).toBeNull();
    const heard = callerMessages('caller prompt', t.turns);
    expect(firstBreak(heard)).toBeNull();
    expect(heard.slice(-3).map((m) => m.role)).toEqual(['assistant', 'tool', 'user']);
    // The answer counts for nothing: scored as the same episode without it (turn numbers aside).
    const scores = async (turns: Turn[]) => {
      const info = await evaluate(rt, task, turns, { termination: t.termination });
      return [info.reward, info.step_rewards, Object.entries(info.components).map(([k, v]) => [k, v?.score])];
    };
    const got = await scores(t.turns);
    expect(got).toEqual(await scores(t.turns.filter((_, i) => i !== 6)));
    expect(got[0]).toBe(1);
  });
});
