/**
 * State changes (Environment.changes + DomainRuntime.diffChanges) against the full-state diff
 * (exportState + diffStates): for many pairs of environments opened in the same state, the two
 * must give the same `equal` and the same lines in the same order. Covered: inserts, updates,
 * deletes, key changes, REPLACE over a key and over a UNIQUE column, rolled-back calls, mixed
 * storage classes and non-BMP text in keys, reals, unordered tables with ignored surrogate ids,
 * tables without a key or with a COLLATE clause (compared whole), NULL keys, initial-state rows,
 * and the environment database pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { ChangeBaseMismatch, compareSqlValues, diffChanges, type StateChanges } from '../../../src/core/env/changes.ts';
import { execTool } from './exec-tool.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { canonicalJson, diffStates, type DbState } from '../../../src/core/env/state.ts';
import { seededRng, type Rng } from '../../../src/core/ports/rng.ts';
import type { SqlRow, SqlValue } from '../../../src/core/ports/sql-db.ts';
import { ToolError, buildDomain, defineDomain, defineTool, type Domain } from '../../../src/core/schema/domain.ts';
import type { Task } from '../../../src/core/schema/task.ts';

const SCHEMA = `
CREATE TABLE items (id TEXT PRIMARY KEY, qty INTEGER NOT NULL, price REAL, note TEXT);
CREATE TABLE pairs (a INTEGER NOT NULL, b TEXT NOT NULL, v TEXT, PRIMARY KEY (a, b));
CREATE TABLE mixed (k PRIMARY KEY, v);
CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, amount INTEGER);
CREATE TABLE notes (body TEXT, n INTEGER);
CREATE TABLE tags (name TEXT PRIMARY KEY COLLATE NOCASE, n INTEGER);
CREATE TABLE uniq (id INTEGER PRIMARY KEY, code TEXT UNIQUE, v INTEGER);
`;

const SEED = JSON.stringify({
  items: [
    { id: 'a', qty: 1, price: 0.1, note: null },
    { id: 'c', qty: 3, price: 2.5, note: 'x' },
    { id: '\u{1F600}', qty: 9, price: null, note: 'emoji' },
  ],
  pairs: [
    { a: 1, b: 'x', v: 'one' },
    { a: 2, b: 'Y', v: null },
  ],
  mixed: [
    { k: 1, v: 'int' },
    { k: '1', v: 'text' },
    { k: 1.5, v: 'real' },
  ],
  events: [
    { id: 1, kind: 'open', amount: 5 },
    { id: 2, kind: 'open', amount: 5 },
  ],
  notes: [{ body: 'hello', n: 1 }],
  tags: [{ name: 'Foo', n: 1 }],
  uniq: [
    { id: 1, code: 'A', v: 1 },
    { id: 2, code: 'B', v: 2 },
  ],
});

const TASKS = JSON.stringify([
  { id: 'plain', user_scenario: { instructions: 'x' } },
  {
    id: 'seeded',
    user_scenario: { instructions: 'x' },
    initial_state: {
      rows: {
        items: [
          { id: 'b', qty: 2, price: 1.25, note: null },
          { id: 'c', qty: 30, price: 2.5, note: 'y' },
        ],
      },
    },
  },
]);

const exec = execTool;

/** Writes, then fails: the write must not show up in the changes. */
const failing = defineTool({
  name: 'failing',
  kind: 'write',
  description: 'Write, then refuse.',
  params: z.object({}),
  async run({ db }) {
    await db.run(`UPDATE items SET qty = qty + 100`);
    throw new ToolError('refused');
  },
});

const OPTIONS = { events: { unordered: true, ignoreColumns: ['id'] } };

function domain(): Domain {
  return buildDomain(
    defineDomain({
      name: 'changes-fixture',
      language: 'en-US',
      roles: ['inbound'],
      now: 0,
      tools: [exec, failing],
      tables: OPTIONS,
      greeting: 'hi',
    }),
    { policy: '- **R1** x', schema: SCHEMA, seed: SEED, tasks: TASKS },
  );
}

type Op = [sql: string, params: SqlValue[]];

const ITEM_IDS = ['a', 'b', 'c', 'B', '\u{1F600}', '\uE000', '\uFFFD', 'é'];
const PRICES = [0.1 + 0.2, 1 / 3, 2.5, 100, null, -0.5];
const MIXED_KEYS: SqlValue[] = [1, 2, 1.5, '1', 'a', 'b', '', -3];

