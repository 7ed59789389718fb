/**
 * Snapshots kept as logged writes (`DomainRuntime.replayable`): a restore replays them on a
 * fresh environment (or rolls the same one back first) and must give exactly the saved database
 * — every row with its rowid and its SQLite storage classes, and the write log itself — over
 * random scripts of inserts, updates, key changes, REPLACEs and deletes on ordinary, INTEGER
 * PRIMARY KEY, composite-key and WITHOUT ROWID tables with untyped and real columns. A schema the
 * replay cannot reproduce (a trigger of its own) keeps file images; a snapshot of another task's
 * initial state is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { execTool } from './exec-tool.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { seededRng, type Rng } from '../../../src/core/ports/rng.ts';
import type { SqlValue } from '../../../src/core/ports/sql-db.ts';
import { buildDomain, defineDomain, type Domain } from '../../../src/core/schema/domain.ts';

const SCHEMA = `
CREATE TABLE items (id TEXT PRIMARY KEY, qty INTEGER NOT NULL, price REAL, note TEXT);
CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, amount INTEGER);
CREATE TABLE pairs (a INTEGER NOT NULL, b TEXT NOT NULL, v, PRIMARY KEY (a, b));
CREATE TABLE wr (k TEXT PRIMARY KEY, v REAL) WITHOUT ROWID;
CREATE TABLE mixed (k PRIMARY KEY, v);
`;

const SEED = JSON.stringify({
  items: [
    { id: 'a', qty: 1, price: 0.1, note: null },
    { id: 'c', qty: 3, price: 2.5, note: 'x' },
  ],
  events: [{ id: 1, kind: 'open', amount: 5 }],
  pairs: [{ a: 1, b: 'x', v: 'one' }],
  wr: [{ k: 'p', v: 1.5 }],
  mixed: [
    { k: 1, v: 'int' },
    { k: '1', v: 3.0 },
  ],
});

const TASKS = JSON.stringify([
  { id: 'plain', user_scenario: { instructions: 'x' } },
  {
    id: 'seeded',
    user_scenario: { instructions: 'x' },
    initial_state: { rows: { items: [{ id: 'b', qty: 2, price: 1.25, note: null }] } },
  },
]);

const exec = execTool;

function domain(schema = SCHEMA): Domain {
  return buildDomain(
    defineDomain({
      name: 'replay-fixture',
      language: 'en-US',
      roles: ['inbound'],
      now: 0,
      tools: [exec],
      greeting: 'hi',
    }),
    { policy: '- **R1** x', schema, seed: SEED, tasks: TASKS },
  );
}

const IDS = ['a', 'b', 'c', 'd', 'é'];
const REALS: SqlValue[] = [0.1 + 0.2, 3, 2.5, -0.5, null];
const KEYS: SqlValue[] = [1, '1', 2, 1.5, 'z'];

function randomOp(rng: Rng): [string, SqlValue[]] {
  const id = () => rng.pick(IDS);
  switch (rng.int(12)) {
    case 0:
      return ['INSERT OR REPLACE INTO items (id, qty, price) VALUES (?, ?, ?)', [id(), rng.int(9), rng.pick(REALS)]];
    case 1:
      return ['INSERT INTO items (id, qty, price, note) VALUES (?, ?, ?, ?)', [id(), rng.int(9), rng.pick(REALS), 'n']];
    case 2:
      return ['UPDATE items SET qty = qty + 1, price = ? WHERE id = ?', [rng.pick(REALS), id()]];
    case 3:
      return ['UPDATE OR REPLACE items SET id = ? WHERE id = ?', [id(), id()]];
    case 4:
      return ['DELETE FROM items WHERE id = ?', [id()]];
    case 5:
      return ['INSERT INTO events (kind, amount) VALUES (?, ?)', [rng.pick(['open', 'close']), rng.int(100)]];
    case 6:
      return ['DELETE FROM events WHERE id = (SELECT max(id) FROM events)', []];
    case 7:
      return [
        'INSERT OR REPLACE INTO pairs (a, b, v) VALUES (?, ?, ?)',
        [rng.int(3), rng.pick(['x', 'y']), rng.pick(REALS)],
      ];
    case 8:
      return ['INSERT OR REPLACE INTO wr (k, v) VALUES (?, ?)', [rng.pick(['p', 'q', 'r']), rng.pick(REALS)]];
    case 9:
      return ['DELETE FROM wr WHERE k = ?', [rng.pick(['p', 'q'])]];
    case 10:
      return ['INSERT OR REPLACE INTO mixed (k, v) VALUES (?, ?)', [rng.pick(KEYS), rng.pick(REALS)]];
    default:
      return ['UPDATE mixed SET v = ? WHERE k = ?', [rng.pick(['t', 7, 7.25]), rng.pick(KEYS)]];
  }
}

async function play(env: Environment, rng: Rng, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const [sql, params] = randomOp(rng);
    await env.call({ id: `c${i}`, name: 'exec', arguments: { sql, params } }, 'assistant', i);
  }
}

/** Everything a restore must bring back: rows with rowids and storage classes, and the write log. */
async function dump(env: Environment): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const t of env.runtime.tables) {
    const rowid = t.rowid === 'rowid' ? 'quote(rowid), ' : '';
    const cols = t.columns.map((c) => `quote("${c}")`).join(', ');
    out[t.name] = await env.query(
      `SELECT ${rowid}${cols} FROM "${t.name}" ORDER BY ${rowid ? 'rowid' : t.primaryKey.join(', ')}`,
    );
  }
  out.log = await env.query('SELECT seq, tbl, op, old, new, rid FROM _sb_write_log ORDER BY seq');
  out.writes = env.writes.map((w) => ({ ...w }));
  return out;
}

