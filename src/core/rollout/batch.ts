/**
 * Batches of rollouts: K trials of each task, run with bounded concurrency, each scored, with
 * invalid rollouts resampled and excluded from the summary.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import type { Task } from '../schema/task.ts';
import type { RewardInfo, Trajectory } from '../schema/trajectory.ts';
import type { Agent, Judge, UserSimulator } from '../participants/types.ts';
import { evaluate, isSuccess, passHatKTable, ruleBreaks } from '../scoring/index.ts';
import { runEpisode } from './episode.ts';
import type { EpisodeChannel } from './channel-step.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import { FaultStreak, invalidShare, type StoppedRun } from './run-guards.ts';

/**
 * The parts of a {@link RewardInfo} a batch's summary reads: the reward, `partial`, the failed
 * rule checks (`assertions` holds only those: {@link ruleBreaks} of it gives them all) and the
 * objection counts without their items.
 */
export type RewardDigest = Pick<RewardInfo, 'reward' | 'partial' | 'assertions'> & {
  objections?: Omit<NonNullable<RewardInfo['objections']>, 'items'>;
};

/**
 * What a batch reads of a finished attempt: who ran it, which trial it was, whether it is valid
 * and the summary's part of its reward. A whole {@link Trajectory} is one; {@link digestAttempt}
 * makes the small one a rollout thread sends back instead of the trajectory (issue 15, item 5:
 * the whole trajectory is ~5–12 KB of JSON that the CLI's thread would copy in and write out).
 */
export interface AttemptDigest {
  id: string;
  domain: string;
  task_id: string;
  trial: number;
  seed: number;
  valid: boolean;
  termination: Trajectory['termination'];
  invalid_reason: string | null;
  participants: { agent: string; user: string };
  reward_info: RewardDigest | null;
}

/**
 * Comparator of rollouts in the order `run` writes them: the tasks' order in `tasks`, then trial,
 * then attempt seed (so the file does not depend on `--concurrency` or threads). Every task id
 * compared must be in `tasks`.
 */
export function trialOrder(
  tasks: readonly Pick<Task, 'id'>[],
): (a: Pick<Trajectory, 'task_id' | 'trial' | 'seed'>, b: Pick<Trajectory, 'task_id' | 'trial' | 'seed'>) => number {
  const order = new Map(tasks.map((t, i) => [t.id, i]));
  return (a, b) => order.get(a.task_id)! - order.get(b.task_id)! || a.trial - b.trial || a.seed - b.seed;
}

/** The {@link AttemptDigest} of a finished (scored or invalid) trajectory. */
export function digestAttempt(t: Trajectory): AttemptDigest {
  const r = t.reward_info;
  return {
    id: t.id,
    domain: t.domain,
    task_id: t.task_id,
    trial: t.trial,
    seed: t.seed,
    valid: t.valid,
    termination: t.termination,
    invalid_reason: t.invalid_reason,
    participants: { agent: t.participants.agent, user: t.participants.user },
    reward_info: r
      ? {
          reward: r.reward,
          partial: r.partial,
          assertions: ruleBreaks(r),
          ...(r.objections
            ? { objections: { raised: r.objections.raised, handled: r.objections.handled, score: r.objections.score } }
            : {}),
        }
      : null,
  };
}

/**
 * Settings of a batch. `T` is what each finished attempt is reported as: the whole trajectory
 * (the default, and always when no {@link BatchOptions.trialRunner} is given), or the digest a
 * trial runner returns.
 */
