/**
 * Rollout threads (issue 15, item 5): scripted-episode throughput of `run`'s batch (reference
 * agent, scripted caller, each scored) in this thread alone and in this thread beside worker
 * threads (as `run` schedules them: n threads are this one and n − 1 workers).
 *
 * Throughput is measured warm: a V8 isolate runs its first few thousand episodes up to ~2× the
 * CPU of warm ones while it compiles (much of that CPU in V8's background compiler threads,
 * which on 2 cores compete with the other thread: a process with one rollout thread then uses
 * ~1.2–1.3 cores, which would make the 2-thread ratio look worse than the pool is), and every
 * thread is its own isolate, so this thread and each worker are warmed up (see {@link WARM_MIN})
 * before any round is timed. Each round's CPU is split by thread (this one, the workers, V8's
 * and libuv's helpers: `thread-cpu.ts`), so the cores each mode used are printed beside its
 * rate. The warm-up's length and the worker's start are printed apart, and whole runs from nothing (start included,
 * `run`'s own choice of whether to start a worker) are timed too. Rounds of the modes alternate,
 * so a change in the machine's load hits both; each ratio is the median of the per-pair ratios.
 * Beside it, a bare CPU loop's 2-thread ratio in the same run: the same function, already
 * compiled, run twice here and once in each of 2 started threads (~1.9–2 on 2 idle cores); and
 * the same for a loop of JSON round trips of trajectory-shaped turns, which allocates as an
 * episode does (what 2 cores give memory-heavy JavaScript, the fairer ceiling for the pool).
 * Every thread writes its trajectories to its part of a JSONL file, as `run --out` does. Each
 * mode's scheduler runs on its own clocks ({@link ModeClock}), which stand still while the other
 * modes' rounds run in this thread, so it paces its trials (and the trials it keeps waiting in a
 * worker) as a run's one scheduler does. The 2-thread ratio above compares with one thread on 2 cores (its helper threads on the idle
 * one); the "one core" line compares with one thread pinned to each CPU in turn (`oneCore`), the
 * issue's literal 2 cores ÷ 1 core, taken to the CPUs' mean rate: this VM's two vCPUs are not
 * always equally fast (bench/cpus.ts, {@link oneCoreLine}).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { runBatch } from '../src/core/rollout/batch.ts';
import { scheduleTrials, threadCount, trialSetup, type TrialFlags, type TrialSetup } from '../src/cli/run-trials.ts';
import { median } from './harness.ts';
import { splitCpu, threadCpuNs, threadIds } from './thread-cpu.ts';
import { ModeClock } from './mode-clock.ts';
import { tau2DataRoot } from './tau2-anchor.ts';
import { allowedCpus, pinnedTo } from './cpus.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/**
 * Timed rounds (each mode), after the warm-up. Many short rounds rather than a few long ones:
 * this host has speed spells (a fixed CPU loop runs 23–25 ms a block one minute and 29–48 ms the
 * next, in spells of ~0.3–3 s; session 15), so a pair of rounds a fraction of a second apart is
 * more likely to share one, and the median of 15 per-pair ratios is harder to move than of 5
 * (5 rounds of 300 episodes read 1.42 and 2.12 for the same code, an hour apart).
 */
const ROUNDS = 15;

/**
 * Trials of every task in a timed round of the carrier lines (15 tasks: 315 episodes). A round ends
 * when its last trial does, and a worker holds up to `POOL_AHEAD_MAX` trials waiting beyond the
 * one it runs, so the CLI's thread idles at each round's end while the worker finishes them (once
 * a run in `run`, once a round here). With 7 trials (105 episodes, until session 20) that tail was
 * ~4–6% of the CLI thread's round (its event loop busy 0.94–0.96 in the 2-thread rounds against
 * 1.00 alone), more when the worker sat on the slower CPU (bench/cpus.ts); with 21, 0.99. The 2
 * cores ÷ 1 core figure stayed within its run-to-run spread (efficiency 0.90 in that run, against
 * 0.86–0.94 with 7), so the tail was not what the pool loses.
 */
const ROUND_TRIALS = 21;
/** {@link ROUND_TRIALS} for tau2-airline (50 tasks: 300 episodes a round). */
const TAU2_ROUND_TRIALS = 6;