/** One random statement over small key spaces, so that scripts touch the same rows often. */
function randomOp(rng: Rng): Op {
  const id = () => rng.pick(ITEM_IDS);
  switch (rng.int(20)) {
    case 0:
      return [
        'INSERT OR REPLACE INTO items (id, qty, price, note) VALUES (?, ?, ?, ?)',
        [id(), rng.int(5), rng.pick(PRICES), rng.pick([null, 'n'])],
      ];
    case 1:
      return ['INSERT INTO items (id, qty, price) VALUES (?, ?, ?)', [id(), rng.int(5), rng.pick(PRICES)]];
    case 2:
      return ['UPDATE items SET qty = ?, price = ? WHERE id = ?', [rng.int(5), rng.pick(PRICES), id()]];
    case 3:
      return ['UPDATE OR REPLACE items SET id = ? WHERE id = ?', [id(), id()]];
    case 4:
      return ['DELETE FROM items WHERE id = ?', [id()]];
    case 5:
      return [
        'INSERT OR REPLACE INTO pairs (a, b, v) VALUES (?, ?, ?)',
        [rng.pick([1, 2, 3, 10]), rng.pick(['x', 'y', 'Y']), rng.pick([null, 'v', 'w'])],
      ];
    case 6:
      return [
        'UPDATE pairs SET a = ? WHERE a = ? AND b = ?',
        [rng.pick([1, 2, 3, 10]), rng.pick([1, 2, 3, 10]), rng.pick(['x', 'y', 'Y'])],
      ];
    case 7:
      return ['DELETE FROM pairs WHERE b = ?', [rng.pick(['x', 'y', 'Y'])]];
    case 8:
      return [
        'INSERT OR REPLACE INTO mixed (k, v) VALUES (?, ?)',
        [rng.pick(MIXED_KEYS), rng.pick(['p', 'q', null, 7])],
      ];
    case 9:
      return ['DELETE FROM mixed WHERE k = ?', [rng.pick(MIXED_KEYS)]];
    case 10:
      return ['INSERT INTO events (kind, amount) VALUES (?, ?)', [rng.pick(['open', 'close']), rng.pick([5, 6])]];
    case 11:
      return ['DELETE FROM events WHERE id = ?', [1 + rng.int(5)]];
    case 12:
      return ['UPDATE events SET amount = ? WHERE id = ?', [rng.pick([5, 6]), 1 + rng.int(5)]];
    case 13:
      return ['INSERT INTO notes (body, n) VALUES (?, ?)', [rng.pick(['hello', 'bye']), rng.int(3)]];
    case 14:
      return ['DELETE FROM notes WHERE body = ?', [rng.pick(['hello', 'bye'])]];
    case 15:
      return ['INSERT OR REPLACE INTO tags (name, n) VALUES (?, ?)', [rng.pick(['Foo', 'foo', 'bar']), rng.int(3)]];
    case 16:
      return [
        'INSERT OR REPLACE INTO uniq (id, code, v) VALUES (?, ?, ?)',
        [1 + rng.int(4), rng.pick(['A', 'B', 'C']), rng.int(3)],
      ];
    case 17:
      return ['UPDATE OR REPLACE uniq SET code = ? WHERE id = ?', [rng.pick(['A', 'B', 'C']), 1 + rng.int(4)]];
    case 18:
      return ['UPDATE items SET qty = qty WHERE id = ?', [id()]];
    default:
      return ['INSERT INTO items (id, qty) VALUES (?, ?)', ['a', 1]]; // a constraint failure: rolled back
  }
}

interface Run {
  env: Environment;
  initial: DbState;
  final: DbState;
  changes: StateChanges;
}

async function runScript(runtime: DomainRuntime, task: Task, ops: readonly Op[], failAt = -1): Promise<Run> {
  const env = await runtime.open(task);
  const initial = await env.exportState();
  for (const [i, [sql, params]] of ops.entries()) {
    if (i === failAt) expect((await env.call({ id: `f${i}`, name: 'failing', arguments: {} })).error).toBe(true);
    await env.call({ id: `c${i}`, name: 'exec', arguments: { sql, params } });
  }
  return { env, initial, final: await env.exportState(), changes: await env.changes() };
}

