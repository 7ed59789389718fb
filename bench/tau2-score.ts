/**
 * Gold replay + scoring of every tau2 task with reference actions, as bench/tau2-anchor.ts times
 * it: in its own process, and (run as a script) as a whole process, the way tau2-bench's Python
 * is timed (bench/tau2_python.py `score`).
 *
 * As a script: `node --import tsx bench/tau2-score.ts <tau2-airline|tau2-retail> <data dir>` loads
 * the domain (db.json and tasks.json), builds the runtime, runs each task's reference episode
 * (ReferenceAgent + ScriptedUser: the trajectory to score, not scoring work), scores each task
 * once with `evaluate` and prints one JSON line: `load_ms`, `setup_ms` (the reference episodes, which
 * the caller subtracts from the process's wall time) and `tasks` (task id → [wall ms, CPU ms]).
 */
import { DomainRuntime } from '../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { fixedClock } from '../src/core/ports/clock.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import type { Domain } from '../src/core/schema/domain.ts';
import type { Task } from '../src/core/schema/task.ts';
import type { Trajectory } from '../src/core/schema/trajectory.ts';
import { evaluate } from '../src/core/scoring/index.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain, type Tau2DomainName } from '../src/adapters/node/tau2-loader.ts';

/** One timed run: wall and this process's CPU time (user + system), ms. */
export interface Sample {
  wall: number;
  cpu: number;
}

/** Wall and CPU time of `fn`. CPU time is what the code costs when other work loads the machine. */
export async function sample(fn: () => Promise<unknown>): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

/** The reference episode of `task`: ReferenceAgent + ScriptedUser, seed 0, the domain's clock. */
export function referenceEpisode(rt: DomainRuntime, task: Task): Promise<Trajectory> {
  return runEpisode({
    runtime: rt,
    task,
    agent: new ReferenceAgent(),
    user: new ScriptedUser(),
    seed: 0,
    clock: fixedClock(rt.domain.now),
  });
}

/** Each task with reference actions (the tasks tau2_python.py scores) and its reference trajectory. */
export async function referenceTrajectories(rt: DomainRuntime, domain: Domain): Promise<Map<string, Trajectory>> {
  const out = new Map<string, Trajectory>();
  for (const task of domain.tasks)
    if (task.evaluation_criteria?.actions?.length) out.set(task.id, await referenceEpisode(rt, task));
  return out;
}

/** Gold replay + every scoring component of each trajectory, timed once per task. */
export async function scoreOnce(
  rt: DomainRuntime,
  domain: Domain,
  trajectories: ReadonlyMap<string, Trajectory>,
): Promise<Map<string, Sample>> {
  const out = new Map<string, Sample>();
  for (const task of domain.tasks) {
    const t = trajectories.get(task.id);
    if (!t) continue;
    out.set(task.id, await sample(() => evaluate(rt, task, t.turns, { termination: t.termination })));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [name, dir] = process.argv.slice(2) as [Tau2DomainName, string];
  const t0 = performance.now();
  const domain = await loadTau2Domain(name, dir);
  const rt = await DomainRuntime.create(domain, await sqlJsFactory());
  const load = performance.now() - t0;
  const t1 = performance.now();
  const trajectories = await referenceTrajectories(rt, domain);
  const setup = performance.now() - t1;
  const scores = await scoreOnce(rt, domain, trajectories);
  await rt.close();
  const tasks = Object.fromEntries([...scores].map(([id, s]) => [id, [s.wall, s.cpu]]));
  console.log(JSON.stringify({ load_ms: load, setup_ms: setup, tasks }));
}
