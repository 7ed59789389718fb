/**
 * The write log inside the sql.js build (native/write-log.c, vendor/sql.js): what it records, in
 * which form, and that it follows the transaction: a ROLLBACK, a ROLLBACK TO, a statement that
 * fails part-way, and an autocommit statement that fails each leave exactly the writes the
 * database kept.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inProcessSqlDbFactory } from '../../src/adapters/node/worker-db.ts';
import type { SqlDb } from '../../src/core/ports/sql-db.ts';
import {
  APPEND_WRITE_LOG,
  JOIN_WRITE_LOG,
  PAUSE_WRITE_LOG,
  WRITE_LOG_SINCE,
  parseLogText,
} from '../../src/core/env/write-log.ts';

const SCHEMA = `
PRAGMA foreign_keys = ON;
CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT, x REAL, n);
CREATE TABLE w (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id));
`;

const LOG = 'SELECT seq, tbl, op, old, new, rid FROM _sb_write_log ORDER BY seq';

let db: SqlDb;
beforeEach(async () => {
  db = await (await inProcessSqlDbFactory())();
  await db.exec(SCHEMA);
});
afterEach(async () => {
  await db.close();
});

describe('native write log', () => {
  it('records inserts, changed updates and deletes as json_array images, with rowids (none for WITHOUT ROWID)', async () => {
    await db.exec(`INSERT INTO p VALUES (1, 'a', 1.0, NULL); INSERT INTO w VALUES ('k', 2)`);
    await db.exec(`UPDATE p SET name = name, x = x WHERE id = 1`); // no change: not recorded
    await db.exec(`UPDATE p SET name = 'b' WHERE id = 1; DELETE FROM w`);
    expect(await db.all(LOG)).toEqual([
      { seq: 1, tbl: 'p', op: 'insert', old: null, new: '[1,"a",1.0,null]', rid: 1 },
      { seq: 2, tbl: 'w', op: 'insert', old: null, new: '["k",2]', rid: null },
      { seq: 3, tbl: 'p', op: 'update', old: '[1,"a",1.0,null]', new: '[1,"b",1.0,null]', rid: 1 },
      { seq: 4, tbl: 'w', op: 'delete', old: '["k",2]', new: null, rid: null },
    ]);
    expect(await db.all('SELECT seq FROM _sb_write_log WHERE seq > 2.5 ORDER BY seq')).toEqual([
      { seq: 3 },
      { seq: 4 },
    ]);
  });

  it('writes each image byte for byte as json_array does', async () => {
    const texts = [
      'say "hi"',
      'back\\slash',
      'tab\tnew\nline\r',
      '\u0001\u001f',
      "O'Brien",
      'émoji 🎉',
      'lone \ud800 half',
      '',
    ];
    const numbers = [0, -1, 0.1 + 0.2, 1e-300, 1e300, -2.5, 2 ** 53 + 2, 1 / 3, 5e-324];
    let id = 0;
    for (const t of texts) for (const x of numbers) await db.run('INSERT INTO p VALUES (?, ?, ?, ?)', [++id, t, x, x]);
    await db.exec(`INSERT INTO p VALUES (1000, 'big', 9223372036854775807, -9223372036854775808)`);
    const logged = await db.all(`SELECT new FROM _sb_write_log ORDER BY seq`);
    const json = await db.all('SELECT json_array(id, name, x, n) AS new FROM p ORDER BY id');
    expect(logged).toHaveLength(texts.length * numbers.length + 1);
    expect(logged).toEqual(json);
  });

  it('logs a 2 MB text (every other character escaped) whole, as json_array writes it', async () => {
    const big = 'a"\n\u0002é'.repeat(400_000);
    await db.run('INSERT INTO w VALUES (?, ?)', ['big', big]);
    const [logged] = await db.all('SELECT new FROM _sb_write_log');
    const [json] = await db.all(`SELECT json_array(k, v) AS new FROM w WHERE k = 'big'`);
    expect((logged!.new as string).length).toBe(4_800_010); // ["big","…"]: 12 characters a repeat
    expect(logged).toEqual(json);
    expect(JSON.parse(logged!.new as string)).toEqual(['big', big]);
  });

  it('records an INTEGER becoming the REAL nearest to it (SQLite tells them apart), not one written as it was', async () => {
    await db.exec(`INSERT INTO p VALUES (1, 'a', 2.0, 9223372036854775807)`);
    await db.exec(`UPDATE p SET n = 9223372036854775807, x = 2 WHERE id = 1`); // x: REAL column, 2 stays 2.0
    await db.exec(`UPDATE p SET n = 9.2233720368547758e18 WHERE id = 1`);
    expect(await db.all('SELECT op, old, new FROM _sb_write_log WHERE seq > 1')).toEqual([
      { op: 'update', old: '[1,"a",2.0,9223372036854775807]', new: '[1,"a",2.0,9.2233720368547758e+18]' },
    ]);
  });

  it('drops what ROLLBACK TO, a failed statement and ROLLBACK undo once joined to the transaction', async () => {
    await db.exec('BEGIN');
    await db.run(JOIN_WRITE_LOG);
    await db.exec(`INSERT INTO p VALUES (1, 'a', 0, 0), (2, 'b', 0, 0)`);
    await db.exec('SAVEPOINT s');
    await db.exec(`UPDATE p SET name = 'z'`);
    await db.exec('ROLLBACK TO s');
    await db.exec('RELEASE s');
    // The second row breaks the foreign key: the statement's first insert is undone too.
    await expect(db.exec('INSERT INTO c VALUES (1, 1), (2, 99)')).rejects.toThrow(/FOREIGN KEY/);
    await db.exec('INSERT INTO c VALUES (3, 2)');
    expect((await db.all(LOG)).map((r) => `${r.seq} ${r.tbl} ${r.op} ${r.new}`)).toEqual([
      '1 p insert [1,"a",0.0,0]',
      '2 p insert [2,"b",0.0,0]',
      '3 c insert [3,2]',
    ]);
    await db.exec('ROLLBACK');
    expect(await db.all('SELECT count(*) AS n FROM _sb_write_log')).toEqual([{ n: 0 }]);
  });

  it('keeps an autocommit statement with its writes, and drops one that fails', async () => {
    await db.exec(`INSERT INTO p VALUES (1, 'a', 0, 0)`);
    await expect(db.exec('INSERT INTO c VALUES (1, 1), (2, 99)')).rejects.toThrow(/FOREIGN KEY/);
    await expect(db.exec(`INSERT INTO p VALUES (2, 'b', 0, 0), (1, 'dup', 0, 0)`)).rejects.toThrow(/UNIQUE/);
    expect((await db.all(LOG)).map((r) => `${r.tbl} ${r.op}`)).toEqual(['p insert']);
  });

  it('records nothing while paused, appends entries given to it, and refuses changes to its rows', async () => {
    await db.exec(PAUSE_WRITE_LOG);
    await db.exec(`INSERT INTO p VALUES (1, 'a', 0, 0)`);
    expect(await db.all(LOG)).toEqual([]);
    await db.run(APPEND_WRITE_LOG, { ':tbl': 'p', ':op': 'insert', ':old': null, ':new': '[1,"a",0.0,0]', ':rid': 1 });
    expect(await db.all(LOG)).toEqual([{ seq: 1, tbl: 'p', op: 'insert', old: null, new: '[1,"a",0.0,0]', rid: 1 }]);
    await expect(db.run(`INSERT INTO _sb_write_log (seq, tbl, op) VALUES (5, 'p', 'insert')`)).rejects.toThrow(
      /next seq is 2/,
    );
    await expect(db.run(`INSERT INTO _sb_write_log (tbl, op) VALUES ('p', 'upsert')`)).rejects.toThrow(/an op of/);
    await expect(db.run('DELETE FROM _sb_write_log')).rejects.toThrow(/cannot be changed or deleted/);
    await expect(db.run(`UPDATE _sb_write_log SET tbl = 'x'`)).rejects.toThrow(/cannot be changed or deleted/);
    expect(await db.all('SELECT count(*) AS n FROM _sb_write_log')).toEqual([{ n: 1 }]);
  });

  it('keeps the NUL characters of text, read back and logged, as stock sql.js does', async () => {
    await db.run('INSERT INTO w VALUES (?, ?)', ['n', 'p\u0000q']);
    const [row] = await db.all(`SELECT v, hex(v) AS h FROM w WHERE k = 'n'`);
    expect(row).toEqual({ v: 'p\u0000q', h: '700071' });
    const [logged] = await db.all('SELECT new FROM _sb_write_log');
    expect(JSON.parse(logged!.new as string)).toEqual(['n', 'p\u0000q']);
  });

  it('keeps committed entries when ROLLBACK TO goes back to a savepoint opened before the join', async () => {
    await db.exec(`BEGIN; ${JOIN_WRITE_LOG}; SAVEPOINT a; INSERT INTO p VALUES (1, 'a', 0, 0); RELEASE a; COMMIT`);
    await db.exec(`INSERT INTO p VALUES (2, 'b', 0, 0)`);
    await db.exec(`BEGIN; SAVEPOINT x; SAVEPOINT y; ${JOIN_WRITE_LOG}; INSERT INTO p VALUES (3, 'c', 0, 0)`);
    await db.exec('ROLLBACK TO x');
    await db.exec('COMMIT');
    expect((await db.all(LOG)).map((r) => r.new)).toEqual(['[1,"a",0.0,0]', '[2,"b",0.0,0]']);
  });

  it('gives no row for seq > a text (text sorts after numbers), as an INTEGER column would', async () => {
    await db.exec(`INSERT INTO p VALUES (1, 'a', 0, 0)`);
    expect(await db.all(`SELECT seq FROM _sb_write_log WHERE seq > 'abc'`)).toEqual([]);
    expect(await db.all(`SELECT seq FROM _sb_write_log WHERE seq > NULL`)).toEqual([]);
  });

  it('records rid NULL for a table created again WITHOUT ROWID under the same name', async () => {
    await db.exec(`CREATE TABLE v (k PRIMARY KEY, x); INSERT INTO v VALUES ('a', 1); DROP TABLE v`);
    await db.exec(`CREATE TABLE v (k PRIMARY KEY, x) WITHOUT ROWID; INSERT INTO v VALUES ('b', 1)`);
    expect(await db.all(`SELECT new, rid FROM _sb_write_log WHERE tbl = 'v' ORDER BY seq`)).toEqual([
      { new: '["a",1]', rid: 1 },
      { new: '["b",1]', rid: null },
    ]);
  });

  it('reads again once the write it could not record (a BLOB) is rolled back', async () => {
    await db.exec(`BEGIN; ${JOIN_WRITE_LOG}; INSERT INTO p VALUES (1, 'a', 0, 0); SAVEPOINT s`);
    await db.exec(`INSERT INTO p VALUES (2, 'b', 0, x'00')`);
    await expect(db.all(LOG)).rejects.toThrow(/missed a write/);
    await db.exec('ROLLBACK TO s; RELEASE s; COMMIT');
    expect((await db.all(LOG)).map((r) => r.new)).toEqual(['[1,"a",0.0,0]']);
  });

  it('says so when a write it could not record (a BLOB, which JSON cannot hold) is read for, until undone', async () => {
    await db.exec(`INSERT INTO p VALUES (1, 'a', 0, x'00ff')`);
    await expect(db.all(LOG)).rejects.toThrow(/missed a write \(a BLOB value/);
  });

  it('gives the entries after a seq as one JSON text (_sb_write_log_since), the same as the table', async () => {
    await db.exec(`CREATE TABLE "q""t\ta" (id INTEGER PRIMARY KEY, s TEXT)`);
    await db.exec(`INSERT INTO p VALUES (1, 'a"b', 0.5, NULL); INSERT INTO w VALUES ('k', 'x')`);
    await db.exec(`INSERT INTO "q""t\ta" VALUES (7, 'line\n')`);
    await db.exec(`UPDATE p SET name = 'c' WHERE id = 1; DELETE FROM w`);
    const since = async (after: unknown) => (await db.all(WRITE_LOG_SINCE, [after as number]))[0]!.log as string;
    expect(await since(0)).toBe(
      '["p",null,[1,"a\\"b",0.5,null],"w",null,["k","x"],"q\\"t\\ta",null,[7,"line\\n"],' +
        '"p",[1,"a\\"b",0.5,null],[1,"c",0.5,null],"w",["k","x"],null]',
    );
    const rows = await db.all('SELECT seq, tbl, op, old, new FROM _sb_write_log ORDER BY seq');
    for (const after of [-3, 0, 2, 4, 5]) {
      const tail = rows.filter((r) => (r.seq as number) > after);
      expect(parseLogText(await since(after))).toEqual(
        tail.map((r) => ({
          tbl: r.tbl,
          op: r.op,
          before: r.old === null ? null : JSON.parse(r.old as string),
          after: r.new === null ? null : JSON.parse(r.new as string),
        })),
      );
    }
    expect(await since(99)).toBe('[]');
    await expect(since('abc')).rejects.toThrow(/takes an integer seq/);
    await expect(since(1.5)).rejects.toThrow(/takes an integer seq/);
    await db.exec(`INSERT INTO p VALUES (2, 'b', 0, x'00')`);
    await expect(since(0)).rejects.toThrow(/missed a write/);
  });

  it('gives the entries the transaction kept after a ROLLBACK TO, from any seq', async () => {
    await db.exec(`BEGIN; ${JOIN_WRITE_LOG}; INSERT INTO p VALUES (1, 'a', 0, 0); SAVEPOINT s`);
    await db.exec(`INSERT INTO p VALUES (2, 'b', 0, 0); INSERT INTO p VALUES (3, 'c', 0, 0)`);
    await db.exec('ROLLBACK TO s; RELEASE s');
    expect((await db.all(WRITE_LOG_SINCE, [0]))[0]!.log).toBe('["p",null,[1,"a",0.0,0]]');
    expect((await db.all(WRITE_LOG_SINCE, [1]))[0]!.log).toBe('[]');
    await db.exec('COMMIT');
  });
});
