/**
 * A call's column writes as the write log expands them: exact entries (seq, key, column, before,
 * after) for an insert, an update of some columns, a delete and a two-row statement; the entries
 * of one logged row share one key object (rowImages then groups them by identity) and gives the
 * same images as for writes whose keys are separate copies; tools are found by name for their
 * actor; an agent tool writing a caller-side table is a domain bug (thrown), a caller tool writing
 * it is not. A log row read without its op gives the op its images tell (as read with it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { rowImages } from '../../../src/core/env/write-images.ts';
import { expandLogRow, parseLogText, type TableInfo } from '../../../src/core/env/write-log.ts';
import { buildDomain, defineDomain, defineTool } from '../../../src/core/schema/domain.ts';
import type { WriteEntry } from '../../../src/core/schema/trajectory.ts';
import { execTool } from './exec-tool.ts';

const PAIRS: TableInfo = { name: 'pairs', columns: ['a', 'b', 'v', 'w'], primaryKey: ['a', 'b'], rowid: 'rowid' };
const META = { turn: 2, actor: 'assistant' as const, tool: 't' };

describe('expandLogRow', () => {
  it('gives every column of an insert and the changed columns of an update, numbered, one key object per row', () => {
    const out: WriteEntry[] = [];
    expect(
      expandLogRow({ tbl: 'pairs', op: 'insert', before: null, after: ['x', 1, 2.5, null] }, PAIRS, META, 7, out),
    ).toBe(4);
    expect(
      expandLogRow(
        { tbl: 'pairs', op: 'update', before: ['x', 1, 2.5, null], after: ['x', 1, 3, 'w'] },
        PAIRS,
        META,
        11,
        out,
      ),
    ).toBe(2);
    const base = { turn: 2, actor: 'assistant', tool: 't', table: 'pairs' };
    expect(out).toEqual([
      { ...base, seq: 7, op: 'insert', key: { a: 'x', b: 1 }, column: 'a', before: null, after: 'x' },
      { ...base, seq: 8, op: 'insert', key: { a: 'x', b: 1 }, column: 'b', before: null, after: 1 },
      { ...base, seq: 9, op: 'insert', key: { a: 'x', b: 1 }, column: 'v', before: null, after: 2.5 },
      { ...base, seq: 10, op: 'insert', key: { a: 'x', b: 1 }, column: 'w', before: null, after: null },
      { ...base, seq: 11, op: 'update', key: { a: 'x', b: 1 }, column: 'v', before: 2.5, after: 3 },
      { ...base, seq: 12, op: 'update', key: { a: 'x', b: 1 }, column: 'w', before: null, after: 'w' },
    ]);
    expect(Object.keys(out[0]!.key)).toEqual(['a', 'b']);
    for (const w of out.slice(1, 4)) expect(w.key).toBe(out[0]!.key);
    expect(out[5]!.key).toBe(out[4]!.key);
    expect(out[4]!.key).not.toBe(out[0]!.key);
  });

  it('gives rowImages the same images as writes whose keys are separate copies', () => {
    const out: WriteEntry[] = [];
    expandLogRow({ tbl: 'pairs', op: 'insert', before: null, after: ['x', 1, 2.5, null] }, PAIRS, META, 1, out);
    expandLogRow({ tbl: 'pairs', op: 'insert', before: null, after: ['y', 1, 4, 'q'] }, PAIRS, META, 5, out);
    expandLogRow(
      { tbl: 'pairs', op: 'update', before: ['x', 1, 2.5, null], after: ['x', 1, 9, null] },
      PAIRS,
      META,
      9,
      out,
    );
    const copies = out.map((w) => ({ ...w, key: { ...w.key } }));
    const inserted = [
      { a: 'x', b: 1, v: 2.5, w: null },
      { a: 'y', b: 1, v: 4, w: 'q' },
    ];
    expect(rowImages(out, 'pairs', 'insert')).toEqual(inserted);
    expect(rowImages(copies, 'pairs', 'insert')).toEqual(inserted);
    expect(rowImages(out, 'pairs', 'update')).toEqual([{ v: 9 }]);
    expect(rowImages(copies, 'pairs', 'update', 'before')).toEqual([{ v: 2.5 }]);
    expect(rowImages(out, 'pairs', 'update', 'before')).toEqual([{ v: 2.5 }]);
  });
});

/** rowImages by its definition: rows grouped by their key's JSON in first-write order, first `before`, last `after`. */
function imagesByDefinition(
  writes: readonly WriteEntry[],
  table: string,
  op: WriteEntry['op'],
  side: 'before' | 'after',
): Record<string, unknown>[] {
  const rows = new Map<string, Record<string, unknown>>();
  for (const w of writes.filter((x) => x.table === table && x.op === op)) {
    const k = JSON.stringify(w.key);
    if (!rows.has(k)) rows.set(k, {});
    const row = rows.get(k)!;
    if (side === 'after') row[w.column] = w.after;
    else if (!(w.column in row)) row[w.column] = w.before;
  }
  return [...rows.values()];
}

