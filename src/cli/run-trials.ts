/**
 * What one trial of `switchboard run` needs, built from the command's flags: the same in the
 * CLI's thread and in each thread of the rollout pool (issue 15, item 5), so a trial gives the
 * same trajectory wherever it runs.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { threadId } from 'node:worker_threads';
import type { Domain } from '../core/schema/domain.ts';
import type { BuiltDatabase } from '../core/env/environment.ts';
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
import { startThreadPool, threadShare, type ThreadPoolOptions } from '../adapters/node/thread-pool.ts';
import { JsonlPart, type LinePlace } from '../adapters/node/jsonl-parts.ts';
import { otherProcessesCpuMs, threadCpuMs } from '../adapters/node/cpu-time.ts';
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
 * settings when the caller has already made (and extended) them, else they are made from the
 * flags. `built`: the domain's database as another thread built it (`DomainRuntime.built`), so
 * that a rollout thread does not build it again.
 * @throws UsageError / InputError for a bad flag or domain (as `run` reports them).
 */
export async function trialSetup(
  flags: TrialFlags,
  models?: ModelSettings,
  built?: BuiltDatabase,
): Promise<TrialSetup> {
  const settings = models ?? modelSettingsFromFlags(flags);
  const agent = agentFactory(flags.agent, settings);
  const user = userFactory(flags.user, settings);
  const judge = judgeFromFlags(flags, settings);
  const { domain, runtime, tasks } = await openTasks(
    { domain: flags.domain, ...(flags.data ? { data: flags.data } : {}) },
    flags,
    built,
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

/**
 * What each thread of the pool is started with: the run's flags, the trajectories file whose
 * part it writes, and the domain's database as the CLI's thread built it (the thread then skips
 * that build: tau2-airline's is ~1 s of CPU).
 */
export interface TrialThreadData {
  flags: TrialFlags;
  lines?: string;
  built?: BuiltDatabase;
}

/** One job of the pool: trial `trial` of the task `taskId`. */
export interface TrialJob {
  taskId: string;
  trial: number;
}

/**
 * What starting the rollout threads costs, in ms of one core's time per worker thread: Node, the
 * modules and the domain in the new thread (~0.3–0.9 s of CPU), then its warm-up (V8 compiles
 * every hot function again in each isolate: a new thread's first few thousand scripted episodes
 * take ~1.3–3× the CPU of warm ones, most of it in V8's background compiler threads, which on 2
 * cores compete with both rollout threads). Measured, not guessed (issue 15, item 5): whole
 * `switchboard run --out` processes of carrier on 2 idle cores, the default (`auto`) against
 * `--threads 1`, alternating pairs. With 4,000 (until session 21), a 3,000-episode run started
 * its worker at its first estimate (~trial 205, 1.9–2.0 ms a trial while still cold; ~0.75 ms
 * warm) and ran ×0.96 as fast with +25% CPU (4 pairs); 6,000 ×0.96, 15,000 ×1.14. Those runs fit
 * a worker costing 2.8 s (3,000 episodes), 4.7 s (6,000) and 6.1 s (15,000) of a core before it
 * adds anything: its warm-up lasts thousands of its episodes, so the longer it runs, the more it
 * pays. With 6,000 (3 pairs each, session 21): 3,000 episodes start no worker (4.13 s against
 * 4.02 s with `--threads 1`, the same CPU), 6,000 still start one (wall ×1.00, +30% CPU: the
 * first estimate, at ~300 trials, still reads the cold pace, ~1.4 ms), 15,000 ×1.16 (10.5 s
 * against 12.3 s). A run starts its workers only when the work left pays this back (see
 * {@link POOL_CONTENTION} for the rule).
 */
export const POOL_PAYBACK_MS = 6000;

/**
 * How much more CPU an episode takes while the rollout threads run beside this one: ×1.15 with 2
 * threads on 2 cores (`npm run bench -- pool`, session 13: 1071 → 1175 µs in this thread, 1307
 * in the worker; shared caches and memory bandwidth). With `k` workers, `s` cores free for them
 * (at most `k`; see {@link TrialPace.otherCores}), `W` ms of work left at this thread's pace and
 * `C` = {@link POOL_PAYBACK_MS}, the run takes `W` alone and about `(W × (1 + 0.15 k) + k C) / (1 + s)`
 * with the workers, so they start only when `W × (s − 0.15 k) > k C`: on 2 idle cores when more
 * than ~7.1 s of work is left, and never while other processes keep the other core busy (a
 * loaded machine: a worker there only slowed runs, ×0.5–0.9 at 1,500–4,500 carrier episodes).
 */
export const POOL_CONTENTION = 0.15;

/** Trials this thread finishes, and ms it runs them, before it estimates the work left at all. */
export const PACE_MIN_TRIALS = 20;
export const PACE_MIN_MS = 500;
/**
 * ms of wall time between two estimates of {@link TrialPace} (it reads its clocks then, and at
 * every power-of-two count of finished trials). Reading them at every 8th trial, as it did, cost
 * this thread ~5% more CPU per scripted carrier episode (issue 15 item 5; one process, this
 * thread's CPU, `--concurrency 1` with 2 threads and no worker started, the real clocks against
 * clocks stubbed with `performance.now`, alternating rounds, medians of 24 pairs' ratios, 4 runs
 * each, load 1–5): every 8th trial ×1.072, ×1.067, ×0.983, ×1.045; every 50 ms ×1.007, ×1.052,
 * ×0.998, ×1.001. That is more than the reads' own CPU, ~45 µs per 8 trials
 * ({@link threadCpuMs} 15 µs, {@link otherProcessesCpuMs} 27 µs). The CLI's thread paid it in
 * every run of 2 threads or more, beside running workers too.
 */
export const PACE_EVERY_MS = 50;

/**
 * The pace of this thread's trials, for the estimate of the work left: ms per trial over the
 * later half (at least) of the trials finished so far, so that the first, cold ones (code not yet
 * compiled: several times slower) drop out of it as the run goes on. Each ms is the lesser of
 * the wall time and this thread's CPU time ({@link threadCpuMs}) over that span: on a machine
 * busy with other work the wall time stretches while the work does not, so the estimate (and
 * whether a run starts its workers) stays about what it is on idle cores. Keeps the times at
 * every power-of-two count of finished trials (constant memory however long the run).
 */
export class TrialPace {
  private readonly marks = new Map<number, Mark>();
  private first: Mark | undefined;
  private others: number | undefined;
  /** Wall time of the last reading of the clocks. */
  private read = -Infinity;

  /**
   * `now`, `cpu` and `others`: milliseconds of wall time, of this thread's CPU time and of the
   * CPU time other processes used on the machine ({@link otherProcessesCpuMs}); tests pass their own.
   */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly cpu: () => number = threadCpuMs,
    private readonly other: () => number = otherProcessesCpuMs,
  ) {}

  private mark(wall = this.now()): Mark {
    this.read = wall;
    return { wall, cpu: this.cpu(), others: this.other() };
  }

  /** A trial started here (the first one starts the clock of {@link PACE_MIN_MS}). */
  started(): void {
    this.first ??= this.mark();
  }

  /**
   * Cores that other processes kept busy, on average, over the span of the last estimate
   * {@link finished} gave (their CPU ms ÷ wall ms); undefined before the first estimate.
   */
  otherCores(): number | undefined {
    return this.others;
  }

  /**
   * The `n`th trial finished here (called for every n in turn): once {@link PACE_EVERY_MS} of
   * wall time has passed since the clocks were last read, ms per trial from the largest power
   * of two ≤ n/2 finished trials to now; undefined at the others, and before
   * {@link PACE_MIN_TRIALS} trials and {@link PACE_MIN_MS} (the lesser of wall and CPU time)
   * since the first trial started. Only the wall clock is read at every trial (the CPU clocks
   * are /proc reads: see {@link PACE_EVERY_MS}), and all of them at every power of two.
   */
  finished(n: number): number | undefined {
    const wall = this.now();
    const twoPower = (n & (n - 1)) === 0;
    if (!twoPower && wall - this.read < PACE_EVERY_MS) return undefined;
    const at = this.mark(wall);
    if (twoPower) this.marks.set(n, at);
    const first = this.first ?? at;
    if (n < PACE_MIN_TRIALS || Math.min(at.wall - first.wall, at.cpu - first.cpu) < PACE_MIN_MS) return undefined;
    const mark = 2 ** Math.floor(Math.log2(n / 2));
    const from = this.marks.get(mark)!;
    this.others = at.wall > from.wall ? Math.max(0, (at.others - from.others) / (at.wall - from.wall)) : 0;
    return Math.min(at.wall - from.wall, at.cpu - from.cpu) / (n - mark);
  }
}

/** The clocks of {@link TrialPace} at one moment, in ms. */
interface Mark {
  wall: number;
  cpu: number;
  others: number;
}

/**
 * Whether `workers` rollout threads pay for themselves (see {@link POOL_CONTENTION} for the rule):
 * `workMs` of work left at this thread's pace, `otherCores` cores kept busy by other processes
 * ({@link TrialPace.otherCores}), on a machine of `cores` cores (this thread uses one), each
 * worker costing `paybackMs`.
 */
export function poolPaysOff(
  workMs: number,
  o: { workers: number; cores: number; otherCores: number; paybackMs: number },
): boolean {
  const free = Math.max(0, Math.min(o.workers, o.cores - 1 - o.otherCores));
  return workMs * (free - POOL_CONTENTION * o.workers) > o.workers * o.paybackMs;
}

/**
 * Threads for a run's trials, the CLI's own included: `--threads` when given, else one per core
 * up to `--concurrency`; never more than `--concurrency` (a thread beyond it would get no trial)
 * or the trials to run. 1 means no worker thread: every trial runs in the CLI's thread; n means
 * the CLI's thread and n − 1 worker threads.
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
  /** Threads the trials ran in so far, the CLI's own included (1: no worker thread was started). */
  threads(): number;
  /** Trials run (or running) in this thread so far. */
  ranHere(): number;
  /** Resolves once the worker threads are up (at once when none is started, or none has been yet); rejects as their start did. */
  started(): Promise<void>;
  /**
   * Write the lines this thread's part holds in memory (its trials' lines are buffered; the
   * worker threads write each line at once), before the parts are merged while trials still run.
   * @throws when the write fails.
   */
  flush(): void;
  /** Stop the worker threads (one still starting is stopped too), after each closed its part; close this thread's part. */
  close(): Promise<void>;
}