/**
 * One round: `trials` trials of every task through `scheduler` (whose worker threads are
 * `rollout`); episodes/s, CPU µs per episode (the process's, and split by thread: see
 * {@link splitCpu}), event-loop utilization of this thread, rewards.
 */
async function round(
  setup: TrialSetup,
  trials: number,
  scheduler: ReturnType<typeof scheduleTrials>,
  rollout: ReadonlySet<string>,
  clock: ModeClock,
) {
  clock.start();
  const here0 = scheduler.ranHere();
  const e0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const th0 = threadCpuNs();
  const { summary } = await runBatch({
    ...setup.trial,
    tasks: setup.tasks,
    trials,
    concurrency: scheduler.slots,
    keepTrajectories: false,
    trialRunner: scheduler.runTrial,
  });
  clock.stop();
  const cpu = process.cpuUsage(c0);
  const split = splitCpu(th0, threadCpuNs(), rollout);
  const episodes = summary.totals.episodes;
  const here = scheduler.ranHere() - here0;
  return {
    episodes,
    rate: episodes / ((performance.now() - t0) / 1000),
    cpuUs: (cpu.user + cpu.system) / episodes,
    /** µs per episode of this thread's CPU, per episode run here; of the workers', per episode run there; of the helpers', per episode. */
    mainUs: split.main / 1000 / here,
    rolloutUs: split.rollout / 1000 / (episodes - here),
    helpersUs: split.helpers / 1000 / episodes,
    /** The helper threads' CPU ÷ the rollout threads' (this one's and the workers'). */
    helperShare: split.helpers / (split.main + split.rollout),
    hereShare: here / episodes,
    elu: performance.eventLoopUtilization(e0).utilization,
    rewards: JSON.stringify(summary.tasks.map((t) => t.rewards)),
  };
}

/**
 * Warm-up (see the module comment): a thread is warm once V8 has compiled what an episode runs,
 * which shows as the helper threads' CPU (mostly background compilation then) falling to a few
 * percent of the rollout threads' own. Each thread runs at least {@link WARM_MIN} episodes, then
 * warm-up rounds go on until a round's helper CPU is at most {@link WARM_HELPER_SHARE} of the
 * rollout threads' CPU, or each thread ran {@link WARM_MAX}.
 */
const WARM_MIN = 2000;
const WARM_MAX = 12000;
const WARM_HELPER_SHARE = 0.1;
/** Episodes a warm-up round gives each thread. */
const WARM_ROUND = 600;
/** Episodes this thread ran in all modes so far (one isolate: it warms once). */
let ranHereTotal = 0;

/**
 * A started mode: `concurrency` as `run --out` would run it with `threads` (pool started, warmed
 * up), each thread writing its trajectories to its part of a trajectories file in `out`.
 */
async function mode(flags: TrialFlags, setup: TrialSetup, concurrency: number, threads: number, out: string) {
  const t0 = performance.now();
  const lines = join(out, `c${concurrency}-t${threads}.jsonl`);
  const tids = threadIds();
  // The mode's own clocks: this thread runs the other modes' rounds too (see ModeClock).
  const clock = new ModeClock();
  const scheduler = scheduleTrials(setup.trial, flags, {
    threads,
    concurrency,
    trials: Infinity,
    auto: false,
    lines,
    now: clock.now,
    cpu: clock.cpuMs,
    others: clock.othersMs,
  });
  await scheduler.started();
  const startMs = performance.now() - t0;
  // The threads the start added: this mode's workers.
  const rollout = new Set([...threadIds()].filter((t) => !tids.has(t)));
  const workers = threads - 1;
  // Whichever thread has room takes the next trial, so a cold worker takes fewer than this warm thread.
  const warmTrials = Math.ceil((WARM_ROUND * threads) / setup.tasks.length);
  let elsewhere = 0;
  let warm: Awaited<ReturnType<typeof round>>;
  for (;;) {
    const here = scheduler.ranHere();
    warm = await round(setup, warmTrials, scheduler, rollout, clock);
    const ranHere = scheduler.ranHere() - here;
    ranHereTotal += ranHere;
    elsewhere += warmTrials * setup.tasks.length - ranHere;
    const least = Math.min(ranHereTotal, workers ? elsewhere / workers : Infinity);
    if (least >= WARM_MAX || (least >= WARM_MIN && warm.helperShare <= WARM_HELPER_SHARE)) break;
  }
  return {
    scheduler,
    startMs,
    warm: { ...warm, ranTotal: ranHereTotal },
    warmedElsewhere: elsewhere / Math.max(1, workers),
    threads: scheduler.threads(),
    rollout,
    clock,
  };
}

