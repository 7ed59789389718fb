/**
 * GRPO groups and group-relative advantages.
 *
 * A *group* is K samples that share one prompt or prefix (a task's start, a milestone, or a
 * fixed context before one agent turn). Each sample's advantage is its reward relative to the
 * others of its group:
 *
 *   Â_i = (r_i − μ) / (σ + ε),  μ = mean of the group's rewards, σ = their standard deviation.
 *
 * Source: Group Relative Policy Optimization, introduced in Shao et al. 2024, "DeepSeekMath:
 * Pushing the Limits of Mathematical Reasoning in Open Language Models" (arXiv:2402.03300),
 * §4.1.2, outcome supervision: Â_i = (r_i − mean(r)) / std(r). The paper fixes neither the
 * estimator of std nor a guard against σ = 0. We use:
 * - σ = the *sample* standard deviation (divide by K − 1, Bessel's correction), the default of
 *   `torch.std`, which the common GRPO trainers call on the group's rewards (so advantages we
 *   export match what they would compute); `population` (divide by K) is an option.
 * - ε = 1e-6 ({@link ADVANTAGE_EPSILON}), only there to keep the division finite.
 * A group of one sample has σ = 0 by definition here.
 *
 * Which groups count as *flat* (no learning signal) is explicit ({@link FlatFilter}):
 * - `reward` (default): σ = 0 on the reward the advantage is computed on. With the shaped
 *   (process) reward an all-fail group whose returns differ keeps its advantages: that is what
 *   process reward is for (SpeechGym, per-turn shaping of ±0.1 per tool call restores in-group
 *   variance to groups that fail alike; /work/shared/seeds 001 §5.2, 003 abstract).
 * - `outcome` (DAPO style, Yu et al. 2025, arXiv:2503.14476 "dynamic sampling"): σ = 0 on the
 *   binary outcome; all-0 and all-1 groups are flat whatever their process rewards.
 * - `none`: no group is flat (a group with σ = 0 on the reward still gets zero advantages).
 * A flat group gets zero advantages (`flat: 'zero'`) or is dropped (`flat: 'drop'`).
 */
import { isSuccessfulReward } from '../scoring/pass-hat-k.ts';
import type { RewardInfo } from '../schema/trajectory.ts';

/** ε of Â = (r − μ)/(σ + ε). */
export const ADVANTAGE_EPSILON = 1e-6;

/** The three granularities of a group's shared prefix. */
export type Granularity = 'conversation' | 'milestone' | 'turn';

/** Which reward the advantage is computed on. */
export type RewardChoice =
  /** The episode's final reward (or a turn rubric's score). */
  | 'final'
  /** Final reward plus process shaping: the return G_0 of the per-step rewards (γ-discounted). */
  | 'shaped';

/** What to do with a flat group (see {@link FlatFilter}). */
export type FlatGroupPolicy = 'zero' | 'drop';

/** Which groups are flat: σ = 0 on the advantage's reward (`reward`), on the binary outcome (`outcome`), or none. */
export type FlatFilter = 'reward' | 'outcome' | 'none';

/** Which standard deviation: sample (K − 1, default) or population (K). */
export type StdKind = 'sample' | 'population';

/** The rewards of one sample. */
export interface SampleRewards {
  /** Final reward (episode reward, or turn rubric score), in [0, 1]. */
  final: number;
  /** Binary outcome: 1 success, 0 not. */
  outcome: 0 | 1;
  /** Per-step rewards r_t (process shaping, final included on the last step). */
  step_rewards: number[];
  /** Returns G_t of `step_rewards`. */
  returns: number[];
  /** Final + process returns: G_0, or `final` when there are no steps. */
  shaped: number;
  /**
   * True when the reward was computed without a judge it needed (NL assertions without
   * `--judge`): `final` and `outcome` cover the judged components only. Absent means false.
   */
  partial?: boolean;
}

/** One sample of a group, before advantages. */
export interface GroupSample<T = unknown> {
  rewards: SampleRewards;
  /** Seed the sample was drawn with. */
  seed: number;
  /** What the sample is (a trajectory, a turn candidate …). */
  item: T;
}

