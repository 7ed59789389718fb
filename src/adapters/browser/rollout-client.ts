/**
 * Page side of `workers/rollout.worker.ts`: start workers, and run a batch over a pool of them.
 */
import { proxy, wrap, type Remote } from 'comlink';
import type { RolloutService } from './rollout-service.ts';
import type { BatchJob, ChannelHost, NoiseFile, Trajectory } from './rollout-types.ts';
import type { TaskSummary } from '../../core/rollout/batch.ts';

export { proxy };
export type { TaskSummary };

/** A started rollout worker. */
export interface RolloutWorker {
  service: Remote<RolloutService>;
  /** Stop the worker at once (whatever it runs is lost). */
  terminate(): void;
  /** Rejects when the worker fails to load or crashes. */
  failed: Promise<never>;
}

/** Start one rollout worker (a module Web Worker). */
export function startRolloutWorker(name = 'switchboard-rollout'): RolloutWorker {
  const worker = new Worker(new URL('../../../workers/rollout.worker.ts', import.meta.url), { type: 'module', name });
  const failed = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (e) =>
      reject(new Error(`rollout worker failed: ${e.message || 'the worker script could not be loaded'}`)),
    );
  });
  failed.catch(() => undefined);
  return { service: wrap<RolloutService>(worker), terminate: () => worker.terminate(), failed };
}

/** Settings of {@link runBatchPool}. */
export interface PoolOptions {
  /** One job per task (K trials each). */
  jobs: readonly BatchJob[];
  /** Workers started (at most one per job). */
  size: number;
  /** Every finished trajectory, in completion order. */
  onTrajectory(t: Trajectory): void;
  /** A task's summary, when all its trials are done. */
  onTask?(s: TaskSummary): void;
  /**
   * A tau2-bench folder the jobs' domain comes from (file name → text, and the folder's name, as
   * given to `openTau2`): every worker loads it once before its first job.
   */
  tau2?: { files: Record<string, string>; folder: string };
  /**
   * A domain built in the page that the jobs run on (its name and folder files, as the main
   * worker's `buildFromSpec` returned them): every worker serves it once before its first job,
   * without gating it again (the main worker admitted it).
   */
  built?: { name: string; files: Record<string, string> };
  /** What renders the channel's graphs for jobs with channel audio (the page's OfflineAudioContext). */
  host?: ChannelHost;
  /** The user's noise recordings, the noise bank of jobs with channel audio. */
  noise?: readonly NoiseFile[];
}

/** A running batch. */
export interface PoolRun {
  /** Resolves with the summaries of the tasks that finished, in job order, when all are done or cancelled. */
  done: Promise<{ summaries: TaskSummary[]; cancelled: boolean }>;
  /** Start no new rollout; the ones in flight finish and are reported. */
  cancel(): void;
}

/**
 * Run jobs over a pool of rollout workers: each worker takes the next task when it finishes
 * one; the workers are stopped at the end. A worker that crashes fails the batch.
 */
export function runBatchPool(opts: PoolOptions): PoolRun {
  const size = Math.max(1, Math.min(opts.size, opts.jobs.length));
  const workers = Array.from({ length: size }, (_, i) => startRolloutWorker(`switchboard-batch-${i + 1}`));
  const results = new Map<number, TaskSummary>();
  let next = 0;
  let cancelled = false;
  const onTrajectory = proxy((t: Trajectory) => opts.onTrajectory(t));
  const tau2 = opts.tau2;
  const built = opts.built;
  const host = opts.host ? proxy(opts.host) : undefined;
  const loop = async (w: RolloutWorker) => {
    if (tau2) await Promise.race([w.service.openTau2(tau2.files, tau2.folder), w.failed]);
    if (built) await Promise.race([w.service.openBuilt(built.name, built.files, { gate: false }), w.failed]);
    while (!cancelled && next < opts.jobs.length) {
      const index = next++;
      const summary = await Promise.race([
        w.service.runTask(opts.jobs[index]!, onTrajectory, host, opts.noise?.length ? opts.noise : undefined),
        w.failed,
      ]);
      results.set(index, summary);
      opts.onTask?.(summary);
    }
  };
  const done = Promise.all(workers.map(loop))
    .then(() => ({ summaries: [...results].sort((a, b) => a[0] - b[0]).map(([, s]) => s), cancelled }))
    .finally(() => workers.forEach((w) => w.terminate()));
  return {
    done,
    cancel() {
      cancelled = true;
      for (const w of workers) void w.service.cancel().catch(() => undefined);
    },
  };
}
