import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent } from '../../src/core/participants/model-agent.ts';
import { ModelUser } from '../../src/core/participants/model-user.ts';
import {
  findStopToken,
  splitReasoning,
  stripStopTokens,
  visibleReply,
} from '../../src/core/participants/reply-text.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { Trajectory } from '../../src/core/schema/trajectory.ts';
import { evaluate } from '../../src/core/scoring/evaluate.ts';
import { MINI_NOW, miniDomain } from '../fixtures/mini-domain.ts';
import { chunk, scriptedModels, startOpenAiServer, type TestServer, wireToolCall } from '../fixtures/openai-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('reply text: reasoning and stop tokens', () => {
  it.each([
    ['Thanks, bye. ###STOP###', 'Thanks, bye.', 'stop'],
    ['Thanks, bye. ###stop###', 'Thanks, bye.', 'stop'],
    ['Thanks, bye. ### STOP ###', 'Thanks, bye.', 'stop'],
    ['Thanks, bye. **###STOP###**', 'Thanks, bye.', 'stop'],
    ['Thanks, bye.\n\n`###STOP###`', 'Thanks, bye.', 'stop'],
    ['Thanks, bye.*###STOP###*', 'Thanks, bye.', 'stop'],
    ['Please hold. ###Transfer###', 'Please hold.', 'transfer'],
    ['Not here. ###OUT-OF-SCOPE###', 'Not here.', 'outOfScope'],
    ['Not here. ### out of scope ###', 'Not here.', 'outOfScope'],
    ['Not here. ###OUT_OF_SCOPE###', 'Not here.', 'outOfScope'],
    ['###TRANSFER###', '', 'transfer'],
    ['Bye ###STOP### and more words', 'Bye', 'stop'],
    ['<think>I could say ###STOP### now</think>Let me check.', 'Let me check.', null],
    ['<think>plan: ###TRANSFER###</think>Bye. ###STOP###', 'Bye.', 'stop'],
    ['Reasoning first ###STOP###</think>Sure, one moment.', 'Sure, one moment.', null],
    ['Hello.<think>cut off mid-thought ###STOP###', 'Hello.', null],
    ['## STOP ## is not a token', '## STOP ## is not a token', null],
    ['hello', 'hello', null],
  ])('%j → %j, %s', (raw, text, token) => {
    const v = visibleReply(raw);
    expect([v.text, v.token]).toEqual([text, token]);
  });

  it('keeps the reasoning apart', () => {
    expect(splitReasoning('<think> a </think>Hi<think>b</think> there')).toEqual({
      text: 'Hi there',
      reasoning: 'a\n\nb',
    });
    expect(splitReasoning('no reasoning')).toEqual({ text: 'no reasoning', reasoning: null });
  });

  it('finds the token span with its markdown and strips every token', () => {
    expect(findStopToken('ok **### Stop ###** x')).toEqual({ kind: 'stop', start: 3, end: 19 });
    expect(stripStopTokens('A ###STOP### B `###TRANSFER###`')).toBe('A  B');
  });
});

/** The mini domain's pay task with a model agent and a model caller from scripted queues. */
async function episode(queues: Parameters<typeof scriptedModels>[0], seed = 7): Promise<Trajectory> {
  server = await startOpenAiServer(scriptedModels(queues));
  const client = (model: string) =>
    new OpenAiModelClient({ flavor: 'vllm', baseURL: server!.url, model, maxRetries: 0 });
  const runtime = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
  return runEpisode({
    runtime,
    task: runtime.domain.tasks[0]!,
    agent: new ModelAgent(client('agent')),
    user: new ModelUser(client('caller')),
    seed,
    clock: steppingClock(MINI_NOW, 1000),
  });
}

const said = (t: Trajectory) =>
  t.turns.map((x) => (x.role === 'tool' ? `tool ${x.name}: ${x.content}` : `${x.role}: ${x.text}`));

