/**
 * Conformance suite of the {@link SqlDb} port: every adapter (in-process sql.js, Node worker,
 * browser worker) must pass it unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlDb, SqlDbFactory } from '../../src/core/ports/sql-db.ts';

/** What the suite needs: a factory, and optionally a way to dispose of it after the suite. */
export type ConformanceFactory = SqlDbFactory & { terminate?(): Promise<void> };

const PEOPLE_DDL = `
  CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score REAL, note TEXT, photo BLOB);
  CREATE TABLE audit (n INTEGER PRIMARY KEY, what TEXT NOT NULL);
  CREATE TRIGGER people_ins AFTER INSERT ON people BEGIN INSERT INTO audit(what) VALUES ('+' || NEW.name); END;
`;

/** The SQLite file header every image starts with: "SQLite format 3\0". */
const SQLITE_HEADER = [83, 81, 76, 105, 116, 101, 32, 102, 111, 114, 109, 97, 116, 32, 51, 0];

/**
 * Register the conformance tests of one adapter.
 * @param name adapter name shown in the test report
 * @param makeFactory called once before the suite; `terminate` (if any) is called after it
 */
export function describeSqlDbConformance(name: string, makeFactory: () => Promise<ConformanceFactory>): void {
  describe(`SqlDb conformance: ${name}`, () => {
    let factory: ConformanceFactory;
    const open: SqlDb[] = [];
    /** A fresh database, closed after the suite. */
    const fresh = async (image?: Uint8Array): Promise<SqlDb> => {
      const db = await factory(image);
      open.push(db);
      return db;
    };
    /** A database with the people/audit schema and two rows. */
    const people = async (): Promise<SqlDb> => {
      const db = await fresh();
      await db.exec(PEOPLE_DDL);
      await db.run('INSERT INTO people (id, name, score) VALUES (?, ?, ?)', [1, 'Ann', 2.5]);
      await db.run('INSERT INTO people (id, name, score) VALUES (?, ?, ?)', [2, 'Bob', null]);
      return db;
    };

    beforeAll(async () => {
      factory = await makeFactory();
    });
    afterAll(async () => {
      for (const db of open) await db.close();
      await factory.terminate?.();
    });

    it('exec runs several DDL statements', async () => {
      const db = await fresh();
      await db.exec(PEOPLE_DDL);
      expect(await db.all(`SELECT type, name FROM sqlite_master ORDER BY name`)).toEqual([
        { type: 'table', name: 'audit' },
        { type: 'table', name: 'people' },
        { type: 'trigger', name: 'people_ins' },
        { type: 'index', name: 'sqlite_autoindex_people_1' },
      ]);
    });

    it('run binds positional and named parameters and reports changes', async () => {
      const db = await fresh();
      await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
      expect(await db.run('INSERT INTO t VALUES (?, ?)', [1, 'a'])).toEqual({ changes: 1 });
      expect(await db.run('INSERT INTO t VALUES (:id, :v)', { ':id': 2, ':v': 'b' })).toEqual({ changes: 1 });
      expect(await db.run('INSERT INTO t VALUES ($id, @v)', { $id: 3, '@v': 'c' })).toEqual({ changes: 1 });
      expect(await db.run('INSERT INTO t VALUES (?2, ?1)', ['d', 4])).toEqual({ changes: 1 });
      expect(await db.run(`UPDATE t SET v = v || '!' WHERE id >= ?`, [2])).toEqual({ changes: 3 });
      // Statements that change no rows report 0, not the previous write's count.
      expect(await db.run('CREATE TABLE u (x)')).toEqual({ changes: 0 });
      expect(await db.run(`UPDATE t SET v = v || '?' WHERE id >= ?`, [2])).toEqual({ changes: 3 });
      expect(await db.run('SELECT * FROM t')).toEqual({ changes: 0 });
      expect(await db.run(`UPDATE t SET v = v || '!' WHERE id >= ?`, [2])).toEqual({ changes: 3 });
      expect(await db.run('SAVEPOINT s')).toEqual({ changes: 0 });
      expect(await db.run('RELEASE s')).toEqual({ changes: 0 });
      expect(await db.run('UPDATE t SET v = ? WHERE id = ?', ['z', 99])).toEqual({ changes: 0 });
      expect(await db.run('DELETE FROM t WHERE id IN (?, ?)', [1, 2])).toEqual({ changes: 2 });
      expect(await db.all('SELECT id, v FROM t ORDER BY id')).toEqual([
        { id: 3, v: 'c!?!' },
        { id: 4, v: 'd!?!' },
      ]);
    });

    it('named keys need their prefix; unknown keys are ignored and unbound parameters are NULL', async () => {
      const db = await fresh();
      expect(await db.all('SELECT :a AS a, $b AS b', { ':a': 1, $b: 'x', ':zzz': 2 })).toEqual([{ a: 1, b: 'x' }]);
      expect(await db.all('SELECT :a AS a', { a: 1 })).toEqual([{ a: null }]);
      expect(await db.all('SELECT ? AS a, ? AS b', [1])).toEqual([{ a: 1, b: null }]);
    });

    it('changes does not count rows written by triggers', async () => {
      const db = await fresh();
      await db.exec(PEOPLE_DDL);
      expect(await db.run('INSERT INTO people (id, name) VALUES (?, ?), (?, ?)', [1, 'Ann', 2, 'Bob'])).toEqual({
        changes: 2,
      });
      expect(await db.all('SELECT count(*) AS n FROM audit')).toEqual([{ n: 2 }]);
    });

    it('a cached statement run again without parameters binds NULL, not the previous values', async () => {
      const db = await fresh();
      expect(await db.all('SELECT ? AS a', [7])).toEqual([{ a: 7 }]);
      expect(await db.all('SELECT ? AS a')).toEqual([{ a: null }]);
    });

    it('a statement that ran to its end holds nothing: savepoints, commit, DROP and rebinding after it', async () => {
      const db = await fresh();
      await db.exec('CREATE TABLE t (x); CREATE TABLE u (y); INSERT INTO u VALUES (1), (2)');
      await db.run('BEGIN');
      await db.run('SAVEPOINT a');
      expect(await db.all('SELECT y FROM u WHERE y > ? ORDER BY y', [0])).toEqual([{ y: 1 }, { y: 2 }]);
      await db.run('INSERT INTO t VALUES (?)', [5]);
      expect(await db.all('SELECT x FROM t')).toEqual([{ x: 5 }]);
      await db.batch([{ sql: 'ROLLBACK TO a' }, { sql: 'RELEASE a' }]);
      expect(await db.all('SELECT count(*) AS n FROM t')).toEqual([{ n: 0 }]);
      // The same INSERT through all, with and without parameters, and through run without: NULL.
      await db.all('INSERT INTO t VALUES (?)', [6]);
      await db.all('INSERT INTO t VALUES (?)');
      await db.run('INSERT INTO t VALUES (?)', [7]);
      await db.run('INSERT INTO t VALUES (?)');
      expect(await db.all('SELECT x FROM t ORDER BY rowid')).toEqual([{ x: 6 }, { x: null }, { x: 7 }, { x: null }]);
      await db.run('COMMIT');
      expect(await db.all('SELECT y FROM u WHERE y > ? ORDER BY y', [1])).toEqual([{ y: 2 }]);
      await db.exec('DROP TABLE u');
      await expect(db.all('SELECT y FROM u WHERE y > ? ORDER BY y', [0])).rejects.toThrow('no such table: u');
      // A statement stopped by a failure runs again with its new parameters.
      await db.exec('CREATE TABLE k (id INTEGER PRIMARY KEY)');
      await db.all('INSERT INTO k VALUES (?)', [1]);
      await expect(db.all('INSERT INTO k VALUES (?)', [1])).rejects.toThrow('UNIQUE constraint failed');
      await db.all('INSERT INTO k VALUES (?)', [2]);
      expect(await db.all('SELECT id FROM k ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    });

    it('all returns rows as objects with exact values and types', async () => {
      const db = await fresh();
      await db.exec('CREATE TABLE v (i INTEGER, r REAL, t TEXT, n TEXT, b BLOB)');
      await db.run('INSERT INTO v VALUES (?, ?, ?, ?, ?)', [42, 2.5, 'héllo ✓', null, new Uint8Array([0, 255, 7])]);
      await db.run('INSERT INTO v VALUES (?, ?, ?, ?, ?)', [-9007199254740991, -0.125, '', null, new Uint8Array([])]);
      const rows = await db.all('SELECT i, r, t, n, b FROM v ORDER BY i DESC');
      expect(rows).toEqual([
        { i: 42, r: 2.5, t: 'héllo ✓', n: null, b: new Uint8Array([0, 255, 7]) },
        { i: -9007199254740991, r: -0.125, t: '', n: null, b: new Uint8Array([]) },
      ]);
      expect(Object.keys(rows[0]!)).toEqual(['i', 'r', 't', 'n', 'b']);
      expect(rows[0]!.b).toBeInstanceOf(Uint8Array);
      expect(await db.all('SELECT 7 / 2 AS q, 7 / 2.0 AS f, typeof(3.0) AS ty, 3.0 AS three')).toEqual([
        { q: 3, f: 3.5, ty: 'real', three: 3 },
      ]);
      expect(await db.all('SELECT * FROM v WHERE i = ?', [0])).toEqual([]);
    });

    it('batch runs statements in order and returns the rows of each', async () => {
      const db = await fresh();
      const out = await db.batch([
        { sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)' },
        { sql: 'INSERT INTO t VALUES (?, ?)', params: [1, 'a'] },
        { sql: 'INSERT INTO t VALUES (:id, :v)', params: { ':id': 2, ':v': 'b' } },
        { sql: 'SELECT v FROM t ORDER BY id' },
        { sql: 'SELECT count(*) AS n FROM t WHERE id > ?', params: [1] },
      ]);
      expect(out).toEqual([[], [], [], [{ v: 'a' }, { v: 'b' }], [{ n: 1 }]]);
      expect(await db.batch([])).toEqual([]);
    });

    it('bad SQL rejects with SQLite message and the database stays usable', async () => {
      const db = await people();
      const syntax = await db.all('SELEC * FROM people').catch((e: unknown) => e);
      expect(syntax).toBeInstanceOf(Error);
      expect((syntax as Error).message).toContain('near "SELEC": syntax error');
      await expect(db.run('INSERT INTO nope VALUES (1)')).rejects.toThrow('no such table: nope');
      await expect(db.run('INSERT INTO people (id, name) VALUES (?, ?)', [3, 'Ann'])).rejects.toThrow(
        'UNIQUE constraint failed: people.name',
      );
      await expect(db.exec('CREATE TABLE people (x)')).rejects.toThrow('table people already exists');
      await expect(db.batch([{ sql: 'SELECT 1' }, { sql: 'SELECT nope FROM people' }])).rejects.toThrow(
        'no such column: nope',
      );
      const empty = await db.run('   ').catch((e: unknown) => e);
      expect(empty).toBeInstanceOf(Error);
      expect(await db.all('SELECT id, name FROM people ORDER BY id')).toEqual([
        { id: 1, name: 'Ann' },
        { id: 2, name: 'Bob' },
      ]);
      expect(await db.run('INSERT INTO people (id, name) VALUES (?, ?)', [3, 'Cy'])).toEqual({ changes: 1 });
    });

    it('snapshot, modify, restore returns the exact earlier rows', async () => {
      const db = await people();
      const before = await db.all('SELECT * FROM people ORDER BY id');
      const image = await db.snapshot();
      expect(image).toBeInstanceOf(Uint8Array);
      expect(Array.from(image.subarray(0, 16))).toEqual(SQLITE_HEADER);
      const size = image.byteLength;

      await db.run('UPDATE people SET score = ? WHERE id = ?', [9.75, 1]);
      await db.run('DELETE FROM people WHERE id = ?', [2]);
      await db.run('INSERT INTO people (id, name, photo) VALUES (?, ?, ?)', [5, 'Eve', new Uint8Array([1, 2])]);
      await db.exec('CREATE TABLE extra (x)');
      // The same statement text as before the snapshot (a cached statement) still works.
      expect(await db.all('SELECT * FROM people ORDER BY id')).toEqual([
        { id: 1, name: 'Ann', score: 9.75, note: null, photo: null },
        { id: 5, name: 'Eve', score: null, note: null, photo: new Uint8Array([1, 2]) },
      ]);

      await db.restore(image);
      expect(await db.all('SELECT * FROM people ORDER BY id')).toEqual(before);
      expect(before).toEqual([
        { id: 1, name: 'Ann', score: 2.5, note: null, photo: null },
        { id: 2, name: 'Bob', score: null, note: null, photo: null },
      ]);
      expect(await db.all(`SELECT name FROM sqlite_master WHERE name = 'extra'`)).toEqual([]);
      // The caller's image is not consumed: it can be restored again.
      expect(image.byteLength).toBe(size);
      await db.run('DELETE FROM people');
      await db.restore(image);
      expect(await db.all('SELECT * FROM people ORDER BY id')).toEqual(before);
    });

    it('a snapshot opened by a second factory call equals the source and is independent', async () => {
      const src = await people();
      const image = await src.snapshot();
      const copy = await fresh(image);
      const dump = (db: SqlDb) =>
        db.batch([
          { sql: 'SELECT * FROM people ORDER BY id' },
          { sql: 'SELECT * FROM audit ORDER BY n' },
          { sql: 'SELECT type, name, sql FROM sqlite_master ORDER BY name' },
        ]);
      expect(await dump(copy)).toEqual(await dump(src));
      expect((await dump(copy))[1]).toEqual([
        { n: 1, what: '+Ann' },
        { n: 2, what: '+Bob' },
      ]);
      await copy.run('DELETE FROM people WHERE id = ?', [1]);
      expect(await src.all('SELECT count(*) AS n FROM people')).toEqual([{ n: 2 }]);
      expect(await copy.all('SELECT count(*) AS n FROM people')).toEqual([{ n: 1 }]);
      // The copy's triggers came with the image.
      await copy.run('INSERT INTO people (id, name) VALUES (?, ?)', [7, 'Gus']);
      expect(await copy.all('SELECT what FROM audit ORDER BY n DESC LIMIT 1')).toEqual([{ what: '+Gus' }]);
    });

    it('a non-database image is refused by restore and by the factory', async () => {
      const db = await people();
      const garbage = new Uint8Array(4096).fill(7);
      await expect(db.restore(garbage)).rejects.toThrow('file is not a database');
      expect(await db.all('SELECT name FROM people ORDER BY id')).toEqual([{ name: 'Ann' }, { name: 'Bob' }]);
      await expect(factory(garbage)).rejects.toThrow('file is not a database');
    });

    it('triggers and savepoints work through the port', async () => {
      const db = await people();
      await db.run('SAVEPOINT outer_sp');
      await db.run('INSERT INTO people (id, name) VALUES (?, ?)', [3, 'Cy']);
      await db.run('SAVEPOINT inner_sp');
      await db.run('INSERT INTO people (id, name) VALUES (?, ?)', [4, 'Di']);
      await db.batch([{ sql: 'ROLLBACK TO inner_sp' }, { sql: 'RELEASE inner_sp' }]);
      await db.run('RELEASE outer_sp');
      expect(await db.all('SELECT name FROM people ORDER BY id')).toEqual([
        { name: 'Ann' },
        { name: 'Bob' },
        { name: 'Cy' },
      ]);
      expect(await db.all('SELECT n, what FROM audit ORDER BY n')).toEqual([
        { n: 1, what: '+Ann' },
        { n: 2, what: '+Bob' },
        { n: 3, what: '+Cy' },
      ]);
      await db.run('SAVEPOINT sp');
      await db.run('DELETE FROM people');
      await db.batch([{ sql: 'ROLLBACK TO sp' }, { sql: 'RELEASE sp' }]);
      expect(await db.all('SELECT count(*) AS n FROM people')).toEqual([{ n: 3 }]);
    });

    it('SELECT * of a statement run before follows schema changes and the rollbacks that undo them', async () => {
      const db = await fresh();
      await db.exec('CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, "x");');
      const star = () => db.all('SELECT * FROM t');
      expect(await star()).toEqual([{ a: 1, b: 'x' }]);
      // A transaction without DDL, as every episode database runs: the names stay right.
      await db.exec('BEGIN');
      expect(await star()).toEqual([{ a: 1, b: 'x' }]);
      await db.exec('ROLLBACK');
      expect(await star()).toEqual([{ a: 1, b: 'x' }]);
      // Same column count, other names: renamed, then the rename rolled back.
      await db.exec('BEGIN');
      await db.exec('ALTER TABLE t RENAME COLUMN b TO c');
      expect(await star()).toEqual([{ a: 1, c: 'x' }]);
      await db.exec('ROLLBACK');
      expect(await star()).toEqual([{ a: 1, b: 'x' }]);
      // Through statements: a rename inside a savepoint, undone by ROLLBACK TO.
      await db.run('SAVEPOINT sp');
      await db.run('ALTER TABLE t RENAME COLUMN a TO z');
      expect(await star()).toEqual([{ z: 1, b: 'x' }]);
      await db.batch([{ sql: 'ROLLBACK TO sp' }, { sql: 'RELEASE sp' }]);
      expect(await star()).toEqual([{ a: 1, b: 'x' }]);
    });

    it('every call after close rejects; closing twice is a no-op', async () => {
      const db = await factory();
      await db.exec('CREATE TABLE t (x)');
      const image = await db.snapshot();
      await db.close();
      const calls: [string, () => Promise<unknown>][] = [
        ['exec', () => db.exec('SELECT 1')],
        ['run', () => db.run('INSERT INTO t VALUES (1)')],
        ['all', () => db.all('SELECT 1')],
        ['batch', () => db.batch([{ sql: 'SELECT 1' }])],
        ['snapshot', () => db.snapshot()],
        ['restore', () => db.restore(image)],
      ];
      for (const [method, call] of calls) {
        const error = await call().then(
          () => new Error(`${method} resolved`),
          (e: unknown) => e,
        );
        expect(error, method).toBeInstanceOf(Error);
        expect((error as Error).message, method).toBe('database is closed');
      }
      await expect(db.close()).resolves.toBeUndefined();
      // Closing one database leaves the factory usable.
      const other = await fresh(image);
      expect(await other.all(`SELECT name FROM sqlite_master`)).toEqual([{ name: 't' }]);
    });
  });
}
