/**
 * Labels from repeats: K rollouts of every task → pass^1…pass^K, mean reward, the task's GRPO
 * group (its K valid rollouts, advantages by {@link scoreGroups}), and a label:
 * - `always_pass`: pass rate ≥ `thresholds.always_pass` (default 1: every valid rollout passed);
 * - `always_fail`: pass rate ≤ `thresholds.always_fail` (default 0: no valid rollout passed);
 * - `boundary`: in between — the tasks that carry GRPO signal (σ > 0 on the outcome);
 * - `flaky-infra`: fewer than `thresholds.min_valid` valid rollouts. Invalid rollouts (broken by
 *   infrastructure) never count as failures; a task left with too few valid ones is not labelled
 *   by difficulty at all.
 * Pass rate = successes / valid rollouts; success is tau2-bench's (reward within 1e-6 of 1, not
 * partial; {@link isSuccess}).
 */
import type { Trajectory } from '../schema/trajectory.ts';
import { isSuccess, passHatKTable } from '../scoring/pass-hat-k.ts';
import { episodeRewards, scoreGroups, type GradientSupply, type Group } from '../training/groups.ts';

/** A task's difficulty label. */
export type TaskLabel = 'always_pass' | 'boundary' | 'always_fail' | 'flaky-infra';

/** Every label, in report order. */
export const TASK_LABELS: readonly TaskLabel[] = ['always_pass', 'boundary', 'always_fail', 'flaky-infra'];

/** Thresholds of the labels (written into every report). */
export interface LabelThresholds {
  /** Pass rate at or above which a task is `always_pass`. Default 1. */
  always_pass: number;
  /** Pass rate at or below which a task is `always_fail`. Default 0. */
  always_fail: number;
  /** Fewest valid rollouts a task needs to be labelled by difficulty; fewer → `flaky-infra`. */
  min_valid: number;
}

/** Default thresholds for K rollouts per task: all, none, and at least half of K valid (⌈K/2⌉, at least 1). */
export function defaultThresholds(k: number): LabelThresholds {
  return { always_pass: 1, always_fail: 0, min_valid: Math.max(1, Math.ceil(k / 2)) };
}

/** One task's numbers and label. */
export interface TaskLabelRow {
  task_id: string;
  label: TaskLabel;
  /** Rollouts asked for (K). */
  k: number;
  /** Valid, scored rollouts (after resampling). */
  valid: number;
  /** Trials left without a valid rollout. */
  invalid: number;
  successes: number;
  /** successes / valid, or null with no valid rollout. */
  pass_rate: number | null;
  /** Mean final reward of the valid rollouts, or null. */
  mean_reward: number | null;
  /** pass^k for k = 1…valid (C(s,k)/C(n,k)), keyed by k. */
  pass_hat: Record<string, number>;
  /** Mean |Â| over the task's group (final reward, sample σ); 0 for a flat group. */
  mean_abs_advantage: number;
  /** Ids of the valid trajectories, in trial order (evidence for attribution). */
  trajectory_ids: string[];
}

/** The labels of one batch of K rollouts per task. */
export interface LabelReport {
  k: number;
  thresholds: LabelThresholds;
  tasks: TaskLabelRow[];
  /** Tasks per label. */
  histogram: Record<TaskLabel, number>;
  /** Share of GRPO groups (one per task with ≥ 2 valid rollouts) with σ > 0, from {@link scoreGroups}. */
  supply: GradientSupply;
  /** Mean final reward over every valid rollout, or null. */
  mean_reward: number | null;
}

/**
 * Label tasks from their rollouts. `trajectories` may hold several attempts per trial (invalid
 * ones resampled, as {@link runBatch} returns them); a trial counts once, by its valid attempt.
 *
 * @param taskIds the tasks to label, in report order (a task with no trajectory is `flaky-infra`)
 * @param k rollouts asked for per task
 * @throws RangeError when k is not a positive integer or a threshold is outside [0, 1]
 */
export function labelTasks(
  taskIds: readonly string[],
  trajectories: readonly Trajectory[],
  k: number,
  thresholds: LabelThresholds = defaultThresholds(k),
): LabelReport {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`labelTasks needs a positive integer k, got ${k}`);
  for (const key of ['always_pass', 'always_fail'] as const) {
    const v = thresholds[key];
    if (!(v >= 0 && v <= 1)) throw new RangeError(`threshold ${key} must be in [0, 1], got ${v}`);
  }
  const validByTask = new Map<string, Trajectory[]>();
  for (const t of trajectories) {
    if (!t.valid || !t.reward_info) continue;
    const list = validByTask.get(t.task_id) ?? [];
    list.push(t);
    validByTask.set(t.task_id, list);
  }
  const groups: Group<Trajectory>[] = [];
  for (const id of taskIds) {
    const valid = (validByTask.get(id) ?? []).sort((a, b) => a.trial - b.trial);
    if (valid.length < 2) continue;
    groups.push({
      id: `conversation:${id}`,
      granularity: 'conversation',
      prefix: id,
      task_id: id,
      samples: valid.map((t) => ({ rewards: episodeRewards(t.reward_info!), seed: t.seed, item: t })),
    });
  }
  const batch = scoreGroups(groups);
  const advantageByTask = new Map(
    batch.groups.map((g) => [g.task_id, g.advantages.reduce((a, x) => a + Math.abs(x), 0) / g.advantages.length]),
  );
  const histogram = Object.fromEntries(TASK_LABELS.map((l) => [l, 0])) as Record<TaskLabel, number>;
  let rewardSum = 0;
  let rewardCount = 0;
  const tasks = taskIds.map((id): TaskLabelRow => {
    const valid = (validByTask.get(id) ?? []).sort((a, b) => a.trial - b.trial);
    const results = valid.map((t) => ({ taskId: id, valid: true, success: isSuccess(t.reward_info!) }));
    const successes = results.filter((r) => r.success).length;
    const rewards = valid.map((t) => t.reward_info!.reward);
    rewardSum += rewards.reduce((a, b) => a + b, 0);
    rewardCount += rewards.length;
    const pass_hat = passHatKTable(results, valid.length);
    const passRate = valid.length ? successes / valid.length : null;
    let label: TaskLabel;
    if (valid.length < thresholds.min_valid || passRate === null) label = 'flaky-infra';
    else if (passRate >= thresholds.always_pass) label = 'always_pass';
    else if (passRate <= thresholds.always_fail) label = 'always_fail';
    else label = 'boundary';
    histogram[label]++;
    return {
      task_id: id,
      label,
      k,
      valid: valid.length,
      invalid: Math.max(0, k - valid.length),
      successes,
      pass_rate: passRate,
      mean_reward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
      pass_hat,
      mean_abs_advantage: advantageByTask.get(id) ?? 0,
      trajectory_ids: valid.map((t) => t.id),
    };
  });
  return {
    k,
    thresholds,
    tasks,
    histogram,
    supply: batch.supply,
    mean_reward: rewardCount ? rewardSum / rewardCount : null,
  };
}
