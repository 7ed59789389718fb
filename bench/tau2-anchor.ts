/**
 * Issue 15, item 1: the same work as tau2-bench's Python, measured side by side in the same run.
 *
 * Ours, per domain (tau2-airline, tau2-retail; sql.js in this thread, and through the
 * `worker_threads` database worker): one read and one write tool call (the tools tau2's side
 * calls, with a reference action's arguments), median of {@link CALLS} warm calls, each write on
 * a freshly opened environment (only the call is timed); the airline environment's own
 * `snapshot()` after a reference solution + `restore()` into a freshly opened environment; and per task, gold replay + full
 * scoring of the reference trajectory (`evaluate`): min, median and max over tasks, and load +
 * scoring of every task (db.json import, runtime build, each task once).
 *
 * tau2-bench's side (bench/tau2_python.py, when `SWITCHBOARD_TAU2_SRC` names a checkout's `src`
 * folder and python3 has pydantic): the same tool calls through `Environment.get_response`,
 * `copy.deepcopy` of the airline DB, and per task `EnvironmentEvaluator` + `ActionEvaluator` on
 * the reference trajectory (its gold replay loads db.json again for each task, as tau2 does).
 * Without it nothing of tau2 is printed and no ratio either. Where ours and tau2's do different
 * work, the line says so.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir, hostname, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { fixedClock } from '../src/core/ports/clock.ts';
import type { SqlDbFactory } from '../src/core/ports/sql-db.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import type { Domain } from '../src/core/schema/domain.ts';
import type { Task } from '../src/core/schema/task.ts';
import { evaluate } from '../src/core/scoring/index.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { workerSqlDbFactory } from '../src/adapters/node/worker-db.ts';
import { loadTau2Domain } from '../src/adapters/node/tau2-loader.ts';
import { cachedTau2Part, tau2CacheDir } from '../src/adapters/node/tau2-data.ts';

/** tau2-bench's data: the `switchboard data tau2` cache when it has airline and retail, else ../shared/tau2/. */
export function tau2DataRoot(): string {
  if (cachedTau2Part('airline') && cachedTau2Part('retail')) return tau2CacheDir();
  return resolve(import.meta.dirname, '../../shared/tau2');
}

