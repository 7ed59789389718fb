/**
 * The write log's captured writes over random write sequences: every call's outcome (its
 * column writes with their keys and values), the episode's {@link Environment.changes}, its
 * snapshot log, and a restore of that snapshot on a fresh environment (its changes, writes and
 * exported state). NULLs, reals, integers past 2^53, text with quotes, backslashes, control
 * characters, non-BMP and lone surrogates; rowid and composite keys, WITHOUT ROWID, untyped
 * columns; REPLACEs, key changes, no-op updates, multi-row statements and refused statements.
 *
 * Two hashes of it:
 * - exact: this capture (native/write-log.c), so any change to what it records shows;
 * - against the JSON-image triggers of 6669501 (the capture until session 16, with stock sql.js
 *   1.17): the same text up to the order of the rows one statement writes. With an AFTER trigger,
 *   SQLite collected an UPDATE's or DELETE's rowids first and wrote them in rowid order; without
 *   one it writes them in the order its plan finds them, which the log now records. So each call's
 *   writes are compared as a set (without `seq`), a snapshot log as a multiset, and objects with
 *   their keys sorted.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { seededRng, type Rng } from '../../../src/core/ports/rng.ts';
import type { SqlValue } from '../../../src/core/ports/sql-db.ts';
import { buildDomain, defineDomain, type Domain } from '../../../src/core/schema/domain.ts';
import { execTool } from './exec-tool.ts';

const SCHEMA = `
CREATE TABLE a (id INTEGER PRIMARY KEY, n INTEGER, r REAL, t TEXT, u);
CREATE TABLE b (k TEXT PRIMARY KEY, x REAL NOT NULL, y TEXT);
CREATE TABLE c (p INTEGER NOT NULL, q TEXT NOT NULL, z, PRIMARY KEY (p, q));
CREATE TABLE w (k TEXT PRIMARY KEY, v, s TEXT) WITHOUT ROWID;
`;
const SEED = JSON.stringify({
  a: [
    { id: 1, n: 5, r: 0.5, t: 'one', u: null },
    { id: 2, n: null, r: null, t: "O'Brien", u: 7 },
  ],
  b: [{ k: 'x', x: 1.25, y: null }],
  c: [{ p: 1, q: 'a', z: 'zz' }],
  w: [{ k: 'p', v: 1.5, s: 'é' }],
});
const TASKS = JSON.stringify([
  { id: 'plain', user_scenario: { instructions: 'x' } },
  { id: 'seeded', user_scenario: { instructions: 'x' }, initial_state: { rows: { b: [{ k: 'y', x: 2, y: 'set' }] } } },
]);

function domain(): Domain {
  return buildDomain(
    defineDomain({
      name: 'write-log-eq',
      language: 'en-US',
      roles: ['inbound'],
      now: 0,
      tools: [execTool],
      greeting: 'hi',
    }),
    { policy: '- **R1** x', schema: SCHEMA, seed: SEED, tasks: TASKS },
  );
}

const TEXTS = [
  "O'Brien",
  'say "hi"',
  'back\\slash',
  'tab\tnew\nline',
  '\u0001ctl',
  'émoji 🎉',
  'lone \ud800 half',
  '',
  'plain',
];
const NUMS: SqlValue[] = [null, 0, -1, 3, 0.1 + 0.2, 1e-300, -2.5, 1e20, 2 ** 31, 123456789.125];
/** Integer literals SQLite keeps exactly (beyond 2^53 too), written into the SQL text. */
const BIG = ['9007199254740993', '-9223372036854775808', '9223372036854775807', '4503599627370497'];

