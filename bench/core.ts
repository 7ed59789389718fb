/**
 * Core benchmarks (issue: foundation): one tool call in-process, snapshot + restore of a 3 MB
 * database, gold replay + full scoring of one task. The tool call has no target here: it is
 * compared with tau2-bench's own in `npm run bench -- tau2`, measured in the same run.
 */
import { DomainRuntime } from '../src/core/env/environment.ts';
import { fixedClock } from '../src/core/ports/clock.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { evaluate } from '../src/core/scoring/evaluate.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../src/adapters/node/load-domain.ts';
import type { BenchCase } from './harness.ts';

/** A database of about `bytes` bytes: one table of 200-byte text rows. */
async function bigDatabase(bytes: number) {
  const db = await (await sqlJsFactory())();
  await db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const rows = Math.ceil(bytes / 200);
  const batch = Array.from({ length: rows }, (_, i) => ({
    sql: 'INSERT INTO filler (id, body) VALUES (?, ?)',
    params: [i, `row ${i} `.padEnd(200, 'x')],
  }));
  await db.batch(batch);
  return db;
}

export async function coreCases(): Promise<BenchCase[]> {
  const domain = await loadBuiltinDomain('carrier');
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const env = await runtime.open();
  const call = { id: 'b', name: 'find_customer_by_phone', arguments: { phone: '13812345678' } };
  const check = await env.call(call);
  if (check.error) throw new Error(`bench setup: ${check.content}`);

  const db = await bigDatabase(3 * 1024 * 1024);
  const image = await db.snapshot();

  const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
  const trajectory = await runEpisode({
    runtime,
    task,
    agent: new ReferenceAgent(),
    user: new ScriptedUser(),
    seed: 0,
    clock: fixedClock(domain.now),
  });
  const reward = await evaluate(runtime, task, trajectory.turns);
  if (reward.reward !== 1) throw new Error(`bench setup: reference trajectory scores ${reward.reward}`);

  return [
    { name: 'one tool call (carrier read, in-process)', fn: () => env.call(call) },
    {
      name: `snapshot + restore of a ${(image.byteLength / 1048576).toFixed(1)} MB database`,
      fn: async () => db.restore(await db.snapshot()),
      targetMs: 5,
    },
    {
      name: 'gold replay + full scoring of one task',
      fn: () => evaluate(runtime, task, trajectory.turns),
      targetMs: 12,
    },
  ];
}