/** Each change's `before` is the row at open and `after` the row now; unchanged rows are left out. */
function expectChangesExplainState(runtime: DomainRuntime, run: Run): void {
  for (const t of runtime.tables) {
    if (runtime.wholeTables.has(t.name)) {
      expect(run.changes.whole[t.name]).toEqual(run.final[t.name]);
      continue;
    }
    if (run.changes.whole[t.name]) continue; // a NULL key was written: compared whole
    const byKey = (rows: SqlRow[]) =>
      new Map(rows.map((r) => [canonicalJson(t.primaryKey.map((c) => r[c] ?? null)), r]));
    const before = byKey(run.initial[t.name]!);
    const after = byKey(run.final[t.name]!);
    const changed = run.changes.rows[t.name] ?? {};
    for (const [k, c] of Object.entries(changed)) {
      expect(c.before, `${t.name}${k} before`).toEqual(before.get(k) ?? null);
      expect(c.after, `${t.name}${k} after`).toEqual(after.get(k) ?? null);
    }
    for (const k of new Set([...before.keys(), ...after.keys()])) {
      if (!Object.hasOwn(changed, k)) expect(after.get(k), `${t.name}${k} unchanged`).toEqual(before.get(k));
    }
  }
}

describe('state changes give the full-state diff', () => {
  let runtime: DomainRuntime;
  const open: Environment[] = [];
  const task = (id: string) => runtime.domain.tasks.find((t) => t.id === id)!;

  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain(), await inProcessSqlDbFactory());
  });
  afterAll(async () => {
    for (const env of open) await env.close();
    await runtime.close();
  });

  it('compares whole the tables without a key or with a COLLATE clause', () => {
    expect([...runtime.wholeTables].sort()).toEqual(['notes', 'tags']);
  });

  it.each(['plain', 'seeded'])('random scripts, every pair (task %s)', async (taskId) => {
    const rng = seededRng(taskId === 'plain' ? 7 : 8);
    const runs: Run[] = [];
    runs.push(await runScript(runtime, task(taskId), [])); // the do-nothing run
    for (let s = 0; s < 40; s++) {
      const ops = Array.from({ length: 1 + rng.int(10) }, () => randomOp(rng));
      runs.push(await runScript(runtime, task(taskId), ops, rng.int(3) === 0 ? rng.int(ops.length) : -1));
    }
    // A few scripts that write NULL keys: compared whole on that side; undecidable when one side only.
    runs.push(await runScript(runtime, task(taskId), [['INSERT INTO mixed (k, v) VALUES (NULL, 1)', []]]));
    runs.push(
      await runScript(runtime, task(taskId), [
        ['INSERT INTO mixed (k, v) VALUES (NULL, 2)', []],
        ['UPDATE items SET qty = 4', []],
      ]),
    );
    open.push(...runs.map((r) => r.env));

    let compared = 0;
    let different = 0;
    let undecided = 0;
    for (const run of runs) expectChangesExplainState(runtime, run);
    for (const e of runs) {
      for (const a of runs) {
        const full = diffStates(e.final, a.final, runtime.tables, OPTIONS);
        const fast = runtime.diffChanges(e.changes, a.changes);
        if (fast === null) {
          undecided += 1;
          expect(!!e.changes.whole.mixed !== !!a.changes.whole.mixed).toBe(true);
          continue;
        }
        expect(fast).toEqual(full);
        compared += 1;
        if (!full.equal) different += 1;
      }
    }
    // The random scripts do produce differences of every kind, and some equal pairs.
    expect(compared).toBeGreaterThan(1500);
    expect(different).toBeGreaterThan(1400);
    expect(undecided).toBe(2 * 41 * 2);
  });

  it('without tables compared whole (the shortcut for equal states applies), every pair', async () => {
    const keyed = await DomainRuntime.create(
      (() => {
        const d = domain();
        const { notes: _notes, tags: _tags, ...seed } = d.seed;
        return { ...d, schema: SCHEMA.replace(/^CREATE TABLE (notes|tags) .*$/gm, ''), seed };
      })(),
      await inProcessSqlDbFactory(),
    );
    const runs: Run[] = [];
    try {
      expect(keyed.wholeTables.size).toBe(0);
      const rng = seededRng(9);
      const op = (): Op => {
        for (;;) {
          const o = randomOp(rng);
          if (!/\b(notes|tags)\b/.test(o[0])) return o;
        }
      };
      let equal = 0;
      let different = 0;
      for (const taskId of ['plain', 'seeded']) {
        const group: Run[] = [await runScript(keyed, task(taskId), [])];
        // Short scripts over few rows, so that many pairs end in the same state by different writes.
        for (let s = 0; s < 25; s++)
          group.push(await runScript(keyed, task(taskId), Array.from({ length: 1 + rng.int(3) }, op)));
        runs.push(...group);
        for (const e of group) {
          for (const a of group) {
            const fast = keyed.diffChanges(e.changes, a.changes);
            expect(fast).toEqual(diffStates(e.final, a.final, keyed.tables, OPTIONS));
            if (fast!.equal) equal += 1;
            else different += 1;
          }
        }
      }
      expect(equal).toBeGreaterThan(60);
      expect(different).toBeGreaterThan(600);
    } finally {
      for (const r of runs) await r.env.close();
      await keyed.close();
    }
  });

  it('a key change, REPLACE over a UNIQUE column and a rolled-back call, line by line', async () => {
    const gold = await runScript(runtime, task('plain'), [
      ['UPDATE items SET id = ? WHERE id = ?', ['b', 'a']],
      ['INSERT OR REPLACE INTO uniq (id, code, v) VALUES (3, ?, 9)', ['A']],
      ['INSERT INTO events (kind, amount) VALUES (?, ?)', ['close', 1]],
    ]);
    const predicted = await runScript(
      runtime,
      task('plain'),
      [['INSERT INTO events (kind, amount) VALUES (?, ?)', ['close', 2]]],
      0,
    );
    open.push(gold.env, predicted.env);
    const diff = runtime.diffChanges(gold.changes, predicted.changes);
    expect(diff).toEqual(runtime.diff(gold.final, predicted.final));
    expect(diff!.lines).toEqual([
      'events: unexpected row {"amount":2,"kind":"close"}',
      'events: missing row {"amount":1,"kind":"close"}',
      'items[b]: missing row {"id":"b","note":null,"price":0.1,"qty":1}',
      'items[a]: unexpected row {"id":"a","note":null,"price":0.1,"qty":1}',
      'uniq[3]: missing row {"code":"A","id":3,"v":9}',
      'uniq[1]: unexpected row {"code":"A","id":1,"v":1}',
    ]);
    // Only the written rows travel: 2 items, 2 uniq rows, 1 event.
    expect(Object.keys(gold.changes.rows).sort()).toEqual(['events', 'items', 'uniq']);
    expect(Object.keys(gold.changes.rows.uniq!)).toEqual(['[1]', '[3]']);
  });

  it('counts writes made outside tool calls, before and after the last call, and after a restore', async () => {
    const env = await runtime.open(task('seeded'));
    const call = (sql: string, params: SqlValue[] = []) =>
      env.call({ id: sql, name: 'exec', arguments: { sql, params } });
    open.push(env);
    const initial = await env.exportState();
    await call('UPDATE items SET qty = 7 WHERE id = ?', ['a']);
    await env.db.run('UPDATE items SET qty = 8 WHERE id = ?', ['c']); // read by the next call
    expect((await env.call({ id: 'f', name: 'failing', arguments: {} })).error).toBe(true);
    await call('INSERT INTO events (kind, amount) VALUES (?, ?)', ['open', 3]);
    await env.db.run('UPDATE items SET price = 9.5 WHERE id = ?', ['a']); // after the last call
    const run = { env, initial, final: await env.exportState(), changes: await env.changes() };
    expectChangesExplainState(runtime, run);
    expect(Object.keys(run.changes.rows.items!).sort()).toEqual(['["a"]', '["c"]']);
    // A restored environment reads its whole log: the same changes.
    const fresh = await runtime.open(task('seeded'));
    open.push(fresh);
    await fresh.restore(await env.snapshot());
    expect(await fresh.changes()).toEqual(run.changes);
  });

  it('refuses change sets that did not start from the same state', async () => {
    const a = await runScript(runtime, task('plain'), [['UPDATE items SET qty = 5 WHERE id = ?', ['c']]]);
    const b = await runScript(runtime, task('seeded'), [['UPDATE items SET qty = 6 WHERE id = ?', ['c']]]);
    open.push(a.env, b.env);
    expect(() => runtime.diffChanges(a.changes, b.changes)).toThrow(ChangeBaseMismatch);
  });
});

