/**
 * What one trial of `switchboard run` needs, built from the command's flags: the same in the
 * CLI's thread and in each thread of the rollout pool (issue 15, item 5), so a trial gives the
 * same trajectory wherever it runs.
 */
import { availableParallelism } from 'node:os';
import { threadId } from 'node:worker_threads';
import type { Domain } from '../core/schema/domain.ts';
import type { Task } from '../core/schema/task.ts';
import type { Trajectory } from '../core/schema/trajectory.ts';
import {
  digestAttempt,
  runTrial,
  type AttemptDigest,
  type TrialOptions,
  type TrialRunner,
} from '../core/rollout/batch.ts';
import { steppingClock } from '../core/ports/clock.ts';
import { startThreadPool, type ThreadPoolOptions } from '../adapters/node/thread-pool.ts';
import { JsonlPart, type LinePlace } from '../adapters/node/jsonl-parts.ts';
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

/**
 * What `run` keeps of a finished attempt, wherever it ran (issue 15, item 5): its digest, where
 * its trajectory's line is among the parts of the trajectories file (when the run writes one),
 * and its call's time axis (duplex runs, for the interaction metrics).
 */
export interface AttemptRecord extends AttemptDigest {
  line?: LinePlace;
  duplex?: Trajectory['duplex'];
}

/** The {@link AttemptRecord} of a finished trajectory, its line appended to `part` when given. */
export function recordAttempt(t: Trajectory, part?: JsonlPart): AttemptRecord {
  return {
    ...digestAttempt(t),
    ...(part ? { line: part.append(t) } : {}),
    ...(t.duplex ? { duplex: t.duplex } : {}),
  };
}

/** Run trial `trial` of `task` with `runTrial`, recording each attempt (see {@link recordAttempt}). */
export async function recordedTrial(
  trial: TrialOptions,
  task: Task,
  t: number,
  part?: JsonlPart,
): Promise<AttemptRecord[]> {
  const out: AttemptRecord[] = [];
  await runTrial(trial, task, t, (a) => out.push(recordAttempt(a, part)));
  return out;
}

/** What each thread of the pool is started with: the run's flags, and the trajectories file whose part it writes. */
export interface TrialThreadData {
  flags: TrialFlags;
  lines?: string;
}

/** One job of the pool: trial `trial` of the task `taskId`. */
export interface TrialJob {
  taskId: string;
  trial: number;
}

/**
 * Remaining work (estimated from the trials this thread has run: remaining trials × elapsed /
 * finished) above which a run starts its pool of threads by itself. A pool's start (Node, the
 * modules, the domain: ~0.3–1.6 s of CPU per thread under load) and each thread's warm-up (its
 * first few hundred scripted episodes take ~1.2–2× the CPU of warm ones while V8 compiles) take
 * CPU from this thread on a 2-core machine, so the pool pays off only for several seconds of
 * work. A judgement, not a measured optimum: `npm run bench -- pool` times whole runs at
 * `--concurrency` 1 and 2 to check it.
 */
export const POOL_PAYBACK_MS = 3000;

/** Trials this thread runs before it judges whether the pool pays off (its first ones are the slowest). */
const TRIALS_BEFORE_ESTIMATE = 10;

/**
 * Threads for a run's pool: `--threads` when given, else one per core up to `--concurrency`;
 * never more than `--concurrency` (a thread beyond it would get no trial) or the trials to run.
 * 1 means no pool: every trial runs in the CLI's thread.
 */
export function threadCount(flags: { threads?: number; concurrency: number }, trials: number): number {
  const wanted = flags.threads ?? availableParallelism();
  return Math.max(1, Math.min(wanted, flags.concurrency, trials));
}

/** Where a run's trials go: see {@link scheduleTrials}. */
export interface TrialScheduler {
  /** The {@link TrialRunner} for `runBatch`: each attempt's record (its line written to a part when `lines` was given). */
  runTrial: TrialRunner<AttemptRecord>;
  /** Calls of `runTrial` to keep outstanding (`runBatch`'s concurrency): jobs running plus those queued ahead. */
  slots: number;
  /** Worker threads the trials ran in so far (1: none was started, all ran in this thread). */
  threads(): number;
  /** Trials run in this thread so far (before the pool was up, or all of them without one). */
  ranHere(): number;
  /** Resolves once the pool is up (at once when none is started, or none has been yet); rejects as its start did. */
  started(): Promise<void>;
  /** Stop the pool, if one was started. */
  close(): Promise<void>;
}

/**
 * Run a batch's trials in this thread until a pool of `threads` worker threads is up, then in the
 * pool; at most `concurrency` trials run at once, wherever they are. With `lines`, each thread
 * (this one too) writes its trajectories to its own part of that file (see `jsonl-parts.ts`;
 * the caller merges them), and only {@link AttemptRecord}s come back. With `auto` (no `--threads`),
 * the pool starts only once the work left is estimated above {@link POOL_PAYBACK_MS}, so a short
 * run never pays for threads; otherwise it starts at once. Each trial runs `runTrial` with the same
 * settings wherever it runs, so the results do not depend on where, or on when the pool came up.
 * A pool that fails to start makes the trials still waiting, and later ones, reject with its error.
 */