/** A group of samples sharing one prefix. */
export interface Group<T = unknown> {
  /** Stable id: `<granularity>:<prefix>`. */
  id: string;
  granularity: Granularity;
  /** What the samples share: a task id, a milestone id, or `<trajectory id>@<turn>`. */
  prefix: string;
  task_id: string;
  samples: GroupSample<T>[];
}

/** Statistics of one group on one reward. */
export interface Spread {
  mean: number;
  std: number;
}

/** A group with advantages computed. */
export interface ScoredGroup<T = unknown> extends Group<T> {
  reward: RewardChoice;
  /** Spread of the binary outcomes, the final rewards and the shaped totals. */
  outcome: Spread;
  final: Spread;
  shaped: Spread;
  /** False for a flat group (see {@link FlatFilter}): advantages are zero (or the group was dropped). */
  informative: boolean;
  /** Samples whose reward is partial (computed without a judge it needed). */
  partial: number;
  /** Â per sample, in sample order. */
  advantages: number[];
}

/** Options of {@link scoreGroups}. */
export interface AdvantageOptions {
  /** Reward the advantage is computed on. Default `final`. */
  reward?: RewardChoice;
  /** Which groups are flat. Default `reward`. */
  filter?: FlatFilter;
  /** Flat groups: zero advantages (default) or dropped. */
  flat?: FlatGroupPolicy;
  std?: StdKind;
  epsilon?: number;
}

/** Gradient supply of a batch of groups: how many carry a learning signal. */
export interface GradientSupply {
  groups: number;
  /** Share of groups with σ > 0 on the binary outcome (these are the ones kept non-zero). */
  outcome: number;
  /** Share of groups with σ > 0 on the final reward. */
  final: number;
  /** Share of groups with σ > 0 on the shaped total (final + process returns). */
  shaped: number;
  /** Share of groups with non-zero advantages under the filter used (the gradient actually supplied). */
  kept: number;
  /** Rows (samples) whose reward is partial, counted apart: they are in the rows, flagged. */
  partial_rows: number;
}

/** Result of {@link scoreGroups}. */
export interface GroupBatch<T = unknown> {
  /** Groups kept (all of them with `flat: 'zero'`). */
  groups: ScoredGroup<T>[];
  /** Ids of flat groups dropped (`flat: 'drop'`). */
  dropped: string[];
  /** Computed over every group, dropped ones included. */
  supply: GradientSupply;
}

