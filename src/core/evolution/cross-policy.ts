/**
 * Cross-policy rollouts for attribution (issue 16): the always-failed tasks of a round run again
 * with each other policy — K rollouts per task, the round's seeds — so that
 * `cross_policy_agreement` can see whether every policy fails the same way. The rollouts' ids get
 * `@<agent id>` appended (`carrier/task/0/0@noisy:1`): the same task, trial and seed as the main
 * policy's rollout, another trajectory.
 */
import type { Agent } from '../participants/types.ts';
import { runBatch, type BatchOptions } from '../rollout/batch.ts';
import type { Task } from '../schema/task.ts';
import type { Trajectory } from '../schema/trajectory.ts';
import type { PolicyRollouts } from './attribution.ts';

/** Options of {@link crossPolicyRollouts}: the batch's settings, the other policies and the tasks. */
export interface CrossPolicyOptions
  extends Pick<
    BatchOptions,
    'runtime' | 'user' | 'judge' | 'seed' | 'concurrency' | 'clock' | 'maxSteps' | 'channel' | 'signal'
  > {
  /** One factory per other policy. */
  agents: readonly (() => Agent)[];
  /** The tasks to run (the round's always-failed ones). */
  tasks: readonly Task[];
  /** Rollouts per task (K). */
  k: number;
  /** Every finished trajectory (ids already suffixed). */
  onTrajectory?: (t: Trajectory) => void;
}

/** The batch settings that are set in `opts` (judge, max steps, channel, signal), for spreading into {@link runBatch}'s options. */
export function optionalBatchSettings(
  opts: Pick<BatchOptions, 'judge' | 'maxSteps' | 'channel' | 'signal'>,
): Pick<BatchOptions, 'judge' | 'maxSteps' | 'channel' | 'signal'> {
  return {
    ...(opts.judge ? { judge: opts.judge } : {}),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    ...(opts.channel ? { channel: opts.channel } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

/** Run every other policy on the tasks; one {@link PolicyRollouts} per policy, in `agents` order (none without tasks). */
export async function crossPolicyRollouts(opts: CrossPolicyOptions): Promise<PolicyRollouts[]> {
  if (opts.tasks.length === 0) return [];
  const out: PolicyRollouts[] = [];
  for (const agent of opts.agents) {
    const id = agent().id;
    const { trajectories } = await runBatch({
      runtime: opts.runtime,
      tasks: opts.tasks,
      agent,
      user: opts.user,
      trials: opts.k,
      seed: opts.seed,
      concurrency: opts.concurrency,
      clock: opts.clock,
      ...optionalBatchSettings(opts),
      onTrajectory: (t) => {
        t.id = `${t.id}@${id}`;
        opts.onTrajectory?.(t);
      },
    });
    out.push({ agent: id, trajectories });
  }
  return out;
}
