import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { grpoParquet, readJsonl, writeGrpoParquet, writeJsonl } from '../../src/adapters/node/training-files.ts';
import type { Trajectory } from '../../src/core/schema/trajectory.ts';
import { renderAgentPrompt } from '../../src/core/prompts/agent.ts';
import {
  chatMessages,
  chatTools,
  conversationGroups,
  GrpoRow,
  grpoRows,
  milestoneGroups,
  runWithMilestones,
  scoreGroups,
  SftRecord,
  sftRecords,
  turnGroups,
  TeacherGuidanceError,
  type Group,
  type TurnSample,
} from '../../src/core/training/index.ts';
import { MINI_NOW, miniDomain } from '../fixtures/mini-domain.ts';
import { SkipConfirmAgent } from './stochastic-agent.ts';

let rt: DomainRuntime;
let reference: Trajectory;
const clock = () => steppingClock(MINI_NOW, 1000);
const user = () => new ScriptedUser();
const dirs: string[] = [];

beforeAll(async () => {
  rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
  reference = (
    await runWithMilestones({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task: rt.domain.tasks[0]!,
      seed: 1,
    })
  ).trajectory;
});
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('chat messages', () => {
  it('renders the agent view as a model agent is sent it: rendered system prompt, OpenAI chat format', () => {
    const task = rt.domain.tasks[0]!;
    const msgs = chatMessages(rt.domain, task, reference.turns);
    expect(msgs.map((m) => m.role)).toEqual([
      'system',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(msgs[0]).toEqual({
      role: 'system',
      content: renderAgentPrompt({ domain: rt.domain, task, tools: chatTools(rt.domain), guidance: null }),
    });
    expect(msgs[0]!.content).toContain('- find_account: ');
    expect(msgs[2]).toEqual({ role: 'user', content: 'I would like to pay ten dollars off my balance.' });
    expect(msgs[5]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'ref-1', type: 'function', function: { name: 'find_account', arguments: '{"phone":"5550001"}' } },
      ],
    });
    expect(msgs[6]).toEqual({
      role: 'tool',
      tool_call_id: 'ref-1',
      content: '{"account_id":"A1","name":"Ada","balance":30}',
    });
  });

  it('a caller turn with channel audio is its degraded WAV only; the transcript is a separate supervision field', () => {
    const task = rt.domain.tasks[0]!;
    const turns = reference.turns.map((t, i) =>
      i === 1 && t.role === 'user'
        ? {
            ...t,
            audio: {
              clean: 'audio/mini/pay-10/0-0/turn-001.clean.wav',
              degraded: 'audio/mini/pay-10/0-0/turn-001.degraded.wav',
              duration_ms: 2100,
              preset: 'regular',
              tts: 'espeak-ng',
              timeline: [],
            },
          }
        : t,
    ) as typeof reference.turns;
    const msgs = chatMessages(rt.domain, task, turns);
    expect(msgs[2]!.content).toEqual([{ type: 'audio', audio: 'audio/mini/pay-10/0-0/turn-001.degraded.wav' }]);
    // One content shape: every user message is a list of parts once audio is in the view.
    expect(msgs[4]!.content).toEqual([{ type: 'text', text: (turns[3] as { text: string }).text }]);
    const record = sftRecords(rt.domain, [{ ...reference, turns }], {}, { audioPath: (ref) => `../run/${ref}` })
      .records[0]!;
    expect(record.messages[2]!.content).toEqual([
      { type: 'audio', audio: '../run/audio/mini/pay-10/0-0/turn-001.degraded.wav' },
    ]);
    expect(record.caller_transcripts).toEqual([
      { message: 2, text: 'I would like to pay ten dollars off my balance.' },
    ]);
  });
});

describe('SFT export', () => {
  it('one validated record per kept trajectory, with tools and reward breakdown; filters by reward and components', async () => {
    const { trajectories } = await conversationGroups({
      runtime: rt,
      agent: () => new SkipConfirmAgent(0.5),
      user,
      clock,
      tasks: rt.domain.tasks,
      k: 4,
      seed: 0,
    });
    const all = sftRecords(rt.domain, trajectories);
    expect(all.records).toHaveLength(4);
    for (const r of all.records) expect(SftRecord.safeParse(r).success).toBe(true);
    expect(all.records[0]!.tools.map((t) => t.function.name)).toEqual(['find_account', 'pay']);
    expect(all.records.map((r) => [r.seed, r.reward, r.components.ASSERTIONS, r.components.DB])).toEqual([
      [0, 1, 1, 1],
      [1, 0, 0, 1],
      [2, 1, 1, 1],
      [3, 1, 1, 1],
    ]);
    const good = sftRecords(rt.domain, trajectories, { minReward: 1 });
    expect(good.records.map((r) => r.seed)).toEqual([0, 2, 3]);
    expect(good.rejected).toEqual([{ id: 'mini/pay-10/1/1', reason: 'reward 0 < 1' }]);
    expect(sftRecords(rt.domain, trajectories, { requireComponents: ['ASSERTIONS'] }).records).toHaveLength(3);
    const teacher = { ...reference, teacher_guidance: true };
    expect(sftRecords(rt.domain, [teacher]).records[0]!.teacher_guidance).toBe(true);
    expect(sftRecords(rt.domain, [teacher], { allowTeacher: false }).rejected[0]!.reason).toBe('teacher-guided');

    const dir = await mkdtemp(join(tmpdir(), 'sb-sft-'));
    dirs.push(dir);
    await writeJsonl(join(dir, 'sft.jsonl'), good.records);
    expect((await readJsonl(join(dir, 'sft.jsonl'), SftRecord)).map((r) => r.id)).toEqual(
      good.records.map((r) => r.id),
    );
  });
});

