/**
 * Issue 12, GRPO rows: the prompt of every exported row (GRPO conversation and turn level, SFT)
 * is exactly what the model was sent. A fake OpenAI-compatible endpoint logs every request; the
 * exported rows are compared with the logged bodies byte for byte (JSON text), audio included.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { toBase64 } from '../../src/adapters/shared/openai-wire.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent } from '../../src/core/participants/model-agent.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import type { ChatMessage } from '../../src/core/schema/chat.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Trajectory, Turn } from '../../src/core/schema/trajectory.ts';
import {
  conversationGroups,
  grpoRows,
  scoreGroups,
  sftRecords,
  turnGroups,
  type Group,
  type TurnSample,
} from '../../src/core/training/index.ts';
import { completion, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { modelBrain } from '../participants/brain.ts';

let domain: Domain;
let rt: DomainRuntime;
let server: TestServer | undefined;
const clock = () => steppingClock(domain.now, 1000);
const SAMPLING = { temperature: 0.7, top_p: 0.9, top_k: 20, max_tokens: 200 };

beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  rt = await DomainRuntime.create(domain, await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const json = (x: unknown) => JSON.stringify(x);

describe('exported prompts are the logged requests, byte for byte', () => {
  it('conversation and turn level GRPO rows and SFT records (text), with the seed that was sent', async () => {
    server = await startOpenAiServer(modelBrain(domain));
    const client = new OpenAiModelClient({ flavor: 'vllm', model: 'agent-model', baseURL: server.url, maxRetries: 0 });
    const agent = () => new ModelAgent(client, { sampling: SAMPLING });
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const conv = await conversationGroups({
      runtime: rt,
      agent,
      user: () => new ScriptedUser(),
      clock,
      tasks: [task],
      k: 2,
      seed: 5,
    });
    const convRequests = server.requests.map((r) => r.body);
    const source = conv.trajectories[0]!;
    const { groups: turns } = await turnGroups({
      runtime: rt,
      task,
      trajectory: source,
      agent,
      k: 2,
      seed: 11,
      points: [3],
    });
    const turnRequests = server.requests.slice(convRequests.length).map((r) => r.body);
    expect(turnRequests.map((b) => b.seed)).toEqual([11, 12]);

    const groups: Group<Trajectory | TurnSample>[] = [...conv.groups, ...turns];
    const rows = grpoRows(domain, scoreGroups(groups));
    expect(rows.map((r) => [r.granularity, r.sampling_seed, r.prefix_messages])).toEqual([
      ['conversation', 5, 1],
      ['conversation', 6, 1],
      ['turn', 11, 4],
      ['turn', 12, 4],
    ]);
    for (const row of rows) {
      const mine = (row.granularity === 'turn' ? turnRequests : convRequests).filter(
        (b) => b.seed === row.sampling_seed,
      );
      expect(mine.length).toBeGreaterThan(0);
      // The row's prompt is the first request's messages; every later request is a prefix of the row.
      expect(json(row.messages.slice(0, row.prefix_messages))).toBe(json(mine[0].messages));
      for (const body of mine) expect(json(row.messages.slice(0, body.messages.length))).toBe(json(body.messages));
      expect(json(row.tools)).toBe(json(mine[0].tools));
      expect(row.sampling).toEqual({ ...SAMPLING, seed: row.sampling_seed });
      expect([mine[0].temperature, mine[0].top_p, mine[0].top_k, mine[0].max_tokens, mine[0].seed]).toEqual([
        0.7,
        0.9,
        20,
        200,
        row.sampling_seed,
      ]);
    }
    // Conversation rows: 7 agent requests each (brain step k answers a request with k assistant messages).
    expect(convRequests.filter((b) => b.seed === 5)).toHaveLength(7);
    expect(rows[0]!.token_ids).toEqual([[0], [1], [2], [3], [4], [5], [6]]);
    // Turn rows: the candidate's own token ids (brain step 2: the context holds two agent turns).
    expect(rows[2]!.token_ids).toEqual([[2]]);
    expect(rows[2]!.messages[0]).toEqual({ role: 'system', content: turnRequests[0].messages[0].content });

    // SFT: the record of each trajectory holds every request it sent as a prefix.
    const { records } = sftRecords(domain, conv.trajectories);
    for (const record of records) {
      const mine = convRequests.filter((b) => b.seed === record.seed);
      for (const body of mine) expect(json(record.messages.slice(0, body.messages.length))).toBe(json(body.messages));
      expect(json(record.tools)).toBe(json(mine[0].tools));
    }
    // The recorded request on the turn is the typed record of what was sent.
    const first = conv.trajectories[0]!.turns[0]!;
    expect(first.role === 'assistant' && first.request?.sampling).toEqual({ ...SAMPLING, seed: 5 });
  });

  it('turn level with caller audio: audio parts by path resolve to the bytes that were sent', async () => {
    server = await startOpenAiServer(() => ({ json: completion({ model: 'omni', content: '好的，请稍等。' }) }));
    const files = new Map<string, Uint8Array>([
      ['audio/a.wav', new Uint8Array([82, 73, 70, 70, 1, 2, 3])],
      ['audio/b.wav', new Uint8Array([82, 73, 70, 70, 4, 5, 6, 7])],
    ]);
    const client = new OpenAiModelClient({ flavor: 'vllm-omni', model: 'omni', baseURL: server.url, maxRetries: 0 });
    const agent = () =>
      new ModelAgent(client, {
        sampling: SAMPLING,
        userAudio: (t) => (t.audio ? toBase64(files.get(t.audio.degraded)!) : null),
      });
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const audio = (degraded: string) => ({
      clean: degraded.replace('.wav', '.clean.wav'),
      degraded,
      duration_ms: 1000,
      preset: 'regular',
      tts: 'espeak-ng',
      timeline: [],
    });
    const context: Turn[] = [
      { role: 'assistant', text: domain.greeting!, tool_calls: [], t_ms: 0 },
      { role: 'user', text: '我想交话费。', tool_calls: [], t_ms: 1, audio: audio('audio/a.wav') },
      { role: 'user', text: '手机号13800000001。', tool_calls: [], t_ms: 2, audio: audio('audio/b.wav') },
      { role: 'assistant', text: '', tool_calls: [], t_ms: 3 },
    ];
    const trajectory: Trajectory = {
      schema_version: 1,
      id: 'carrier/x/0/0',
      domain: 'carrier',
      task_id: task.id,
      trial: 0,
      seed: 0,
      participants: { agent: 'reference', user: 'scripted' },
      termination: 'user_stop',
      valid: true,
      invalid_reason: null,
      turns: context,
      started_at_ms: 0,
      ended_at_ms: 3,
      reward_info: null,
    };
    const { groups } = await turnGroups({ runtime: rt, task, trajectory, agent, k: 2, seed: 3, points: [3] });
    const rows = grpoRows(domain, scoreGroups(groups));
    const sent = server.requests.map((r) => r.body);
    expect(rows.map((r) => r.sampling_seed)).toEqual([3, 4]);
    const resolve = (m: ChatMessage) =>
      m.role === 'user' && typeof m.content !== 'string'
        ? {
            role: 'user',
            content: m.content.map((p) =>
              p.type === 'audio'
                ? { type: 'audio_url', audio_url: { url: `data:audio/wav;base64,${toBase64(files.get(p.audio)!)}` } }
                : p,
            ),
          }
        : m;
    for (const [i, row] of rows.entries()) {
      const prompt = row.messages.slice(0, row.prefix_messages);
      expect(json(prompt.map(resolve))).toBe(json(sent[i].messages));
      expect(sent[i].seed).toBe(row.sampling_seed);
    }
    // Merged caller turns: one user message with both audio parts and no transcript beside them.
    expect(rows[0]!.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'audio', audio: 'audio/a.wav' },
        { type: 'audio', audio: 'audio/b.wav' },
      ],
    });
    expect(rows[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: '好的，请稍等。' });
  });
});