describe('snapshots kept as logged writes', () => {
  let runtime: DomainRuntime;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain(), await inProcessSqlDbFactory());
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('the fixture is replayable; a snapshot holds the log, not an image', async () => {
    expect(runtime.replayable).toBe(true);
    const env = await runtime.open();
    await env.call({ id: 'x', name: 'exec', arguments: { sql: 'DELETE FROM items WHERE id = ?', params: ['a'] } });
    const snap = await env.snapshot();
    expect(snap.image).toBeUndefined();
    expect(snap.log).toEqual([
      // The row image: its values in column order (id, qty, price, note).
      { tbl: 'items', op: 'delete', old: '["a",1,0.1,null]', new: null, rid: 1 },
    ]);
    await env.close();
  });

  for (const task of ['plain', 'seeded']) {
    it(`restores exactly into a fresh environment and into the same one (task ${task}, 40 random scripts)`, async () => {
      const t = runtime.domain.tasks.find((x) => x.id === task);
      for (let seed = 0; seed < 40; seed++) {
        const rng = seededRng(seed);
        const source = await runtime.open(t);
        await play(source, rng, 1 + rng.int(25));
        const snap = await source.snapshot();
        const saved = await dump(source);
        await play(source, rng, 1 + rng.int(10));

        const fresh = await runtime.open(t);
        await fresh.restore(snap);
        expect(await dump(fresh)).toEqual(saved);
        // The restored environment goes on like the original: the same next write, the same log.
        await play(fresh, seededRng(seed + 1000), 5);
        await source.restore(snap);
        expect(await dump(source)).toEqual(saved);
        await play(source, seededRng(seed + 1000), 5);
        expect(await dump(source)).toEqual(await dump(fresh));
        expect(await source.changes()).toEqual(await fresh.changes());
        await fresh.close();
        await source.close();
      }
      // Restored databases went back to the pool at the pristine state.
      const again = await runtime.open();
      expect(await again.query('SELECT count(*) AS n FROM _sb_write_log')).toEqual([{ n: 0 }]);
      expect(await again.query('SELECT id, qty FROM items ORDER BY id')).toEqual([
        { id: 'a', qty: 1 },
        { id: 'c', qty: 3 },
      ]);
      await again.close();
    });
  }

  it('refuses a snapshot taken after another initial state', async () => {
    const seeded = await runtime.open(runtime.domain.tasks.find((x) => x.id === 'seeded'));
    const snap = await seeded.snapshot();
    const plain = await runtime.open(runtime.domain.tasks.find((x) => x.id === 'plain'));
    await expect(plain.restore(snap)).rejects.toThrow('another initial state');
    await plain.close();
    await seeded.close();
  });

  it('a schema with a trigger of its own keeps file images, and they restore', async () => {
    const withTrigger = `${SCHEMA}\nCREATE TABLE audit (id INTEGER PRIMARY KEY, qty INTEGER);\nCREATE TRIGGER audit_items AFTER INSERT ON items BEGIN INSERT INTO audit (qty) VALUES (NEW.qty); END;`;
    const rt = await DomainRuntime.create(domain(withTrigger), await inProcessSqlDbFactory());
    try {
      expect(rt.replayable).toBe(false);
      const env = await rt.open();
      await play(env, seededRng(7), 20);
      const snap = await env.snapshot();
      expect(snap.image).toBeInstanceOf(Uint8Array);
      expect(snap.log).toBeUndefined();
      const saved = await dump(env);
      const other = await rt.open();
      await other.restore(snap);
      expect(await dump(other)).toEqual(saved);
      await other.close();
      await env.close();
    } finally {
      await rt.close();
    }
  });
});
