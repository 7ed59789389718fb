import { describe, expect, it } from 'vitest';
import { carrierRuntime } from '../../domains/carrier-helpers.ts';
import { evolve } from '../../../src/core/evolution/evolve.ts';
import { defaultThresholds, labelTasks } from '../../../src/core/evolution/labels.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { InfrastructureError, type Agent, type EpisodeView } from '../../../src/core/participants/types.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { RESAMPLE_STRIDE } from '../../../src/core/rollout/batch.ts';
import { ADVANTAGE_EPSILON } from '../../../src/core/training/groups.ts';

const clock = (now: number) => () => steppingClock(now, 1000);

/** Mean |Â| of a group of K binary rewards with s successes (sample σ), from the definition. */
function meanAbsAdvantage(s: number, k: number): number {
  const mu = s / k;
  const sigma = Math.sqrt((s * (1 - mu) ** 2 + (k - s) * mu ** 2) / (k - 1));
  return (s * (1 - mu) + (k - s) * mu) / k / (sigma + ADVANTAGE_EPSILON);
}

describe('labels from repeats (carrier, noisy reference policy, K = 8)', () => {
  it('labels every task, with pass^k, gradient supply and exact values', async () => {
    const { domain, runtime } = await carrierRuntime();
    const agent = () => new NoisyAgent({ p: 0.3, tasks: { 'carrier-pay-balance-1': 1, 'carrier-change-plan-1': 0 } });
    const { report, trajectories } = await evolve({
      runtime,
      tasks: domain.tasks,
      agent,
      user: () => new ScriptedUser(),
      k: 8,
      seed: 0,
      concurrency: 2,
      clock: clock(domain.now),
    });
    expect(report.agent).toBe('noisy:0.3+2tasks');
    expect(report.thresholds).toEqual({ always_pass: 1, always_fail: 0, min_valid: 4 });
    const [round] = report.rounds;
    const labels = round!.labels;
    expect(labels.histogram).toEqual({ always_pass: 10, boundary: 4, always_fail: 1, 'flaky-infra': 0 });
    const row = (id: string) => labels.tasks.find((t) => t.task_id === id)!;
    // p_task = 1: every write is skipped or wrong, never a pass.
    expect(row('carrier-pay-balance-1')).toMatchObject({
      label: 'always_fail',
      valid: 8,
      successes: 0,
      mean_reward: 0,
    });
    // p_task = 0 on a write task, and a read-only task: the noise never fires.
    expect(row('carrier-change-plan-1')).toMatchObject({ label: 'always_pass', successes: 8, mean_abs_advantage: 0 });
    expect(row('carrier-bill-inquiry-1')).toMatchObject({ label: 'always_pass', successes: 8 });
    const split = row('carrier-pay-split-limit-1');
    expect(split).toMatchObject({
      label: 'boundary',
      valid: 8,
      invalid: 0,
      successes: 7,
      pass_rate: 0.875,
      mean_reward: 0.875,
    });
    // pass^k = C(7,k)/C(8,k) = (8 − k)/8.
    expect(split.pass_hat).toEqual({ 1: 0.875, 2: 0.75, 3: 0.625, 4: 0.5, 5: 0.375, 6: 0.25, 7: 0.125, 8: 0 });
    expect(split.mean_abs_advantage).toBeCloseTo(meanAbsAdvantage(7, 8), 12);
    expect(row('carrier-pay-then-change-1')).toMatchObject({ label: 'boundary', successes: 4 });
    expect(row('carrier-pay-then-change-1').mean_abs_advantage).toBeCloseTo(meanAbsAdvantage(4, 8), 12);
    // One group per task; the boundary ones are exactly those with σ > 0 on the outcome.
    expect(labels.supply.groups).toBe(15);
    expect(labels.supply.outcome).toBe(4 / 15);
    expect(split.trajectory_ids).toEqual(
      trajectories[0]!
        .filter((t) => t.task_id === split.task_id)
        .sort((a, b) => a.trial - b.trial)
        .map((t) => t.id),
    );
    const failed = trajectories[0]!.find((t) => t.task_id === split.task_id && t.reward_info?.reward === 0)!;
    const writes = failed.turns
      .flatMap((t) => (t.role === 'assistant' ? t.tool_calls : []))
      .filter((c) => c.name === 'pay_bill_from_balance');
    expect(writes.length === 0 || writes[0]!.arguments.amount !== 200).toBe(true);
  });

  it('replays bit-for-bit with the same seed, and a new round uses new seeds', async () => {
    const { domain, runtime } = await carrierRuntime();
    const tasks = domain.tasks.filter((t) => t.id === 'carrier-pay-then-change-1');
    const run = () =>
      evolve({
        runtime,
        tasks,
        agent: () => new NoisyAgent({ p: 0.5 }),
        user: () => new ScriptedUser(),
        k: 4,
        rounds: 2,
        seed: 10,
        concurrency: 1,
        clock: clock(domain.now),
      });
    const a = await run();
    const b = await run();
    expect(b.report).toEqual(a.report);
    expect(a.report.rounds.map((r) => r.seed)).toEqual([10, 14]);
    expect(a.trajectories[1]!.map((t) => t.seed)).toEqual([14, 15, 16, 17]);
  });

  it('never counts an invalid rollout as a failure; too few valid rollouts is flaky-infra', async () => {
    const { domain, runtime } = await carrierRuntime();
    /** Infrastructure down for one task; for another only on first attempts (resampled). */
    class Flaky implements Agent {
      readonly id = 'flaky-reference';
      private readonly inner = new ReferenceAgent();
      async respond(view: EpisodeView) {
        if (view.task.id === 'carrier-bill-inquiry-1') throw new InfrastructureError('endpoint down');
        if (view.task.id === 'carrier-wallet-pay-1' && (view.seed ?? 0) < RESAMPLE_STRIDE)
          throw new InfrastructureError('endpoint hiccup');
        return this.inner.respond(view);
      }
    }
    const tasks = domain.tasks.filter((t) => ['carrier-bill-inquiry-1', 'carrier-wallet-pay-1'].includes(t.id));
    const { report } = await evolve({
      runtime,
      tasks,
      agent: () => new Flaky(),
      user: () => new ScriptedUser(),
      k: 8,
      seed: 0,
      concurrency: 2,
      clock: clock(domain.now),
    });
    const round = report.rounds[0]!;
    expect(round.labels.histogram).toEqual({ always_pass: 1, boundary: 0, always_fail: 0, 'flaky-infra': 1 });
    expect(round.labels.tasks.map((t) => [t.task_id, t.label, t.valid, t.invalid, t.pass_rate])).toEqual([
      ['carrier-wallet-pay-1', 'always_pass', 8, 0, 1],
      ['carrier-bill-inquiry-1', 'flaky-infra', 0, 8, null],
    ]);
    // 8 trials × 3 attempts for the broken task; 8 invalid + 8 valid attempts for the hiccup.
    expect(round.invalid_attempts).toBe(32);
    expect(round.episodes).toBe(40);
  });

  it('checks its arguments and thresholds', () => {
    expect(defaultThresholds(1).min_valid).toBe(1);
    expect(defaultThresholds(7).min_valid).toBe(4);
    expect(() => labelTasks([], [], 0)).toThrow(RangeError);
    expect(() => labelTasks([], [], 4, { always_pass: 1.5, always_fail: 0, min_valid: 2 })).toThrow(/always_pass/);
    expect(labelTasks(['x'], [], 4).tasks[0]).toMatchObject({ label: 'flaky-infra', valid: 0, invalid: 4 });
  });
});
