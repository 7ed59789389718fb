/**
 * A write tool gets the rows of the reads its `before` rule checks made (the same SQL and
 * parameters) instead of reading again, only while nothing but SELECTs ran since the checks: after
 * a write (through `run`, or a writing statement through `all`) the same read runs again and sees
 * the write. The rows handed over are the tool's own (the checks' rows, taken from their reader):
 * changing one changes nothing else, and the same read made again runs the query.
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
    const seen = first!.n;
    first!.n = -1; // the tool's own row: changing it changes nothing else
    const again = await db.one(READ, [id]);
    if (via === 'run') await db.run('UPDATE counters SET n = n + 1 WHERE id = ?', [id]);
    else await db.all('UPDATE counters SET n = n + 1 WHERE id = ? RETURNING n', [id]);
    const after = await db.one(READ, [id]);
    return { seen, first: first!.n, again: again!.n, after: after!.n };
  },
});

const peek = defineTool({
  name: 'peek',
  kind: 'write',
  description: 'Nothing; its before check reads the type of each kind of parameter.',
  params: z.object({}),
  async run() {
    return 'ok';
  },
});

/** Parameter lists that must each get their own rows from a check's reader (same SQL). */
const TYPED: unknown[][] = [[5], ['5'], ['[5]'], [null], ['null'], ['5', '5'], [5, '5']];

const domain = buildDomain(
  defineDomain({
    name: 'counters',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15, 12),
    tools: [bump, peek],
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
      {
        rule: 'types',
        description: 'Reads the SQL type of each parameter list, twice.',
        tools: ['peek'],
        when: 'before',
        async check({ db }) {
          const types: string[] = [];
          for (let round = 0; round < 2; round++)
            for (const params of TYPED) {
              const sql =
                params.length === 1 ? 'SELECT typeof(?1) AS t' : "SELECT typeof(?1) || ',' || typeof(?2) AS t";
              types.push(String((await db.one(sql, params as never))!.t));
            }
          return types.join(' ');
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
    expect(JSON.parse(out.content)).toEqual({ seen: before, first: -1, again: before, after: before + 1 });
    // The check's read, the tool's second read (its first took the check's row) and its read after the write.
    expect(ran.get(READ)).toBe(3);
  });

  it("a check's reader keeps the rows of each parameter list apart (a lone text, its JSON, a number)", async () => {
    ran.clear();
    counting = true;
    const out = await env.call({ id: 'peek', name: 'peek', arguments: {} });
    counting = false;
    const once = 'integer text text null text text,text integer,text';
    expect(out.violations.map((v) => v.message)).toEqual([`${once} ${once}`]);
    // Each list read once: the second round was answered from the reader.
    expect(ran.get('SELECT typeof(?1) AS t')).toBe(5);
    expect(ran.get("SELECT typeof(?1) || ',' || typeof(?2) AS t")).toBe(2);
  });

  it('runs every read when the checks are off', async () => {
    ran.clear();
    counting = true;
    const out = await env.call({ id: 'off', name: 'bump', arguments: { id: 'a', via: 'run' } }, 'assistant', 0, {
      checks: false,
    });
    counting = false;
    expect(JSON.parse(out.content)).toEqual({ seen: 7, first: -1, again: 7, after: 8 });
    expect(ran.get(READ)).toBe(3);
  });
});