export interface BatchOptions<T extends AttemptDigest = Trajectory> {
  runtime: DomainRuntime;
  tasks: readonly Task[];
  /** Participants for one rollout; called once per rollout so stateful participants stay apart. */
  agent: () => Agent;
  user: () => UserSimulator;
  judge?: Judge;
  /** Trials per task (K). */
  trials: number;
  /** Base seed; trial t of every task uses seed + t (resamples add 1,000,003 × attempt). */
  seed: number;
  /** Rollouts in flight at once. */
  concurrency: number;
  /** Clock for one rollout. */
  clock: (seed: number) => Clock;
  /** Extra attempts for a rollout that ends invalid (infrastructure). Default 2. */
  resamples?: number;
  maxSteps?: number;
  /** Called with every finished trajectory (or the trial runner's digest of it), scored or invalid, in completion order. */
  onTrajectory?: (t: T) => void;
  /**
   * Keep every trajectory for the result (default true). False keeps only what the summary
   * needs (task, trial, validity, reward info), so memory does not grow with the turns of a
   * large run; take the trajectories from `onTrajectory` then.
   */
  keepTrajectories?: boolean;
  /** Cancels the batch: no new rollout starts once aborted. */
  signal?: AbortSignal;
  /**
   * Stop the batch after this many rollouts in a row (in the order they finish) invalid for the
   * same reason: no new trial or resample starts, the summary's `stopped` says why
   * (`run-guards.ts`, `DEFAULT_MAX_SAME_FAULT`). Default 0: never.
   */
  maxSameFault?: number;
  /** Issue 5: the phone channel for every rollout (see {@link EpisodeOptions.channel}). */
  channel?: EpisodeChannel;
  /** Issue 17: the full-duplex timeline for every rollout (needs `channel`; see {@link EpisodeOptions.duplex}). */
  duplex?: DuplexSettings;
  /**
   * Issue 15 (item 5): runs one trial somewhere else (a worker thread of a pool), instead of
   * {@link runTrial} on `runtime` here. It must do what `runTrial` does with the same settings
   * (the pool's threads call `runTrial`), so the results do not depend on where trials ran.
   */
  trialRunner?: TrialRunner<T>;
}

/**
 * One trial of a task run elsewhere: every attempt's trajectory (or its digest), in attempt
 * order (each scored when valid; the last is the valid one unless every attempt was invalid).
 * `halted` is true once the batch stops (Ctrl-C, a fault streak): a runner that has not started
 * the trial by then may leave it unstarted and return no attempt (`[]`), counted as not started.
 */
export type TrialRunner<T extends AttemptDigest = Trajectory> = (
  task: Task,
  trial: number,
  halted?: () => boolean,
) => Promise<T[]>;

/** What {@link runTrial} needs of the batch settings. */
export type TrialOptions = Pick<
  BatchOptions,
  'runtime' | 'agent' | 'user' | 'judge' | 'seed' | 'clock' | 'resamples' | 'maxSteps' | 'channel' | 'duplex'
>;

/**
 * Score a finished episode in place: `reward_info` when it is valid; a scoring failure makes it
 * invalid (`infrastructure_error`, resampled), never the agent's 0. Returns `t`.
 */
export async function scoreEpisode(
  opts: { runtime: DomainRuntime; judge?: Judge | undefined },
  task: Task,
  t: Trajectory,
): Promise<Trajectory> {
  if (!t.valid) return t;
  try {
    t.reward_info = await evaluate(opts.runtime, task, t.turns, {
      termination: t.termination,
      ...(opts.judge ? { judge: opts.judge } : {}),
    });
  } catch (e) {
    t.valid = false;
    t.termination = 'infrastructure_error';
    t.invalid_reason = `scoring failed: ${(e as Error).message}`;
  }
  return t;
}

/**
 * Trial `trial` of `task`: an episode with seed `seed + trial`, scored; when it ends invalid
 * (infrastructure), up to `resamples` more attempts with seed + trial + attempt × {@link
 * RESAMPLE_STRIDE}. Returns every attempt's trajectory in order; `onAttempt` sees each as it
 * finishes. No resample starts once `stop()` returns true (a batch stopped by its fault streak).
 */
export async function runTrial(
  opts: TrialOptions,
  task: Task,
  trial: number,
  onAttempt?: (t: Trajectory) => void,
  stop: () => boolean = () => false,
): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (let attempt = 0; attempt <= (opts.resamples ?? DEFAULT_RESAMPLES); attempt++) {
    if (attempt > 0 && stop()) break;
    const seed = opts.seed + trial + attempt * RESAMPLE_STRIDE;
    const t = await runEpisode({
      runtime: opts.runtime,
      task,
      agent: opts.agent(),
      user: opts.user(),
      seed,
      trial,
      clock: opts.clock(seed),
      ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
      ...(opts.channel ? { channel: opts.channel } : {}),
      ...(opts.duplex ? { duplex: opts.duplex } : {}),
    });
    await scoreEpisode(opts, task, t);
    out.push(t);
    onAttempt?.(t);
    if (t.valid) break;
  }
  return out;
}