describe('a misbehaving endpoint: exact outcomes', () => {
  it('stop tokens in reasoning never end the call; a yes-and-stop lets the agent act first', async () => {
    const t = await episode({
      agent: [
        '<think>Nothing to do yet, maybe ###STOP###</think>Hello, how can I help you today?',
        {
          content: null,
          reasoning_content: 'Look the caller up. ###TRANSFER###',
          tool_calls: [wireToolCall('c1', 'find_account', { phone: '5550001' })],
        },
        'I will pay 10 from account A1. Do you confirm?',
        { content: null, tool_calls: [wireToolCall('c2', 'pay', { account_id: 'A1', amount: 10 })] },
        'Done. You paid 10, your balance is now 20. Goodbye.',
      ],
      caller: [
        'I would like to pay ten dollars off my balance. My phone is 5550001.',
        'Yes, go ahead. **### stop ###**',
      ],
    });
    expect([t.valid, t.termination]).toEqual([true, 'user_stop']);
    expect(said(t)).toEqual([
      'assistant: Hello, how can I help you today?',
      'user: I would like to pay ten dollars off my balance. My phone is 5550001.',
      'assistant: ',
      'tool find_account: {"account_id":"A1","name":"Ada","balance":30}',
      'assistant: I will pay 10 from account A1. Do you confirm?',
      'user: Yes, go ahead.',
      'assistant: ',
      'tool pay: {"account_id":"A1","paid":10}',
      'assistant: Done. You paid 10, your balance is now 20. Goodbye.',
    ]);
    expect(t.stop_deferred).toEqual({
      turn: 5,
      reason: 'the caller agreed to a pending write and said stop in the same message',
    });
    const gen = (i: number) => (t.turns[i] as { generation?: { reasoning?: string } }).generation?.reasoning;
    expect([gen(0), gen(2)]).toEqual(['Nothing to do yet, maybe ###STOP###', 'Look the caller up. ###TRANSFER###']);
    // The caller model never saw the reasoning.
    const callerRequests = server!.requests.filter((r) => r.body.model === 'caller');
    expect(callerRequests).toHaveLength(2);
    const heard = callerRequests.map((r) => r.body.messages.slice(1));
    expect(heard[1]).toEqual([
      { role: 'user', content: 'Hello, how can I help you today?' },
      { role: 'assistant', content: 'I would like to pay ten dollars off my balance. My phone is 5550001.' },
      { role: 'user', content: 'I will pay 10 from account A1. Do you confirm?' },
    ]);
    const info = await evaluate(await DomainRuntime.create(miniDomain(), await sqlJsFactory()), miniTask(), t.turns, {
      termination: t.termination,
    });
    expect([info.reward, info.components.QUALITY?.score]).toEqual([1, 1]);
  });

  it('a yes-and-stop with no write pending ends the call at once', async () => {
    const t = await episode({
      agent: ['Hello, how can I help you today?', 'Your balance is 30. Anything else?'],
      caller: ['What is my balance? My phone is 5550001.', 'Yes, thanks. ###STOP###'],
    });
    expect([t.valid, t.termination, t.stop_deferred]).toEqual([true, 'user_stop', undefined]);
    expect(said(t).at(-1)).toBe('user: Yes, thanks.');
  });

  it('streamed reasoning is assembled apart from the text', async () => {
    server = await startOpenAiServer(() => ({
      sse: [
        chunk('m', { role: 'assistant', reasoning_content: 'They want to stop. ' }),
        chunk('m', { reasoning_content: '###STOP###' }),
        chunk('m', { content: '<think>more</think>Hello' }),
        chunk('m', { content: ', how can I help?' }, { finish_reason: 'stop' }),
      ],
    }));
    const res = await new OpenAiModelClient({ flavor: 'vllm', baseURL: server.url, model: 'm' }).complete({
      messages: [{ role: 'user', content: 'hi' }],
      sampling: { temperature: 1, top_p: 1, top_k: null, max_tokens: 64, seed: 1 },
      stream: true,
    });
    expect([res.text, res.reasoning]).toEqual(['Hello, how can I help?', 'They want to stop. ###STOP###\n\nmore']);
  });

  it("an empty caller, again and again, is a simulator failure (invalid), never the agent's 0", async () => {
    const t = await episode({ agent: ['Hello, how can I help you today?'], caller: [''] }, 40);
    expect([t.valid, t.termination, t.invalid_reason]).toEqual([
      false,
      'infrastructure_error',
      'simulator error: the caller model returned an empty reply 3 times in a row',
    ]);
    expect(server!.requests.filter((r) => r.body.model === 'caller').map((r) => r.body.seed)).toEqual([40, 41, 42]);
  });

  it('one empty caller reply is asked again and the call goes on', async () => {
    const t = await episode({
      agent: ['Hello, how can I help you today?', 'Goodbye. ###STOP###'],
      caller: ['', 'Nothing, thanks.'],
    });
    expect([t.valid, t.termination]).toEqual([true, 'agent_stop']);
    expect(said(t)).toEqual([
      'assistant: Hello, how can I help you today?',
      'user: Nothing, thanks.',
      'assistant: Goodbye.',
    ]);
  });

  it('a caller cut at the token limit is a simulator failure (invalid)', async () => {
    const t = await episode({
      agent: ['Hello, how can I help you today?'],
      caller: [{ content: 'I would like to pay ten doll', finish_reason: 'length' }],
    });
    expect([t.valid, t.termination, t.invalid_reason]).toEqual([
      false,
      'infrastructure_error',
      `simulator error: the caller's reply was cut at the token limit (finish_reason "length", 1024 tokens)`,
    ]);
  });

  it('a truncated agent reply (bare JSON, half a tool call) is a quality failure for the agent', async () => {
    const t = await episode({
      agent: [
        { content: '{"name": "find_account", "argu', finish_reason: 'length' },
        { content: '<tool_call>\n{"name": "find_account", "arguments": {"phone": "555', finish_reason: 'length' },
        'Goodbye. ###STOP###',
      ],
      caller: ['I would like to pay ten dollars off my balance.'],
    });
    expect([t.valid, t.termination]).toEqual([true, 'agent_stop']);
    expect(said(t)).toEqual([
      'assistant: {"name": "find_account", "argu',
      'user: I would like to pay ten dollars off my balance.',
      'assistant: ',
      'tool find_account: Error: invalid arguments for find_account: not valid JSON: {"name": "find_account", "arguments": {"phone": "555',
      'assistant: Goodbye.',
    ]);
    const info = await evaluate(await DomainRuntime.create(miniDomain(), await sqlJsFactory()), miniTask(), t.turns, {
      termination: t.termination,
    });
    expect(info.reward).toBe(0);
    expect(info.components.QUALITY).toEqual({
      score: 0,
      judged: true,
      details: [
        'turn 0: truncated (cut at the token limit (finish_reason "length"))',
        'turn 2: truncated (cut at the token limit (finish_reason "length"))',
      ],
    });
  });
});

function miniTask() {
  return miniDomain().tasks[0]!;
}