describe('rowImages', () => {
  it('merges the entries of equal keys, shared or copied objects, in first-write order, as by definition', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const keys = [
      { a: 'x', b: 1 },
      { a: 'x', b: 2 },
      { a: 'y', b: 1 },
      { b: 1, a: 'x' },
    ];
    let checked = 0;
    for (let trial = 0; trial < 400; trial++) {
      const writes: WriteEntry[] = [];
      const n = 1 + rand(12);
      for (let i = 0; i < n; i++) {
        const shared = keys[rand(keys.length)]!;
        writes.push({
          seq: i + 1,
          turn: 0,
          actor: 'assistant',
          tool: 't',
          table: rand(4) === 0 ? 'other' : 'pairs',
          op: (['insert', 'update', 'delete'] as const)[rand(3)]!,
          key: rand(2) ? shared : { ...shared },
          column: ['a', 'b', 'v', 'w'][rand(4)]!,
          before: rand(5),
          after: rand(3) ? rand(5) : null,
        });
      }
      for (const op of ['insert', 'update', 'delete'] as const)
        for (const side of ['before', 'after'] as const) {
          expect(rowImages(writes, 'pairs', op, side)).toEqual(imagesByDefinition(writes, 'pairs', op, side));
          checked++;
        }
    }
    expect(checked).toBe(2400);
    // A row, another, the first again (a copy of its key): two images, the first row's written twice.
    const w = (key: WriteEntry['key'], column: string, after: number): WriteEntry => ({
      seq: 1,
      turn: 0,
      actor: 'assistant',
      tool: 't',
      table: 'pairs',
      op: 'update',
      key,
      column,
      before: 0,
      after,
    });
    const k1 = { a: 'x', b: 1 };
    const k2 = { a: 'x', b: 2 };
    expect(rowImages([w(k1, 'v', 1), w(k2, 'v', 2), w({ ...k1 }, 'w', 3), w(k1, 'v', 4)], 'pairs', 'update')).toEqual([
      { v: 4, w: 3 },
      { v: 2 },
    ]);
    expect(rowImages([], 'pairs', 'update')).toEqual([]);
  });
});

const putSide = defineTool({
  name: 'put_side',
  kind: 'write',
  description: 'Write the caller-side table (test fixture).',
  params: z.object({ k: z.string() }),
  async run({ db }, { k }) {
    await db.run('INSERT INTO side (k, n) VALUES (?, 1)', [k]);
    return 'ok';
  },
});

/** What `db.one` gave a tool: each read's row (or `none`), and how a failing statement failed. */
const seen: unknown[] = [];

const peek = defineTool({
  name: 'peek',
  kind: 'read',
  description: 'Read through db.one (test fixture).',
  params: z.object({}),
  async run({ db }) {
    seen.push(await db.one('SELECT a, b, v FROM pairs ORDER BY b'));
    seen.push((await db.one('SELECT a FROM pairs WHERE b = ?', [99])) ?? 'none');
    let failure: Promise<unknown>;
    try {
      failure = db.one('SELECT nope FROM pairs');
    } catch {
      seen.push('thrown at once');
      return 'x';
    }
    seen.push(
      await failure.then(
        () => 'resolved',
        (e: Error) => `rejected: ${e.message}`,
      ),
    );
    return 'x';
  },
});

const domain = buildDomain(
  defineDomain({
    name: 'write-entries',
    language: 'en-US',
    roles: ['inbound'],
    now: 0,
    tools: [execTool, putSide, peek],
    userTools: [{ ...putSide, name: 'user_put_side' }],
    tables: { side: { userSide: true } },
    greeting: 'hi',
  }),
  {
    policy: '# Policy\n',
    schema: `CREATE TABLE pairs (a TEXT NOT NULL, b INTEGER NOT NULL, v, w, PRIMARY KEY (a, b));
      CREATE TABLE side (k TEXT PRIMARY KEY, n INTEGER);`,
    seed: JSON.stringify({ pairs: [{ a: 'x', b: 1, v: 2.5, w: null }] }),
    tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'x' } }]),
  },
);

