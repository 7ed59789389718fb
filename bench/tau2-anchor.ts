/**
 * Issue 15: the work tau2-bench's Python does, measured here on the same data, with tau2's own
 * figures measured in the same run or not printed at all.
 *
 * Ours, per domain (tau2-airline, tau2-retail):
 * - **tool calls**: one read and one write tool (those tau2's side calls, with the first reference
 *   action's arguments), median of {@link CALLS} warm calls, wall time, and CPU time (of every
 *   thread of the process, read once a round: no system call next to a timed call, see
 *   call-timer.ts; a round's CPU ÷ its calls, with the untimed work between calls), the ways below alternating in {@link ROUNDS} rounds
 *   (this thread and the worker threads pinned to different CPUs, swapped every round: one vCPU of
 *   the VM measured on runs memory-heavy code up to ~1.6× slower than the other in spells of
 *   minutes, bench/cpus.ts; unpinned, a run read the worker at 2.03–2.25× in-process where, placed,
 *   the next read 1.61–1.80×): in-process
 *   sql.js, back to back and each call after a short sleep of this thread ({@link COLD_PAUSE_MS},
 *   untimed: the call runs cold, as the worker's does after it slept); whole in the environment worker (`EnvWorker`: one round trip per call through its
 *   mailbox), as started by default and with neither thread spinning (both sleep while waiting),
 *   each with its fixed cost per call (its median less the in-process median) and how often, in
 *   its timed calls, either thread slept waiting for the other (each sleep a wake-up; for a write
 *   also in the untimed close and open before each, two round trips a read loop does not make); and
 *   the tools in this thread with every SQL statement a message to the `worker_threads` database
 *   worker (`worker-db.ts`, which only tests and this bench use). Each write runs on a freshly
 *   opened environment (only the call is timed).
 * - **milestone fork** (airline): `snapshot()` of an environment after the longest reference
 *   solution + `restore()` into a freshly opened one, median of 50; and the same on a database ten
 *   times the airline's (every row copied under suffixed ids), to show how the cost grows.
 * - **replay + scoring per task**: `evaluate` of each task's reference trajectory without a
 *   precomputed gold (gold replay + trajectory replay + every component), each task the median of
 *   {@link SCORE_ROUNDS} warm runs, wall and CPU (the {@link RECHECK_TASKS} slowest: the lowest of
 *   {@link RECHECK_BLOCKS} + 1 such medians); min, median, max over the tasks with reference
 *   actions; with tau2's figures, the ten lowest per-task ratios and how many tasks are under 100×.
 * - **whole process**: bench/tau2-score.ts spawned (Node + tsx, module imports, db.json load,
 *   every task scored once), wall time from spawn to exit minus the time it spent running the
 *   reference episodes (building what is scored, not scoring).
 *
 * tau2-bench's side (bench/tau2_python.py, when `SWITCHBOARD_TAU2_SRC` names a tau2-bench checkout
 * or its `src` folder and python3 has pydantic): the same tool calls through
 * `Environment.get_response`, `copy.deepcopy` of the airline DB, per task its `EnvironmentEvaluator`
 * + `ActionEvaluator` on the reference trajectory (its gold replay loads db.json again for each
 * task, as tau2 does), and its whole process timed the same way. Per-task ratios pair each task
 * with itself (tau2's time / ours, by wall and by CPU); the lowest is the figure for "every task".
 * Every tau2 figure is printed with the host, date and load average of this run.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { cpus, hostname, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { cachedTau2Part, tau2CacheDir } from '../src/adapters/node/tau2-data.ts';
import { TAU2_DATA_MANIFEST } from '../src/core/tau2/data-manifest.ts';
import { loadTau2Domain, type Tau2DomainName } from '../src/adapters/node/tau2-loader.ts';
import { inProcessSqlDbFactory, workerSqlDbFactory } from '../src/adapters/node/worker-db.ts';
import type { MailboxCounts } from '../src/adapters/node/mailbox.ts';
import { EnvWorker } from '../src/adapters/node/worker-env.ts';
import { DomainRuntime, type Environment } from '../src/core/env/environment.ts';
import type { SqlDbFactory, SqlRow } from '../src/core/ports/sql-db.ts';
import type { Domain } from '../src/core/schema/domain.ts';
import type { Task } from '../src/core/schema/task.ts';
import { median, versus } from './harness.ts';
import { referenceTrajectories, sample, scoreOnce, type Sample } from './tau2-score.ts';
import { CallTimer } from './call-timer.ts';
import { allowedCpus, canPin, placeRound, unpinThreads } from './cpus.ts';
import { MAIN_TID, threadIds } from './thread-cpu.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/**
 * tau2-bench's data, as the CLI finds it: `$SWITCHBOARD_TAU2_DATA` when set (a folder holding
 * `airline/` and `retail/`), else the `switchboard data tau2` cache when it has both, else
 * ../shared/tau2/ beside the checkout (this project's CI).
 */