/** A trial handed to {@link scheduleTrials}'s runner and not yet given to a thread. */
interface PendingTrial {
  task: Task;
  trial: number;
  /** The batch's (see `TrialRunner`): once true, the trial is not started. */
  halted: (() => boolean) | undefined;
  resolve(v: AttemptRecord[]): void;
  reject(e: Error): void;
}

/**
 * Run a batch's trials in this thread and, once they are up, in `threads − 1` worker threads
 * beside it (issue 15, item 5): this thread keeps running its share of `concurrency` (thread 0's
 * {@link threadShare}; all of it until the workers are up), each worker its share plus
 * {@link poolAhead} waiting in it (1–4: more for quick trials), and whichever thread has room takes the next trial in batch order (so a cold or
 * slow thread takes fewer, and the last trials finish together). At most `concurrency` trials
 * run at once, wherever they are. With `lines`, each thread writes its trajectories to its own
 * part of that file (see `jsonl-parts.ts`; the caller merges them in trial order, so the file is
 * the same whatever ran where), and only {@link AttemptRecord}s come back. With `auto` (no
 * `--threads`), the workers start only once the work left, at this thread's pace, pays back what
 * they cost on the cores other processes leave free ({@link poolPaysOff}), so a short run, or one
 * on a machine busy with other work, never pays for them; otherwise they start at once.
 * Each trial runs `runTrial` with the same settings wherever it runs, so the results do not
 * depend on where, or on when the workers came up. Workers that fail to start make the trials
 * still waiting, and later ones, reject with their error. Trials waiting here once the batch has
 * stopped (the `halted` of `TrialRunner`: Ctrl-C, a fault streak) are not started.
 */