type Mode = Awaited<ReturnType<typeof mode>>;

/** One timed round's figures (see {@link round}). */
type Round = Awaited<ReturnType<typeof round>>;

/** What runs a timed round of `trials` trials of every task: a mode started here, or one in a child process. */
type Rounds = (trials: number) => Promise<Round>;

/** The {@link Rounds} of a mode started in this process. */
const here =
  (setup: TrialSetup, m: Mode): Rounds =>
  async (trials) => {
    const o = await round(setup, trials, m.scheduler, m.rollout, m.clock);
    ranHereTotal += o.hereShare * o.episodes;
    return o;
  };

/**
 * The "one core" line of issue 15 item 5: the 2-thread rounds `two` beside `--concurrency 1` in a
 * child process pinned to each CPU (`pinned`, their rounds `cores`, all alternating).
 *
 * Both CPUs are measured because the two vCPUs of this VM are not always equally fast
 * (bench/cpus.ts): against one pinned CPU alone, 2 cores ÷ 1 core read 1.27–1.84 over session
 * 19's runs (2.5 would read with the slow CPU as "one core", 1.6 with the fast). So the ratio is
 * taken, per round, to the mean of the CPUs' rates in that round's turn (what one core of this
 * machine gives then), and the 2 threads' efficiency to their sum (what the two give together, 1
 * at best); each the median
 * of the per-round values. With one CPU, only its rate is printed.
 */
function oneCoreLine(
  domain: string,
  two: Summary,
  pinned: readonly { cpu: number }[],
  cores: readonly Summary[],
): string {
  if (!cores.length) return `  ${domain}, one core: not measured (${ONE_CORE_MISSING})`;
  const each = cores
    .map(
      (c, i) =>
        `CPU ${pinned[i]!.cpu} ${f0(c.rate)} episodes/s (its own ${f0(c.mainUs)} µs per episode, helper threads ${f0(c.helpersUs)} µs, event loop busy ${f2(c.elu)})`,
    )
    .join(', ');
  const r = coreRatios(
    two.rates,
    cores.map((c) => c.rates),
  );
  const both =
    cores.length > 1
      ? ` · CPU ${pinned[1]!.cpu} ÷ CPU ${pinned[0]!.cpu} ${f2(r.secondToFirst!)} per round · 2 threads on ${availableParallelism()} CPUs (the rounds above) ${f0(two.rate)} episodes/s  ·  2 cores ÷ 1 core ${f2(r.toMean)} (÷ the CPUs' mean rate in the round; target ≥ 1.8), ÷ the faster CPU ${f2(r.toFaster)}, ÷ the slower ${f2(r.toSlower)} · efficiency (÷ the CPUs' summed rates) ${f2(r.efficiency)}`
      : ` · 2 threads on ${availableParallelism()} CPUs ${f0(two.rate)} episodes/s  ·  2 cores ÷ 1 core ${f2(r.toMean)} (target ≥ 1.8)`;
  return `  ${domain}, one core: this thread alone in a child process pinned to one CPU (taskset -c; V8's helper threads on that core too), one such process per CPU, their rounds alternating with the others: ${each}${both}  ·  same rewards: ${cores.every((c) => c.sameRewards)}`;
}

/**
 * The 2-thread rates `two[r]` of each round r against the pinned one-CPU rates `cores[i][r]` of
 * the same round (episodes/s; see {@link oneCoreLine}), each figure the median over the rounds:
 * `toMean` ÷ the CPUs' mean, `toFaster` ÷ the faster CPU's, `toSlower` ÷ the slower's,
 * `efficiency` ÷ their sum, and `secondToFirst` the second CPU's rate ÷ the first's (undefined
 * with one CPU). Rounds missing from any list are left out.
 */
