import { afterEach, describe, expect, it, vi } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { fixedClock, steppingClock } from '../../../src/core/ports/clock.ts';
import { parsedIfGiven, runEpisode, splitStopToken } from '../../../src/core/rollout/episode.ts';
import { Generation, ReplyCap } from '../../../src/core/schema/trajectory.ts';
import { ModelRequestRecord } from '../../../src/core/schema/chat.ts';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { InfrastructureError, type Agent, type UserSimulator } from '../../../src/core/participants/types.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';

async function runtime() {
  return DomainRuntime.create(miniDomain(), await sqlJsFactory());
}

function transcript(turns: { role: string; text?: string; name?: string; content?: string }[]) {
  return turns.map((t) => (t.role === 'tool' ? `tool ${t.name} -> ${t.content}` : `${t.role}: ${t.text}`));
}

describe('splitStopToken', () => {
  it('keeps the text before a token and names the token', () => {
    expect(splitStopToken('Thanks, bye. ###STOP###')).toEqual({ text: 'Thanks, bye.', token: 'stop' });
    expect(splitStopToken('###TRANSFER###')).toEqual({ text: '', token: 'transfer' });
    expect(splitStopToken('hello')).toEqual({ text: 'hello', token: null });
  });
});

describe('runEpisode with scripted participants', () => {
  it('runs the reference solution turn by turn and ends on the caller stop token', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 3,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('user_stop');
    expect(transcript(t.turns)).toEqual([
      'assistant: Hello, how can I help you today?',
      'user: I would like to pay ten dollars off my balance.',
      'assistant: Could you give me your phone, please?',
      'user: 5550001',
      'assistant: ',
      'tool find_account -> {"account_id":"A1","name":"Ada","balance":30}',
      'assistant: I will pay off the balance: account A1, amount $10. Do you confirm?',
      'user: Yes, please go ahead.',
      'assistant: ',
      'tool pay -> {"account_id":"A1","paid":10}',
      'assistant: Just so you know: 20. Is there anything else I can help you with?',
      'user: No, that is all. Thank you, goodbye.',
    ]);
    const pay = t.turns[9]!;
    expect(pay.role === 'tool' && pay.writes.map((w) => [w.table, w.op, w.column, w.before, w.after, w.turn])).toEqual([
      ['accounts', 'update', 'balance', 30, 20, 9],
      ['payments', 'insert', 'payment_id', null, 1, 9],
      ['payments', 'insert', 'account_id', null, 'A1', 9],
      ['payments', 'insert', 'amount', null, 10, 9],
    ]);
    expect(t.turns.map((x) => x.t_ms)).toEqual(Array.from({ length: 12 }, (_, i) => MINI_NOW + 1000 * (i + 1)));
  });

  it('replays bit-for-bit with the same seed and clock', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const once = () =>
      runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 11,
        clock: steppingClock(MINI_NOW, 250),
      });
    expect(JSON.stringify(await once())).toBe(JSON.stringify(await once()));
  });

  it('lets the do-nothing agent talk until the caller gives up', async () => {
    const rt = await runtime();
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: new NoopAgent(),
      user: new ScriptedUser(),
      seed: 0,
      clock: fixedClock(MINI_NOW),
    });
    expect(t.termination).toBe('user_stop');
    expect(transcript(t.turns)).toEqual([
      'assistant: Hello, how can I help you today?',
      'user: I would like to pay ten dollars off my balance.',
      'assistant: I see.',
      'user: Okay.',
      'assistant: I see.',
      'user: Okay.',
      'assistant: I see.',
      'user: Never mind, I will leave it there. Goodbye.',
    ]);
  });

  it('marks an episode whose agent endpoint fails as invalid, not scored', async () => {
    const rt = await runtime();
    const broken: Agent = {
      id: 'broken',
      respond: async () => {
        throw new InfrastructureError('endpoint returned 503 three times');
      },
    };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: broken,
      user: new ScriptedUser(),
      seed: 0,
      clock: fixedClock(0),
    });
    expect(t).toMatchObject({
      valid: false,
      termination: 'infrastructure_error',
      invalid_reason: 'endpoint returned 503 three times',
      turns: [],
    });
  });

  it("a caller model stuck calling tools it cannot use is a simulator failure, not the agent's 0", async () => {
    const rt = await runtime();
    let n = 0;
    // The caller has no tools in the mini domain: every call is refused and it never speaks.
    const looping: UserSimulator = {
      id: 'looping',
      respond: async () => ({
        text: '',
        tool_calls: [{ id: `u${n++}`, name: 'find_account', arguments: { phone: '5550001' } }],
      }),
    };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: new ReferenceAgent(),
      user: looping,
      seed: 0,
      clock: fixedClock(0),
      maxErrors: 3,
    });
    expect(t.valid).toBe(false);
    expect(t.termination).toBe('infrastructure_error');
    expect(t.invalid_reason).toBe("simulator error: the caller's tool calls failed 3 times");
    expect(t.turns.filter((x) => x.role === 'tool').map((x) => x.role === 'tool' && x.content)).toEqual([
      'Error: tool find_account is not available to the caller',
      'Error: tool find_account is not available to the caller',
      'Error: tool find_account is not available to the caller',
    ]);
  });

  it('a call to a tool the participant cannot use is refused as such, whatever its arguments', async () => {
    const rt = await runtime();
    let a = 0;
    // Argument text that is not JSON, as a model adapter passes it on (hence the casts).
    const agent = {
      id: 'guessing',
      respond: async () =>
        a++ === 0
          ? {
              text: '',
              tool_calls: [
                { id: 'a1', name: 'drop_all', arguments: '{bad' },
                { id: 'a2', name: 'find_account', arguments: '{bad' },
              ],
            }
          : { text: 'Anything else?' },
    } as unknown as Agent;
    let u = 0;
    const user = {
      id: 'grabbing',
      respond: async () =>
        u++ === 0
          ? { text: '', tool_calls: [{ id: 'u1', name: 'find_account', arguments: '{bad' }] }
          : { text: 'Bye. ###STOP###' },
    } as unknown as UserSimulator;
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent,
      user,
      seed: 0,
      clock: fixedClock(0),
    });
    expect(t.termination).toBe('user_stop');
    expect(transcript(t.turns).filter((x) => x.startsWith('tool'))).toEqual([
      'tool drop_all -> Error: unknown tool drop_all',
      'tool find_account -> Error: invalid arguments for find_account: not valid JSON: {bad',
      'tool find_account -> Error: tool find_account is not available to the caller',
    ]);
  });

  it('ends on too_many_errors after repeated failing tool calls', async () => {
    const rt = await runtime();
    let n = 0;
    const flailing: Agent = {
      id: 'flailing',
      respond: async () => ({
        text: '',
        tool_calls: [{ id: `c${n++}`, name: 'find_account', arguments: { phone: 'nope' } }],
      }),
    };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: flailing,
      user: new ScriptedUser(),
      seed: 0,
      clock: fixedClock(0),
      maxErrors: 3,
    });
    expect(t.termination).toBe('too_many_errors');
    expect(t.turns.filter((x) => x.role === 'tool').map((x) => x.role === 'tool' && x.content)).toEqual([
      'Error: no account with phone nope',
      'Error: no account with phone nope',
      'Error: no account with phone nope',
    ]);
  });

  it('ends on max_steps and on an agent stop token, delivering the text before it', async () => {
    const rt = await runtime();
    const chatty: UserSimulator = { id: 'chatty', respond: async () => ({ text: 'and another thing' }) };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: new NoopAgent(),
      user: chatty,
      seed: 0,
      clock: fixedClock(0),
      maxSteps: 5,
    });
    expect(t.termination).toBe('max_steps');
    expect(t.turns).toHaveLength(5);
    const quitter: Agent = { id: 'quitter', respond: async () => ({ text: 'Goodbye now. ###STOP###' }) };
    const s = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: quitter,
      user: chatty,
      seed: 0,
      clock: fixedClock(0),
    });
    expect(s.termination).toBe('agent_stop');
    expect(s.turns).toMatchObject([{ role: 'assistant', text: 'Goodbye now.' }]);
  });

  it('runs caller-side user tools when the agent asks for them', async () => {
    const task = {
      id: 'wallet',
      user_scenario: { instructions: 'You want to know your wallet balance.', requests: ['What is in my wallet?'] },
      evaluation_criteria: {
        actions: [{ requestor: 'user' as const, name: 'check_wallet', arguments: {} }],
        communicate_info: [],
      },
    };
    const rt = await DomainRuntime.create(miniDomain([task]), await sqlJsFactory());
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 0,
      clock: fixedClock(0),
    });
    expect(transcript(t.turns)).toEqual([
      'assistant: Hello, how can I help you today?',
      'user: What is in my wallet?',
      'assistant: Could you please check your wallet now and tell me when it is done?',
      'user: ',
      'tool check_wallet -> wallet: 50',
      'user: Okay, done: check your wallet.',
      'assistant: Is there anything else I can help you with?',
      'user: No, that is all. Thank you, goodbye.',
    ]);
    expect(t.turns[4]).toMatchObject({ role: 'tool', requestor: 'user' });
  });

  it('turns malformed model replies into error tool messages and goes on', async () => {
    const rt = await runtime();
    const replies: unknown[] = [
      null,
      { text: 42 },
      { text: '', tool_calls: { id: 'x', name: 'find_account', arguments: { phone: '5550001' } } },
      {
        text: '',
        tool_calls: [
          null,
          { id: 'd', name: 'find_account', arguments: 'phone=5550001' },
          { id: 'd', name: 'find_account', arguments: { phone: '5550001' } },
        ],
      },
      { text: '', tool_calls: [{ arguments: {} }] },
      { text: 'Bye. ###STOP###' },
    ];
    let i = 0;
    const sloppy: Agent = { id: 'sloppy', respond: async () => replies[i++] as never };
    const silent: UserSimulator = { id: 'silent', respond: async () => ({ text: 'go on' }) };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: sloppy,
      user: silent,
      seed: 0,
      clock: fixedClock(0),
    });
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('agent_stop');
    const tools = t.turns
      .filter((x) => x.role === 'tool')
      .map((x) => x.role === 'tool' && [x.tool_call_id, x.name, x.arguments, x.content]);
    expect(tools).toEqual([
      ['x', 'find_account', { phone: '5550001' }, 'Error: tool_calls must be a list, got an object'],
      ['call_6_0', '', {}, 'Error: invalid tool call: expected an object, got null'],
      ['d', 'find_account', {}, 'Error: invalid arguments for find_account: not valid JSON: phone=5550001'],
      ['d_2', 'find_account', { phone: '5550001' }, '{"account_id":"A1","name":"Ada","balance":30}'],
      ['call_10_0', '', {}, 'Error: invalid tool call: missing tool name'],
    ]);
    expect(t.turns.slice(0, 4).map((x) => [x.role, x.role !== 'tool' && x.text])).toEqual([
      ['assistant', ''],
      ['user', 'go on'],
      ['assistant', ''],
      ['user', 'go on'],
    ]);
  });

  it('records a readable reason for anything a participant throws', async () => {
    const rt = await runtime();
    for (const [thrown, reason] of [
      [null, 'non-error value thrown: null'],
      ['socket hang up', 'socket hang up'],
      [new TypeError('x is not a function'), 'TypeError: x is not a function'],
    ] as const) {
      const agent: Agent = {
        id: 'thrower',
        respond: async () => {
          throw thrown;
        },
      };
      const t = await runEpisode({
        runtime: rt,
        task: rt.domain.tasks[0]!,
        agent,
        user: new ScriptedUser(),
        seed: 0,
        clock: fixedClock(0),
      });
      expect([t.valid, t.termination, t.invalid_reason]).toEqual([false, 'infrastructure_error', reason]);
    }
  });
});