export function scheduleTrials(
  trial: TrialOptions,
  flags: TrialFlags,
  o: {
    /** Threads, this one included (see {@link threadCount}). */
    threads: number;
    concurrency: number;
    /** Trials in the batch (for the estimate of the work left). */
    trials: number;
    auto: boolean;
    /** What a worker costs, in ms of a core, for `auto`'s {@link poolPaysOff} (default {@link POOL_PAYBACK_MS}). */
    paybackMs?: number;
    /** The trajectories file whose parts the threads write (none written without it). */
    lines?: string;
    /** Clocks for the estimate of the work left, in ms (see {@link TrialPace}; tests pass their own). */
    now?: () => number;
    cpu?: () => number;
    others?: () => number;
    /** Cores of the machine (default `availableParallelism()`), for {@link poolPaysOff}. */
    cores?: number;
  },
): TrialScheduler {
  // This thread's part, made at its first trial.
  let part: JsonlPart | undefined;
  let runningHere = 0;
  let finishedHere = 0;
  let turned = Number.NEGATIVE_INFINITY;
  const local = async (task: Task, t: number): Promise<AttemptRecord[]> => {
    // A scripted trial runs in promise callbacks only, one after another: without a turn of the
    // event loop between trials, the workers could never report that they are up or send back
    // their trials, nor Ctrl-C be heard, until the whole batch had run here. A turn at most every
    // LOOP_TURN_MS (see there).
    if (performance.now() - turned >= LOOP_TURN_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turned = performance.now();
    }
    if (o.lines) part ??= new JsonlPart(o.lines, threadId, PART_BUFFER_BYTES);
    return recordedTrial(trial, task, t, part);
  };
  if (o.threads <= 1)
    return {
      runTrial: (task, t) => {
        finishedHere++;
        return local(task, t);
      },
      slots: o.concurrency,
      threads: () => 1,
      ranHere: () => finishedHere,
      started: async () => {},
      flush: () => part?.flush(),
      close: async () => part?.close(),
    };
  const workers = o.threads - 1;
  const ownShare = threadShare(o.concurrency, o.threads, 0);
  let pool: TrialPool | undefined;
  let failure: Error | undefined;
  let starting: Promise<void> | undefined;
  const stopStart = new AbortController();
  const waiting: PendingTrial[] = [];
  const pace = new TrialPace(o.now, o.cpu, o.others);
  /** ms per trial here, as last paced (undefined until {@link TrialPace} has an estimate). */
  let perTrial: number | undefined;
  const start = () => {
    starting ??= startTrialPool(
      flags,
      workers,
      {
        concurrency: o.concurrency - ownShare,
        budget: () => o.concurrency - runningHere,
        aheadNow: () => poolAhead(perTrial),
        signal: stopStart.signal,
      },
      o.lines,
      trial.runtime.built(),
    ).then(
      (p) => {
        pool = p;
        pump();
      },
      (e: Error) => {
        failure = e;
        for (const w of waiting.splice(0)) w.reject(e);
      },
    );
  };
  if (!o.auto) start();
  /** Whether the work left (trials neither finished nor running, at this thread's pace) pays for the workers. */
  const paysOff = (per: number | undefined) =>
    per !== undefined &&
    poolPaysOff((o.trials - finishedHere - runningHere) * per, {
      workers,
      cores: o.cores ?? availableParallelism(),
      otherCores: pace.otherCores() ?? 0,
      paybackMs: o.paybackMs ?? POOL_PAYBACK_MS,
    });
  const here = (w: PendingTrial) => {
    runningHere++;
    pace.started();
    local(w.task, w.trial)
      .finally(() => {
        runningHere--;
        finishedHere++;
        perTrial = pace.finished(finishedHere) ?? perTrial;
        if (!starting && paysOff(perTrial)) start();
        pump();
      })
      .then(w.resolve, w.reject);
  };
  const there = (w: PendingTrial) => {
    pool!.runTrial(w.task, w.trial).then(
      (v) => {
        w.resolve(v);
        pump();
      },
      (e: Error) => {
        w.reject(e);
        pump();
      },
    );
  };
  /**
   * Hand waiting trials, in order, to this thread while it has room, else to a worker with room;
   * once the batch has stopped, the waiting trials are not started (they return no attempt).
   */
  const pump = () => {
    while (waiting.length > 0) {
      if (waiting[0]!.halted?.()) waiting.shift()!.resolve([]);
      else if (runningHere < (pool ? ownShare : o.concurrency)) here(waiting.shift()!);
      else if (pool?.room()) there(waiting.shift()!);
      else return;
    }
  };
  return {
    runTrial(task, t, halted) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting.push({ task, trial: t, halted, resolve, reject });
        pump();
      });
    },
    slots: o.concurrency + workers * POOL_AHEAD_MAX,
    threads: () => (pool ? o.threads : 1),
    ranHere: () => finishedHere + runningHere,
    started: async () => {
      await starting;
      if (failure) throw failure;
    },
    flush: () => part?.flush(),
    async close() {
      stopStart.abort(new Error('rollout threads: the run ended before they were up'));
      await starting;
      await pool?.close();
      part?.close();
    },
  };
}