describe('GRPO export', () => {
  it('rows for all three granularities validate; prefixes and advantages are carried', async () => {
    const task = rt.domain.tasks[0]!;
    const base = { runtime: rt, agent: () => new SkipConfirmAgent(0.5), user, clock };
    const conv = await conversationGroups({ ...base, tasks: [task], k: 4, seed: 0 });
    const ms = await milestoneGroups({ ...base, tasks: [task], k: 4, seed: 0 });
    const { groups: turns } = await turnGroups({
      runtime: rt,
      task,
      trajectory: reference,
      agent: base.agent,
      k: 4,
      seed: 0,
      points: [6],
    });
    const all: Group<Trajectory | TurnSample>[] = [...conv.groups, ...ms.groups, ...turns];
    const batch = scoreGroups(all);
    const rows = grpoRows(rt.domain, batch, {
      milestoneTurns: new Map(ms.milestones.map((m) => [m.id, m.turns])),
    });
    expect(rows).toHaveLength(16);
    for (const r of rows) expect(GrpoRow.safeParse(r).success).toBe(true);
    expect(rows.map((r) => [r.granularity, r.sample_index, r.sampling_seed, r.final_reward, r.outcome])).toEqual([
      ['conversation', 0, 0, 1, 1],
      ['conversation', 1, 1, 0, 0],
      ['conversation', 2, 2, 1, 1],
      ['conversation', 3, 3, 1, 1],
      ['milestone', 0, 1, 0, 0],
      ['milestone', 1, 2, 1, 1],
      ['milestone', 2, 3, 1, 1],
      ['milestone', 3, 4, 1, 1],
      ['milestone', 0, 1, 1, 1],
      ['milestone', 1, 2, 1, 1],
      ['milestone', 2, 3, 1, 1],
      ['milestone', 3, 4, 1, 1],
      ['turn', 0, 0, 1, 1],
      ['turn', 1, 1, 4 / 6, 0],
      ['turn', 2, 2, 1, 1],
      ['turn', 3, 3, 1, 1],
    ]);
    expect(rows[4]!.prefix_ref).toBe('mini/pay-10/0/0#m1');
    // m1 = 6 turns: system + greet, request, ask, phone, call, result = 7 messages.
    expect(rows[4]!.prefix_messages).toBe(7);
    expect(rows[12]!.prefix_ref).toBe('mini/pay-10/0/1@6');
    expect(rows[12]!.prefix_messages).toBe(7);
    expect(rows[13]!.messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'pay' } }] });
    expect(rows[0]!.advantage).toBeCloseTo(0.25 / (0.5 + 1e-6), 12);
    expect(rows[8]!.advantage).toBe(0);
    expect(rows.every((r) => r.token_ids === null && r.logprobs === null)).toBe(true);
    expect(rows[0]!.policy).toBe('skip-confirm:0.5');

    // Parquet: round trip through an independent reader.
    const dir = await mkdtemp(join(tmpdir(), 'sb-grpo-'));
    dirs.push(dir);
    const file = join(dir, 'grpo.parquet');
    await writeGrpoParquet(file, rows);
    const buf = (await readFile(file)).buffer;
    const meta = parquetMetadata(buf as ArrayBuffer);
    expect(Number(meta.num_rows)).toBe(16);
    const back = (await parquetReadObjects({ file: buf as ArrayBuffer })) as Record<string, unknown>[];
    const restored = back.map((o) => ({
      ...o,
      sampling_seed: Number(o.sampling_seed),
      ...Object.fromEntries(
        ['messages', 'tools', 'step_rewards', 'returns', 'sampling', 'token_ids', 'logprobs'].map((k) => [
          k,
          o[k] === null || o[k] === undefined ? null : JSON.parse(o[k] as string),
        ]),
      ),
    }));
    expect(restored.map((r) => GrpoRow.parse(r))).toEqual(rows);
  });

  it('refuses teacher-guided samples and empty Parquet files', () => {
    const guided = { ...reference, teacher_guidance: true };
    const rewards = { final: 1, outcome: 1 as const, step_rewards: [1], returns: [1], shaped: 1 };
    const batch = scoreGroups([
      {
        id: 'conversation:x',
        granularity: 'conversation',
        prefix: 'x',
        task_id: 'pay-10',
        samples: [{ rewards, seed: 0, item: guided }],
      },
    ]);
    expect(() => grpoRows(rt.domain, batch)).toThrow(TeacherGuidanceError);
    expect(() => grpoParquet([])).toThrow(/no GRPO rows/);
  });
});