export function coreRatios(two: readonly number[], cores: readonly (readonly number[])[]) {
  const rounds = Math.min(two.length, ...cores.map((c) => c.length));
  const perRound = (f: (rates: number[], r: number) => number) =>
    median(
      Array.from({ length: rounds }, (_, r) =>
        f(
          cores.map((c) => c[r]!),
          r,
        ),
      ),
    );
  const sum = (rs: number[]) => rs.reduce((a, b) => a + b, 0);
  return {
    toMean: perRound((rs, r) => two[r]! / (sum(rs) / rs.length)),
    toFaster: perRound((rs, r) => two[r]! / Math.max(...rs)),
    toSlower: perRound((rs, r) => two[r]! / Math.min(...rs)),
    efficiency: perRound((rs, r) => two[r]! / sum(rs)),
    secondToFirst: cores.length > 1 ? perRound((rs) => rs[1]! / rs[0]!) : undefined,
  };
}

/** One mode's figures over the alternating rounds (see {@link alternate}). */
type Summary = Awaited<ReturnType<typeof alternate>>[number];

/** Alternate rounds of each mode; per mode the rates, and per mode the median ratio to the first mode. */
async function alternate(trials: number, modes: Rounds[]) {
  const rounds = modes.map(() => [] as Round[]);
  const rewards = new Set<string>();
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, m] of modes.entries()) {
      const o = await m(trials);
      rounds[i]!.push(o);
      rewards.add(o.rewards);
    }
  const of = (i: number, k: 'rate' | 'cpuUs' | 'mainUs' | 'rolloutUs' | 'helpersUs' | 'hereShare' | 'elu') =>
    median(rounds[i]!.map((o) => o[k]));
  return modes.map((_, i) => ({
    rate: of(i, 'rate'),
    cpuUs: of(i, 'cpuUs'),
    mainUs: of(i, 'mainUs'),
    rolloutUs: of(i, 'rolloutUs'),
    helpersUs: of(i, 'helpersUs'),
    hereShare: of(i, 'hereShare'),
    elu: of(i, 'elu'),
    ratio: median(rounds[i]!.map((o, r) => o.rate / rounds[0]![r]!.rate)),
    rates: rounds[i]!.map((o) => o.rate),
    sameRewards: rewards.size === 1,
  }));
}

/** Why {@link oneCore} measured nothing, when it did not. */
let ONE_CORE_MISSING = '';

/** Parent → child of {@link oneCore}: run a round, or stop. Child → parent: warm, or a round's figures. */
type OneCoreAsk = { trials: number } | { stop: true };
type OneCoreAnswer = { warm: true } | { round: Round } | { error: string };

/**
 * The literal "one core" of issue 15 item 5: `--concurrency 1` (this thread alone, as
 * {@link mode} starts it and warm) in a child process that util-linux's `taskset -c <cpu>` pins
 * to CPU `cpu`, V8's helper threads included, so nothing of it runs on another core. Its rounds
 * are run through IPC, alternating with this process's; undefined (and {@link ONE_CORE_MISSING}
 * says why) where `taskset` cannot be run. The bench starts one per CPU: see {@link oneCoreLine}.
 */
async function oneCore(
  flags: TrialFlags,
  out: string,
  cpu: number,
): Promise<{ cpu: number; rounds: Rounds; close(): void } | undefined> {
  const child: ChildProcess = spawn(
    ...pinnedTo(cpu, process.execPath, [...process.execArgv, join(import.meta.dirname, 'pool-one-core.ts')]),
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        SWITCHBOARD_BENCH_POOL_CHILD: JSON.stringify({ flags, out: join(out, `one-core-${cpu}`) }),
      },
    },
  );
  const answers: OneCoreAnswer[] = [];
  const waiters: ((a: OneCoreAnswer) => void)[] = [];
  const next = () =>
    new Promise<OneCoreAnswer>((resolve) => (answers.length ? resolve(answers.shift()!) : waiters.push(resolve)));
  const give = (a: OneCoreAnswer) => (waiters.length ? waiters.shift()!(a) : answers.push(a));
  child.on('message', (m: OneCoreAnswer) => give(m));
  child.on('error', (e) =>
    give({
      error: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no taskset on this machine (util-linux)' : e.message,
    }),
  );
  child.on('exit', (code) => give({ error: `the pinned child process exited with code ${code}` }));
  const first = await next();
  if (!('warm' in first)) {
    ONE_CORE_MISSING = 'error' in first ? first.error : 'no answer';
    child.kill();
    return undefined;
  }
  return {
    cpu,
    rounds: async (n) => {
      child.send({ trials: n } satisfies OneCoreAsk);
      const a = await next();
      if (!('round' in a)) throw new Error(`bench pool, one core: ${'error' in a ? a.error : 'no round'}`);
      return a.round;
    },
    close: () => {
      child.send({ stop: true } satisfies OneCoreAsk);
    },
  };
}

