import { beforeAll, describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Judge } from '../../src/core/participants/types.ts';
import { runEpisode, type EpisodeCheckpoint } from '../../src/core/rollout/episode.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';
import {
  conversationGroups,
  forkMilestone,
  milestoneGroups,
  referencePrefix,
  runWithMilestones,
  scoreGroups,
  scoreTurnCandidate,
  turnGroups,
  TeacherGuidanceError,
  refuseTeacherGuidance,
} from '../../src/core/training/index.ts';
import { MINI_NOW, miniDomain } from '../fixtures/mini-domain.ts';
import { SkipConfirmAgent } from './stochastic-agent.ts';

let rt: DomainRuntime;
let task: Task;
const clock = (_seed?: number, fromMs?: number) => steppingClock(fromMs ?? MINI_NOW, 1000);
const user = () => new ScriptedUser();
const strip = (turns: readonly Turn[]) => turns.map(({ t_ms: _t, ...rest }) => rest);

beforeAll(async () => {
  rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
  task = rt.domain.tasks[0]!;
});

/** Shaped total G_0 of the mini task's successful and failed episodes (γ = 0.99, ±0.1 per call). */
const SHAPED_PASS = 1.1450596509000002;
const SHAPED_FAIL = 0.19503990000000002;

describe('episode resume hook', () => {
  it('an episode resumed from any checkpoint ends exactly like the original', async () => {
    const points: EpisodeCheckpoint[] = [];
    const original = await runEpisode({
      runtime: rt,
      task,
      agent: new ReferenceAgent(),
      user: user(),
      seed: 7,
      clock: clock(),
      onStep: async (p) => {
        if (p.step === 3 || p.step === 6) points.push(await p.checkpoint());
      },
    });
    expect(points.map((p) => [p.step, p.turns.length, p.next, p.errors])).toEqual([
      [3, 3, 'user', 0],
      [6, 7, 'user', 0],
    ]);
    for (const resume of points) {
      const again = await runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: user(),
        seed: 7,
        clock: clock(),
        resume,
      });
      expect(strip(again.turns)).toEqual(strip(original.turns));
      expect(again.termination).toBe('user_stop');
    }
  });
});

describe('referencePrefix', () => {
  const tool = (name: string, args: Record<string, unknown>, error = false): Turn => ({
    role: 'tool',
    requestor: 'assistant',
    tool_call_id: name,
    name,
    arguments: args,
    content: '',
    error,
    writes: [],
    t_ms: 0,
  });
  it('counts matched reference actions in order, ignoring failed calls', () => {
    expect(referencePrefix(task, [])).toBe(0);
    expect(
      referencePrefix(task, [tool('find_account', { phone: '1' }, true), tool('find_account', { phone: '5550001' })]),
    ).toBe(1);
    expect(
      referencePrefix(task, [
        tool('find_account', { phone: '5550001' }),
        tool('pay', { account_id: 'A1', amount: 10 }),
      ]),
    ).toBe(2);
  });
  it('is null when a successful call leaves the reference', () => {
    expect(referencePrefix(task, [tool('find_account', { phone: '5550002' })])).toBeNull();
    expect(referencePrefix(task, [tool('pay', { account_id: 'A1', amount: 10 })])).toBeNull();
  });
});

