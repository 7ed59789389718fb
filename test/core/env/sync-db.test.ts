/**
 * Over a database that answers synchronously (sql.js in this thread, {@link SyncSqlDb}) a tool
 * call runs its statements through `allSync`/`runSync`, with no call of the async `all`/`run`; over
 * a database that only answers asynchronously (a worker's) the same calls go through `all`/`run`.
 * Either way the outcomes are the same: content, writes, violations, a refused call's rolled-back
 * writes and a statement's failure.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { syncSqlDb, type SqlDb, type SqlDbFactory, type SyncSqlDb } from '../../../src/core/ports/sql-db.ts';
import { ToolError, buildDomain, defineDomain, defineTool } from '../../../src/core/schema/domain.ts';

const pay = defineTool({
  name: 'pay',
  kind: 'write',
  description: 'Move an amount between two accounts; refuses an overdraft after writing.',
  params: z.object({ from: z.string(), to: z.string(), amount: z.number().int() }),
  async run({ db }, { from, to, amount }) {
    const [a, b] = await Promise.all([
      db.one('SELECT balance FROM accounts WHERE id = ?', [from]),
      db.one('SELECT balance FROM accounts WHERE id = ?', [to]),
    ]);
    if (!a || !b) throw new ToolError('no such account');
    const changed = await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ?', [amount, from]);
    await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', [amount, to]);
    const rows = await db.all('SELECT id, balance FROM accounts ORDER BY id');
    if (rows.some((r) => Number(r.balance) < 0)) throw new ToolError('overdraft');
    return { changed, rows };
  },
});

const open = defineTool({
  name: 'open_account',
  kind: 'write',
  description: 'Insert an account (a duplicate id breaks the primary key).',
  params: z.object({ id: z.string() }),
  async run({ db }, { id }) {
    return db.run('INSERT INTO accounts (id, balance) VALUES (?, 0)', [id]);
  },
});

const domain = buildDomain(
  defineDomain({
    name: 'accounts',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15, 12),
    tools: [pay, open],
    ruleChecks: [
      {
        rule: 'big-payment',
        description: 'A payment above 50 is flagged.',
        tools: ['pay'],
        async check({ db, writes }) {
          const row = await db.one('SELECT sum(balance) AS total FROM accounts');
          const moved = writes
            .filter((w) => w.column === 'balance')
            .map((w) => Math.abs(Number(w.after) - Number(w.before)));
          return Math.max(...moved) > 50 ? `moved ${Math.max(...moved)} of ${String(row?.total)}` : null;
        },
      },
    ],
    greeting: 'Hello.',
  }),
  {
    policy: '# Policy\n',
    schema: 'CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);',
    seed: JSON.stringify({
      accounts: [
        { id: 'a', balance: 100 },
        { id: 'b', balance: 10 },
      ],
    }),
    tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'Pay.' } }]),
  },
);

/** Counts of the async and sync methods called, per database made. */
interface Calls {
  async: number;
  sync: number;
}

/** sql.js databases that count their calls; `asyncOnly`: without the sync methods (as a worker's). */
async function counted(calls: Calls, asyncOnly: boolean): Promise<SqlDbFactory> {
  const make = await sqlJsFactory();
  return async (image) => {
    const db = await make(image);
    const sync = syncSqlDb(db)!;
    const base: SqlDb = {
      exec: (sql) => db.exec(sql),
      run(sql, params) {
        calls.async++;
        return db.run(sql, params);
      },
      all(sql, params) {
        calls.async++;
        return db.all(sql, params);
      },
      batch(statements) {
        calls.async++;
        return db.batch(statements);
      },
      snapshot: () => db.snapshot(),
      restore: (image) => db.restore(image),
      close: () => db.close(),
    };
    if (asyncOnly) return base;
    const both: SyncSqlDb = {
      ...base,
      allSync(sql, params) {
        calls.sync++;
        return sync.allSync(sql, params);
      },
      runSync(sql, params) {
        calls.sync++;
        return sync.runSync(sql, params);
      },
    };
    return both;
  };
}

const CALLS = [
  { name: 'pay', arguments: { from: 'a', to: 'b', amount: 30 } },
  { name: 'pay', arguments: { from: 'a', to: 'b', amount: 60 } },
  { name: 'pay', arguments: { from: 'b', to: 'a', amount: 500 } },
  { name: 'pay', arguments: { from: 'a', to: 'zz', amount: 1 } },
  { name: 'open_account', arguments: { id: 'c' } },
  { name: 'open_account', arguments: { id: 'c' } },
];

async function episode(asyncOnly: boolean) {
  const calls: Calls = { async: 0, sync: 0 };
  const runtime = await DomainRuntime.create(domain, await counted(calls, asyncOnly));
  const env = await runtime.open();
  const perCall: Calls[] = [];
  const outcomes = [];
  for (const [i, c] of CALLS.entries()) {
    calls.async = calls.sync = 0;
    outcomes.push(await env.call({ id: `c${i}`, ...c }, 'assistant', i));
    perCall.push({ ...calls });
  }
  const state = await env.exportState();
  await env.close();
  await runtime.close();
  return { outcomes, state, perCall };
}

describe('tool calls over a synchronous database', () => {
  it('run every statement through allSync/runSync, with the outcomes of the async path', async () => {
    const sync = await episode(false);
    const async = await episode(true);
    expect(sync.outcomes).toEqual(async.outcomes);
    expect(sync.state).toEqual(async.state);
    expect(sync.outcomes.map((o) => [o.error, o.error ? o.content : JSON.parse(o.content)])).toEqual([
      [
        false,
        {
          changed: 1,
          rows: [
            { id: 'a', balance: 70 },
            { id: 'b', balance: 40 },
          ],
        },
      ],
      [
        false,
        {
          changed: 1,
          rows: [
            { id: 'a', balance: 10 },
            { id: 'b', balance: 100 },
          ],
        },
      ],
      [true, 'Error: overdraft'],
      [true, 'Error: no such account'],
      [false, 1],
      [true, 'Error: open_account was refused by the database: UNIQUE constraint failed: accounts.id'],
    ]);
    expect(sync.outcomes.map((o) => o.violations.map((v) => v.message))).toEqual([
      [],
      ['moved 60 of 110'],
      [],
      [],
      [],
      [],
    ]);
    expect(sync.outcomes[1]!.writes.map((w) => [w.key.id, w.before, w.after])).toEqual([
      ['a', 70, 10],
      ['b', 40, 100],
    ]);
    expect(sync.state.accounts).toEqual([
      { id: 'a', balance: 10 },
      { id: 'b', balance: 100 },
      { id: 'c', balance: 0 },
    ]);
    // Sync: savepoint, two reads, two updates, the read, release, the log read, the check's read;
    // nothing async (a refused call's rollback is one batch). Async only: the same through all/run.
    expect(sync.perCall).toEqual([
      { async: 0, sync: 9 },
      { async: 0, sync: 9 },
      { async: 1, sync: 6 },
      { async: 1, sync: 3 },
      { async: 0, sync: 4 },
      { async: 1, sync: 2 },
    ]);
    expect(async.perCall).toEqual([
      { async: 9, sync: 0 },
      { async: 9, sync: 0 },
      { async: 7, sync: 0 },
      { async: 4, sync: 0 },
      { async: 4, sync: 0 },
      { async: 3, sync: 0 },
    ]);
  });
});
