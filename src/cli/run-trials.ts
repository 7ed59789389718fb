/**
 * What one trial of `switchboard run` needs, built from the command's flags: the same in the
 * CLI's thread and in each thread of the rollout pool (issue 15, item 5), so a trial gives the
 * same trajectory wherever it runs.
 */
import { availableParallelism } from 'node:os';
import type { Domain } from '../core/schema/domain.ts';
import type { Task } from '../core/schema/task.ts';
import type { Trajectory } from '../core/schema/trajectory.ts';
import type { TrialOptions, TrialRunner } from '../core/rollout/batch.ts';
import { steppingClock } from '../core/ports/clock.ts';
import { startThreadPool } from '../adapters/node/thread-pool.ts';
import { agentFactory, judgeFromFlags, userFactory, type ModelSettings } from './participants.ts';
import { openTasks } from './domains.ts';
import { modelSettingsFromFlags, type SamplingFlags } from './options.ts';

/** Participant turns per episode when `--max-steps` is not given. */
export const DEFAULT_MAX_STEPS = 100;

/** The flags of `run` that decide a trial (all plain data: they are sent to the pool's threads). */
export interface TrialFlags extends SamplingFlags {
  domain: string;
  data?: string;
  split?: string;
  taskIds?: string;
  agent: string;
  user: string;
  seed: number;
  maxSteps?: number;
  teacherGuidance?: boolean;
  /** Ask a model agent for spoken audio in this voice (`--agent-voice`). */
  agentVoice?: string;
  judge?: string;
  /** Judgements per item for the judge's majority. */
  judgeN?: number;
}

/** A run's domain, its selected tasks, and the settings of {@link runTrial}. */
export interface TrialSetup {
  domain: Domain;
  tasks: Task[];
  trial: TrialOptions;
}

/**
 * Open the domain and build the participants of a run from its flags. `models` are the model
 * settings when the caller has already made (and extended) them, else they are made from the flags.
 * @throws UsageError / InputError for a bad flag or domain (as `run` reports them).
 */
export async function trialSetup(flags: TrialFlags, models?: ModelSettings): Promise<TrialSetup> {
  const settings = models ?? modelSettingsFromFlags(flags);
  const agent = agentFactory(flags.agent, settings);
  const user = userFactory(flags.user, settings);
  const judge = judgeFromFlags(flags, settings);
  const { domain, runtime, tasks } = await openTasks(
    { domain: flags.domain, ...(flags.data ? { data: flags.data } : {}) },
    flags,
  );
  return {
    domain,
    tasks,
    trial: {
      runtime,
      agent,
      user,
      seed: flags.seed,
      clock: () => steppingClock(domain.now, 1000),
      maxSteps: flags.maxSteps ?? DEFAULT_MAX_STEPS,
      ...(judge ? { judge } : {}),
    },
  };
}

/** One job of the pool: trial `trial` of the task `taskId`. */
export interface TrialJob {
  taskId: string;
  trial: number;
}

/**
 * Fewest trials for which `run` starts threads by itself: a thread's start (Node, the modules,
 * the domain: ~0.3–1 s) is worth it only when many ~10 ms scripted episodes share it.
 */
export const MIN_TRIALS_FOR_THREADS = 100;

/**
 * Threads for a run's rollouts: `--threads` when given, else one per core up to
 * `--concurrency` when there are at least {@link MIN_TRIALS_FOR_THREADS} trials (else 1);
 * never more than the trials to run.
 */
export function threadCount(flags: { threads?: number; concurrency: number }, trials: number): number {
  const auto = trials >= MIN_TRIALS_FOR_THREADS ? Math.min(availableParallelism(), flags.concurrency) : 1;
  return Math.max(1, Math.min(flags.threads ?? auto, trials));
}

/**
 * Start the rollout pool: `threads` worker threads, each running `run-thread.ts` with the same
 * flags (its own domain runtime with idle databases, its own participants). Returns the
 * {@link TrialRunner} for `runBatch` and the pool's `close`.
 * @throws (rejects) with a thread's set-up error (e.g. the domain's data is unreadable).
 */
export async function startTrialPool(
  flags: TrialFlags,
  threads: number,
): Promise<{ runTrial: TrialRunner; close(): Promise<void> }> {
  // From the prebuilt CLI (bin/prebuilt.mjs), the bundle's own entry: no TypeScript loader in the threads.
  const bundle = (globalThis as Record<symbol, unknown>)[Symbol.for('switchboard.prebuilt')];
  const entry =
    typeof bundle === 'string' ? new URL('./run-thread.js', bundle) : new URL('./run-thread.ts', import.meta.url);
  const pool = await startThreadPool<TrialJob, Trajectory[]>(entry, flags, threads);
  return { runTrial: (task, trial) => pool.run({ taskId: task.id, trial }), close: () => pool.close() };
}
