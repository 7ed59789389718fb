/**
 * GRPO groups at all three granularities on tau2-bench's airline domain (real data), with a
 * seeded agent that sometimes leaves out a write: rewards are checked against what each sample
 * did, and advantages against the definition Â = (r − μ)/(σ + ε), sample σ, ε = 1e-6.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { phrasesFor } from '../../src/core/participants/phrases.ts';
import { STOP_TOKENS, type Agent, type EpisodeView, type ParticipantReply } from '../../src/core/participants/types.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { Trajectory } from '../../src/core/schema/trajectory.ts';
import {
  conversationGroups,
  milestoneGroups,
  runWithMilestones,
  scoreGroups,
  turnGroups,
} from '../../src/core/training/index.ts';
import { planPosition } from './stochastic-agent.ts';
import { tau2Runtime } from '../domains/tau2-helpers.ts';

/** Follows the reference plan; at each write it drops the confirmation and the write with probability `p`. */
class SkipWriteAgent implements Agent {
  readonly id = 'skip-write';
  constructor(private readonly p: number) {}
  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const plan = referencePlan(view.domain, view.task);
    let at = planPosition(plan, view.turns);
    const step = plan[at];
    const after = plan[at + 1];
    const isWrite = (s: typeof after) =>
      !!s && 'call' in s && view.domain.tools.find((t) => t.name === s.call.name)?.kind === 'write';
    if (step && 'say' in step && isWrite(after) && view.rng.next() < this.p) at += 2;
    const next = plan[at];
    if (!next) return { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    return 'say' in next ? { text: next.say } : { text: '', tool_calls: [structuredClone(next.call)] };
  }
}

/** Follows the reference plan; each write's payment_id is replaced by an unknown one with probability `p`. */
class WrongPaymentAgent implements Agent {
  readonly id = 'wrong-payment';
  constructor(private readonly p: number) {}
  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const plan = referencePlan(view.domain, view.task);
    const step = plan[planPosition(plan, view.turns)];
    if (!step) return { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    if ('say' in step) return { text: step.say };
    const call = structuredClone(step.call);
    if ('payment_id' in call.arguments && view.rng.next() < this.p) call.arguments.payment_id = 'gift_card_0000000';
    return { text: '', tool_calls: [call] };
  }
}

const EPS = 1e-6;
function advantages(rewards: readonly number[]): number[] {
  const mu = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const sd = Math.sqrt(rewards.reduce((a, r) => a + (r - mu) ** 2, 0) / (rewards.length - 1));
  return rewards.map((r) => (sd === 0 ? 0 : (r - mu) / (sd + EPS)));
}
const wrote = (t: Trajectory) => t.turns.some((x) => x.role === 'tool' && !x.error && x.writes.length > 0);

let runtime: DomainRuntime;
let tasks: Map<string, Task>;
let clock: (seed: number) => ReturnType<typeof steppingClock>;
const user = () => new ScriptedUser();

beforeAll(async () => {
  const loaded = await tau2Runtime('tau2-airline');
  runtime = loaded.runtime;
  tasks = new Map(loaded.domain.tasks.map((t) => [t.id, t]));
  clock = () => steppingClock(loaded.domain.now, 1000);
});

