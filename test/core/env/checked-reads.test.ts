/**
 * A write tool gets the rows of the reads its `before` rule checks made (the same SQL and
 * parameters) instead of reading again, only while nothing but SELECTs ran since the checks: after
 * a write (through `run`, or a writing statement through `all`) the same read runs again and sees
 * the write. Each handed-over row is the tool's own copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqlJsDb, sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { buildDomain, defineDomain, defineTool } from '../../../src/core/schema/domain.ts';

const READ = 'SELECT * FROM counters WHERE id = ?';

/** Statements the database ran, by SQL text (counted while `counting`). */
const ran = new Map<string, number>();
let counting = false;
const allSync = SqlJsDb.prototype.allSync;
const runSync = SqlJsDb.prototype.runSync;

const bump = defineTool({
  name: 'bump',
  kind: 'write',
  description: 'Read a counter, change the row read, add one by a write, read it again.',
  params: z.object({ id: z.string(), via: z.enum(['run', 'all']) }),
  async run({ db }, { id, via }) {
    const first = await db.one(READ, [id]);
    first!.n = -1; // the tool's own copy: changing it changes nothing else
    const again = await db.one(READ, [id]);
    if (via === 'run') await db.run('UPDATE counters SET n = n + 1 WHERE id = ?', [id]);
    else await db.all('UPDATE counters SET n = n + 1 WHERE id = ? RETURNING n', [id]);
    const after = await db.one(READ, [id]);
    return { first: first!.n, again: again!.n, after: after!.n };
  },
});

const domain = buildDomain(
  defineDomain({
    name: 'counters',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15, 12),
    tools: [bump],
    ruleChecks: [
      {
        rule: 'reads-counter',
        description: 'Reads the counter before the call.',
        tools: ['bump'],
        when: 'before',
        async check({ db, args }) {
          const row = await db.one(READ, [String(args.id)]);
          return row && Number(row.n) > 100 ? 'too high' : null;
        },
      },
    ],
    greeting: 'Hello.',
  }),
  {
    policy: '# Policy\n',
    schema: 'CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL);',
    seed: JSON.stringify({ counters: [{ id: 'a', n: 5 }] }),
    tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'Bump.' } }]),
  },
);

describe('a write tool and its before checks share reads', () => {
  let runtime: DomainRuntime;
  let env: Environment;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    env = await runtime.open();
    SqlJsDb.prototype.allSync = function (sql, params) {
      if (counting) ran.set(sql, (ran.get(sql) ?? 0) + 1);
      return allSync.call(this, sql, params);
    };
    SqlJsDb.prototype.runSync = function (sql, params) {
      if (counting) ran.set(sql, (ran.get(sql) ?? 0) + 1);
      return runSync.call(this, sql, params);
    };
  });
  afterAll(async () => {
    SqlJsDb.prototype.allSync = allSync;
    SqlJsDb.prototype.runSync = runSync;
    await env.close();
    await runtime.close();
  });

  it.each(['run', 'all'] as const)('reads again after a write through %s', async (via) => {
    ran.clear();
    counting = true;
    const before = via === 'run' ? 5 : 6;
    const out = await env.call({ id: via, name: 'bump', arguments: { id: 'a', via } });
    counting = false;
    expect(out.error).toBe(false);
    expect(JSON.parse(out.content)).toEqual({ first: -1, again: before, after: before + 1 });
    // The check's read and the tool's read after the write: the tool's two reads before it were handed over.
    expect(ran.get(READ)).toBe(2);
  });

  it('runs every read when the checks are off', async () => {
    ran.clear();
    counting = true;
    const out = await env.call({ id: 'off', name: 'bump', arguments: { id: 'a', via: 'run' } }, 'assistant', 0, {
      checks: false,
    });
    counting = false;
    expect(JSON.parse(out.content)).toEqual({ first: -1, again: 7, after: 8 });
    expect(ran.get(READ)).toBe(3);
  });
});