function op(rng: Rng): [string, SqlValue[]] {
  const any = (): SqlValue => (rng.int(2) ? rng.pick(TEXTS) : rng.pick(NUMS));
  const id = () => 1 + rng.int(6);
  switch (rng.int(16)) {
    case 0:
      return [
        'INSERT INTO a (id, n, r, t, u) VALUES (?, ?, ?, ?, ?)',
        [id(), rng.pick(NUMS), rng.pick(NUMS), rng.pick(TEXTS), any()],
      ];
    case 1:
      return [
        `INSERT OR REPLACE INTO a (id, n, r, t, u) VALUES (?, ${rng.pick(BIG)}, ?, ?, ?)`,
        [id(), rng.pick(NUMS), rng.pick(TEXTS), any()],
      ];
    case 2:
      return ['UPDATE a SET n = coalesce(n, 0) + 1, t = ? WHERE id = ?', [rng.pick(TEXTS), id()]];
    case 3:
      return ['UPDATE a SET id = ? WHERE id = ?', [id(), id()]];
    case 4:
      return ['UPDATE a SET u = u, t = t WHERE id <= ?', [id()]];
    case 5:
      return ['DELETE FROM a WHERE id = ?', [id()]];
    case 6:
      return [`UPDATE a SET u = ${rng.pick(BIG)}, r = ? WHERE id >= ?`, [rng.pick(NUMS), id()]];
    case 7:
      return [
        'INSERT OR REPLACE INTO b (k, x, y) VALUES (?, ?, ?)',
        [rng.pick(['x', 'y', 'z', "q'"]), rng.pick(NUMS), any()],
      ];
    case 8:
      return ['UPDATE OR REPLACE b SET k = ? WHERE k = ?', [rng.pick(['x', 'y', 'z']), rng.pick(['x', 'y', 'z'])]];
    case 9:
      return ['DELETE FROM b WHERE x > ?', [rng.pick([0, 1, 100])]];
    case 10:
      return ['INSERT OR REPLACE INTO c (p, q, z) VALUES (?, ?, ?)', [rng.int(3), rng.pick(['a', 'b', '🎉']), any()]];
    case 11:
      return ['UPDATE c SET z = ? WHERE p = ?', [any(), rng.int(3)]];
    case 12:
      return [
        'INSERT OR REPLACE INTO w (k, v, s) VALUES (?, ?, ?)',
        [rng.pick(['p', 'q', 'r']), any(), rng.pick(TEXTS)],
      ];
    case 13:
      return ['DELETE FROM w WHERE k = ?', [rng.pick(['p', 'q'])]];
    case 14:
      // Refused by the schema: the call fails and is rolled back.
      return ['INSERT INTO b (k, x) VALUES (?, NULL)', [rng.pick(['n1', 'n2'])]];
    default:
      return ['UPDATE w SET v = ?, s = ? WHERE k = ?', [any(), rng.pick(TEXTS), rng.pick(['p', 'q', 'r'])]];
  }
}

async function play(env: Environment, rng: Rng, n: number, out: unknown[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const [sql, params] = op(rng);
    const r = await env.call({ id: `c${i}`, name: 'exec', arguments: { sql, params } }, 'assistant', i);
    out.push({ sql, params, content: r.content, error: r.error, writes: r.writes });
  }
}

/** Everything the capture gives, for `seeds` random episodes, as one canonical JSON text. */
async function captured(runtime: DomainRuntime, seeds: number): Promise<string> {
  const out: unknown[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const task = runtime.domain.tasks[seed % 2]!;
    const rng = seededRng(seed);
    const env = await runtime.open(task);
    await play(env, rng, 30, out);
    const snap = await env.snapshot();
    out.push({ changes: await env.changes(), writes: env.writes, log: snap.log });
    await play(env, rng, 10, out);
    out.push({ changes: await env.changes() });
    await env.close();
    const again = await runtime.open(task);
    await again.restore(snap);
    out.push({ restored: await again.changes(), writes: again.writes, state: await again.exportState() });
    await play(again, rng, 10, out);
    out.push({ changes: await again.changes(), state: await again.exportState() });
    await again.close();
  }
  return JSON.stringify(out);
}

/** `out` of {@link captured} without what depends on the order of one statement's rows. */
function orderFree(value: unknown, field = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((v) => orderFree(v));
    if (field === 'writes' || field === 'log') {
      const text = items.map((v) => JSON.stringify(v));
      // A call's writes and a log are sets of rows here; the writes of many calls stay in call order.
      const byTurn = (v: unknown) => (v as { turn?: number }).turn ?? 0;
      return items
        .map((v, i) => ({ v, t: text[i]!, turn: field === 'writes' ? byTurn(v) : 0 }))
        .sort((a, b) => a.turn - b.turn || (a.t < b.t ? -1 : a.t > b.t ? 1 : 0))
        .map((x) => x.v);
    }
    return items;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      if (k === 'seq') continue;
      out[k] = orderFree((value as Record<string, unknown>)[k], k);
    }
    return out;
  }
  return value;
}

describe('write log capture: exact, and equal to the JSON-image triggers of 6669501 up to row order within a statement', () => {
  it('gives the same writes, changes, snapshot logs and restores over 40 random episodes', async () => {
    const runtime = await DomainRuntime.create(domain(), await inProcessSqlDbFactory());
    try {
      const text = await captured(runtime, 40);
      if (process.env.SB_EQ_DUMP) (await import('node:fs')).writeFileSync(process.env.SB_EQ_DUMP, text);
      const sha = (t: string) => createHash('sha256').update(t).digest('hex');
      expect(sha(text)).toBe(
        process.env.SB_EQ_HASH ?? 'f1acbecd8b38911b302582c757a40c947f92d62247edde63b316638ae63b0904',
      );
      expect(sha(JSON.stringify(orderFree(JSON.parse(text))))).toBe(
        process.env.SB_EQ_SET_HASH ?? 'ad5734040d3df24bddfa428a0527f03540928f66032b3b2c43c83eeddc6b1b98',
      );
    } finally {
      await runtime.close();
    }
  }, 60_000);
});