describe('diffChanges on hand-made change sets', () => {
  const tables = [{ name: 'k', columns: ['id', 'v'], primaryKey: ['id'] }];
  const change = (id: SqlValue, before: number | null, after: number | null) => ({
    key: [id],
    before: before === null ? null : { id, v: before },
    after: after === null ? null : { id, v: after },
  });
  const changes = (...list: ReturnType<typeof change>[]): StateChanges => ({
    rows: { k: Object.fromEntries(list.map((c) => [canonicalJson(c.key), c])) },
    whole: {},
  });

  it('orders touched keys as SQLite does: NULL, numbers, text by UTF-8 bytes, blobs', () => {
    const values: SqlValue[] = ['\u{1F600}', 'b', '\uFFFD', 10, 'B', 2.5, '', new Uint8Array([1]), '\uE000', -1];
    expect([...values].sort(compareSqlValues)).toEqual([
      -1,
      2.5,
      10,
      '',
      'B',
      'b',
      '\uE000',
      '\uFFFD',
      '\u{1F600}',
      new Uint8Array([1]),
    ]);
  });

  it('a key only one side wrote compares with the other side’s row at open', () => {
    const gold = changes(change('x', 1, 2), change('\u{1F600}', 5, null));
    const predicted = changes(change('\uE000', null, 3), change('x', 1, 2));
    // Gold deleted 😀 (the prediction still has it as at open); the prediction inserted U+E000.
    expect(diffChanges(gold, predicted, tables)).toEqual({
      equal: false,
      lines: [
        'k[\uE000]: unexpected row {"id":"\uE000","v":3}',
        'k[\u{1F600}]: unexpected row {"id":"\u{1F600}","v":5}',
      ],
    });
    expect(diffChanges(predicted, gold, tables)).toEqual({
      equal: false,
      lines: ['k[\uE000]: missing row {"id":"\uE000","v":3}', 'k[\u{1F600}]: missing row {"id":"\u{1F600}","v":5}'],
    });
  });

  it('is undecided when a table is whole on one side only', () => {
    const keyed = changes(change('x', 1, 2));
    const whole: StateChanges = { rows: {}, whole: { k: [{ id: 'x', v: 1 }] } };
    expect(diffChanges(keyed, whole, tables)).toBeNull();
    expect(diffChanges(whole, whole, tables)).toEqual({ equal: true, lines: [] });
  });
});

