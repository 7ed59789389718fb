import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent, refuseTeacherGuided, TeacherGuidanceError } from '../../src/core/participants/model-agent.ts';
import { JudgeError, ModelBehaviourError, SimulatorError } from '../../src/core/participants/model-errors.ts';
import { ModelJudge, parseVerdicts } from '../../src/core/participants/model-judge.ts';
import { agentMessages, callerMessages } from '../../src/core/participants/model-messages.ts';
import { parseTextToolCalls, replyToolCalls } from '../../src/core/participants/model-tool-calls.ts';
import { checkCallerFacts, ModelUser, statedValues } from '../../src/core/participants/model-user.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { InfrastructureError, type UserSimulator } from '../../src/core/participants/types.ts';
import type { ModelClient, ModelRequest, ModelResponse } from '../../src/core/ports/model-client.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { VOICE_STYLE_GUIDE, renderAgentPrompt } from '../../src/core/prompts/agent.ts';
import { renderCallerPrompt } from '../../src/core/prompts/caller.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import { toolSchema, type Domain } from '../../src/core/schema/domain.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';
import { completion, startOpenAiServer, wireToolCall, type TestServer } from '../fixtures/openai-server.ts';

let domain: Domain;
let runtime: DomainRuntime;
let server: TestServer | undefined;
beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const task = (id: string): Task => domain.tasks.find((t) => t.id === id)!;

/** An in-process ModelClient that answers from a list and records requests. */
function fakeClient(replies: Partial<ModelResponse>[]): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: 'fake:m',
    kind: 'scripted',
    flavor: 'vllm',
    model: 'm',
    endpoint: null,
    requests,
    async complete(req) {
      requests.push(req);
      const r = replies[requests.length - 1] ?? { text: '' };
      return {
        text: '',
        tool_calls: [],
        tool_call_source: 'none',
        audio: null,
        finish_reason: 'stop',
        model: 'm',
        token_ids: null,
        prompt_token_ids: null,
        logprobs: null,
        usage: null,
        attempts: 1,
        ...r,
      };
    },
  };
}

const T = (t: Partial<Turn> & Pick<Turn, 'role'>): Turn => ({ text: '', tool_calls: [], t_ms: 0, ...t }) as Turn;

