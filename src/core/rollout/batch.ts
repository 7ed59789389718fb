/**
 * Batches of rollouts: K trials of each task, run with bounded concurrency, each scored, with
 * invalid rollouts resampled and excluded from the summary.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import type { Task } from '../schema/task.ts';
import type { Trajectory } from '../schema/trajectory.ts';
import type { Agent, Judge, UserSimulator } from '../participants/types.ts';
import { evaluate, isSuccess, passHatK, ruleBreaks } from '../scoring/index.ts';
import { runEpisode } from './episode.ts';
import type { EpisodeChannel } from './channel-step.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import { FaultStreak, invalidShare, type StoppedRun } from './run-guards.ts';

/** Settings of a batch. */
export interface BatchOptions {
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
  /** Called with every finished trajectory, scored or invalid, in completion order. */
  onTrajectory?: (t: Trajectory) => void;
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
  trialRunner?: TrialRunner;
}

/**
 * One trial of a task run elsewhere: every attempt's trajectory, in attempt order (each scored
 * when valid; the last is the valid one unless every attempt was invalid).
 */
export type TrialRunner = (task: Task, trial: number) => Promise<Trajectory[]>;

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
type Final = Pick<Trajectory, 'task_id' | 'trial' | 'valid' | 'reward_info'>;

/**
 * Run a batch; returns every trajectory (scored when valid; none with `keepTrajectories: false`)
 * and the summary.
 */
export async function runBatch(opts: BatchOptions): Promise<{ trajectories: Trajectory[]; summary: BatchSummary }> {
  const jobs = opts.tasks.flatMap((task) => Array.from({ length: opts.trials }, (_, trial) => ({ task, trial })));
  const done: Trajectory[] = [];
  let episodes = 0;
  const keep = opts.keepTrajectories ?? true;
  const finals = new Map<string, Final>();
  let cursor = 0;
  let agentId = '';
  let userId = '';
  const streak = new FaultStreak(opts.maxSameFault ?? 0);
  const halted = () => streak.tripped !== null || opts.signal?.aborted === true;

  const record = (t: Trajectory) => {
    agentId = t.participants.agent;
    userId = t.participants.user;
    episodes++;
    streak.add(t);
    if (keep) done.push(t);
    opts.onTrajectory?.(t);
    finals.set(`${t.task_id}\u0000${t.trial}`, {
      task_id: t.task_id,
      trial: t.trial,
      valid: t.valid,
      reward_info: t.reward_info,
    });
  };
  const worker = async () => {
    while (cursor < jobs.length && !halted()) {
      const { task, trial } = jobs[cursor++]!;
      if (opts.trialRunner) for (const t of await opts.trialRunner(task, trial)) record(t);
      else await runTrial(opts, task, trial, record, halted);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));

  const summary = summarize(opts, [...finals.values()], episodes, agentId, userId);
  if (streak.tripped !== null)
    summary.stopped = { reason: streak.tripped, rollouts: streak.max, trials_not_started: jobs.length - cursor };
  return { trajectories: done, summary };
}

function summarize(opts: BatchOptions, finals: Final[], episodes: number, agent: string, user: string): BatchSummary {
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
    const pass_hat: Record<string, number> = {};
    for (let k = 1; k <= valid.length; k++) pass_hat[k] = passHatK(results, k);
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
  const pass_hat: Record<string, number> = {};
  for (let k = 1; k <= opts.trials; k++) pass_hat[k] = passHatK(results, k);
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
