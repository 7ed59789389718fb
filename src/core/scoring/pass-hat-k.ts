/**
 * Success and pass^k (tau2-bench `is_successful` and `pass_hat_k` in tau2/metrics/agent_metrics.py;
 * pass^k from Yao et al., "τ-bench", arXiv:2406.12045).
 */
import type { RewardInfo } from '../schema/trajectory.ts';

/** Tolerance of the success test: reward within 1e-6 of 1 (tau2-bench). */
export const SUCCESS_TOLERANCE = 1e-6;

/** tau2-bench's success test on a reward: 1 − 1e-6 ≤ reward ≤ 1 + 1e-6. */
export function isSuccessfulReward(reward: number): boolean {
  return Math.abs(reward - 1) <= SUCCESS_TOLERANCE;
}

/** Success of a scored episode: a successful reward that is not partial (a partial reward was not fully judged). */
export function isSuccess(info: Pick<RewardInfo, 'reward' | 'partial'>): boolean {
  return !info.partial && isSuccessfulReward(info.reward);
}

/** One trial of one task. */
export interface TrialResult {
  taskId: string;
  success: boolean;
  /** False for an invalid rollout (infrastructure failure): excluded. */
  valid: boolean;
}

/** C(s, k) / C(n, k) as a product of ratios (no overflow); 0 when s < k. */
function combRatio(s: number, n: number, k: number): number {
  let r = 1;
  for (let i = 0; i < k; i++) r *= (s - i) / (n - i);
  return Math.max(r, 0);
}

/** Valid trials (`n`) and successes among them (`s`) per task, in the order tasks first appear. */
function countByTask(results: readonly TrialResult[]): { n: number; s: number }[] {
  const byTask = new Map<string, { n: number; s: number }>();
  for (const r of results) {
    if (!r.valid) continue;
    const c = byTask.get(r.taskId) ?? { n: 0, s: 0 };
    c.n += 1;
    if (r.success) c.s += 1;
    byTask.set(r.taskId, c);
  }
  return [...byTask.values()];
}

/**
 * pass^k: the chance that k trials of a task, drawn without replacement from its trials, all
 * succeed, averaged over tasks: mean over tasks of C(s, k) / C(n, k), where n is the number of
 * valid trials of the task and s the successes among them. Invalid rollouts are left out; tasks
 * with fewer than k valid trials are left out of the mean (tau2-bench instead lowers k to the
 * smallest trial count). Returns `NaN` (the mean of nothing) when no task has k valid trials.
 *
 * @param k a positive integer
 * @throws RangeError when k is not a positive integer
 */
export function passHatK(results: readonly TrialResult[], k: number): number {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`passHatK needs a positive integer k, got ${k}`);
  const values = countByTask(results)
    .filter((c) => c.n >= k)
    .map((c) => combRatio(c.s, c.n, k));
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
}

/**
 * {@link passHatK} for every k from 1 to `maxK`, as the summaries keep it (`{ "1": pass^1, …,
 * "maxK": pass^maxK }`; an empty record for `maxK` 0). The same numbers bit for bit, in
 * O(results + tasks × maxK) instead of O(maxK × (results + tasks × maxK)): each task's
 * C(s, k) / C(n, k) is the one for k − 1 times (s − k + 1) / (n − k + 1), the product
 * {@link combRatio} forms factor by factor in the same order (a run of 1,000 trials of 15 tasks
 * took ~1 s of its summary in the loop over k).
 *
 * @throws RangeError when maxK is not a non-negative integer
 */
export function passHatKTable(results: readonly TrialResult[], maxK: number): Record<string, number> {
  if (!Number.isInteger(maxK) || maxK < 0)
    throw new RangeError(`passHatKTable needs a non-negative integer maxK, got ${maxK}`);
  const counts = countByTask(results);
  const ratios = counts.map(() => 1);
  const table: Record<string, number> = {};
  for (let k = 1; k <= maxK; k++) {
    let sum = 0;
    let tasks = 0;
    for (const [t, c] of counts.entries()) {
      // Factor i = k − 1 of combRatio's product; kept unclamped, as combRatio clamps only its result.
      ratios[t]! *= (c.s - (k - 1)) / (c.n - (k - 1));
      if (c.n < k) continue;
      sum += Math.max(ratios[t]!, 0);
      tasks++;
    }
    table[k] = tasks ? sum / tasks : Number.NaN;
  }
  return table;
}