describe('tool calls from model text', () => {
  it('parses hermes blocks, keeps bad JSON for the episode loop to refuse, and leaves other text alone', () => {
    expect(
      parseTextToolCalls(
        '好的。<tool_call>{"name":"a","arguments":{"x":1}}</tool_call><tool_call>{"name":"b","arguments":"{\\"y\\":2}"}</tool_call>',
      ),
    ).toEqual({
      text: '好的。',
      calls: [
        { id: 'call_0', name: 'a', arguments: '{"x":1}' },
        { id: 'call_1', name: 'b', arguments: '{"y":2}' },
      ],
    });
    expect(parseTextToolCalls('<tool_call>{"name": "get_bills", "arguments": {oops}</tool_call>')).toEqual({
      text: '',
      calls: [{ id: 'call_0', name: 'get_bills', arguments: '{"name": "get_bills", "arguments": {oops}' }],
    });
    expect(parseTextToolCalls('<tool_call>{"name":"cut","arguments":{"a":1}}')).toEqual({
      text: '',
      calls: [{ id: 'call_0', name: 'cut', arguments: '{"a":1}' }],
    });
    expect(parseTextToolCalls('no calls here')).toEqual({ text: 'no calls here', calls: [] });
    expect(
      replyToolCalls([
        { id: 'i', name: 'n', arguments: '' },
        { id: 'j', name: 'n', arguments: '{bad' },
        { id: 'k', name: 'n', arguments: '[1]' },
      ]),
    ).toEqual([
      { id: 'i', name: 'n', arguments: {} },
      { id: 'j', name: 'n', arguments: '{bad' },
      // JSON that is not an object stays text, so the call keeps it verbatim (raw_arguments).
      { id: 'k', name: 'n', arguments: '[1]' },
    ]);
  });

  it('malformed calls from a model become Error tool messages in the episode, never crashes', async () => {
    server = await startOpenAiServer((body, i) => {
      const m = body.model;
      if (i === 0) return { json: completion({ model: m, content: domain.greeting }) };
      if (i === 1)
        return {
          json: completion({
            model: m,
            content: null,
            tool_calls: [wireToolCall('c1', 'find_customer_by_phone', '{"phone": 158')],
          }),
        };
      if (i === 2)
        return {
          json: completion({ model: m, content: null, tool_calls: [wireToolCall('c2', 'refund_everything', {})] }),
        };
      if (i === 3)
        return {
          json: completion({
            model: m,
            content: null,
            tool_calls: [wireToolCall('c3', 'get_bills', { customer_id: 1002 })],
          }),
        };
      if (i === 4)
        return {
          json: completion({ model: m, content: '<tool_call>{"name": "get_bills", "arguments": [1]}</tool_call>' }),
        };
      return { json: completion({ model: m, content: `好的，再见。###STOP###` }) };
    });
    const client = new OpenAiModelClient({ flavor: 'vllm', baseURL: server.url, model: 'agent', maxRetries: 0 });
    const t = await runEpisode({
      runtime,
      task: task('carrier-pay-balance-1'),
      agent: new ModelAgent(client),
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(0, 1),
    });
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('agent_stop');
    const tools = t.turns
      .filter((x) => x.role === 'tool')
      .map((x) => (x.role === 'tool' ? [x.tool_call_id, x.content, x.error] : null));
    expect(tools).toEqual([
      ['c1', 'Error: invalid arguments for find_customer_by_phone: not valid JSON: {"phone": 158', true],
      ['c2', 'Error: unknown tool refund_everything', true],
      [
        'c3',
        'Error: invalid arguments for get_bills: customer_id: Invalid input: expected string, received number',
        true,
      ],
      ['call_8_0', 'Error: invalid arguments for get_bills: expected an object, got an array: [1]', true],
    ]);
    // The model's argument text is kept verbatim on the turn and sent back as it was written.
    const c1 = t.turns.find((x) => x.role === 'assistant' && x.tool_calls[0]?.id === 'c1');
    expect(c1?.role === 'assistant' && c1.tool_calls[0]).toMatchObject({
      arguments: {},
      raw_arguments: '{"phone": 158',
    });
    const next = server.requests[2]!.body.messages.find((m: { tool_calls?: { id: string }[] }) =>
      m.tool_calls?.some((c) => c.id === 'c1'),
    );
    expect(next.tool_calls[0].function.arguments).toBe('{"phone": 158');
  });
});

