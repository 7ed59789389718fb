/**
 * tau2 benchmarks: for tau2-airline and tau2-retail, how long it takes to import db.json, build
 * the runtime (pristine SQLite image), open an environment, run one tool call, and replay each
 * task's reference solution on a fresh environment (open + every reference call + exportState,
 * the "gold replay" that DB scoring needs). Not wired into npm scripts; call
 * {@link measureTau2} from a runner.
 */
import { fileURLToPath } from 'node:url';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain, type Tau2DomainName, type Tau2LoadTimings } from '../src/adapters/node/tau2-loader.ts';

/** Medians of one tau2 domain, all in ms. */
export interface Tau2DomainBench {
  domain: Tau2DomainName;
  tasks: number;
  /** db.json read + parse + validation + rows (one load). */
  importDbMs: number;
  /** Whole `loadTau2Domain` (files, import, tasks, policy, splits). */
  loadMs: number;
  /** `DomainRuntime.create`: schema, seed insert, triggers, image (median of `runtimeRuns`). */
  runtimeCreateMs: number;
  /** `runtime.open()` of a fresh environment (median). */
  envOpenMs: number;
  /** One reference tool call on an open environment (median over every reference call). */
  toolCallMs: number;
  /** `env.exportState()` after a replay (median). */
  exportStateMs: number;
  /** Fresh env + replay of the task's reference actions + exportState (median over tasks). */
  goldReplayMs: number;
  /** The slowest task's gold replay (median of its rounds). */
  goldReplayMaxMs: number;
}

/** Options of {@link measureTau2}. */
export interface Tau2BenchOptions {
  /** Folder holding `airline/` and `retail/` tau2 data; default `../shared/tau2/` from the repo root. */
  dataRoot?: string;
  /** Gold replays per task (the median of the rounds is the task's time). Default 3. */
  rounds?: number;
  /** Runtime builds to take the median of. Default 3. */
  runtimeRuns?: number;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

/** Measure one tau2 domain. */
export async function measureTau2Domain(name: Tau2DomainName, dataDir: string, options: Tau2BenchOptions = {}): Promise<Tau2DomainBench> {
  const rounds = options.rounds ?? 3;
  const timings: Tau2LoadTimings = { readFiles: 0, importDb: 0, buildDomain: 0 };
  const [domain, loadMs] = await timed(() => loadTau2Domain(name, dataDir, timings));
  const factory = await sqlJsFactory();
  const creates: number[] = [];
  let runtime: DomainRuntime | undefined;
  for (let i = 0; i < (options.runtimeRuns ?? 3); i++) {
    const [rt, ms] = await timed(() => DomainRuntime.create(domain, factory));
    runtime = rt;
    creates.push(ms);
  }
  const opens: number[] = [];
  const calls: number[] = [];
  const exports: number[] = [];
  const perTask: number[] = [];
  for (const task of domain.tasks) {
    const replays: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const [env, openMs] = await timed(() => runtime!.open(task));
      opens.push(openMs);
      for (const [i, action] of (task.evaluation_criteria?.actions ?? []).entries()) {
        const [, callMs] = await timed(() => env.call({ id: `b${i}`, name: action.name, arguments: action.arguments }));
        calls.push(callMs);
      }
      const [, exportMs] = await timed(() => env.exportState());
      exports.push(exportMs);
      replays.push(performance.now() - t0);
      await env.close();
    }
    perTask.push(median(replays));
  }
  return {
    domain: name,
    tasks: domain.tasks.length,
    importDbMs: timings.importDb,
    loadMs,
    runtimeCreateMs: median(creates),
    envOpenMs: median(opens),
    toolCallMs: median(calls),
    exportStateMs: median(exports),
    goldReplayMs: median(perTask),
    goldReplayMaxMs: Math.max(...perTask),
  };
}

/** Measure both tau2 domains. */
export async function measureTau2(options: Tau2BenchOptions = {}): Promise<Tau2DomainBench[]> {
  const root = options.dataRoot ?? fileURLToPath(new URL('../../shared/tau2/', import.meta.url));
  const out: Tau2DomainBench[] = [];
  for (const [name, folder] of [
    ['tau2-airline', 'airline'],
    ['tau2-retail', 'retail'],
  ] as const) {
    out.push(await measureTau2Domain(name, `${root.replace(/\/?$/, '/')}${folder}/`, options));
  }
  return out;
}

/** One line per domain, for a runner to print. */
export function formatTau2Bench(results: readonly Tau2DomainBench[]): string {
  const f = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`);
  return results
    .map(
      (r) =>
        `${r.domain.padEnd(13)} import ${f(r.importDbMs)} · load ${f(r.loadMs)} · runtime ${f(r.runtimeCreateMs)} · open ${f(r.envOpenMs)} · tool call ${f(r.toolCallMs)} · exportState ${f(r.exportStateMs)} · gold replay ${f(r.goldReplayMs)} (max ${f(r.goldReplayMaxMs)}, ${r.tasks} tasks)`,
    )
    .join('\n');
}