describe('model output details on a turn (generation, request, capped)', () => {
  afterEach(() => vi.restoreAllMocks());
  const spies = () => [Generation, ReplyCap, ModelRequestRecord].map((schema) => vi.spyOn(schema, 'safeParse'));

  it('a scripted episode parses none of them: its replies carry no such field', async () => {
    const parses = spies();
    const rt = await runtime();
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 3,
      clock: steppingClock(MINI_NOW, 1000),
    });
    expect([t.valid, t.turns.length]).toEqual([true, 12]);
    // Before: Generation on each of the 10 participant turns, ReplyCap and the request on the agent's 6.
    expect(parses.map((p) => p.mock.calls.length)).toEqual([0, 0, 0]);
    expect(t.turns.filter((x) => 'generation' in x || 'request' in x || 'capped' in x)).toEqual([]);
  });

  it('a model reply keeps the fields its schema accepts, parsed (defaults filled), and drops the others', async () => {
    const rt = await runtime();
    const request = {
      messages: [{ role: 'user', content: 'hi' }],
      sampling: { temperature: 0, top_p: 1, top_k: null, max_tokens: 64, seed: 1 },
    };
    const replies: unknown[] = [
      {
        text: 'One.',
        generation: { model: 'm', token_ids: [1, 2] },
        request,
        capped: { limit: 'events', max: 9, ended: 'done' },
      },
      { text: 'Two.', generation: { model: 3 }, request: { messages: [] }, capped: { limit: 'pages' } },
      { text: 'Three. <think>mull</think>', generation: null, request: null, capped: null },
      { text: 'Bye. ###STOP###' },
    ];
    let i = 0;
    const model: Agent = { id: 'model', respond: async () => replies[i++] as never };
    const caller: UserSimulator = {
      id: 'caller',
      respond: async () => ({ text: 'go on', generation: { model: 'u' } }) as never,
    };
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: model,
      user: caller,
      seed: 0,
      clock: fixedClock(0),
    });
    const kept = t.turns.map((x) => [
      x.role,
      'generation' in x ? x.generation : '-',
      'request' in x ? x.request : '-',
      'capped' in x ? x.capped : '-',
    ]);
    const user = [
      'user',
      {
        model: 'u',
        token_ids: null,
        prompt_token_ids: null,
        logprobs: null,
        finish_reason: null,
        tool_call_source: 'none',
      },
      '-',
      '-',
    ];
    expect(kept).toEqual([
      [
        'assistant',
        {
          model: 'm',
          token_ids: [1, 2],
          prompt_token_ids: null,
          logprobs: null,
          finish_reason: null,
          tool_call_source: 'none',
        },
        { ...request, tools: [], voice: null, stream: false },
        { limit: 'events', max: 9, ended: 'done' },
      ],
      user,
      ['assistant', '-', '-', '-'],
      user,
      ['assistant', '-', '-', '-'],
      user,
      ['assistant', '-', '-', '-'],
    ]);
  });

  it('parsedIfGiven: undefined without a parse; else the parsed value, or undefined when the schema refuses it', () => {
    const [parse] = spies();
    expect(parsedIfGiven(Generation, undefined)).toBeUndefined();
    expect(parse!.mock.calls.length).toBe(0);
    expect(parsedIfGiven(Generation, null)).toBeUndefined();
    expect(parsedIfGiven(Generation, { model: 1 })).toBeUndefined();
    expect(parsedIfGiven(Generation, { model: 'm', reasoning: 'r' })).toEqual({
      model: 'm',
      token_ids: null,
      prompt_token_ids: null,
      logprobs: null,
      finish_reason: null,
      tool_call_source: 'none',
      reasoning: 'r',
    });
    expect(parse!.mock.calls.length).toBe(3);
  });
});
