/**
 * Rollout threads (issue 15, item 5): scripted-episode throughput of `run`'s batch (reference
 * agent, scripted caller, each scored) in this thread alone and in this thread beside worker
 * threads (as `run` schedules them: n threads are this one and n − 1 workers).
 *
 * Throughput is measured warm: a V8 isolate runs its first thousand or so episodes ~1.3–3×
 * slower while it compiles (most of that CPU in V8's background compiler threads, which on 2
 * cores compete with the other thread), and every thread is its own isolate, so this thread and
 * each worker run at least {@link WARM_EPISODES} episodes before any round is timed; the
 * worker's start and warm-up are printed apart, and whole runs from nothing (start included,
 * `run`'s own choice of whether to start a worker) are timed too. Rounds of the modes alternate,
 * so a change in the machine's load hits both; each ratio is the median of the per-pair ratios.
 * Beside it, a bare CPU loop's 2-thread ratio in the same run: the same function, already
 * compiled, run twice here and once in each of 2 started threads (~1.9–2 on 2 idle cores); and
 * the same for a loop of JSON round trips of trajectory-shaped turns, which allocates as an
 * episode does (what 2 cores give memory-heavy JavaScript, the fairer ceiling for the pool).
 * Every thread writes its trajectories to its part of a JSONL file, as `run --out` does.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { runBatch } from '../src/core/rollout/batch.ts';
import { scheduleTrials, threadCount, trialSetup, type TrialFlags, type TrialSetup } from '../src/cli/run-trials.ts';
import { median } from './harness.ts';
import { tau2DataRoot } from './tau2-anchor.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** Timed rounds (each mode), after the warm-up. */
const ROUNDS = 5;
/** Episodes each thread (this one, and each of the pool's) runs before rounds are timed. */
const WARM_EPISODES = 600;

/** One round: `trials` trials of every task through `scheduler`; episodes/s, CPU µs per episode, rewards. */
async function round(setup: TrialSetup, trials: number, scheduler: ReturnType<typeof scheduleTrials>) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const { summary } = await runBatch({
    ...setup.trial,
    tasks: setup.tasks,
    trials,
    concurrency: scheduler.slots,
    keepTrajectories: false,
    trialRunner: scheduler.runTrial,
  });
  const cpu = process.cpuUsage(c0);
  const episodes = summary.totals.episodes;
  return {
    rate: episodes / ((performance.now() - t0) / 1000),
    cpuUs: (cpu.user + cpu.system) / episodes,
    rewards: JSON.stringify(summary.tasks.map((t) => t.rewards)),
  };
}

/**
 * A started mode: `concurrency` as `run --out` would run it with `threads` (pool started, warmed
 * up), each thread writing its trajectories to its part of a trajectories file in `out`.
 */
async function mode(flags: TrialFlags, setup: TrialSetup, concurrency: number, threads: number, out: string) {
  const t0 = performance.now();
  const lines = join(out, `c${concurrency}-t${threads}.jsonl`);
  const scheduler = scheduleTrials(setup.trial, flags, { threads, concurrency, trials: Infinity, auto: false, lines });
  await scheduler.started();
  const startMs = performance.now() - t0;
  // Warm-up rounds until every worker has run WARM_EPISODES too: this thread, warm already,
  // takes more of a round than a cold worker does (whichever thread has room takes the next trial).
  const warmTrials = Math.ceil((WARM_EPISODES * threads) / setup.tasks.length);
  let elsewhere = 0;
  let warm: Awaited<ReturnType<typeof round>>;
  do {
    const here = scheduler.ranHere();
    warm = await round(setup, warmTrials, scheduler);
    elsewhere += warmTrials * setup.tasks.length - (scheduler.ranHere() - here);
  } while (elsewhere < WARM_EPISODES * (threads - 1));
  return { scheduler, startMs, warm, threads: scheduler.threads() };
}

type Mode = Awaited<ReturnType<typeof mode>>;

/** Alternate rounds of each mode; per mode the rates, and per mode the median ratio to the first mode. */
async function alternate(setup: TrialSetup, trials: number, modes: Mode[]) {
  const rates = modes.map(() => [] as number[]);
  const cpu = modes.map(() => [] as number[]);
  const rewards = new Set<string>();
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, m] of modes.entries()) {
      const o = await round(setup, trials, m.scheduler);
      rates[i]!.push(o.rate);
      cpu[i]!.push(o.cpuUs);
      rewards.add(o.rewards);
    }
  return modes.map((_, i) => ({
    rate: median(rates[i]!),
    cpuUs: median(cpu[i]!),
    ratio: median(rates[i]!.map((x, r) => x / rates[0]![r]!)),
    sameRewards: rewards.size === 1,
  }));
}