describe('ModelAgent', () => {
  it('renders the system prompt from policy, tool schemas and the voice style guide', () => {
    const tools = domain.tools.map(toolSchema);
    const p = renderAgentPrompt({ domain, task: task('carrier-pay-balance-1'), tools, guidance: null });
    expect(
      p.startsWith('You are answering an inbound phone call for the business below. Speak Mandarin Chinese.'),
    ).toBe(true);
    expect(p).toContain(domain.policy.trim());
    expect(p).toContain(
      `- get_bills: ${tools.find((t) => t.function.name === 'get_bills')!.function.description}\n  parameters: ${JSON.stringify(tools.find((t) => t.function.name === 'get_bills')!.function.parameters)}`,
    );
    for (const line of VOICE_STYLE_GUIDE) expect(p).toContain(`- ${line}`);
    expect(p).not.toContain('Teacher guidance');
  });

  it('converts turns to chat messages from the agent side (caller tools hidden, user runs merged, audio when given)', () => {
    const turns: Turn[] = [
      T({ role: 'assistant', text: 'hello' }),
      T({ role: 'user', text: 'hi' }),
      T({ role: 'user', text: '', tool_calls: [{ id: 'u1', name: 'check_wallet_balance', arguments: {} }] }),
      {
        role: 'tool',
        requestor: 'user',
        tool_call_id: 'u1',
        name: 'check_wallet_balance',
        arguments: {},
        content: '{}',
        error: false,
        writes: [],
        t_ms: 0,
      },
      T({ role: 'user', text: 'done' }),
      T({
        role: 'assistant',
        text: '',
        tool_calls: [{ id: 'a1', name: 'get_bills', arguments: { customer_id: 'C1' } }],
      }),
      {
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: 'a1',
        name: 'get_bills',
        arguments: {},
        content: '[]',
        error: false,
        writes: [],
        t_ms: 0,
      },
    ];
    expect(agentMessages('S', turns)).toEqual([
      { role: 'system', content: 'S' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'hi\ndone' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a1', name: 'get_bills', arguments: '{"customer_id":"C1"}' }],
      },
      { role: 'tool', tool_call_id: 'a1', content: '[]' },
    ]);
    expect(agentMessages('S', turns.slice(0, 2), (_t, i) => `wav${i}`)[2]).toEqual({
      role: 'user',
      content: [{ type: 'audio', base64: 'wav1', format: 'wav' }],
    });
    expect(callerMessages('C', turns)).toEqual([
      { role: 'system', content: 'C' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'u1', name: 'check_wallet_balance', arguments: '{}' }] },
      { role: 'tool', tool_call_id: 'u1', content: '{}' },
      { role: 'assistant', content: 'done' },
    ]);
  });

  it('records teacher guidance in the trajectory, and evaluation refuses it', async () => {
    const client = fakeClient([{ text: `${domain.greeting}` }, { text: '再见###STOP###' }]);
    const agent = new ModelAgent(client, { teacherGuidance: 'reference', sampling: { temperature: 0.3 } });
    const t = await runEpisode({
      runtime,
      task: task('carrier-transfer-human-1'),
      agent,
      user: new ScriptedUser(),
      seed: 9,
      clock: steppingClock(0, 1),
    });
    expect(t.teacher_guidance).toBe(true);
    const guidance = t.participants.agent_card!.teacher_guidance!;
    expect(
      guidance.startsWith('A correct handling of this call, in order:\n- you call find_customer_by_phone {"phone":'),
    ).toBe(true);
    expect((client.requests[0]!.messages[0] as { content: string }).content).toContain(
      `# Teacher guidance (demonstration runs only)\n${guidance}`,
    );
    expect(client.requests.map((r) => [r.sampling.seed, r.sampling.temperature])).toEqual([
      [9, 0.3],
      [9, 0.3],
    ]);
    // The domain's language rides on each request (an on-device Whisper transcribes in it).
    expect(client.requests.map((r) => r.language)).toEqual(['zh-CN', 'zh-CN']);
    expect(() => refuseTeacherGuided([t])).toThrow(TeacherGuidanceError);
    const plain = await runEpisode({
      runtime,
      task: task('carrier-transfer-human-1'),
      agent: new ModelAgent(fakeClient([{ text: '再见###STOP###' }])),
      user: new ScriptedUser(),
      seed: 9,
      clock: steppingClock(0, 1),
    });
    expect(plain.teacher_guidance).toBeUndefined();
    expect(() => refuseTeacherGuided([plain])).not.toThrow();
  });
});

describe('ModelUser', () => {
  it('prompts from the task: persona, reason, known and unknown info, instructions, stop token', () => {
    const tk = task('carrier-wallet-pay-1');
    const p = renderCallerPrompt(domain, tk, domain.userTools!.map(toolSchema));
    expect(p).toContain('# Who you are\n李娜，二十多岁的学生，语气随和。');
    expect(p).toContain('# Why you are calling\n想用话费余额缴纳二月份的账单。');
    expect(p).toContain(
      '# What you know (say each item only when the agent asks for it)\n- 手机号 13812345678。手机钱包里有钱，但不记得具体多少。\n- phone: 13812345678',
    );
    expect(p).toContain('# What you do not know (never make it up; say you do not know)\n不知道话费余额还剩多少。');
    expect(p).toContain('- check_wallet_balance: ');
    expect(p).toContain('end that turn with ###STOP###');
  });

  it('finds values the caller states that are not in its task or the call', () => {
    expect(statedValues('我的号码是 158 6745 2301，账单 B10008 是 63.50 元，2025-03-01 交的，2 张')).toEqual([
      '2025-03-01',
      'B10008',
      '15867452301',
      '63.5',
    ]);
    const tk = task('carrier-pay-balance-1');
    const heard: Turn[] = [T({ role: 'assistant', text: '您的账单是 63.5 元。' })];
    expect(checkCallerFacts('号码 158-6745-2301，63.5 元是吧', tk, heard)).toEqual([]);
    expect(checkCallerFacts('我昨天交了 88.8 元，单号 P9999', tk, heard)).toEqual(['P9999', '88.8']);
  });

  it('a caller that invents a value makes the episode invalid (simulator error), not a score', async () => {
    const user = new ModelUser(fakeClient([{ text: '我的手机号是 13900000000。' }]));
    const t = await runEpisode({
      runtime,
      task: task('carrier-pay-balance-1'),
      agent: new ModelAgent(fakeClient([{ text: domain.greeting }])),
      user,
      seed: 2,
      clock: steppingClock(0, 1),
    });
    expect(t.valid).toBe(false);
    expect(t.termination).toBe('infrastructure_error');
    expect(t.invalid_reason).toBe(
      'simulator error: the caller stated "13900000000", not in its task or the call so far',
    );
    expect(new SimulatorError('x')).toBeInstanceOf(InfrastructureError);
    const users: UserSimulator[] = [user];
    expect(users[0]!.card).toMatchObject({ kind: 'scripted', prompt_version: 'caller-v2' });
  });
});