/**
 * The child process of {@link oneCore} (bench/pool-one-core.ts): `--concurrency 1` of the flags in
 * SWITCHBOARD_BENCH_POOL_CHILD, warmed as {@link mode} warms it, then a round per message.
 */
export async function serveOneCoreRounds(): Promise<void> {
  const { flags, out } = JSON.parse(process.env.SWITCHBOARD_BENCH_POOL_CHILD ?? '{}') as {
    flags: TrialFlags;
    out: string;
  };
  const send = (a: OneCoreAnswer) => process.send!(a);
  const setup = await trialSetup(flags);
  await mkdir(out, { recursive: true });
  const one = await mode(flags, setup, 1, 1, out);
  send({ warm: true });
  const rounds = here(setup, one);
  process.on('message', async (m: OneCoreAsk) => {
    if ('stop' in m) {
      await one.scheduler.close();
      await setup.trial.runtime.close();
      process.disconnect();
      return;
    }
    send({ round: await rounds(m.trials) });
  });
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
 * `run` picks them: pool start, warm-up, its JSONL and summary included), and the threads it
 * ran trials in (its summary's `settings.threads`: 1 when no worker started).
 */
async function wholeRun(
  domain: string,
  trials: number,
  c: number,
  out: string,
): Promise<{ s: number; threads: number }> {
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
  const s = (performance.now() - t0) / 1000;
  const summary = JSON.parse(await readFile(join(out, `c${c}`, 'summary.json'), 'utf8')) as {
    settings: { threads: number };
  };
  return { s, threads: summary.settings.threads };
}

/** Alternating pairs of whole runs of 10×, 100× and 1,000× a task (short runs are noisier: more pairs). */
const WHOLE_RUNS: readonly (readonly [trials: number, pairs: number])[] = [
  [10, 6],
  [100, 4],
  [1000, 2],
];

/**
 * Whole runs (see {@link WHOLE_RUNS}) at --concurrency 1 and 2, alternated (which goes first
 * alternating too); one line: medians, the median of the per-pair ratios, and the threads the
 * --concurrency 2 runs used (a run too short to pay for a worker starts none: the same work as 1).
 */
async function wholeRuns(domain: string, tasks: number): Promise<string> {
  await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: ROOT });
  const out = await mkdtemp(join(tmpdir(), 'sb-bench-pool-'));
  try {
    const parts: string[] = [];
    for (const [trials, pairs] of WHOLE_RUNS) {
      const t: number[][] = [[], []];
      const threads = new Set<number>();
      for (let r = 0; r < pairs; r++)
        for (const c of r % 2 ? [2, 1] : [1, 2]) {
          const o = await wholeRun(domain, trials, c, out);
          t[c - 1]!.push(o.s);
          if (c === 2) threads.add(o.threads);
        }
      const [s1, s2] = t.map(median) as [number, number];
      const ratio = median(t[0]!.map((a, i) => a / t[1]![i]!));
      const same =
        (await readFile(join(out, 'c1/trajectories.jsonl'), 'utf8')) ===
        (await readFile(join(out, 'c2/trajectories.jsonl'), 'utf8'));
      parts.push(
        `${tasks * trials} episodes (${pairs} pairs): --concurrency 1 ${s1.toFixed(2)} s, 2 ${s2.toFixed(2)} s (×${f2(ratio)}${ratio < 1 ? ', slower' : ''}; 2 ran in ${[...threads].sort().join(' or ')} thread${threads.has(1) && threads.size === 1 ? ', no worker started' : 's'}; same trajectories.jsonl: ${same})`,
      );
    }
    return `  ${domain}, switchboard run --out from spawn to exit (pool start, warm-up and files included; ratios: median of the pairs'): ${parts.join(' · ')}`;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const f0 = (x: number) => x.toFixed(0);
const f2 = (x: number) => x.toFixed(2);
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** Episodes/s by `--concurrency` (threads as `run` picks them, pools started and warm), one line. */
async function byConcurrency(flags: TrialFlags, setup: TrialSetup, trials: number, out: string): Promise<string> {
  const episodes = setup.tasks.length * trials;
  const cs = [1, 2, 4, 16];
  const modes: Mode[] = [];
  for (const c of cs) modes.push(await mode(flags, setup, c, threadCount({ concurrency: c }, episodes), out));
  try {
    const out = await alternate(
      trials,
      modes.map((m) => here(setup, m)),
    );
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
export async function poolBenchLines(domain = 'carrier', trials = ROUND_TRIALS): Promise<string[]> {
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
        lines.push(await byConcurrency(tau2, tau2Setup, TAU2_ROUND_TRIALS, out));
      } finally {
        await tau2Setup.trial.runtime.close();
      }
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  lines.push(
    `  (medians of ${ROUNDS} alternating rounds, each thread warm first (it ran ${WARM_MIN} episodes or more, until the helper threads' CPU in a warm-up round was at most ${pct(WARM_HELPER_SHARE)} of the rollout threads', or ${WARM_MAX}), every thread writing its trajectories' JSONL part as \`run --out\` does; ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; the bare CPU loop's ratio is the most 2 threads gave on this machine then: a pool ratio near it is a loaded machine, not the pool)`,
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
      // One pinned child per CPU (the first two this process may use), started together.
      const pinned = (
        await Promise.all(
          allowedCpus()
            .slice(0, 2)
            .map((cpu) => oneCore(flags, out, cpu)),
        )
      ).filter((p) => p !== undefined);
      const [o, t, ...cores] = await alternate(trials, [
        here(setup, one),
        here(setup, two),
        ...pinned.map((p) => p.rounds),
      ]);
      for (const p of pinned) p.close();
      await two.scheduler.close();
      await one.scheduler.close();
      const after = await parallelCeiling();
      const jsonCeiling = await parallelCeiling(JSON_LOOP, JSON_N);
      const ceiling = (before + after) / 2;
      lines.push(
        `  ${domain}, ${episodes} episodes a round, this thread (--concurrency 1) ${f0(o!.rate)} episodes/s · 2 threads (--concurrency 2: this one and a worker) ${f0(t!.rate)} episodes/s  ·  ratio ${f2(t!.ratio)} (target ≥ 1.8 on 2 idle cores) · a bare CPU loop's 2-thread ratio in this run ${f2(before)} before, ${f2(after)} after · pool ÷ bare loop ${f2(t!.ratio / ceiling)} · a JSON round-trip loop's 2-thread ratio ${f2(jsonCeiling)} (pool ÷ it ${f2(t!.ratio / jsonCeiling)})  ·  same rewards: ${o!.sameRewards && t!.sameRewards}`,
        `    CPU per episode (all threads of the process): this thread ${f0(o!.cpuUs)} µs · 2 threads ${f0(t!.cpuUs)} µs (×${f2(t!.cpuUs / o!.cpuUs)}) · cores used (episodes/s × CPU per episode): 1 thread ${f2((o!.rate * o!.cpuUs) / 1e6)}, 2 threads ${f2((t!.rate * t!.cpuUs) / 1e6)}`,
        `    by thread (µs of CPU per episode): 1 thread: its own ${f0(o!.mainUs)}, V8/libuv helper threads ${f0(o!.helpersUs)} (event loop busy ${f2(o!.elu)}) · 2 threads: this one ${f0(t!.mainUs)} per episode it ran (${f0(t!.hereShare * 100)}% of them; event loop busy ${f2(t!.elu)}), the worker ${f0(t!.rolloutUs)} per episode it ran, helper threads ${f0(t!.helpersUs)} per episode (the two threads run different mixes of the tasks, each taking the next trial when it has room, so their figures differ without either being slower: rounds of one carrier task each read worker ÷ this thread 0.98, 1.06 and 1.01, against 1.10 with all 15 tasks, session 20)`,
        oneCoreLine(domain, t!, pinned, cores),
        `    warm-up: this thread alone ran ${f0(one.warm.ranTotal)} episodes until warm (its last warm-up round at ${f0(one.warm.rate)}/s, helper threads' CPU ${pct(one.warm.helperShare)} of its own) · the worker started in ${f0(two.startMs)} ms, then ran ${f0(two.warmedElsewhere)} episodes until warm (the last warm-up round at ${f0(two.warm.rate)}/s, helper threads' CPU ${pct(two.warm.helperShare)} of the two threads')`,
        await byConcurrency(flags, setup, trials, out),
      );
      lines.push(await wholeRuns(domain, setup.tasks.length));
    } finally {
      await setup.trial.runtime.close();
    }
  }
}