/** Source of the bare loop: one function, compiled the same way in every thread. */
const SPIN = 'function spin(n) { let x = 0; for (let i = 0; i < n; i++) x += i % 7; return x; }';
const SPIN_N = 1e8;

/**
 * Source of a bare loop that works as an episode does (allocation, strings, objects, JSON):
 * ~6 KB of trajectory-shaped turns serialized and parsed back, `n` times. Its 2-thread ratio is
 * what this machine gives memory-heavy JavaScript, as against the arithmetic of {@link SPIN}.
 */
const JSON_LOOP = `function spin(n) {
  const turns = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', text: 'turn ' + i + ' of a call about a bill', tool_calls: [{ id: 'call_' + i, name: 'get_account', arguments: { account_id: 'A' + i } }], t_ms: i * 1000 }));
  let x = 0;
  for (let i = 0; i < n; i++) x += JSON.parse(JSON.stringify({ id: 'ep' + i, turns })).turns.length;
  return x;
}`;
const JSON_N = 5e3;

async function parallelCeiling(source = SPIN, n = SPIN_N): Promise<number> {
  const spin = new Function(`${source} return spin;`)() as (n: number) => number;
  const workers = [0, 1].map(
    () =>
      new Worker(
        `${source} const { parentPort } = require('node:worker_threads'); parentPort.on('message', (n) => parentPort.postMessage(spin(n)));`,
        { eval: true },
      ),
  );
  const inBoth = (n: number) =>
    Promise.all(
      workers.map(
        (w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject).postMessage(n)),
      ),
    );
  try {
    spin(n / 10);
    await inBoth(n / 10);
    const ratios: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      spin(n);
      spin(n);
      const serial = performance.now() - t0;
      const t1 = performance.now();
      await inBoth(n);
      ratios.push(serial / (performance.now() - t1));
    }
    return median(ratios);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * Seconds from spawn to exit of `switchboard run` (the prebuilt CLI, built beforehand) of
 * `trials` trials of every task of `domain` with `--out`, at `--concurrency` `c` (threads as
 * `run` picks them: pool start, warm-up, its JSONL and summary included).
 */
