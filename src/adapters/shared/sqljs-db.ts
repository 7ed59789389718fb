/**
 * {@link SqlDb} over sql.js (SQLite compiled to WebAssembly), in the current thread. Used directly
 * in Node, inside the page's rollout worker (`workers/rollout.worker.ts`) and inside the Node
 * worker adapter.
 */
import initSqlJs, { type Database, type SqlJsStatic, type Statement } from 'sql.js';
import type { SqlDb, SqlDbFactory, SqlParams, SqlRow, RunResult } from '../../core/ports/sql-db.ts';

let sqlJs: Promise<SqlJsStatic> | undefined;

/**
 * Load the sql.js module once per thread.
 * @param locateFile maps `sql-wasm.wasm` to a URL or path (the browser passes the bundled asset URL).
 */
export function loadSqlJs(locateFile?: (file: string) => string): Promise<SqlJsStatic> {
  sqlJs ??= initSqlJs(locateFile ? { locateFile } : undefined);
  return sqlJs;
}

/** Statement cache size per database; domains use a few dozen distinct statements. */
const CACHE_LIMIT = 256;

/**
 * sql.js throws a few plain strings ("Database closed", "Nothing to prepare") where SQLite errors
 * are `Error`s; make every failure an `Error` so it keeps its message across comlink.
 */
function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/**
 * Open a database from an image and check that it is one: SQLite reads the file lazily, so a
 * bad image would otherwise fail only at the first query.
 */
function openImage(SQL: SqlJsStatic, image?: Uint8Array): Database {
  const db = new SQL.Database(image);
  if (image) {
    try {
      db.exec('PRAGMA schema_version');
    } catch (e) {
      db.close();
      throw asError(e);
    }
  }
  return db;
}

/** A synchronous sql.js database with a prepared-statement cache, wrapped as {@link SqlDb}. */
export class SqlJsDb implements SqlDb {
  private db: Database;
  private readonly statements = new Map<string, Statement>();
  private closed = false;

  /**
   * @param image an SQLite file image to open (copied); a fresh empty database when absent.
   * @throws Error "file is not a database" when `image` is not an SQLite file.
   */
  constructor(
    private readonly SQL: SqlJsStatic,
    image?: Uint8Array,
  ) {
    this.db = openImage(SQL, image);
  }

  private open(): Database {
    if (this.closed) throw new Error('database is closed');
    return this.db;
  }

  private prepared(sql: string): Statement {
    this.open();
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size >= CACHE_LIMIT) this.clearCache();
      try {
        st = this.db.prepare(sql);
      } catch (e) {
        throw asError(e);
      }
      this.statements.set(sql, st);
    }
    return st;
  }

  private clearCache(): void {
    for (const st of this.statements.values()) st.free();
    this.statements.clear();
  }

  /** Synchronous query, used by the async methods and the worker adapters. */
  allSync(sql: string, params?: SqlParams): SqlRow[] {
    const st = this.prepared(sql);
    try {
      if (params) st.bind(params as never);
      const rows: SqlRow[] = [];
      let names: string[] | undefined;
      while (st.step()) {
        // getAsObject() re-reads the column names on every row; read them once per query.
        names ??= st.getColumnNames();
        const values = st.get();
        const row: SqlRow = {};
        for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlRow[string];
        rows.push(row);
      }
      return rows;
    } finally {
      st.reset();
    }
  }

  /**
   * Synchronous statement. `changes` is `sqlite3_changes` when the statement changed rows and 0
   * otherwise (SQLite leaves `sqlite3_changes` at the last INSERT/UPDATE/DELETE's count after DDL,
   * SAVEPOINT or SELECT; `total_changes()` tells whether this statement changed anything).
   */
  runSync(sql: string, params?: SqlParams): RunResult {
    const before = this.totalChanges();
    const st = this.prepared(sql);
    try {
      if (params) st.bind(params as never);
      st.step();
    } finally {
      st.reset();
    }
    return { changes: this.totalChanges() === before ? 0 : this.db.getRowsModified() };
  }

  private totalChanges(): number {
    return this.allSync('SELECT total_changes() AS n')[0]!.n as number;
  }

  async exec(sql: string): Promise<void> {
    try {
      this.open().exec(sql);
    } catch (e) {
      throw asError(e);
    }
  }

  async run(sql: string, params?: SqlParams): Promise<RunResult> {
    return this.runSync(sql, params);
  }

  async all(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    return this.allSync(sql, params);
  }

  async batch(statements: readonly { sql: string; params?: SqlParams }[]): Promise<SqlRow[][]> {
    return statements.map((s) => this.allSync(s.sql, s.params));
  }

  async snapshot(): Promise<Uint8Array> {
    // sql.js 1.17's export() keeps the connection open and its prepared statements valid, so the
    // statement cache stays (older sql.js closed and reopened the connection, freeing them).
    try {
      return this.open().export();
    } catch (e) {
      throw asError(e);
    }
  }

  async restore(image: Uint8Array): Promise<void> {
    this.open();
    // Open the new image first: if it is not a database, this one stays as it was.
    const next = openImage(this.SQL, image);
    this.clearCache();
    this.db.close();
    this.db = next;
  }

  /** Free the database; closing twice is a no-op. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearCache();
    this.db.close();
  }
}

/** A factory of in-thread sql.js databases. */
export async function sqlJsFactory(locateFile?: (file: string) => string): Promise<SqlDbFactory> {
  const SQL = await loadSqlJs(locateFile);
  return async (image) => new SqlJsDb(SQL, image);
}