/**
 * Trials the parent sends each worker thread beyond its share of the concurrency, at most (see
 * `ThreadPoolOptions.ahead`; {@link poolAhead} says how many now).
 */
export const POOL_AHEAD_MAX = 4;

/**
 * Longest run, ms, of trials the CLI's thread starts one after another without a turn of its
 * event loop (in which it hears the workers' replies, Ctrl-C and the progress bar's timer).
 * A turn polls for I/O, a system call, as is each write of a line to the trajectories file; on
 * the 2-vCPU KVM guests this project is measured on (page-table isolation, no PCID), every
 * system call flushes the TLB, so the trial after it runs cold. Hence a turn at most every 2 ms,
 * and this thread's lines written {@link PART_BUFFER_BYTES} at a time. Measured (issue 15 item 5,
 * carrier, scripted, this thread alone, 30 pairs of 10-trial rounds alternating, medians of the
 * pairs' ratios): a turn before every trial against one at most every 2 ms, µs per episode
 * ×0.946 (every 10 ms: ×0.936); a turn and a 64-byte `write` after every trial against neither,
 * ×0.911 and ×0.920 (two runs). A worker keeps {@link POOL_AHEAD_MS} of trials waiting, so it does
 * not run dry between two turns.
 */
const LOOP_TURN_MS = 2;

