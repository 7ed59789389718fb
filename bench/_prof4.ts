import { fileURLToPath } from 'node:url';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain } from '../src/adapters/node/tau2-loader.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { fixedClock } from '../src/core/ports/clock.ts';
import { evaluate, replayGold, replayTrajectory, scoreDb, scoreQuality, scoreCommunicate, scoreActions, scoreEnvAssertions } from '../src/core/scoring/index.ts';
const med = (a: number[]) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]!.toFixed(3); };
const which = process.argv[2] ?? 'airline';
const name = which === 'airline' ? 'tau2-airline' : 'tau2-retail';
const domain = await loadTau2Domain(name, fileURLToPath(new URL(`../../shared/tau2/${which}/`, import.meta.url)));
const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
const trajs = [];
for (const task of domain.tasks) {
  const tr = await runEpisode({ runtime, task, agent: new ReferenceAgent(), user: new ScriptedUser(), seed: 0, clock: fixedClock(domain.now) });
  trajs.push({ task, tr });
}
const T: Record<string, number[]> = {};
const add = (k: string, v: number) => (T[k] ??= []).push(v);
for (let round = 0; round < 3; round++) for (const { task, tr } of trajs) {
  let t0 = performance.now();
  const gold = await replayGold(runtime, task); add('gold', performance.now() - t0);
  let t1 = performance.now();
  const p = await replayTrajectory(runtime, task, tr.turns); add('predicted', performance.now() - t1);
  t1 = performance.now(); await scoreDb(runtime, task, gold, p); add('scoreDb', performance.now() - t1);
  t1 = performance.now(); scoreQuality(tr.turns); add('quality', performance.now() - t1);
  t1 = performance.now(); scoreCommunicate(tr.turns, task.evaluation_criteria?.communicate_info ?? []); add('communicate', performance.now() - t1);
  t1 = performance.now(); scoreActions(tr.turns, task.evaluation_criteria?.actions ?? []); add('actions', performance.now() - t1);
  t1 = performance.now(); await scoreEnvAssertions(p.env, task.evaluation_criteria?.env_assertions ?? []); add('envAssert', performance.now() - t1);
  t1 = performance.now(); await p.env.close(); add('close', performance.now() - t1);
  add('sum', performance.now() - t0);
  t1 = performance.now(); await evaluate(runtime, task, tr.turns); add('evaluate', performance.now() - t1);
  add('turns', tr.turns.length); add('toolturns', tr.turns.filter((t) => t.role === 'tool').length);
}
console.log(which, Object.entries(T).map(([k, v]) => `${k} ${med(v)}`).join(' · '));