/** Warm calls per tool-call figure (the issue asks for at least 1,000). */
const CALLS = 1000;
const READ_WRITE: Record<'tau2-airline' | 'tau2-retail', [string, string]> = {
  'tau2-airline': ['get_reservation_details', 'update_reservation_passengers'],
  'tau2-retail': ['get_order_details', 'modify_user_address'],
};

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const ms = (x: number) => (x < 1 ? us(x) : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`);

/** The first reference action calling `tool` and its task. */
function referenceCall(domain: Domain, tool: string): { task: Task; args: Record<string, unknown> } {
  for (const task of domain.tasks)
    for (const a of task.evaluation_criteria?.actions ?? []) if (a.name === tool) return { task, args: a.arguments };
  throw new Error(`${domain.name}: no reference action calls ${tool}`);
}

/** Median ms of {@link CALLS} warm calls of `tool`; a write gets a fresh environment each time. */
async function toolCallMs(rt: DomainRuntime, tool: string, write: boolean): Promise<number> {
  const { task, args } = referenceCall(rt.domain, tool);
  const times: number[] = [];
  let env = await rt.open(task);
  for (let i = -50; i < CALLS; i++) {
    if (write) {
      await env.close();
      env = await rt.open(task);
    }
    const t0 = performance.now();
    const r = await env.call({ id: `c${i}`, name: tool, arguments: args }, 'assistant', 0);
    const dt = performance.now() - t0;
    if (i === -50 && r.error) throw new Error(`${tool}: ${r.content}`);
    if (i >= 0) times.push(dt);
  }
  await env.close();
  return median(times);
}

interface OurDomain {
  load: number;
  read: { tool: string; inProcess: number; worker: number };
  write: { tool: string; inProcess: number; worker: number };
  fork?: number;
  score: { tasks: number; min: number; median: number; max: number; all: number };
}

async function measureOurs(name: 'tau2-airline' | 'tau2-retail', dir: string): Promise<OurDomain> {
  const t0 = performance.now();
  const domain = await loadTau2Domain(name, dir);
  const rt = await DomainRuntime.create(domain, await sqlJsFactory());
  const load = performance.now() - t0;
  const [read, write] = READ_WRITE[name];
  const inRead = await toolCallMs(rt, read, false);
  const inWrite = await toolCallMs(rt, write, true);
  const workerFactory = await workerSqlDbFactory();
  let wRead: number;
  let wWrite: number;
  try {
    const wrt = await DomainRuntime.create(domain, workerFactory as SqlDbFactory);
    wRead = await toolCallMs(wrt, read, false);
    wWrite = await toolCallMs(wrt, write, true);
    await wrt.close();
  } finally {
    await workerFactory.terminate();
  }
  // Reference trajectories, then each task's gold replay + full scoring, timed once (warm).
  const scores: number[] = [];
  const trajectories = new Map<string, Awaited<ReturnType<typeof runEpisode>>>();
  for (const task of domain.tasks) {
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 0,
      clock: fixedClock(domain.now),
    });
    trajectories.set(task.id, t);
    await evaluate(rt, task, t.turns, { termination: t.termination });
  }
  for (const task of domain.tasks) {
    if (!task.evaluation_criteria?.actions?.length) continue;
    const t = trajectories.get(task.id)!;
    const s0 = performance.now();
    await evaluate(rt, task, t.turns, { termination: t.termination });
    scores.push(performance.now() - s0);
  }
  let fork: number | undefined;
  if (name === 'tau2-airline') {
    // The task with the most reference actions (a booking-heavy one): the most writes to carry.
    const actions = (t: Task) => t.evaluation_criteria?.actions?.length ?? 0;
    const task = domain.tasks.reduce((a, b) => (actions(b) > actions(a) ? b : a));
    const env = await rt.open(task);
    for (const [i, a] of task.evaluation_criteria!.actions!.entries())
      await env.call({ id: `f${i}`, name: a.name, arguments: a.arguments }, a.requestor, i);
    // A fork as milestone groups make one: the environment's state into a fresh environment.
    const forks: number[] = [];
    for (let i = 0; i < 50; i++) {
      const other = await rt.open(task);
      const f0 = performance.now();
      await other.restore(await env.snapshot());
      forks.push(performance.now() - f0);
      await other.close();
    }
    await env.close();
    fork = median(forks);
  }
  await rt.close();
  return {
    load,
    read: { tool: read, inProcess: inRead, worker: wRead },
    write: { tool: write, inProcess: inWrite, worker: wWrite },
    ...(fork !== undefined ? { fork } : {}),
    score: {
      tasks: scores.length,
      min: Math.min(...scores),
      median: median(scores),
      max: Math.max(...scores),
      all: load + scores.reduce((a, b) => a + b, 0),
    },
  };
}

interface PythonDomain {
  load_ms: number;
  read: { tool: string; us: number };
  write: { tool: string; us: number };
  deepcopy_ms?: number;
  score_ms: { tasks: number; min: number; median: number; max: number; sum: number };
}
interface PythonResult {
  python: string;
  import_ms: number;
  domains: Record<'airline' | 'retail', PythonDomain>;
}

/** tau2-bench's Python on the same data, or why it was not run. */
async function measurePython(dataRoot: string): Promise<PythonResult | string> {
  const src = process.env.SWITCHBOARD_TAU2_SRC;
  if (!src || !existsSync(join(src, 'tau2/domains/airline/tools.py')))
    return "tau2-bench Python not measured: set SWITCHBOARD_TAU2_SRC to a tau2-bench checkout's src folder (commit a2c024725189) to measure it in this run";
  // tau2 reads <TAU2_DATA_DIR>/tau2/domains/<name>/.
  const data = await mkdtemp(join(tmpdir(), 'sb-tau2-py-'));
  try {
    await mkdir(join(data, 'tau2/domains'), { recursive: true });
    for (const d of ['airline', 'retail']) await symlink(join(dataRoot, d), join(data, 'tau2/domains', d));
    const { stdout } = await promisify(execFile)(
      'python3',
      [resolve(import.meta.dirname, 'tau2_python.py'), src, data, String(CALLS)],
      { maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 },
    );
    return JSON.parse(stdout) as PythonResult;
  } catch (e) {
    return `tau2-bench Python failed: ${(e as Error).message.split('\n')[0]}`;
  } finally {
    await rm(data, { recursive: true, force: true });
  }
}

/** `faster` when ours takes less time than theirs. */
function ratio(ours: number, theirs: number): string {
  const r = theirs / ours;
  return r >= 1 ? `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}× faster` : `${(1 / r).toFixed(2)}× slower`;
}

/** Printable lines; `dataRoot` holds `airline/` and `retail/` (tau2-bench's data). */
export async function tau2AnchorLines(dataRoot: string): Promise<string[]> {
  if (!existsSync(join(dataRoot, 'airline/db.json'))) return [`  tau2 data not found at ${dataRoot}: skipped`];
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const ours = {
    airline: await measureOurs('tau2-airline', join(dataRoot, 'airline/')),
    retail: await measureOurs('tau2-retail', join(dataRoot, 'retail/')),
  };
  const py = await measurePython(dataRoot);
  const lines: string[] = [];
  const where =
    typeof py === 'string'
      ? py
      : `tau2-bench Python ${py.python} measured in this run on ${hostname()} at ${started} UTC (its imports ${ms(py.import_ms)})`;
  lines.push(`  ${where}; load average ${loadavg()[0]!.toFixed(1)}`);
  for (const d of ['airline', 'retail'] as const) {
    const o = ours[d];
    const p = typeof py === 'string' ? undefined : py.domains[d];
    const vs = (mine: number, theirs: number | undefined) =>
      theirs === undefined ? '' : `  ·  tau2 ${us(theirs)}, ours ${ratio(mine, theirs)}`;
    lines.push(`  tau2-${d}`);
    for (const kind of ['read', 'write'] as const) {
      const c = o[kind];
      const theirs = p ? p[kind].us / 1000 : undefined;
      lines.push(
        `    ${kind} tool call ${c.tool} (median of ${CALLS}): in-process ${us(c.inProcess)}${vs(c.inProcess, theirs)}  ·  through the worker ${us(c.worker)}${vs(c.worker, theirs)}`,
      );
    }
    if (o.fork !== undefined)
      lines.push(
        `    fork: snapshot() of an airline environment after the longest reference solution + restore() into a fresh one: ${ms(o.fork)}${p?.deepcopy_ms !== undefined ? `  ·  tau2 deepcopy of its DB ${ms(p.deepcopy_ms)}, ours ${ratio(o.fork, p.deepcopy_ms)}` : ''}`,
      );
    const s = o.score;
    lines.push(
      `    gold replay + scoring per task (${s.tasks} tasks with reference actions; ours every component, tau2 its DB and ACTION evaluators): ours min ${ms(s.min)} · median ${ms(s.median)} · max ${ms(s.max)}` +
        (p
          ? `  ·  tau2 min ${ms(p.score_ms.min)} · median ${ms(p.score_ms.median)} · max ${ms(p.score_ms.max)}  ·  medians: ours ${ratio(s.median, p.score_ms.median)}, slowest tasks: ${ratio(s.max, p.score_ms.max)}`
          : ''),
    );
    lines.push(
      `    load + score every task once: ours ${ms(s.all)} (load ${ms(o.load)})` +
        (p
          ? `  ·  tau2 ${ms(p.load_ms + p.score_ms.sum)} (load ${ms(p.load_ms)}), ours ${ratio(s.all, p.load_ms + p.score_ms.sum)}`
          : ''),
    );
  }
  return lines;
}