export function tau2DataRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHBOARD_TAU2_DATA) return resolve(env.SWITCHBOARD_TAU2_DATA);
  if (cachedTau2Part('airline', env) && cachedTau2Part('retail', env)) return tau2CacheDir(env);
  return resolve(ROOT, '../shared/tau2');
}

/** Warm calls per tool-call figure (the issue asks for at least 1,000). */
const CALLS = 1000;
/**
 * Untimed calls before them: a freshly started environment worker runs its tools' code for the
 * first time, and with 50 warm-up calls its write calls were still ~20% slower (JIT).
 */
const WARM_UP = 300;
/**
 * …and at least this long (ms) per side: a freshly started environment worker is still collecting
 * the garbage of its domain load (tau2-retail: a 3 MB db.json parsed and copied into sql.js) for
 * its first ~1,500 calls, ~100 ms; measured from its start in blocks of 100 retail reads under
 * load, process CPU per call (V8's helper threads included) was 455, 175, 214, … µs before it
 * settled at ~60 µs, and wall time 111, 68, 64, … before ~50 µs. With 300 calls alone the retail
 * read, the first call timed after the worker's start, measured 4.38× in-process on an idle
 * machine against 2.25–2.85× for the other three.
 */
const WARM_UP_MS = 250;
/**
 * Warm evaluations per task; the task's figure is their median. Seven, not three: a task takes
 * 0.2–5 ms, and a scavenge or a major GC's concurrent marking (CPU of V8's helper threads counts
 * in `process.cpuUsage`) landing in two of three runs doubled a task's figure in loaded runs.
 */
const SCORE_ROUNDS = 7;
/**
 * The slowest tasks (by that median CPU time) are run {@link RECHECK_BLOCKS} more blocks of
 * {@link SCORE_ROUNDS}, and each keeps the lowest of its block medians: a task's figure is its
 * cost without interference. With one median of 7, other work on the machine or V8's helper
 * threads (GC marking counts in `process.cpuUsage`) set the lowest ratios: in one run retail
 * task 23 read 3.99 ms CPU against 2.11 ms wall, and 1.3–1.6 ms on rerun.
 */
const RECHECK_TASKS = 10;
const RECHECK_BLOCKS = 3;
type Part = 'airline' | 'retail';
const PARTS: readonly Part[] = ['airline', 'retail'];
/** The read and the write tool both sides call. */
const READ_WRITE: Record<Part, [string, string]> = {
  airline: ['get_reservation_details', 'update_reservation_passengers'],
  retail: ['get_order_details', 'modify_user_address'],
};