describe("a call's writes", () => {
  let runtime: DomainRuntime;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('are the exact column writes of a two-row insert, an update and a delete, one key object per row', async () => {
    const env = await runtime.open();
    try {
      const sql = "INSERT INTO pairs (a, b, v, w) VALUES ('p', 1, 1, 'one'), ('p', 2, 2, 'two')";
      const ins = await env.call({ id: 'c1', name: 'exec', arguments: { sql, params: [] } }, 'assistant', 0);
      expect(ins.content).toBe('{"changed":2}');
      expect(ins.writes.map((w) => [w.seq, w.op, w.key, w.column, w.before, w.after])).toEqual([
        [1, 'insert', { a: 'p', b: 1 }, 'a', null, 'p'],
        [2, 'insert', { a: 'p', b: 1 }, 'b', null, 1],
        [3, 'insert', { a: 'p', b: 1 }, 'v', null, 1],
        [4, 'insert', { a: 'p', b: 1 }, 'w', null, 'one'],
        [5, 'insert', { a: 'p', b: 2 }, 'a', null, 'p'],
        [6, 'insert', { a: 'p', b: 2 }, 'b', null, 2],
        [7, 'insert', { a: 'p', b: 2 }, 'v', null, 2],
        [8, 'insert', { a: 'p', b: 2 }, 'w', null, 'two'],
      ]);
      expect(ins.writes[3]!.key).toBe(ins.writes[0]!.key);
      expect(ins.writes[4]!.key).not.toBe(ins.writes[0]!.key);
      const upd = await env.call(
        {
          id: 'c2',
          name: 'exec',
          arguments: { sql: "UPDATE pairs SET v = v * 10, w = 'w' WHERE a = ?", params: ['x'] },
        },
        'assistant',
        1,
      );
      expect(upd.writes.map((w) => [w.seq, w.turn, w.op, w.key, w.column, w.before, w.after])).toEqual([
        [9, 1, 'update', { a: 'x', b: 1 }, 'v', 2.5, 25],
        [10, 1, 'update', { a: 'x', b: 1 }, 'w', null, 'w'],
      ]);
      const del = await env.call(
        { id: 'c3', name: 'exec', arguments: { sql: 'DELETE FROM pairs WHERE a = ? AND b = ?', params: ['p', 2] } },
        'assistant',
        2,
      );
      expect(del.writes.map((w) => [w.seq, w.op, w.key, w.column, w.before, w.after])).toEqual([
        [11, 'delete', { a: 'p', b: 2 }, 'a', 'p', null],
        [12, 'delete', { a: 'p', b: 2 }, 'b', 2, null],
        [13, 'delete', { a: 'p', b: 2 }, 'v', 2, null],
        [14, 'delete', { a: 'p', b: 2 }, 'w', 'two', null],
      ]);
      expect(env.writes.map((w) => w.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    } finally {
      await env.close();
    }
  });

  it("gives a tool's db.one the first row, undefined for none, and a rejection for a failing statement", async () => {
    const env = await runtime.open();
    try {
      seen.length = 0;
      await env.call({
        id: 'p1',
        name: 'exec',
        arguments: { sql: "INSERT INTO pairs VALUES ('y', 0, 7, NULL)", params: [] },
      });
      expect((await env.call({ id: 'p2', name: 'peek', arguments: {} })).content).toBe('x');
      expect(seen).toEqual([{ a: 'y', b: 0, v: 7 }, 'none', 'rejected: no such column: nope']);
    } finally {
      await env.close();
    }
  });

  it('finds tools by name for their actor; an agent write of a caller-side table throws, a caller write does not', async () => {
    const env = await runtime.open();
    try {
      const other = await env.call({ id: 'u0', name: 'user_put_side', arguments: { k: 'a' } }, 'assistant');
      expect(other.content).toBe('Error: tool user_put_side is not available to the agent');
      const unknown = await env.call({ id: 'u1', name: 'nope', arguments: {} }, 'user');
      expect(unknown.content).toBe('Error: unknown tool nope');
      const mine = await env.call({ id: 'u2', name: 'user_put_side', arguments: { k: 'a' } }, 'user');
      expect([mine.content, mine.error, mine.writes.map((w) => [w.table, w.column, w.after])]).toEqual([
        'ok',
        false,
        [
          ['side', 'k', 'a'],
          ['side', 'n', 1],
        ],
      ]);
      await expect(env.call({ id: 'a1', name: 'put_side', arguments: { k: 'b' } }, 'assistant')).rejects.toThrow(
        'agent tool put_side wrote the caller-side table side: a bug in the domain',
      );
      const ok = await env.call({ id: 'a2', name: 'exec', arguments: { sql: 'DELETE FROM pairs', params: [] } });
      expect(ok.writes.map((w) => w.column)).toEqual(['a', 'b', 'v', 'w']);
    } finally {
      await env.close();
    }
  });
});

describe('parseLogText', () => {
  it("tells a log row's op from its images: an insert has no old, a delete no new, an update both", () => {
    const text =
      '["pairs",null,[1,"x",null,2.5],"pairs",[1,"x",null,2.5],[1,"x","v",2.5],"pairs",[1,"x","v",2.5],null]';
    expect(parseLogText(text)).toEqual([
      { tbl: 'pairs', op: 'insert', before: null, after: [1, 'x', null, 2.5] },
      { tbl: 'pairs', op: 'update', before: [1, 'x', null, 2.5], after: [1, 'x', 'v', 2.5] },
      { tbl: 'pairs', op: 'delete', before: [1, 'x', 'v', 2.5], after: null },
    ]);
    expect(parseLogText('[]')).toEqual([]);
    expect(() => parseLogText('["pairs",null,[1,')).toThrow(SyntaxError);
  });
});