async function wholeRun(domain: string, trials: number, c: number, out: string): Promise<number> {
  const t0 = performance.now();
  await run(
    process.execPath,
    [
      'bin/switchboard.mjs',
      'run',
      '--domain',
      domain,
      '--trials',
      String(trials),
      '--concurrency',
      String(c),
      '--out',
      join(out, `c${c}`),
      '--json',
    ],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  return (performance.now() - t0) / 1000;
}

/** Whole runs of 10×, 100× and 1,000× a task at --concurrency 1 and 2, alternated twice; one line of medians. */
async function wholeRuns(domain: string, tasks: number): Promise<string> {
  await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: ROOT });
  const out = await mkdtemp(join(tmpdir(), 'sb-bench-pool-'));
  try {
    const parts: string[] = [];
    for (const trials of [10, 100, 1000]) {
      const t: number[][] = [[], []];
      for (let r = 0; r < 2; r++)
        for (const [i, c] of [1, 2].entries()) t[i]!.push(await wholeRun(domain, trials, c, out));
      const [s1, s2] = t.map(median) as [number, number];
      const same =
        (await readFile(join(out, 'c1/trajectories.jsonl'), 'utf8')) ===
        (await readFile(join(out, 'c2/trajectories.jsonl'), 'utf8'));
      parts.push(
        `${tasks * trials} episodes: --concurrency 1 ${s1.toFixed(2)} s, 2 ${s2.toFixed(2)} s (×${f2(s1 / s2)}${s1 / s2 < 1 ? ', slower' : ''}; same trajectories.jsonl: ${same})`,
      );
    }
    return `  ${domain}, switchboard run --out from spawn to exit (pool start, warm-up and files included): ${parts.join(' · ')}`;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const f0 = (x: number) => x.toFixed(0);
const f2 = (x: number) => x.toFixed(2);

/** Episodes/s by `--concurrency` (threads as `run` picks them, pools started and warm), one line. */
async function byConcurrency(flags: TrialFlags, setup: TrialSetup, trials: number, out: string): Promise<string> {
  const episodes = setup.tasks.length * trials;
  const cs = [1, 2, 4, 16];
  const modes: Mode[] = [];
  for (const c of cs) modes.push(await mode(flags, setup, c, threadCount({ concurrency: c }, episodes), out));
  try {
    const out = await alternate(setup, trials, modes);
    const parts = cs.map(
      (c, i) =>
        `${c}: ${f0(out[i]!.rate)}/s (${modes[i]!.threads} thread${modes[i]!.threads > 1 ? 's' : ''}${i ? `, ×${f2(out[i]!.ratio)}` : ''})`,
    );
    return `  ${flags.domain}, ${episodes} episodes a round: episodes/s by --concurrency (warm)  ${parts.join(' · ')}  ·  same rewards: ${out.every((o) => o.sameRewards)}`;
  } finally {
    for (const m of modes) await m.scheduler.close();
  }
}

/** Printable lines. */
export async function poolBenchLines(domain = 'carrier', trials = 20): Promise<string[]> {
  const flags: TrialFlags = { domain, agent: 'reference', user: 'scripted', seed: 0 };
  const lines: string[] = [];
  // The parts the modes write, as `run --out` does (removed at the end).
  const out = await mkdtemp(join(tmpdir(), 'sb-bench-parts-'));
  try {
    await carrierLines(out);
    const airline = join(tau2DataRoot(), 'airline');
    if (existsSync(join(airline, 'db.json'))) {
      const tau2: TrialFlags = { ...flags, domain: 'tau2-airline', data: airline };
      const tau2Setup = await trialSetup(tau2);
      try {
        lines.push(await byConcurrency(tau2, tau2Setup, 2, out));
      } finally {
        await tau2Setup.trial.runtime.close();
      }
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  lines.push(
    `  (medians of ${ROUNDS} alternating rounds, each thread warmed up by ${WARM_EPISODES} episodes or more first, every thread writing its trajectories' JSONL part as \`run --out\` does; ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; the bare CPU loop's ratio is the most 2 threads gave on this machine then: a pool ratio near it is a loaded machine, not the pool)`,
  );
  return lines;

  /** The lines of `domain` (carrier by default): ratio, CPU, by concurrency, whole runs. */
  async function carrierLines(out: string): Promise<void> {
    const setup = await trialSetup(flags);
    try {
      const episodes = setup.tasks.length * trials;
      const before = await parallelCeiling();
      const one = await mode(flags, setup, 1, 1, out);
      const two = await mode(flags, setup, 2, 2, out);
      const [o, t] = await alternate(setup, trials, [one, two]);
      await two.scheduler.close();
      await one.scheduler.close();
      const after = await parallelCeiling();
      const jsonCeiling = await parallelCeiling(JSON_LOOP, JSON_N);
      const ceiling = (before + after) / 2;
      lines.push(
        `  ${domain}, ${episodes} episodes a round, this thread (--concurrency 1) ${f0(o!.rate)} episodes/s · 2 threads (--concurrency 2: this one and a worker) ${f0(t!.rate)} episodes/s  ·  ratio ${f2(t!.ratio)} (target ≥ 1.8 on 2 idle cores) · a bare CPU loop's 2-thread ratio in this run ${f2(before)} before, ${f2(after)} after · pool ÷ bare loop ${f2(t!.ratio / ceiling)} · a JSON round-trip loop's 2-thread ratio ${f2(jsonCeiling)} (pool ÷ it ${f2(t!.ratio / jsonCeiling)})  ·  same rewards: ${o!.sameRewards && t!.sameRewards}`,
        `    CPU per episode (all threads of the process): this thread ${f0(o!.cpuUs)} µs · 2 threads ${f0(t!.cpuUs)} µs (×${f2(t!.cpuUs / o!.cpuUs)}) · worker start ${f0(two.startMs)} ms, then warm-up until it ran ${WARM_EPISODES} episodes (the last warm-up round at ${f0(two.warm.rate)}/s; this thread's alone at ${f0(one.warm.rate)}/s)`,
        await byConcurrency(flags, setup, trials, out),
      );
      lines.push(await wholeRuns(domain, setup.tasks.length));
    } finally {
      await setup.trial.runtime.close();
    }
  }
}