/** Mean and standard deviation of `xs` (empty: 0, 0; one value or fewer than 2 for sample: σ 0). */
export function spread(xs: readonly number[], kind: StdKind = 'sample'): Spread {
  const n = xs.length;
  if (n === 0) return { mean: 0, std: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const denom = kind === 'sample' ? n - 1 : n;
  if (denom <= 0) return { mean, std: 0 };
  const ss = xs.reduce((a, x) => a + (x - mean) * (x - mean), 0);
  return { mean, std: Math.sqrt(ss / denom) };
}

/**
 * Â_i = (r_i − μ)/(σ + ε) for every reward of one group. σ = 0 gives all zeros (not ±0/ε noise:
 * with equal rewards r_i − μ is 0 up to rounding, and rounding must not become a signal).
 */
export function groupAdvantages(rewards: readonly number[], opts: { std?: StdKind; epsilon?: number } = {}): number[] {
  const { mean, std } = spread(rewards, opts.std ?? 'sample');
  if (std === 0) return rewards.map(() => 0);
  const eps = opts.epsilon ?? ADVANTAGE_EPSILON;
  return rewards.map((r) => (r - mean) / (std + eps));
}

/**
 * The rewards of one scored episode: final reward, binary outcome (reward within 1e-6 of 1,
 * {@link isSuccessfulReward}), per-step rewards and returns, the shaped total G_0, and whether
 * the reward is partial. A partial reward keeps the outcome of its judged components (never a
 * silent 0) and is flagged, so rows and summaries count it apart.
 */
export function episodeRewards(
  info: Pick<RewardInfo, 'reward' | 'partial' | 'step_rewards' | 'returns'>,
): SampleRewards {
  return {
    final: info.reward,
    outcome: isSuccessfulReward(info.reward) ? 1 : 0,
    step_rewards: [...info.step_rewards],
    returns: [...info.returns],
    shaped: info.returns[0] ?? info.reward,
    partial: info.partial,
  };
}

/**
 * Compute advantages for every group, on `reward`, and the batch's gradient supply.
 *
 * A flat group ({@link FlatFilter}, default `reward`) gets zero advantages (`flat: 'zero'`) or
 * is dropped (`flat: 'drop'`); otherwise Â is computed on the chosen reward.
 *
 * @throws Error when two groups share an id or a group mixes samples of different prefixes
 *   (that is the caller's bug: a group is one prefix by construction).
 */
export function scoreGroups<T>(groups: readonly Group<T>[], opts: AdvantageOptions = {}): GroupBatch<T> {
  const reward = opts.reward ?? 'final';
  const std = opts.std ?? 'sample';
  const seen = new Set<string>();
  const kept: ScoredGroup<T>[] = [];
  const dropped: string[] = [];
  const filter = opts.filter ?? 'reward';
  let outcomeVar = 0;
  let finalVar = 0;
  let shapedVar = 0;
  let keptCount = 0;
  let partialRows = 0;
  for (const g of groups) {
    if (seen.has(g.id)) throw new Error(`group ${g.id} appears twice: samples of one prefix belong to one group`);
    seen.add(g.id);
    const outcome = spread(
      g.samples.map((s) => s.rewards.outcome),
      std,
    );
    const final = spread(
      g.samples.map((s) => s.rewards.final),
      std,
    );
    const shaped = spread(
      g.samples.map((s) => s.rewards.shaped),
      std,
    );
    if (outcome.std > 0) outcomeVar++;
    if (final.std > 0) finalVar++;
    if (shaped.std > 0) shapedVar++;
    const chosen = reward === 'final' ? final : shaped;
    const informative = filter === 'none' || (filter === 'outcome' ? outcome.std > 0 : chosen.std > 0);
    const partial = g.samples.filter((s) => s.rewards.partial === true).length;
    partialRows += partial;
    if (!informative && (opts.flat ?? 'zero') === 'drop') {
      dropped.push(g.id);
      continue;
    }
    const values = g.samples.map((s) => s.rewards[reward]);
    const advantages = informative
      ? groupAdvantages(values, { std, epsilon: opts.epsilon ?? ADVANTAGE_EPSILON })
      : values.map(() => 0);
    if (advantages.some((a) => a !== 0)) keptCount++;
    kept.push({ ...g, reward, outcome, final, shaped, informative, partial, advantages });
  }
  const n = groups.length;
  const share = (k: number) => (n === 0 ? 0 : k / n);
  return {
    groups: kept,
    dropped,
    supply: {
      groups: n,
      outcome: share(outcomeVar),
      final: share(finalVar),
      shaped: share(shapedVar),
      kept: share(keptCount),
      partial_rows: partialRows,
    },
  };
}

/** `<granularity>:<prefix>`: the id of the group of samples sharing `prefix`. */
export function groupId(granularity: Granularity, prefix: string): string {
  return `${granularity}:${prefix}`;
}

/**
 * Sort samples into groups by prefix, keeping first-seen order of prefixes and of samples within
 * a prefix. Samples with different prefixes never share a group.
 */
export function groupByPrefix<T>(
  granularity: Granularity,
  samples: readonly (GroupSample<T> & { prefix: string; task_id: string })[],
): Group<T>[] {
  const byPrefix = new Map<string, Group<T>>();
  for (const { prefix, task_id, ...sample } of samples) {
    let g = byPrefix.get(prefix);
    if (!g) {
      g = { id: groupId(granularity, prefix), granularity, prefix, task_id, samples: [] };
      byPrefix.set(prefix, g);
    }
    if (g.task_id !== task_id) throw new Error(`prefix ${prefix} belongs to tasks ${g.task_id} and ${task_id}`);
    g.samples.push(sample as GroupSample<T>);
  }
  return [...byPrefix.values()];
}