/** Per-task results of a batch. */
export interface TaskSummary {
  task_id: string;
  /** Final reward of each valid trial, in trial order. */
  rewards: number[];
  invalid: number;
  mean: number | null;
  /** True when some reward was computed without a judge it needed. */
  partial: boolean;
  /** pass^k for k = 1…trials (tau2-bench): C(s,k)/C(n,k). */
  pass_hat: Record<string, number>;
  /**
   * Rule-check violations of each valid trial, aligned with `rewards` (the domain's executable
   * policy on the agent's writes; for `imported` domains reported beside the reward, never in it).
   */
  rule_breaks: number[];
  /**
   * Outbound negotiations only (issue 18): the objection-handled score of each valid trial,
   * aligned with `rewards` — handled / raised, `null` when the callee raised none
   * (`RewardInfo.objections`). Beside the reward, never in it; absent for other domains.
   */
  objections?: (number | null)[];
}

/** Objections raised and handled over a batch's valid episodes (outbound negotiations only). */
export interface ObjectionTotals {
  raised: number;
  handled: number;
  /** handled / raised over all valid episodes; `null` when none was raised. */
  score: number | null;
}

/** Summary of a batch. */
export interface BatchSummary {
  domain: string;
  agent: string;
  user: string;
  trials: number;
  seed: number;
  tasks: TaskSummary[];
  totals: {
    episodes: number;
    valid: number;
    /** Trials left without a valid episode after resampling (the sum of the tasks' `invalid`). */
    invalid: number;
    /** Invalid attempts that were resampled or given up on (episodes − valid). */
    invalid_attempts: number;
    /**
     * Trials left without a valid rollout after resampling, over the trials run: invalid /
     * (valid + invalid), null when none ran (`run-guards.ts`: `run` fails above its limit).
     */
    invalid_share: number | null;
    mean_reward: number | null;
    /** pass^k averaged over tasks with at least k valid trials. */
    pass_hat: Record<string, number>;
    /** Valid episodes whose agent broke a policy rule check (see {@link TaskSummary.rule_breaks}). */
    rule_breaking: number;
    /** Of those, episodes that still passed (reward 1): the agent "passed" by breaking a rule. */
    rule_breaking_passes: number;
    /** Outbound negotiations only: objections over all valid episodes (see {@link TaskSummary.objections}). */
    objections?: ObjectionTotals;
  };
  /** Set when the batch stopped early on rollouts in a row invalid for one reason ({@link BatchOptions.maxSameFault}); else null. */
  stopped: StoppedRun | null;
}

/**
 * Seed offset of a resample: attempt a of seed s uses s + a × 1,000,003 (a prime far above any
 * trial count, so resampled seeds never meet another trial's seed).
 */
export const RESAMPLE_STRIDE = 1_000_003;

/** Extra attempts for a rollout broken by infrastructure when none are set ({@link BatchOptions} `resamples`). */
export const DEFAULT_RESAMPLES = 2;

/** What the summary reads of a task's final trajectory. */
type Final = Pick<AttemptDigest, 'task_id' | 'trial' | 'valid' | 'reward_info'>;

/** What {@link BatchTally.summary} reads of the batch's settings. */
export type SummaryOptions = Pick<BatchOptions, 'runtime' | 'tasks' | 'trials' | 'seed'>;

/**
 * The running count of a batch: each finished attempt is added as it is reported; the summary
 * counts the last attempt of each trial (resamples come after the attempts they replace). A
 * batch cut short (an interrupted `run`) is summarized from the attempts added so far.
 */
export class BatchTally {
  private readonly finals = new Map<string, Final>();
  private episodes = 0;
  private agent = '';
  private user = '';

  /** Count a finished attempt (scored or invalid). */
  add(t: AttemptDigest): void {
    this.agent = t.participants.agent;
    this.user = t.participants.user;
    this.episodes++;
    this.finals.set(`${t.task_id}\u0000${t.trial}`, {
      task_id: t.task_id,
      trial: t.trial,
      valid: t.valid,
      reward_info: t.reward_info,
    });
  }

  /** The summary of the attempts added so far. */
  summary(opts: SummaryOptions): BatchSummary {
    return summarize(opts, [...this.finals.values()], this.episodes, this.agent, this.user);
  }
}

/**
 * Run a batch; returns every trajectory (scored when valid; none with `keepTrajectories: false`),
 * or every digest the trial runner returned, and the summary. With `signal` aborted, no trial
 * starts after it, the trials already running finish, and the summary counts what finished.
 */