export function scheduleTrials(
  trial: TrialOptions,
  flags: TrialFlags,
  o: {
    threads: number;
    concurrency: number;
    /** Trials in the batch (for the estimate of the work left). */
    trials: number;
    auto: boolean;
    /** Work left, in ms, above which `auto` starts the pool (default {@link POOL_PAYBACK_MS}). */
    paybackMs?: number;
    /** The trajectories file whose parts the threads write (none written without it). */
    lines?: string;
  },
): TrialScheduler {
  // This thread's part, made at its first trial.
  let part: JsonlPart | undefined;
  const local: TrialRunner<AttemptRecord> = async (task, t) => {
    // A scripted trial runs in promise callbacks only, one after another: without a turn of the
    // event loop between trials, the pool's threads could never report that they are up, nor
    // Ctrl-C be heard, until the whole batch had run here.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (o.lines) part ??= new JsonlPart(o.lines, threadId);
    return recordedTrial(trial, task, t, part);
  };
  let finished = 0;
  if (o.threads <= 1)
    return {
      runTrial: (task, t) => {
        finished++;
        return local(task, t);
      },
      slots: o.concurrency,
      threads: () => 1,
      ranHere: () => finished,
      started: async () => {},
      close: async () => part?.close(),
    };
  let pool: TrialPool | undefined;
  let failure: Error | undefined;
  let starting: Promise<void> | undefined;
  let running = 0;
  let firstStart = 0;
  const waiting: { task: Task; trial: number; resolve(v: AttemptRecord[]): void; reject(e: Error): void }[] = [];
  const start = () => {
    starting ??= startTrialPool(
      flags,
      o.threads,
      { concurrency: o.concurrency, budget: () => o.concurrency - running },
      o.lines,
    ).then(
      (p) => {
        pool = p;
        for (const w of waiting.splice(0)) p.runTrial(w.task, w.trial).then(w.resolve, w.reject);
      },
      (e: Error) => {
        failure = e;
        for (const w of waiting.splice(0)) w.reject(e);
      },
    );
  };
  if (!o.auto) start();
  const here = (task: Task, t: number): Promise<AttemptRecord[]> => {
    running++;
    firstStart ||= performance.now();
    return local(task, t).finally(() => {
      running--;
      finished++;
      if (!starting && finished >= TRIALS_BEFORE_ESTIMATE) {
        const left = o.trials - finished - running - waiting.length;
        if ((left * (performance.now() - firstStart)) / finished > (o.paybackMs ?? POOL_PAYBACK_MS)) start();
      }
      if (pool) pool.pump();
      else {
        const w = waiting.shift();
        if (w) here(w.task, w.trial).then(w.resolve, w.reject);
      }
    });
  };
  return {
    runTrial(task, t) {
      if (failure) return Promise.reject(failure);
      if (pool) return pool.runTrial(task, t);
      if (running < o.concurrency) return here(task, t);
      return new Promise((resolve, reject) => waiting.push({ task, trial: t, resolve, reject }));
    },
    slots: o.concurrency + o.threads * POOL_AHEAD,
    threads: () => (pool ? o.threads : 1),
    ranHere: () => finished + running,
    started: async () => {
      await starting;
      if (failure) throw failure;
    },
    async close() {
      await starting;
      await pool?.close();
      part?.close();
    },
  };
}

/** Trials the parent sends each pool thread beyond its share of the concurrency (see `ThreadPoolOptions.ahead`). */
const POOL_AHEAD = 1;

/** A started pool of rollout threads. */
export interface TrialPool {
  runTrial: TrialRunner<AttemptRecord>;
  /** Trials the threads are running now, at most. */
  running(): number;
  /** Send waiting trials to threads with room (after trials running elsewhere ended). */
  pump(): void;
  close(): Promise<void>;
}

/**
 * Start the rollout pool: `threads` worker threads, each running `run-thread.ts` with the same
 * flags (its own domain runtime with idle databases, its own participants), at most `options`'s
 * concurrency trials running at once (see `ThreadPoolOptions`); with `lines`, each thread writes
 * its trajectories to its own part of that file. Returns the {@link TrialRunner} for `runBatch`
 * and the pool's `close`.
 * @throws (rejects) with a thread's set-up error (e.g. the domain's data is unreadable).
 */
export async function startTrialPool(
  flags: TrialFlags,
  threads: number,
  options: Omit<ThreadPoolOptions, 'ahead'> = {},
  lines?: string,
): Promise<TrialPool> {
  // From the prebuilt CLI (bin/prebuilt.mjs), the bundle's own entry: no TypeScript loader in the threads.
  const bundle = (globalThis as Record<symbol, unknown>)[Symbol.for('switchboard.prebuilt')];
  const entry =
    typeof bundle === 'string' ? new URL('./run-thread.js', bundle) : new URL('./run-thread.ts', import.meta.url);
  const data: TrialThreadData = { flags, ...(lines ? { lines } : {}) };
  const pool = await startThreadPool<TrialJob, AttemptRecord[]>(entry, data, threads, {
    ...options,
    ...(options.concurrency === undefined ? {} : { ahead: POOL_AHEAD }),
  });
  return {
    runTrial: (task, trial) => pool.run({ taskId: task.id, trial }),
    running: () => pool.running(),
    pump: () => pool.pump(),
    close: () => pool.close(),
  };
}