/**
 * Bytes of trajectory lines the CLI's thread gathers before writing them to its part (see
 * {@link LOOP_TURN_MS}): ~50–100 carrier trajectories, one write instead of one a line. The
 * workers' parts stay unbuffered: a line's place goes to the CLI's thread with the trial, and a
 * second Ctrl-C merges the parts while workers still run, so a worker's line must be on disk
 * before its place is sent; the CLI's thread flushes its own part before that merge.
 */
const PART_BUFFER_BYTES = 1 << 18;

/**
 * ms of this thread's trials that the trials waiting in a worker thread may add up to (see
 * {@link poolAhead}).
 */
export const POOL_AHEAD_MS = 4;

/**
 * Trials to keep waiting in each worker thread beyond its share, given `perTrialMs` (ms per trial
 * in the CLI's thread, {@link TrialPace}; undefined before it has an estimate): as many as take
 * {@link POOL_AHEAD_MS} (at least 1, at most {@link POOL_AHEAD_MAX}). With one waiting, a worker
 * that runs ~1 ms scripted trials idled for the CLI's thread's next job about half the time
 * (issue 15, item 5: its event loop was busy 0.41–0.53 under load, 0.78–0.83 with 4 waiting):
 * the CLI's thread hears that a trial ended only between its own trials. Slow trials (a model's
 * endpoint) keep one, so a stopped run (Ctrl-C) finishes little beyond the trials in flight.
 */
export function poolAhead(perTrialMs: number | undefined): number {
  if (perTrialMs === undefined || !(perTrialMs > 0)) return 1;
  return Math.max(1, Math.min(POOL_AHEAD_MAX, Math.floor(POOL_AHEAD_MS / perTrialMs)));
}

