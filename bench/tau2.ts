/**
 * tau2 benchmarks, for tau2-airline and tau2-retail: loading (db.json import, runtime build),
 * environment open, one tool call, gold replay, the rewards of the reference trajectories, and:
 *
 * - **gate**: `gateDomain(runtime, { episodes: true })` over every task (gold replay, checks,
 *   reference and do-nothing episodes, each scored), wall time.
 * - **executable policy overhead** (issue 20): the same gate with the domain's rule checks and on
 *   a runtime of the same domain without them (`ruleChecks: []`), `policyRounds` rounds each,
 *   interleaved (which goes first alternates); the median of each and their ratio, over all tasks of both domains (target: the
 *   checks add at most 20%, ratio ≤ {@link POLICY_OVERHEAD_TARGET}).
 *
 * Replay + scoring per task beside tau2-bench's own Python, measured in the same run, is
 * bench/tau2-anchor.ts (`npm run bench -- tau2`).
 *
 * The data is read from `<dataRoot>/airline/` and `<dataRoot>/retail/` (default the cache of
 * `switchboard data tau2`, else `../shared/tau2/` from the repository root); {@link measureTau2} reports a missing folder
 * instead of failing.
 */
import { cachedTau2Part, tau2CacheDir } from '../src/adapters/node/tau2-data.ts';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { gateDomain } from '../src/core/gate/gate.ts';
import { evaluate, replayGold } from '../src/core/scoring/index.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain, type Tau2DomainName, type Tau2LoadTimings } from '../src/adapters/node/tau2-loader.ts';
import { median } from './harness.ts';
import { referenceEpisode } from './tau2-score.ts';

/** The tau2 domains this bench measures. */
type BenchedDomain = Exclude<Tau2DomainName, 'tau2-telecom'>;

/** The issue-20 bar: the gate with rule checks takes at most this many times the gate without. */
export const POLICY_OVERHEAD_TARGET = 1.2;

/** Measurements of one tau2 domain, all in ms. */
export interface Tau2DomainBench {
  domain: BenchedDomain;
  tasks: number;
  /** db.json read + parse + validation + rows (one load). */
  importDbMs: number;
  /** Whole `loadTau2Domain` (files, import, tasks, policy, splits). */
  loadMs: number;
  /** `DomainRuntime.create`: schema, seed insert, triggers, image (median of `runtimeRuns`). */
  runtimeCreateMs: number;
  /** `runtime.open()` + `close()` of an environment (median; databases are reused). */
  envOpenMs: number;
  /** One reference tool call on an open environment (median over every reference call). */
  toolCallMs: number;
  /** `env.exportState()`, the whole database (median of a few; scoring no longer needs it). */
  exportStateMs: number;
  /** `replayGold`: open + the reference actions + changes + close (median over tasks). */
  goldReplayMs: number;
  /** Reward of every reference trajectory (must be 1). */
  referenceRewards: Record<string, number>;
  /** `gateDomain` with episodes over every task, wall time. */
  gateMs: number;
  /** Tasks the gate accepted. */
  gateAccepted: number;
  /** Gate with episodes, with the domain's rule checks: each round's wall time. */
  gatePolicyRoundsMs: number[];
  /** The same gate on a runtime of the domain without rule checks: each round's wall time. */
  gateNoPolicyRoundsMs: number[];
}

/** Options of {@link measureTau2}. */
export interface Tau2BenchOptions {
  /**
   * Folder holding `airline/` and `retail/` tau2 data; default the `switchboard data tau2` cache
   * when it has both, else `../shared/tau2/` from the repo root.
   */
  dataRoot?: string;
  /** Gold replays and environment opens per task (the median of the rounds is the task's time). Default 5. */
  rounds?: number;
  /** Runtime builds to take the median of. Default 3. */
  runtimeRuns?: number;
  /** Gate rounds with and without rule checks (interleaved) for the policy overhead. Default 5. */
  policyRounds?: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

/** Median of `rounds` runs of `fn`. */
async function medianOf(rounds: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) times.push((await timed(fn))[1]);
  return median(times);
}