describe('ModelJudge', () => {
  const view = () => ({
    domain,
    task: task('carrier-pay-balance-1'),
    turns: [T({ role: 'assistant', text: 'a' }), T({ role: 'user', text: 'b' })],
  });
  const items = [
    { id: 'nl:0', text: 'told the amount' },
    { id: 'polite', text: 'was polite' },
  ];
  const reply = (a: boolean, b: boolean) => ({
    text: JSON.stringify({
      verdicts: [
        { id: 'polite', met: b, turn: 1, reason: `p${b}` },
        { id: 'nl:0', met: a, turn: 0, reason: `n${a}` },
      ],
    }),
  });

  it('judges every item in one call with the versioned prompt and returns verdicts in item order', async () => {
    const client = fakeClient([reply(true, false)]);
    const judge = new ModelJudge(client);
    expect(await judge.judge(items, view())).toEqual([
      { id: 'nl:0', met: true, turn: 0, reason: 'ntrue' },
      { id: 'polite', met: false, turn: 1, reason: 'pfalse' },
    ]);
    expect(client.requests).toHaveLength(1);
    expect(client.requests[0]!.json).toBe(true);
    expect(client.requests[0]!.sampling).toEqual({ temperature: 0, top_p: 1, top_k: null, max_tokens: 2048, seed: 0 });
    const prompt = (client.requests[0]!.messages[1] as { content: string }).content;
    expect(prompt).toContain('# Transcript (turn index in brackets)\n[0] agent: a\n[1] caller: b');
    expect(prompt).toContain('- "nl:0": told the amount\n- "polite": was polite');
    expect(judge.id).toBe('fake:m#judge-v1');
  });

  it('takes the majority of n judgements with seeds seed+i', async () => {
    const client = fakeClient([reply(true, false), reply(false, false), reply(true, true)]);
    const judge = new ModelJudge(client, { n: 3 });
    expect(await judge.judge(items, view())).toEqual([
      { id: 'nl:0', met: true, turn: 0, reason: '2/3 judgements agree: ntrue' },
      { id: 'polite', met: false, turn: 1, reason: '2/3 judgements agree: pfalse' },
    ]);
    expect(client.requests.map((r) => r.sampling.seed)).toEqual([0, 1, 2]);
  });

  it('retries an unparseable reply once, then fails as infrastructure (JudgeError)', async () => {
    const ok = fakeClient([{ text: 'I think yes' }, reply(true, true)]);
    expect((await new ModelJudge(ok).judge(items, view())).map((v) => v.met)).toEqual([true, true]);
    expect(ok.requests.map((r) => r.sampling.seed)).toEqual([0, 1000]);
    const bad = fakeClient([{ text: 'nope' }, { text: '{"verdicts": [{"id": "nl:0", "met": true, "turn": 7}]}' }]);
    const err = await new ModelJudge(bad).judge(items, view()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JudgeError);
    expect(err).toBeInstanceOf(InfrastructureError);
    expect((err as Error).message).toBe(
      'judge fake:m#judge-v1: verdict nl:0: "turn" must be null or a turn index from 0 to 1, got 7',
    );
  });

  it('parseVerdicts reads fenced JSON and names what is missing', () => {
    expect(
      parseVerdicts(
        '```json\n{"verdicts":[{"id":"x","met":"false","turn":null,"reason":"r"}]}\n```',
        [{ id: 'x', text: '' }],
        3,
      ),
    ).toEqual([{ id: 'x', met: false, turn: null, reason: 'r' }]);
    expect(() => parseVerdicts('{"verdicts": []}', [{ id: 'x', text: '' }], 3)).toThrow(
      new ModelBehaviourError('judge reply has no verdict for x'),
    );
    expect(() => parseVerdicts('{"v": 1}', [{ id: 'x', text: '' }], 3)).toThrow('judge reply has no "verdicts" list');
  });
});