describe('environment database pool', () => {
  let runtime: DomainRuntime;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain(), await inProcessSqlDbFactory());
  });
  afterAll(() => runtime.close());

  const write = (env: Environment) =>
    env.call({ id: 'w', name: 'exec', arguments: { sql: 'UPDATE items SET qty = 42', params: [] } });

  it('a closed environment gives its database, back at the pristine state, to the next one', async () => {
    const first = await runtime.open();
    const pristine = await first.exportState();
    await write(first);
    const db = first.db;
    await first.close();
    await first.close(); // no-op
    expect(() => first.db).toThrow('environment is closed');
    await expect(first.query('SELECT 1')).rejects.toThrow('environment is closed');
    const second = await runtime.open();
    expect(second.db).toBe(db);
    expect(await second.exportState()).toEqual(pristine);
    expect((await second.changes()).rows).toEqual({});
    await second.close();
  });

  it('snapshot and restore leave the pool: the database is closed, not reused', async () => {
    const env = await runtime.open(runtime.domain.tasks.find((t) => t.id === 'seeded'));
    await write(env);
    const snap = await env.snapshot();
    const changed = await env.exportState();
    await env.call({ id: 'w2', name: 'exec', arguments: { sql: 'DELETE FROM items', params: [] } });
    await env.restore(snap);
    expect(await env.exportState()).toEqual(changed);
    // Changes still count from the open (the task's initial rows are not changes).
    const rows = (await env.changes()).rows.items!;
    expect(Object.values(rows).map((c) => [c.key[0], c.before?.qty, c.after?.qty])).toEqual([
      ['a', 1, 42],
      ['\u{1F600}', 9, 42],
      ['b', 2, 42],
      ['c', 30, 42],
    ]);
    const db = env.db;
    await env.close();
    const next = await runtime.open();
    expect(next.db).not.toBe(db);
    await next.close();
  });

  it('REPLACE over an existing row logs the delete it does', async () => {
    const env = await runtime.open();
    const out = await env.call({
      id: 'r',
      name: 'exec',
      arguments: { sql: 'INSERT OR REPLACE INTO items (id, qty) VALUES (?, ?)', params: ['a', 7] },
    });
    expect(out.writes.map((w) => `${w.op} ${w.column} ${String(w.before)}→${String(w.after)}`)).toEqual([
      'delete id a→null',
      'delete qty 1→null',
      'delete price 0.1→null',
      'delete note null→null',
      'insert id null→a',
      'insert qty null→7',
      'insert price null→null',
      'insert note null→null',
    ]);
    await env.close();
  });
});