export async function runBatch<T extends AttemptDigest = Trajectory>(
  opts: BatchOptions<T>,
): Promise<{ trajectories: T[]; summary: BatchSummary }> {
  // Job i is trial i mod trials of task ⌊i / trials⌋ (task-major), made as it starts: a list of
  // every job up front took memory in proportion to tasks × trials before any ran.
  const jobs = opts.tasks.length * opts.trials;
  const done: T[] = [];
  const keep = opts.keepTrajectories ?? true;
  const tally = new BatchTally();
  let cursor = 0;
  // Trials a runner left unstarted because the batch had stopped (see TrialRunner).
  let dropped = 0;
  const streak = new FaultStreak(opts.maxSameFault ?? 0);
  const halted = () => streak.tripped !== null || opts.signal?.aborted === true;

  const record = (t: T) => {
    streak.add(t);
    if (keep) done.push(t);
    opts.onTrajectory?.(t);
    tally.add(t);
  };
  const worker = async () => {
    while (cursor < jobs && !halted()) {
      const task = opts.tasks[Math.floor(cursor / opts.trials)]!;
      const trial = cursor++ % opts.trials;
      if (opts.trialRunner) {
        const attempts = await opts.trialRunner(task, trial, halted);
        if (attempts.length === 0) dropped++;
        for (const t of attempts) record(t);
      }
      // No trial runner: T is the whole trajectory (see BatchOptions).
      else await runTrial(opts, task, trial, (t) => record(t as AttemptDigest as T), halted);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));

  const summary = tally.summary(opts);
  if (streak.tripped !== null)
    summary.stopped = {
      reason: streak.tripped,
      rollouts: streak.max,
      trials_not_started: jobs - cursor + dropped,
    };
  return { trajectories: done, summary };
}

function summarize(opts: SummaryOptions, finals: Final[], episodes: number, agent: string, user: string): BatchSummary {
  const tasks: TaskSummary[] = opts.tasks.map((task) => {
    const mine = finals.filter((t) => t.task_id === task.id).sort((a, b) => a.trial - b.trial);
    const valid = mine.filter((t) => t.valid && t.reward_info);
    const rewards = valid.map((t) => t.reward_info!.reward);
    const rule_breaks = valid.map((t) => ruleBreaks(t.reward_info!).length);
    const results = mine.map((t) => ({
      taskId: task.id,
      valid: t.valid,
      success: t.reward_info ? isSuccess(t.reward_info) : false,
    }));
    const pass_hat = passHatKTable(results, valid.length);
    return {
      task_id: task.id,
      rewards,
      invalid: mine.length - valid.length,
      mean: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
      partial: valid.some((t) => t.reward_info!.partial),
      pass_hat,
      rule_breaks,
      ...(valid.some((t) => t.reward_info!.objections)
        ? { objections: valid.map((t) => t.reward_info!.objections?.score ?? null) }
        : {}),
    };
  });
  const all = finals.filter((t) => t.valid && t.reward_info);
  const breaking = all.filter((t) => ruleBreaks(t.reward_info!).length > 0);
  const results = finals.map((t) => ({
    taskId: t.task_id,
    valid: t.valid,
    success: t.reward_info ? isSuccess(t.reward_info) : false,
  }));
  const pass_hat = passHatKTable(results, opts.trials);
  const scored = all.flatMap((t) => (t.reward_info!.objections ? [t.reward_info!.objections] : []));
  const raised = scored.reduce((n, o) => n + o.raised, 0);
  const handled = scored.reduce((n, o) => n + o.handled, 0);
  return {
    domain: opts.runtime.domain.name,
    agent,
    user,
    trials: opts.trials,
    seed: opts.seed,
    tasks,
    totals: {
      episodes,
      valid: all.length,
      invalid: tasks.reduce((n, t) => n + t.invalid, 0),
      invalid_attempts: episodes - all.length,
      invalid_share: invalidShare({ valid: all.length, invalid: finals.length - all.length }),
      mean_reward: all.length ? all.reduce((a, t) => a + t.reward_info!.reward, 0) / all.length : null,
      pass_hat,
      rule_breaking: breaking.length,
      rule_breaking_passes: breaking.filter((t) => isSuccess(t.reward_info!)).length,
      ...(scored.length ? { objections: { raised, handled, score: raised ? handled / raised : null } } : {}),
    },
    stopped: null,
  };
}
