import { fileURLToPath } from 'node:url';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain } from '../src/adapters/node/tau2-loader.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { fixedClock } from '../src/core/ports/clock.ts';
import { evaluate } from '../src/core/scoring/index.ts';
const which = process.argv[2] ?? 'retail';
const name = which === 'airline' ? 'tau2-airline' : 'tau2-retail';
const domain = await loadTau2Domain(name, fileURLToPath(new URL(`../../shared/tau2/${which}/`, import.meta.url)));
const base = await sqlJsFactory();
const sqls = new Map<string, number>();
const factory = async (img?: Uint8Array) => { const db = await base(img); const wrap = (f: any) => (sql: string, p: any) => { sqls.set(sql, (sqls.get(sql) ?? 0) + 1); return f.call(db, sql, p); }; (db as any).all = wrap(db.all); (db as any).run = wrap(db.run); return db; };
const runtime = await DomainRuntime.create(domain, factory);
for (const task of domain.tasks) {
  const tr = await runEpisode({ runtime, task, agent: new ReferenceAgent(), user: new ScriptedUser(), seed: 0, clock: fixedClock(domain.now) });
  await evaluate(runtime, task, tr.turns);
}
console.log('distinct', sqls.size);
for (const [k, v] of [...sqls].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(v, k.slice(0, 150));
