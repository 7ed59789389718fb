/**
 * A thread of `run`'s rollout pool (issue 15, item 5; started by `startTrialPool`): sets up the
 * run from its flags once (domain runtime, participants), opens and closes
 * {@link IDLE_DATABASES} environments so that many idle databases are ready, then runs each
 * trial it is sent with the same `runTrial` as the CLI's own thread. Its trajectories go to its
 * own part of the run's trajectories file; only their records go back to the CLI's thread.
 */
import { threadId } from 'node:worker_threads';
import { serveThreadJobs } from '../adapters/node/thread-pool.ts';
import { JsonlPart } from '../adapters/node/jsonl-parts.ts';
import { recordedTrial, trialSetup, type TrialJob, type TrialThreadData } from './run-trials.ts';

/** Environments opened and closed at set-up (the runtime keeps up to its pool size of them idle). */
const IDLE_DATABASES = 4;

await serveThreadJobs(async ({ flags, lines, built }: TrialThreadData) => {
  const { tasks, trial } = await trialSetup(flags, undefined, built);
  const part = lines ? new JsonlPart(lines, threadId) : undefined;
  const envs = await Promise.all(Array.from({ length: IDLE_DATABASES }, () => trial.runtime.open()));
  for (const env of envs) await env.close();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return async (job: TrialJob) => {
    const task = byId.get(job.taskId);
    if (!task) throw new Error(`rollout thread: no task ${job.taskId}`);
    return recordedTrial(trial, task, job.trial, part);
  };
});
