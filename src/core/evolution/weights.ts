/**
 * Sampling weights for the trainer: which tasks to sample next, from the labels of one round.
 *
 * The curriculum is a non-stationary multi-armed bandit over difficulty bins, as in the
 * Self-Evolving Curriculum (SEC): Chen et al. 2025, "Self-Evolving Curriculum for LLM
 * Reasoning", arXiv:2505.14970 (§3). Each arm is a difficulty bin (tasks grouped by pass rate);
 * an arm's reward in a round is the mean absolute advantage |Â| of its tasks' rollouts (SEC's
 * proxy for the learning gain of training on that category), and its value is updated by TD(0)
 * (an exponential moving average):
 *
 *   Q_{t+1}(c) = α · r_t(c) + (1 − α) · Q_t(c)
 *
 * and arms are sampled by Boltzmann exploration, p(c) = exp(Q(c)/τ) / Σ_c' exp(Q(c')/τ).
 * A bin with no task this round keeps its Q and gets p = 0 (nothing to sample from it).
 * Defaults: α = 0.5, τ = 1, Q₀ = 0 ({@link DEFAULT_BANDIT}); they are ours, written into the file.
 *
 * Within a bin the arm's probability is shared equally among its tasks; `flaky-infra` tasks get
 * weight 0 (their rollouts say nothing about difficulty). The task list puts `boundary` tasks
 * first (the ones with σ > 0 carry the GRPO signal), then by weight, then by task id.
 */
import type { LabelReport, TaskLabel } from './labels.ts';

/** A difficulty bin: tasks whose pass rate p satisfies lo ≤ p < hi (`hi` inclusive when lo = hi). */
export interface DifficultyBin {
  id: string;
  lo: number;
  hi: number;
}

/**
 * The default bins over the pass rate: never passed, 4 equal-width bins over (0, 1), and always
 * passed, so `always_fail` and `always_pass` tasks (|Â| = 0) are arms of their own.
 */
export const DEFAULT_BINS: readonly DifficultyBin[] = [
  { id: 'p=0', lo: 0, hi: 0 },
  { id: '0<p<0.25', lo: 0, hi: 0.25 },
  { id: '0.25≤p<0.5', lo: 0.25, hi: 0.5 },
  { id: '0.5≤p<0.75', lo: 0.5, hi: 0.75 },
  { id: '0.75≤p<1', lo: 0.75, hi: 1 },
  { id: 'p=1', lo: 1, hi: 1 },
];

/** Bandit settings. */
export interface BanditSettings {
  /** TD(0) step size α in (0, 1]. */
  alpha: number;
  /** Boltzmann temperature τ > 0. */
  tau: number;
}

/** α = 0.5, τ = 1 (our defaults; SEC tunes both per domain). */
export const DEFAULT_BANDIT: BanditSettings = { alpha: 0.5, tau: 1 };

/** One arm in the weights file. */
export interface BinState extends DifficultyBin {
  /** Tasks in the bin this round. */
  tasks: number;
  /** r_t: mean |Â| of the bin's tasks this round (null when the bin is empty). */
  reward: number | null;
  /** Q after this round's update. */
  q: number;
  /** Boltzmann probability of the arm (0 for an empty bin). */
  p: number;
}

/** One task in the weights file. */
export interface TaskWeight {
  task_id: string;
  label: TaskLabel;
  pass_rate: number | null;
  bin: string | null;
  /** Probability of sampling the task next; the weights sum to 1 (or all 0 with no labelled task). */
  weight: number;
}

/** The sampling-weights file (`weights.json`) a trainer reads. */
export interface SamplingWeights {
  format: 'switchboard.sampling-weights';
  version: 1;
  /** Round that produced it (0-based). */
  round: number;
  k: number;
  bandit: BanditSettings & { source: string };
  bins: BinState[];
  /** Boundary tasks first, then by weight (descending), then by id. */
  tasks: TaskWeight[];
}

/** The bin of a pass rate. */
export function binOf(passRate: number, bins: readonly DifficultyBin[] = DEFAULT_BINS): DifficultyBin | undefined {
  return bins.find((b) => (b.lo === b.hi ? passRate === b.lo : passRate >= b.lo && passRate < b.hi));
}

/**
 * Update the bandit with one round's labels and compute the sampling weights.
 *
 * @param previous the last round's file (its `bins[].q` are Q_t), or undefined for Q₀ = 0
 * @throws RangeError when α ∉ (0, 1] or τ ≤ 0, or `previous` has other bins
 */
export function samplingWeights(
  labels: LabelReport,
  round: number,
  previous?: SamplingWeights,
  settings: BanditSettings = DEFAULT_BANDIT,
  bins: readonly DifficultyBin[] = DEFAULT_BINS,
): SamplingWeights {
  if (!(settings.alpha > 0 && settings.alpha <= 1))
    throw new RangeError(`bandit alpha must be in (0, 1], got ${settings.alpha}`);
  if (!(settings.tau > 0)) throw new RangeError(`bandit tau must be > 0, got ${settings.tau}`);
  if (previous && previous.bins.map((b) => b.id).join() !== bins.map((b) => b.id).join())
    throw new RangeError('previous sampling weights use other difficulty bins');
  const members = new Map<string, { task_id: string; adv: number }[]>(bins.map((b) => [b.id, []]));
  const binOfTask = new Map<string, string>();
  for (const t of labels.tasks) {
    if (t.label === 'flaky-infra' || t.pass_rate === null) continue;
    const bin = binOf(t.pass_rate, bins);
    if (!bin) continue;
    members.get(bin.id)!.push({ task_id: t.task_id, adv: t.mean_abs_advantage });
    binOfTask.set(t.task_id, bin.id);
  }
  const updated = bins.map((b, i) => {
    const inBin = members.get(b.id)!;
    const q0 = previous?.bins[i]?.q ?? 0;
    const reward = inBin.length ? inBin.reduce((a, m) => a + m.adv, 0) / inBin.length : null;
    const q = reward === null ? q0 : settings.alpha * reward + (1 - settings.alpha) * q0;
    return { ...b, tasks: inBin.length, reward, q };
  });
  const exps = updated.map((b) => (b.tasks > 0 ? Math.exp(b.q / settings.tau) : 0));
  const z = exps.reduce((a, b) => a + b, 0);
  const binStates: BinState[] = updated.map((b, i) => ({ ...b, p: z > 0 ? exps[i]! / z : 0 }));
  const pOf = new Map(binStates.map((b) => [b.id, b.tasks > 0 ? b.p / b.tasks : 0]));
  const tasks: TaskWeight[] = labels.tasks.map((t) => {
    const bin = binOfTask.get(t.task_id) ?? null;
    return { task_id: t.task_id, label: t.label, pass_rate: t.pass_rate, bin, weight: bin ? pOf.get(bin)! : 0 };
  });
  tasks.sort(
    (a, b) =>
      Number(b.label === 'boundary') - Number(a.label === 'boundary') ||
      b.weight - a.weight ||
      (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0),
  );
  return {
    format: 'switchboard.sampling-weights',
    version: 1,
    round,
    k: labels.k,
    bandit: {
      ...settings,
      source:
        'Self-Evolving Curriculum (Chen et al. 2025, arXiv:2505.14970): TD(0) on mean |advantage| per difficulty bin, Boltzmann sampling',
    },
    bins: binStates,
    tasks,
  };
}
