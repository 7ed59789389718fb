/**
 * Rollout threads (issue 15, item 5): scripted-episode throughput of `run`'s batch (reference
 * agent, scripted caller, scored) in this thread and in a pool of 2 worker threads, and at
 * `--concurrency` 1, 2, 4 and 16 (threads: one per core, at most the concurrency), on carrier and on
 * tau2-airline (50 tasks × 2 trials, when its data is there). Episodes/s is
 * episodes / wall time of `runBatch`, the pool already started (its start is printed apart);
 * each figure is the median of {@link ROUNDS} rounds.
 */
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { runBatch } from '../src/core/rollout/batch.ts';
import { startTrialPool, threadCount, trialSetup, type TrialFlags } from '../src/cli/run-trials.ts';
import { median } from './harness.ts';
import { tau2DataRoot } from './tau2-anchor.ts';

const ROUNDS = 3;

/** Episodes/s of `trials` trials of every task of `domain`, at `concurrency`, in `threads` threads. */
async function throughput(flags: TrialFlags, trials: number, concurrency: number, threads: number) {
  const { tasks, trial } = await trialSetup(flags);
  const t0 = performance.now();
  const pool = threads > 1 ? await startTrialPool(flags, threads) : undefined;
  const startMs = performance.now() - t0;
  const rates: number[] = [];
  let rewards = '';
  try {
    // Round 0 warms the code up (JIT) in every thread; it is not counted.
    for (let r = 0; r <= ROUNDS; r++) {
      const t1 = performance.now();
      const { summary } = await runBatch({
        ...trial,
        tasks,
        trials,
        concurrency,
        keepTrajectories: false,
        ...(pool ? { trialRunner: pool.runTrial } : {}),
      });
      if (r > 0) rates.push(summary.totals.episodes / ((performance.now() - t1) / 1000));
      rewards = JSON.stringify(summary.tasks.map((t) => t.rewards));
    }
  } finally {
    await pool?.close();
    await trial.runtime.close();
  }
  return { rate: median(rates), startMs, rewards, episodes: tasks.length * trials };
}

/**
 * The machine's headroom right now: the same CPU-bound loop run twice in this thread and once in
 * each of 2 worker threads, time ratio (2 on two idle cores; near 1 when other work takes them).
 */
async function parallelCeiling(): Promise<number> {
  const spin = 'let x = 0; for (let i = 0; i < 2e8; i++) x += i % 7;';
  const loop = new Function(spin) as () => void;
  const t0 = performance.now();
  loop();
  loop();
  const serial = performance.now() - t0;
  const t1 = performance.now();
  await Promise.all(
    [0, 1].map(
      () =>
        new Promise((resolve, reject) =>
          new Worker(`${spin} require('node:worker_threads').parentPort.postMessage(0);`, { eval: true })
            .on('message', resolve)
            .on('error', reject),
        ),
    ),
  );
  return serial / (performance.now() - t1);
}

/** Episodes/s at `--concurrency` 1, 2, 4 and 16 (threads as `run` picks them), one line. */
async function byConcurrency(flags: TrialFlags, trials: number, episodes: number): Promise<string> {
  const out: string[] = [];
  for (const c of [1, 2, 4, 16]) {
    const threads = threadCount({ concurrency: c }, episodes);
    const m = await throughput(flags, trials, c, threads);
    out.push(`${c}: ${m.rate.toFixed(0)}/s (${threads} thread${threads > 1 ? 's' : ''})`);
  }
  return `  ${flags.domain}, ${episodes} episodes a round: episodes/s by --concurrency  ${out.join(' · ')}`;
}

/** Printable lines. */
export async function poolBenchLines(domain = 'carrier', trials = 10): Promise<string[]> {
  const flags: TrialFlags = { domain, agent: 'reference', user: 'scripted', seed: 0 };
  const lines: string[] = [];
  const before = await parallelCeiling();
  const one = await throughput(flags, trials, 1, 1);
  const two = await throughput(flags, trials, 2, 2);
  const after = await parallelCeiling();
  const ceiling = (before + after) / 2;
  lines.push(
    `  ${domain}, ${one.episodes} episodes a round: 1 thread ${one.rate.toFixed(0)} episodes/s · 2 threads ${two.rate.toFixed(0)} episodes/s (pool start ${two.startMs.toFixed(0)} ms)  ·  ratio ${(two.rate / one.rate).toFixed(2)} (target ≥ 1.8 on 2 idle cores) · a bare CPU loop's 2-thread ratio in this run ${before.toFixed(2)} before, ${after.toFixed(2)} after · pool ÷ bare loop ${(two.rate / one.rate / ceiling).toFixed(2)}  ·  same rewards: ${one.rewards === two.rewards}`,
    await byConcurrency(flags, trials, one.episodes),
  );
  const airline = join(tau2DataRoot(), 'airline');
  if (existsSync(join(airline, 'db.json'))) {
    const tau2: TrialFlags = { ...flags, domain: 'tau2-airline', data: airline };
    const { tasks, trial } = await trialSetup(tau2);
    await trial.runtime.close();
    lines.push(await byConcurrency(tau2, 2, tasks.length * 2));
  }
  lines.push(
    `  (medians of ${ROUNDS} rounds after a warm-up round; ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; the bare CPU loop's ratio is the most 2 threads gave on this machine then: a pool ratio near it is a loaded machine, not the pool)`,
  );
  return lines;
}