/** Measure one tau2 domain. */
export async function measureTau2Domain(
  name: BenchedDomain,
  dataDir: string,
  options: Tau2BenchOptions = {},
): Promise<Tau2DomainBench> {
  const rounds = options.rounds ?? 5;
  const timings: Tau2LoadTimings = { readFiles: 0, importDb: 0, buildDomain: 0 };
  const [domain, loadMs] = await timed(() => loadTau2Domain(name, dataDir, timings));
  const factory = await sqlJsFactory();
  const creates: number[] = [];
  let runtime: DomainRuntime | undefined;
  for (let i = 0; i < (options.runtimeRuns ?? 3); i++) {
    await runtime?.close();
    const [rt, ms] = await timed(() => DomainRuntime.create(domain, factory));
    runtime = rt;
    creates.push(ms);
  }
  const rt = runtime!;

  // Reference episodes, and a warm-up of every tool path.
  const referenceRewards: Record<string, number> = {};
  for (const task of domain.tasks) {
    const trajectory = await referenceEpisode(rt, task);
    const info = await evaluate(rt, task, trajectory.turns, { termination: trajectory.termination });
    const key = String(info.reward);
    referenceRewards[key] = (referenceRewards[key] ?? 0) + 1;
  }

  const opens: number[] = [];
  const calls: number[] = [];
  const golds: number[] = [];
  for (const task of domain.tasks) {
    const env = await rt.open(task);
    for (const [i, action] of (task.evaluation_criteria?.actions ?? []).entries()) {
      calls.push(
        (
          await timed(() =>
            env.call({ id: `b${i}`, name: action.name, arguments: action.arguments }, action.requestor, i),
          )
        )[1],
      );
    }
    await env.close();
    opens.push(await medianOf(rounds, async () => (await rt.open(task)).close()));
    golds.push(await medianOf(rounds, () => replayGold(rt, task)));
  }
  const exports: number[] = [];
  for (const task of domain.tasks.slice(0, 5)) {
    const env = await rt.open(task);
    exports.push((await timed(() => env.exportState()))[1]);
    await env.close();
  }
  const [gate, gateMs] = await timed(() => gateDomain(rt, { episodes: true }));
  const bare = await DomainRuntime.create({ ...domain, ruleChecks: [] }, factory);
  const gatePolicyRoundsMs: number[] = [];
  const gateNoPolicyRoundsMs: number[] = [];
  for (let i = 0; i < (options.policyRounds ?? 5); i++) {
    // Alternate which runs first, so warm-up and drift do not favour one side.
    const order = i % 2 ? ([rt, bare] as const) : ([bare, rt] as const);
    for (const r of order) {
      const ms = (await timed(() => gateDomain(r, { episodes: true })))[1];
      (r === rt ? gatePolicyRoundsMs : gateNoPolicyRoundsMs).push(ms);
    }
  }
  await bare.close();
  await rt.close();
  return {
    domain: name,
    tasks: domain.tasks.length,
    importDbMs: timings.importDb,
    loadMs,
    runtimeCreateMs: median(creates),
    envOpenMs: median(opens),
    toolCallMs: median(calls),
    exportStateMs: median(exports),
    goldReplayMs: median(golds),
    referenceRewards,
    gateMs,
    gateAccepted: gate.tasks.filter((t) => t.accepted).length,
    gatePolicyRoundsMs,
    gateNoPolicyRoundsMs,
  };
}

/** What {@link measureTau2} found: the measurements, or why there are none. */
export type Tau2BenchResult = { results: Tau2DomainBench[] } | { missing: string };

/** Measure both tau2 domains; reports the first missing data folder instead of failing. */
export async function measureTau2(options: Tau2BenchOptions = {}): Promise<Tau2BenchResult> {
  const cached = cachedTau2Part('airline') && cachedTau2Part('retail') ? tau2CacheDir() : undefined;
  const root = (options.dataRoot ?? cached ?? fileURLToPath(new URL('../../shared/tau2/', import.meta.url))).replace(
    /\/?$/,
    '/',
  );
  const domains = [
    ['tau2-airline', `${root}airline/`],
    ['tau2-retail', `${root}retail/`],
  ] as const;
  for (const [, dir] of domains) {
    if (!existsSync(`${dir}db.json`) || !existsSync(`${dir}tasks.json`)) return { missing: dir };
  }
  const results: Tau2DomainBench[] = [];
  for (const [name, dir] of domains) results.push(await measureTau2Domain(name, dir, options));
  return { results };
}

/**
 * The executable policy's cost: per round, the gate over every task of both domains with and
 * without rule checks (rounds interleaved); medians of the round totals and their ratio.
 */
export function policyOverheadLine(results: readonly Tau2DomainBench[]): string {
  const rounds = Math.min(...results.map((r) => r.gatePolicyRoundsMs.length));
  const total = (pick: (r: Tau2DomainBench) => number[]) =>
    Array.from({ length: rounds }, (_, i) => results.reduce((n, r) => n + pick(r)[i]!, 0));
  const withChecks = median(total((r) => r.gatePolicyRoundsMs));
  const without = median(total((r) => r.gateNoPolicyRoundsMs));
  const ratio = withChecks / without;
  const tasks = results.reduce((n, r) => n + r.tasks, 0);
  return `  executable policy: ${tasks}-task gate with rule checks ${(withChecks / 1000).toFixed(2)} s, without ${(without / 1000).toFixed(2)} s (medians of ${rounds} interleaved rounds)  ·  ratio ${ratio.toFixed(3)}  ·  target ≤ ${POLICY_OVERHEAD_TARGET}`;
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

/** The report, one block per domain and a gate total, for a runner to print. */
export function formatTau2Bench(result: Tau2BenchResult): string {
  if ('missing' in result) return `  tau2 data not found at ${result.missing}: tau2 benchmarks skipped`;
  const lines: string[] = [];
  for (const r of result.results) {
    lines.push(
      `  ${r.domain} (${r.tasks} tasks)`,
      `    reference trajectories' rewards            ${Object.entries(r.referenceRewards)
        .map(([k, n]) => `${n} × ${k}`)
        .join(', ')}`,
      `    gold replay ${fmt(r.goldReplayMs)} · env open+close ${fmt(r.envOpenMs)} · tool call ${fmt(r.toolCallMs)} · exportState ${fmt(r.exportStateMs)} (not used by scoring)`,
      `    load ${fmt(r.loadMs)} (db.json import ${fmt(r.importDbMs)}) · runtime build ${fmt(r.runtimeCreateMs)}`,
      `    gate with episodes: ${fmt(r.gateMs)} (${r.gateAccepted}/${r.tasks} accepted)`,
    );
  }
  const tasks = result.results.reduce((n, r) => n + r.tasks, 0);
  const gateMs = result.results.reduce((n, r) => n + r.gateMs, 0);
  lines.push(`  whole ${tasks}-task gate (episodes on): ${(gateMs / 1000).toFixed(2)} s`);
  lines.push(policyOverheadLine(result.results));
  return lines.join('\n');
}