describe('conversation level', () => {
  it('K episodes per task with distinct seeds; advantages from the stochastic agent', async () => {
    const { groups } = await conversationGroups({
      runtime: rt,
      agent: () => new SkipConfirmAgent(0.5),
      user,
      clock,
      tasks: [task],
      k: 6,
      seed: 0,
    });
    expect(groups).toHaveLength(1);
    const g = groups[0]!;
    expect(g.id).toBe('conversation:pay-10');
    expect(g.samples.map((s) => s.seed)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(g.samples.map((s) => s.rewards.final)).toEqual([1, 0, 1, 1, 0, 0]);
    expect(g.samples.map((s) => s.rewards.shaped)).toEqual([
      SHAPED_PASS,
      SHAPED_FAIL,
      SHAPED_PASS,
      SHAPED_PASS,
      SHAPED_FAIL,
      SHAPED_FAIL,
    ]);
    const {
      groups: [scored],
      supply,
    } = scoreGroups(groups);
    // μ = 0.5, sample σ = sqrt(1.5/5) = 0.5477225575051661.
    const a = 0.5 / (Math.sqrt(0.3) + 1e-6);
    expect(scored!.advantages).toEqual([a, -a, a, a, -a, -a]);
    expect(a).toBeCloseTo(0.912869, 6);
    expect(supply).toEqual({ groups: 1, outcome: 1, final: 1, shaped: 1, kept: 1, partial_rows: 0 });
  });

  it('scripted reference agent: identical rewards, a flat group with zero advantage', async () => {
    const { groups } = await conversationGroups({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      tasks: [task],
      k: 3,
      seed: 10,
    });
    const batch = scoreGroups(groups, { reward: 'shaped' });
    expect(batch.groups[0]!.advantages).toEqual([0, 0, 0]);
    expect(batch.supply).toEqual({ groups: 1, outcome: 0, final: 0, shaped: 0, kept: 0, partial_rows: 0 });
  });
});

describe('milestone level', () => {
  it('saves a milestone after each reference-prefix call, before the next agent decision', async () => {
    const { trajectory, milestones } = await runWithMilestones({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 0,
    });
    expect(trajectory.reward_info?.reward).toBe(1);
    expect(
      milestones.map((m) => [
        m.id,
        m.level,
        m.checkpoint.turns.length,
        m.checkpoint.next,
        m.checkpoint.step,
        m.matched.map((c) => c.name),
      ]),
    ).toEqual([
      ['mini/pay-10/0/0#m1', 1, 6, 'assistant', 5, ['find_account']],
      ['mini/pay-10/0/0#m2', 2, 10, 'assistant', 8, ['find_account', 'pay']],
    ]);
    // The database snapshot holds the payment at m2 and not at m1.
    expect(milestones[0]!.checkpoint.env.writes).toHaveLength(0);
    expect(milestones[1]!.checkpoint.env.writes.map((w) => [w.table, w.column, w.after])).toEqual([
      ['accounts', 'balance', 20],
      ['payments', 'payment_id', 1],
      ['payments', 'account_id', 'A1'],
      ['payments', 'amount', 10],
    ]);
  });

  it('an exact fork replays the source episode; K forks of m1 differ and get exact advantages', async () => {
    const agent = () => new SkipConfirmAgent(0.5);
    const { trajectory, milestones } = await runWithMilestones({ runtime: rt, agent, user, clock, task, seed: 0 });
    const [replayed] = await forkMilestone({
      runtime: rt,
      agent,
      user,
      clock,
      task,
      milestone: milestones[0]!,
      seeds: [0],
      exact: true,
    });
    expect(strip(replayed!.turns)).toEqual(strip(trajectory.turns));
    expect(replayed!.reward_info?.reward).toBe(trajectory.reward_info?.reward);

    const out = await milestoneGroups({ runtime: rt, agent, user, clock, tasks: [task], k: 4, seed: 0 });
    expect(out.groups.map((g) => [g.id, g.samples.map((s) => s.seed), g.samples.map((s) => s.rewards.final)])).toEqual([
      ['milestone:mini/pay-10/0/0#m1', [1, 2, 3, 4], [0, 1, 1, 1]],
      ['milestone:mini/pay-10/0/0#m2', [1, 2, 3, 4], [1, 1, 1, 1]],
    ]);
    // Every fork starts with the milestone's turns.
    for (const t of out.trajectories.slice(0, 4))
      expect(strip(t.turns.slice(0, 6))).toEqual(strip(out.sources[0]!.turns.slice(0, out.milestones[0]!.turns)));
    const batch = scoreGroups(out.groups);
    const a = 0.25 / (0.5 + 1e-6);
    expect(batch.groups[0]!.advantages).toEqual([-0.75 / (0.5 + 1e-6), a, a, a]);
    expect(batch.groups[1]!.advantages).toEqual([0, 0, 0, 0]);
    expect(batch.supply).toEqual({ groups: 2, outcome: 0.5, final: 0.5, shaped: 0.5, kept: 0.5, partial_rows: 0 });
    // Fork timestamps continue from the fork point: the milestone's last turn was at MINI_NOW + 6 s.
    const fork = out.trajectories[0]!;
    expect(fork.turns.slice(5, 8).map((t) => t.t_ms - MINI_NOW)).toEqual([6000, 6001, 7001]);
    expect(fork.ended_at_ms).toBeGreaterThan(fork.turns.at(-1)!.t_ms);
    expect([fork.started_at_ms - MINI_NOW, out.incomplete, out.invalid_attempts]).toEqual([0, [], 0]);
  });
});

describe('turn level', () => {
  it('K candidates at the confirmation point: the skipped confirmation scores 4/6, outcome 0', async () => {
    const { trajectory } = await runWithMilestones({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 1,
    });
    const { groups } = await turnGroups({
      runtime: rt,
      task,
      trajectory,
      agent: () => new SkipConfirmAgent(0.5),
      k: 4,
      seed: 0,
      points: [4, 6],
    });
    expect(groups.map((g) => g.id)).toEqual(['turn:mini/pay-10/0/1@4', 'turn:mini/pay-10/0/1@6']);
    expect(groups[0]!.samples.map((s) => s.rewards.final)).toEqual([1, 1, 1, 1]);
    const at6 = groups[1]!;
    expect(
      at6.samples.map((s) => [
        s.seed,
        s.item.candidate.tool_calls.map((c) => c.name),
        s.rewards.final,
        s.rewards.outcome,
      ]),
    ).toEqual([
      [0, [], 1, 1],
      [1, ['pay'], 4 / 6, 0],
      [2, [], 1, 1],
      [3, [], 1, 1],
    ]);
    expect(at6.samples[1]!.item.score.items.map((i) => [i.id, i.status])).toEqual([
      ['right_tool', 'passed'],
      ['calls_succeed', 'passed'],
      ['grounded_args', 'failed'],
      ['no_unauthorized_write', 'passed'],
      ['confirmation', 'failed'],
      ['channel_reaction', 'not_applicable'],
      ['spoken_quality', 'passed'],
    ]);
    // "ten dollars" was heard, not "10": the amount is not grounded.
    expect(at6.samples[1]!.item.score.items[2]!.reason).toBe('not heard or looked up: pay: "10"');
    const batch = scoreGroups(groups);
    // μ = 11/12, sample σ = 1/6.
    const up = 1 / 12 / (1 / 6 + 1e-6);
    const want = [up, -0.25 / (1 / 6 + 1e-6), up, up];
    batch.groups[1]!.advantages.forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 12));
    expect(want[1]).toBeCloseTo(-1.499991, 6);
  });

  it('vetoes a write outside the whitelist and a formatted reply; a judge decides its item', async () => {
    const { trajectory } = await runWithMilestones({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 1,
    });
    const context = trajectory.turns.slice(0, 8); // after the caller's "yes"
    const wrongAccount = await scoreTurnCandidate(rt, task, context, {
      seed: 0,
      agent: 't',
      text: '',
      tool_calls: [{ id: 'x', name: 'pay', arguments: { account_id: 'A2', amount: 1 } }],
    });
    expect(wrongAccount.score).toBe(0);
    expect(wrongAccount.items.find((i) => i.id === 'no_unauthorized_write')).toMatchObject({
      status: 'failed',
      veto: true,
    });
    expect(wrongAccount.items.find((i) => i.id === 'no_unauthorized_write')!.reason).toContain('accounts[A2].balance');

    const judge: Judge = {
      id: 'stub',
      judge: async (items) => items.map((i) => ({ id: i.id, met: false, turn: null, reason: 'unhelpful' })),
    };
    const markdown = await scoreTurnCandidate(
      rt,
      task,
      context,
      { seed: 0, agent: 't', text: '**Done!**\n- item one\n- item two', tool_calls: [] },
      { judge },
    );
    expect(markdown.items.find((i) => i.id === 'spoken_quality')?.status).toBe('failed');
    expect(markdown.items.find((i) => i.id === 'judge:policy')).toMatchObject({
      kind: 'judged',
      status: 'failed',
      reason: 'unhelpful',
    });
    expect([markdown.score, markdown.outcome, markdown.partial]).toEqual([0, 0, false]);

    const good = await scoreTurnCandidate(
      rt,
      task,
      context,
      {
        seed: 0,
        agent: 't',
        text: '',
        tool_calls: [{ id: 'x', name: 'pay', arguments: { account_id: 'A1', amount: 10 } }],
      },
      {
        judge: {
          id: 'yes',
          judge: async (items) => items.map((i) => ({ id: i.id, met: true, turn: null, reason: 'fine' })),
        },
      },
    );
    // right tool, call succeeded, confirmed, whitelisted, plain, judged sound — only the amount is ungrounded: 6 of 7.
    expect([good.score, good.outcome, good.partial]).toEqual([6 / 7, 0, false]);
  });
});

describe('teacher guidance', () => {
  it('GRPO refuses teacher-guided trajectories', async () => {
    const { trajectory } = await runWithMilestones({
      runtime: rt,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 1,
    });
    expect(() => refuseTeacherGuidance([trajectory])).not.toThrow();
    expect(() => refuseTeacherGuidance([{ ...trajectory, teacher_guidance: true }])).toThrow(TeacherGuidanceError);
    await expect(
      turnGroups({
        runtime: rt,
        task,
        trajectory: { ...trajectory, teacher_guidance: true },
        agent: () => new ReferenceAgent(),
        k: 2,
        seed: 0,
      }),
    ).rejects.toThrow(/teacher-guided/);
  });
});