const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const ms = (x: number) => (x < 1 ? us(x) : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`);
const both = (s: Sample, f = ms) => `${f(s.wall)} wall / ${f(s.cpu)} CPU`;
const medianSample = (xs: readonly Sample[]): Sample => ({
  wall: median(xs.map((x) => x.wall)),
  cpu: median(xs.map((x) => x.cpu)),
});
/** `theirs / ours` as words, e.g. `12× faster` (ours takes less time) or `2.61× slower`. */
const ratio = (ours: number, theirs: number) => versus(theirs / ours);

/** The first reference action calling `tool` and its task. */
function referenceCall(domain: Domain, tool: string): { task: Task; args: Record<string, unknown> } {
  for (const task of domain.tasks)
    for (const a of task.evaluation_criteria?.actions ?? []) if (a.name === tool) return { task, args: a.arguments };
  throw new Error(`${domain.name}: no reference action calls ${tool}`);
}

/** Rounds the timed calls of each side are split into, sides alternating (load drifts alike for all). */
const ROUNDS = 10;

/**
 * Something that opens environments of a domain: a runtime, or an environment worker (with how
 * often its threads slept waiting for each other); `pause` runs before each call, untimed.
 */
type Opener = {
  open(task: Task): Promise<Pick<Environment, 'call' | 'close'>>;
  counts?: () => MailboxCounts;
  pause?: () => void;
};

/**
 * The sleep, ms, before each call of the in-process side that runs cold: a thread that sleeps
 * before a call, as the environment worker does between requests when it does not spin, runs it
 * with its caches and branch history lost to whatever ran meanwhile. Measured under load 8 on the
 * 2-core VM (same process, alternating rounds, medians of 16 per-round ratios), an in-process call
 * after a 100 µs `Atomics.wait` took 1.58× (airline read) to 2.17× (airline write) the call
 * back to back, and the worker's 2.7–3.6×.
 */
const COLD_PAUSE_MS = 0.1;
const coldCell = new Int32Array(new SharedArrayBuffer(4));
/** Sleep {@link COLD_PAUSE_MS} in this thread (an `Atomics.wait` no one ends early). */
const coldPause = () => void Atomics.wait(coldCell, 0, 0, COLD_PAUSE_MS);

/** A side's timed calls: each call's sample, and the sleeps in them (environment workers). */
interface Timed {
  samples: Sample[];
  /** Timed calls the worker slept before (woken by the request). */
  serverWoken: number;
  /** Timed calls this thread slept for the reply (woken from a blocking wait) or awaited it asynchronously. */
  callerWoken: number;
  awaited: number;
  /**
   * The untimed requests between the timed calls (a write's close and open: two round trips before
   * each timed write, none before a read) and the sleeps in them, counted as for the timed calls.
   */
  between: { requests: number; serverWoken: number; callerWoken: number };
}

/** The median sample of a side, and the sleeps in its timed calls. */
type SideResult = Sample & Omit<Timed, 'samples'>;

/**
 * Median of {@link CALLS} warm calls of `tool` on each side (after at least {@link WARM_UP}
 * untimed ones and {@link WARM_UP_MS}), the timed calls in {@link ROUNDS} rounds with the sides
 * alternating; a write gets a freshly opened environment each time. With `place`, each round is
 * placed first ({@link placeRound}: this thread and `place.workers` on the first two CPUs of
 * `place.cpus`, swapped every round), and after the last every thread may run on all of them.
 */
async function toolCalls<K extends string>(
  domain: Domain,
  sides: Record<K, Opener>,
  tool: string,
  write: boolean,
  place?: { workers: string[]; cpus: number[] },
): Promise<Record<K, SideResult>> {
  const { task, args } = referenceCall(domain, tool);
  /** `n` calls numbered from `from` (timed into `out`), or with no `n` warm-up calls (see {@link WARM_UP_MS}). */
  const run = async (side: Opener, from: number, n?: number, out?: Timed) => {
    let env = await side.open(task);
    const until = performance.now() + WARM_UP_MS;
    const timer = new CallTimer();
    try {
      for (let i = from; n === undefined ? i < 0 || performance.now() < until : i < from + n; i++) {
        const reopened = out && write && side.counts?.();
        if (write) {
          await env.close();
          env = await side.open(task);
        }
        let error = '';
        side.pause?.();
        const before = out && side.counts?.();
        if (reopened && before) {
          out.between.requests += before.requests - reopened.requests;
          out.between.serverWoken += before.serverWoken - reopened.serverWoken;
          out.between.callerWoken += before.callerWoken - reopened.callerWoken + before.awaited - reopened.awaited;
        }
        await timer.time(async () => {
          const r = await env.call({ id: `c${i}`, name: tool, arguments: args }, 'assistant', 0);
          if (r.error) error = r.content;
        });
        if (error) throw new Error(`${tool}: ${error}`);
        if (!out) continue;
        const after = before && side.counts?.();
        if (before && after) {
          out.serverWoken += after.serverWoken - before.serverWoken;
          out.callerWoken += after.callerWoken - before.callerWoken;
          out.awaited += after.awaited - before.awaited;
        }
      }
      out?.samples.push(...timer.finish());
    } finally {
      await env.close();
    }
  };
  const names = Object.keys(sides) as K[];
  const times = Object.fromEntries(
    names.map((k): [K, Timed] => [
      k,
      {
        samples: [],
        serverWoken: 0,
        callerWoken: 0,
        awaited: 0,
        between: { requests: 0, serverWoken: 0, callerWoken: 0 },
      },
    ]),
  ) as Record<K, Timed>;
  for (const k of names) await run(sides[k], -WARM_UP);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      if (place) placeRound(r, MAIN_TID, place.workers, place.cpus);
      for (const k of names) await run(sides[k], r * (CALLS / ROUNDS), CALLS / ROUNDS, times[k]);
    }
  } finally {
    if (place) unpinThreads([MAIN_TID, ...place.workers], place.cpus);
  }
  return Object.fromEntries(
    names.map((k) => {
      const { samples, ...sleeps } = times[k];
      return [k, { ...medianSample(samples), ...sleeps }];
    }),
  ) as Record<K, SideResult>;
}

/** Columns that hold ids of the airline's rows; copies get them suffixed, so keys and references stay consistent. */
const AIRLINE_ID_COLUMNS = new Set(['flight_number', 'user_id', 'reservation_id', 'payment_method_id', 'payment_id']);

/** The airline seed `times` as large: copy k of every row has its id columns suffixed `~k`. */
function scaledAirline(domain: Domain, times: number): Domain {
  const seed: Record<string, SqlRow[]> = {};
  for (const [table, rows] of Object.entries(domain.seed)) {
    const all = [...rows];
    for (let k = 1; k < times; k++)
      for (const row of rows) {
        const copy: SqlRow = { ...row };
        for (const c of Object.keys(copy))
          if (AIRLINE_ID_COLUMNS.has(c) && typeof copy[c] === 'string') copy[c] = `${copy[c]}~${k}`;
        all.push(copy);
      }
    seed[table] = all;
  }
  return { ...domain, seed };
}

/** Snapshot after the longest reference solution + restore into a fresh environment, median of `runs`. */
async function fork(domain: Domain, factory: SqlDbFactory, runs = 50): Promise<Sample> {
  const rt = await DomainRuntime.create(domain, factory);
  const actions = (t: Task) => t.evaluation_criteria?.actions?.length ?? 0;
  const task = domain.tasks.reduce((a, b) => (actions(b) > actions(a) ? b : a));
  const env = await rt.open(task);
  const samples: Sample[] = [];
  try {
    for (const [i, a] of (task.evaluation_criteria?.actions ?? []).entries())
      await env.call({ id: `f${i}`, name: a.name, arguments: a.arguments }, a.requestor, i);
    for (let i = -5; i < runs; i++) {
      const other = await rt.open(task);
      const s = await sample(async () => other.restore(await env.snapshot()));
      await other.close();
      if (i >= 0) samples.push(s);
    }
  } finally {
    await env.close();
    await rt.close();
  }
  return medianSample(samples);
}

/** The ways a tool call is measured, in the order printed. */
interface CallSides {
  inProcess: SideResult;
  /** In-process, each call after a {@link COLD_PAUSE_MS} sleep of this thread (untimed). */
  inProcessCold: SideResult;
  /** The tools in this thread, each SQL statement a message to a sql.js thread (`worker-db.ts`). */
  dbWorker: SideResult;
  /** Whole in the environment worker (`EnvWorker`), its default spinning. */
  envWorker: SideResult;
  /** Whole in the environment worker with `spinUs: 0` and `replySpinUs: 0`: both threads sleep while they wait. */
  envWorkerSleeping: SideResult;
}

interface Ours {
  read: { tool: string } & CallSides;
  write: { tool: string } & CallSides;
  fork?: { one: Sample; ten: Sample };
  /** Task id → median of {@link SCORE_ROUNDS} warm evaluations (the slowest: the lowest of several such medians). */
  tasks: Map<string, Sample>;
}

/** The two CPUs the tool calls' rounds were placed on (see placeRound), when they were. */
let placedOn: number[] | undefined;

async function measureOurs(part: Part, dir: string): Promise<Ours> {
  const name = `tau2-${part}` as Tau2DomainName;
  const domain = await loadTau2Domain(name, dir);
  const inProcess = await inProcessSqlDbFactory();
  const rt = await DomainRuntime.create(domain, inProcess);
  const before = threadIds();
  const worker = await workerSqlDbFactory();
  const [read, write] = READ_WRITE[part];
  const calls = {} as Pick<Ours, 'read' | 'write'>;
  const envWorker = await EnvWorker.start({ domain: name, data: dir });
  const envWorkerSleeping = await EnvWorker.start({ domain: name, data: dir }, { spinUs: 0, replySpinUs: 0 });
  try {
    const wrt = await DomainRuntime.create(domain, worker);
    // The rounds' placement: this thread and the threads started since `before` (the sql.js
    // worker of worker-db.ts, the two EnvWorkers, and any libuv thread their start began) on
    // different CPUs, swapped every round (see placeRound).
    const cpus = canPin() ? allowedCpus() : [];
    const place = cpus.length >= 2 ? { workers: [...threadIds()].filter((t) => !before.has(t)), cpus } : undefined;
    placedOn = place?.cpus.slice(0, 2);
    for (const [kind, tool] of [
      ['read', read],
      ['write', write],
    ] as const) {
      const sides = {
        inProcess: rt,
        inProcessCold: { open: (task: Task) => rt.open(task), pause: coldPause },
        dbWorker: wrt,
        envWorker: { open: (task: Task) => envWorker.open(task), counts: () => envWorker.counts() },
        envWorkerSleeping: {
          open: (task: Task) => envWorkerSleeping.open(task),
          counts: () => envWorkerSleeping.counts(),
        },
      };
      calls[kind] = { tool, ...(await toolCalls(domain, sides, tool, kind === 'write', place)) };
    }
    await wrt.close();
  } finally {
    await worker.terminate();
    await envWorker.close();
    await envWorkerSleeping.close();
  }
  const trajectories = await referenceTrajectories(rt, domain);
  await scoreOnce(rt, domain, trajectories); // warm-up
  const rounds: Map<string, Sample>[] = [];
  for (let r = 0; r < SCORE_ROUNDS; r++) rounds.push(await scoreOnce(rt, domain, trajectories));
  const tasks = new Map([...trajectories.keys()].map((id) => [id, medianSample(rounds.map((m) => m.get(id)!))]));
  const slowest = [...tasks].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, RECHECK_TASKS);
  const only = new Map(slowest.map(([id]) => [id, trajectories.get(id)!]));
  for (let b = 0; b < RECHECK_BLOCKS; b++) {
    const block: Map<string, Sample>[] = [];
    for (let r = 0; r < SCORE_ROUNDS; r++) block.push(await scoreOnce(rt, domain, only));
    for (const [id] of slowest) {
      const m = medianSample(block.map((x) => x.get(id)!));
      const kept = tasks.get(id)!;
      tasks.set(id, { wall: Math.min(kept.wall, m.wall), cpu: Math.min(kept.cpu, m.cpu) });
    }
  }
  await rt.close();
  const forks =
    part === 'airline'
      ? { fork: { one: await fork(domain, inProcess), ten: await fork(scaledAirline(domain, 10), inProcess) } }
      : {};
  return { ...calls, ...forks, tasks };
}

/** A whole scoring process: wall time from spawn to exit minus its setup, and its per-task times. */
interface ScoreProcess {
  wholeMs: number;
  loadMs: number;
  tasks: Map<string, Sample>;
}

/** Spawn `cmd args`, parse the JSON it prints, and time it from spawn to exit (ms). */
function timedSpawn(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ out: unknown; ms: number }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => {
      const elapsed = performance.now() - t0;
      if (code !== 0) return fail(new Error(`${cmd} exited with ${code}: ${stderr.trim().split('\n').pop()}`));
      try {
        done({ out: JSON.parse(stdout), ms: elapsed });
      } catch {
        fail(new Error(`${cmd} printed no JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

type ScoreJson = { load_ms: number; setup_ms: number; tasks: Record<string, [number, number]> };
function scoreProcess({ out, ms }: { out: unknown; ms: number }): ScoreProcess {
  const j = out as ScoreJson;
  return {
    wholeMs: ms - j.setup_ms,
    loadMs: j.load_ms,
    tasks: new Map(Object.entries(j.tasks).map(([id, [wall, cpu]]) => [id, { wall, cpu }])),
  };
}

/**
 * Where tau2-bench's sources are: `$SWITCHBOARD_TAU2_SRC` (a checkout or its `src` folder), or why
 * not, with the command that measures it: `section` is the bench section asking (`tau2`,
 * `tau2-writes`, `channel`) and `needs` the Python packages its script imports.
 */
export function tau2Src(
  section = 'tau2',
  needs = 'python3 with pydantic 2; tau2’s LLM and UI dependencies are not needed',
): { src: string } | { missing: string } {
  const how = `to measure it in this run: \`git clone https://github.com/sierra-research/tau2-bench /tmp/tau2-bench && git -C /tmp/tau2-bench checkout ${TAU2_DATA_MANIFEST.commit.slice(0, 12)}\` (the commit of the data; or \`git archive\` of a local copy), then \`SWITCHBOARD_TAU2_SRC=/tmp/tau2-bench npm run bench -- ${section}\` (${needs})`;
  const given = process.env.SWITCHBOARD_TAU2_SRC;
  if (!given) return { missing: `tau2-bench's Python not measured (SWITCHBOARD_TAU2_SRC not set); ${how}` };
  for (const src of [join(given, 'src'), given])
    if (existsSync(join(src, 'tau2/domains/airline/tools.py'))) return { src };
  return {
    missing: `tau2-bench's Python not measured: SWITCHBOARD_TAU2_SRC=${given} has no tau2/domains/airline/tools.py nor src/tau2/…; ${how}`,
  };
}

interface Python {
  version: string;
  /** Which sources: the checkout's commit when it is a git checkout, else the folder. */
  source: string;
  calls: Record<Part, { read: { us: number }; write: { us: number }; deepcopy_ms?: number }>;
  score: Record<Part, ScoreProcess>;
}

/** Where tau2-bench's Python can run from, or why it cannot (checked before anything is measured). */
export async function pythonSide(section = 'tau2'): Promise<{ src: string } | string> {
  const where = tau2Src(section);
  if ('missing' in where) return where.missing;
  try {
    await run('python3', ['-c', 'import pydantic']);
  } catch {
    return "tau2-bench's Python not measured: python3 with pydantic is needed (`pip install pydantic`)";
  }
  return where;
}

/** bench/tau2_python.py, tau2-bench's side of these benchmarks. */
export const TAU2_PYTHON_SCRIPT = join(ROOT, 'bench/tau2_python.py');
const script = TAU2_PYTHON_SCRIPT;

/**
 * A temporary folder laid out as tau2 reads its data (`<TAU2_DATA_DIR>/tau2/domains/<name>/`),
 * linking `dataRoot`'s airline and retail folders; the caller removes it.
 */
export async function tau2DataDir(dataRoot: string): Promise<string> {
  const data = await mkdtemp(join(tmpdir(), 'sb-tau2-py-'));
  await mkdir(join(data, 'tau2/domains'), { recursive: true });
  for (const d of PARTS) await symlink(join(dataRoot, d), join(data, 'tau2/domains', d));
  return data;
}

/** tau2-bench's Python on the same data, or why it was not run. */
async function measurePython(dataRoot: string, where: { src: string } | string): Promise<Python | string> {
  if (typeof where === 'string') return where;
  const data = await tau2DataDir(dataRoot);
  try {
    const calls = (await timedSpawn('python3', [script, where.src, data, 'calls', String(CALLS)])).out as {
      python: string;
      domains: Python['calls'];
    };
    const score = {} as Python['score'];
    for (const d of PARTS) score[d] = scoreProcess(await timedSpawn('python3', [script, where.src, data, 'score', d]));
    const commit = await run('git', ['-C', where.src, 'rev-parse', '--short=12', 'HEAD']).then(
      (r) => `commit ${r.stdout.trim()}`,
      () => where.src,
    );
    return { version: calls.python, source: commit, calls: calls.domains, score };
  } catch (e) {
    return `tau2-bench's Python failed: ${(e as Error).message.split('\n')[0]}`;
  } finally {
    await rm(data, { recursive: true, force: true });
  }
}

/**
 * Per-task ratios tau2 / ours by `key`: the median, the lowest ten (task, ratio, both times) and
 * how many are under the 100× target.
 */
function perTask(ours: Map<string, Sample>, theirs: Map<string, Sample>, key: keyof Sample) {
  const rows = [...ours]
    .filter(([id]) => theirs.has(id))
    .map(([id, o]) => ({ id, o: o[key], t: theirs.get(id)![key], r: theirs.get(id)![key] / o[key] }))
    .sort((a, b) => a.r - b.r);
  return {
    n: rows.length,
    median: median(rows.map((x) => x.r)),
    lowest: rows.slice(0, 10),
    under: rows.filter((x) => x.r < 100).length,
  };
}

const spread = (xs: number[]) => `min ${ms(Math.min(...xs))} · median ${ms(median(xs))} · max ${ms(Math.max(...xs))}`;
/** The load averages (1, 5, 15 min) as `2.5 2.3 2.2`. */
export const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/**
 * The line a section that needs tau2-bench's airline and retail data prints when `dataRoot` lacks
 * them (and how to get them); undefined when both are there.
 */
export function tau2DataMissing(dataRoot: string): string | undefined {
  if (PARTS.every((d) => existsSync(join(dataRoot, d, 'db.json')))) return undefined;
  return `  tau2 data not found at ${dataRoot}: skipped (run \`npx switchboard data tau2\` to download it into ${tau2CacheDir()}, or set SWITCHBOARD_TAU2_DATA to a folder holding airline/ and retail/)`;
}

/** Printable lines; `dataRoot` holds `airline/` and `retail/` (tau2-bench's data). */
export async function tau2AnchorLines(dataRoot = tau2DataRoot()): Promise<string[]> {
  const missing = tau2DataMissing(dataRoot);
  if (missing) return [missing];
  const started = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const loadBefore = load();
  const side = await pythonSide();
  // Said at once, not after minutes of measuring ours.
  if (typeof side === 'string') console.log(`  ${side}`);
  const ours = {} as Record<Part, Ours>;
  const oursWhole = {} as Record<Part, ScoreProcess>;
  for (const d of PARTS) {
    ours[d] = await measureOurs(d, join(dataRoot, d, '/'));
    oursWhole[d] = scoreProcess(
      await timedSpawn(process.execPath, [
        '--import',
        'tsx',
        'bench/tau2-score.ts',
        `tau2-${d}`,
        join(dataRoot, d, '/'),
      ]),
    );
  }
  const py = await measurePython(dataRoot, side);
  const lines = [
    `  measured on ${hostname()} (${cpus().length} cores), ${started}; load average (1, 5, 15 min) ${loadBefore} at the start, ${load()} at the end`,
    typeof py === 'string'
      ? `  ${py}`
      : `  tau2-bench: its own Python ${py.version} (${py.source}) run after ours in this run, on the same host and data`,
  ];
  for (const d of PARTS) {
    const o = ours[d];
    const p = typeof py === 'string' ? undefined : py;
    lines.push(`  tau2-${d}`);
    for (const kind of ['read', 'write'] as const) {
      const c = o[kind];
      const theirs = p ? p.calls[d][kind].us / 1000 : undefined;
      const vs = (s: Sample) => (theirs === undefined ? '' : ` (${ratio(s.wall, theirs)} than tau2)`);
      const x = (s: Sample) => `${(s.wall / c.inProcess.wall).toFixed(2)}× in-process`;
      /** The fixed cost per call (worker less in-process, µs) and the timed calls either thread slept in. */
      const fixed = (s: SideResult) =>
        `+${((s.wall - c.inProcess.wall) * 1000).toFixed(0)} µs fixed; of its ${CALLS} timed calls the worker slept before ${s.serverWoken}, this thread for the reply ${s.callerWoken}${s.awaited ? ` (awaited ${s.awaited})` : ''}` +
        (s.between.requests
          ? `; of the ${s.between.requests} untimed requests between them (a close and an open before each) the worker slept before ${s.between.serverWoken}, this thread for the reply ${s.between.callerWoken}`
          : '');
      lines.push(
        `    ${kind} tool call ${c.tool}, median of ${CALLS} warm calls (${ROUNDS} rounds, the ways alternating${placedOn ? `; this thread on CPU ${placedOn[0]} and the worker threads on CPU ${placedOn[1]} in even rounds, swapped in odd ones (bench/cpus.ts)` : ''}; CPU: a round's ÷ its calls, the untimed work between calls included): in-process ${both(c.inProcess, us)}${vs(c.inProcess)}` +
          ` (each call after a ${COLD_PAUSE_MS * 1000} µs sleep of this thread, as the worker's after its sleep: ${both(c.inProcessCold, us)}, ${x(c.inProcessCold)})` +
          ` · whole call in the environment worker ${both(c.envWorker, us)}${vs(c.envWorker)}, ${x(c.envWorker)}, ${fixed(c.envWorker)}` +
          ` (with neither thread spinning ${both(c.envWorkerSleeping, us)}, ${x(c.envWorkerSleeping)}, ${fixed(c.envWorkerSleeping)})` +
          (theirs === undefined ? '' : ` · tau2 ${us(theirs)} wall`),
        `      tools in this thread, each SQL statement a message to a sql.js thread (worker-db.ts; only tests and this bench use it, nothing user-facing): ${both(c.dbWorker, us)}${vs(c.dbWorker)}, ${x(c.dbWorker)}`,
      );
    }
    if (o.fork) {
      const deepcopy = p?.calls[d].deepcopy_ms;
      lines.push(
        `    milestone fork (snapshot after the longest reference solution + restore into a fresh environment), median of 50: ${both(o.fork.one)}` +
          (deepcopy === undefined
            ? ''
            : ` · tau2's deepcopy of its DB ${ms(deepcopy)} wall (ours ${ratio(o.fork.one.wall, deepcopy)})`),
        `      database ×10: ${both(o.fork.ten)} (${(o.fork.ten.cpu / o.fork.one.cpu).toFixed(1)}× the CPU time at ×1)`,
      );
    }
    const tasks = [...o.tasks.values()];
    lines.push(
      `    gold replay + scoring per task (${o.tasks.size} tasks with reference actions, each the median of ${SCORE_ROUNDS} warm runs, the ${RECHECK_TASKS} slowest the lowest of ${RECHECK_BLOCKS + 1} such medians; ours every component):`,
      `      ours wall ${spread(tasks.map((t) => t.wall))} · CPU ${spread(tasks.map((t) => t.cpu))}`,
    );
    if (p) {
      const theirs = [...p.score[d].tasks.values()];
      lines.push(
        `      tau2 (its DB + ACTION evaluators, each task once) wall ${spread(theirs.map((t) => t.wall))} · CPU ${spread(theirs.map((t) => t.cpu))}`,
      );
      for (const key of ['cpu', 'wall'] as const) {
        const r = perTask(o.tasks, p.score[d].tasks, key);
        lines.push(
          `      per task, tau2 ÷ ours by ${key === 'cpu' ? 'CPU' : 'wall'} (${r.n} tasks paired): median ${r.median.toFixed(0)}×, lowest ${r.lowest
            .slice(0, 3)
            .map((x) => `task ${x.id} ${x.r.toFixed(0)}× (${ms(x.t)} vs ${ms(x.o)})`)
            .join(', ')}, then ${r.lowest
            .slice(3)
            .map((x) => `${x.id} ${x.r.toFixed(0)}×`)
            .join(', ')}; ${r.under} under 100× (target: every task ≥ 100×)`,
        );
      }
    } else {
      const slowest = [...o.tasks].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, 3);
      lines.push(`      slowest by CPU: ${slowest.map(([id, s]) => `task ${id} ${both(s)}`).join(', ')}`);
    }
    const w = oursWhole[d];
    lines.push(
      `    whole process (spawn to exit: start, imports, load, every task scored once; minus running the reference episodes): ours ${ms(w.wholeMs)} (node + tsx; load ${ms(w.loadMs)})` +
        (p
          ? ` · tau2 ${ms(p.score[d].wholeMs)} (python; load ${ms(p.score[d].loadMs)}) · ours ${ratio(w.wholeMs, p.score[d].wholeMs)} by wall`
          : ''),
    );
  }
  return lines;
}