/**
 * V8 flags set (process-wide, `v8.setFlagsFromString`) as a run starts its rollout threads: at
 * most 460 bytes of bytecode inlined into one optimized function in all (V8's default on Node 20
 * is 920). Each new thread compiles every hot function again (its warm-up; see
 * {@link POOL_PAYBACK_MS}), and with the default TurboFan inlined whole episodes into
 * `runEpisode` (4 compilations of 100–200 ms each in a 1,500-episode carrier run, ~295 in all),
 * in V8's background threads, which on 2 cores take time from both rollout threads. Measured
 * (issue 15 item 5, whole `run --out` processes, alternating, under load 4–8 on 2 vCPUs, CPU of
 * every thread): carrier 4,500 episodes with `--threads 2`, the flag set here against not, 6
 * pairs: the process's CPU ×0.95 (V8's helper threads 4.43 → 3.70 s), wall ×0.94; the flag for a
 * whole process: `--concurrency 1`, 15,000 episodes, 5 pairs, this thread's CPU ×0.999 (warm
 * code as fast), helpers −19%; 4,500 with `--threads 2`, 6 pairs, CPU ×0.84. Tried and not
 * kept: a 2× interrupt budget (later tier-up: −18% CPU at 1,500 episodes, but this thread ×1.08
 * at 15,000), no TurboFan inlining (CPU ×0.86 at 1,500 episodes; warm code not measured).
 */
export const POOL_V8_FLAGS = '--max-inlined-bytecode-size-cumulative=460';

/** A started pool of rollout threads. */
export interface TrialPool {
  runTrial: TrialRunner<AttemptRecord>;
  /** Trials the threads are running now, at most. */
  running(): number;
  /** True when a trial given to {@link runTrial} now goes to a thread at once (see `ThreadPool.room`). */
  room(): boolean;
  /** Send waiting trials to threads with room (after trials running elsewhere ended). */
  pump(): void;
  close(): Promise<void>;
}

/**
 * Start the rollout pool: `threads` worker threads, each running `run-thread.ts` with the same
 * flags (its own domain runtime with idle databases, its own participants), at most `options`'s
 * concurrency trials running at once (see `ThreadPoolOptions`); with `lines`, each thread writes
 * its trajectories to its own part of that file. With `built` (the CLI's runtime's
 * `DomainRuntime.built()`), each thread opens its databases on that image instead of building
 * the domain's schema and seed again. Returns the {@link TrialRunner} for `runBatch` and the
 * pool's `close` (each thread closes its part and databases first).
 * @throws (rejects) with a thread's set-up error (e.g. the domain's data is unreadable), or
 * `options.signal`'s reason when it aborts the start.
 */
export async function startTrialPool(
  flags: TrialFlags,
  threads: number,
  options: Omit<ThreadPoolOptions, 'ahead'> = {},
  lines?: string,
  built?: BuiltDatabase,
): Promise<TrialPool> {
  // From the prebuilt CLI (bin/prebuilt.mjs), the bundle's own entry: no TypeScript loader in the threads.
  const bundle = (globalThis as Record<symbol, unknown>)[Symbol.for('switchboard.prebuilt')];
  const entry =
    typeof bundle === 'string' ? new URL('./run-thread.js', bundle) : new URL('./run-thread.ts', import.meta.url);
  const data: TrialThreadData = { flags, ...(lines ? { lines } : {}), ...(built ? { built } : {}) };
  // Process-wide: the new threads' isolates compile with it from their first function on.
  setFlagsFromString(POOL_V8_FLAGS);
  const pool = await startThreadPool<TrialJob, AttemptRecord[]>(entry, data, threads, {
    ...options,
    ...(options.concurrency === undefined ? {} : { ahead: POOL_AHEAD_MAX }),
  });
  return {
    runTrial: (task, trial) => pool.run({ taskId: task.id, trial }),
    running: () => pool.running(),
    room: () => pool.room(),
    pump: () => pool.pump(),
    close: () => pool.close(),
  };
}