describe('GRPO groups on tau2-airline', () => {
  it('conversation level: reward 1 exactly when the downgrade was written; advantages by definition', async () => {
    const task = tasks.get('11')!;
    const { groups } = await conversationGroups({
      runtime,
      agent: () => new SkipWriteAgent(0.5),
      user,
      clock,
      tasks: [task],
      k: 6,
      seed: 0,
    });
    expect(groups).toHaveLength(1);
    const g = groups[0]!;
    expect(g.samples.map((s) => s.seed)).toEqual([0, 1, 2, 3, 4, 5]);
    const finals = g.samples.map((s) => s.rewards.final);
    expect(finals).toEqual(g.samples.map((s) => (wrote(s.item) ? 1 : 0)));
    expect(new Set(finals).size).toBe(2); // the seeds give both outcomes
    const batch = scoreGroups(groups);
    batch.groups[0]!.advantages.forEach((a, i) => expect(a).toBeCloseTo(advantages(finals)[i]!, 12));
    expect(batch.supply.outcome).toBe(1);
  });

  it('milestone level: a milestone after each matched write; continuations share its prefix', async () => {
    const task = tasks.get('17')!; // three writes: flights, passengers, baggages
    const reference = await runWithMilestones({
      runtime,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 0,
    });
    expect(reference.trajectory.reward_info?.reward).toBe(1);
    expect(reference.milestones.map((m) => m.matched.map((c) => c.name))).toEqual([
      ['update_reservation_flights'],
      ['update_reservation_flights', 'update_reservation_passengers'],
      ['update_reservation_flights', 'update_reservation_passengers', 'update_reservation_baggages'],
    ]);
    const out = await milestoneGroups({
      runtime,
      agent: () => new SkipWriteAgent(0.5),
      user,
      clock,
      tasks: [task],
      k: 4,
      seed: 0,
    });
    expect(out.groups.length).toBeGreaterThan(0);
    for (const g of out.groups) {
      const finals = g.samples.map((s) => s.rewards.final);
      // A continuation scores 1 exactly when it made every remaining write.
      const level = out.milestones.find((m) => g.prefix === m.id)!.level;
      expect(finals).toEqual(
        g.samples.map((s) =>
          s.item.turns.filter((x) => x.role === 'tool' && !x.error && x.writes.length > 0).length === 3 ? 1 : 0,
        ),
      );
      expect(level).toBeGreaterThan(0);
      const batch = scoreGroups([g]);
      batch.groups[0]!.advantages.forEach((a, i) => expect(a).toBeCloseTo(advantages(finals)[i]!, 12));
    }
  });

  it('turn level: at the write, a payment id nobody mentioned loses reward', async () => {
    const task = tasks.get('11')!;
    const { trajectory } = await runWithMilestones({
      runtime,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 0,
    });
    const writeAt = trajectory.turns.findIndex(
      (t) => t.role === 'assistant' && t.tool_calls[0]?.name === 'update_reservation_flights',
    );
    expect(writeAt).toBeGreaterThan(0);
    const { groups } = await turnGroups({
      runtime,
      task,
      trajectory,
      agent: () => new WrongPaymentAgent(0.5),
      k: 6,
      seed: 0,
      points: [writeAt],
    });
    const samples = groups[0]!.samples;
    const ids = samples.map((s) => s.item.candidate.tool_calls[0]?.arguments.payment_id);
    expect(new Set(ids)).toEqual(new Set(['gift_card_1642017', 'gift_card_0000000']));
    const right = samples.filter((_, i) => ids[i] === 'gift_card_1642017').map((s) => s.rewards.final);
    const wrong = samples.filter((_, i) => ids[i] === 'gift_card_0000000');
    // The unknown payment id makes the call fail: calls_succeed fails, so it scores below every right call.
    for (const s of wrong) {
      expect(s.item.score.items.find((i) => i.id === 'calls_succeed')?.status).toBe('failed');
      expect(s.rewards.final).toBeLessThan(Math.min(...right));
    }
    // Task 11's reference has no lookup, so no candidate's arguments are grounded: every outcome
    // is 0. Filtered on the outcome (DAPO style) the group is flat and gets zero advantage
    // although scores differ; filtered on the reward (default) the scores rank the candidates.
    expect(samples.map((s) => s.rewards.outcome)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(scoreGroups(groups, { filter: 'outcome' }).groups[0]!.advantages).toEqual([0, 0, 0, 0, 0, 0]);
    const ranked = scoreGroups(groups).groups[0]!.advantages;
    ids.forEach((id, i) => expect(Math.sign(ranked[i]!)).toBe(id === 'gift_card_1642017' ? 1 : -1));
  });
});
