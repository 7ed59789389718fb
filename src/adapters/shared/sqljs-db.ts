/**
 * {@link SyncSqlDb} over sql.js (SQLite compiled to WebAssembly), in the current thread. Used directly
 * in Node, inside the page's rollout worker (`workers/rollout.worker.ts`) and inside the Node
 * worker adapter.
 */
import initSqlJs, { type Database, type SqlJsStatic, type Statement } from 'sql.js';
import type { SqlDbFactory, SqlParams, SqlRow, RunResult, SyncSqlDb } from '../../core/ports/sql-db.ts';

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

/** What this project's build of sql.js (vendor/sql.js, scripts/build-sqljs.sh) adds to the module. */
interface WriteLogBuild {
  /** Give a connection its write log (native/write-log.c); an SQLite result code, 0 for OK. */
  _sb_write_log_attach?: (db: number) => number;
}

/**
 * Give a connection the write log the environment reads (`_sb_write_log`, native/write-log.c).
 * @throws Error when the sql.js module is not this project's build (a stock sql.js has no log),
 *   or when SQLite refuses the log (out of memory).
 */
function attachWriteLog(SQL: SqlJsStatic, db: Database): void {
  const attach = (SQL as SqlJsStatic & WriteLogBuild)._sb_write_log_attach;
  if (!attach)
    throw new Error('sql.js without the write log: install the build in vendor/sql.js (package.json `sql.js`)');
  const rc = attach((db as unknown as { db: number }).db);
  if (rc !== 0) throw new Error(`the write log could not be attached (SQLite result code ${rc})`);
}

/**
 * Open a database from an image, with its write log, and check that it is one: SQLite reads the
 * file lazily, so a bad image would otherwise fail only at the first query.
 */
function openImage(SQL: SqlJsStatic, image?: Uint8Array): Database {
  const db = new SQL.Database(image);
  try {
    attachWriteLog(SQL, db);
  } catch (e) {
    db.close();
    throw e;
  }
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

/**
 * A statement kept in the cache, with what is known of it without asking SQLite again: its
 * result column names (read at its first row) and whether it is an INSERT, UPDATE, DELETE or
 * REPLACE (after which `sqlite3_changes` is this statement's own count).
 */
interface CachedStatement {
  st: Statement;
  names: string[] | undefined;
  dml: boolean;
  /** CREATE, DROP or ALTER: running it forgets every statement's column names. */
  ddl: boolean;
  /** ROLLBACK (of the transaction or to a savepoint): it may undo a schema change. */
  rollback: boolean;
  /**
   * The statement ran to its end (SQLITE_DONE) and was not reset: its bindings are still set
   * ({@link SqlJsDb.allSync}). The next run with parameters resets it as it binds them; one
   * without parameters resets it first.
   */
  done: boolean;
}

/** A statement that starts with INSERT, UPDATE, DELETE or REPLACE (leading blanks and comments aside). */
const DML = /^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*(?:insert|update|delete|replace)\b/i;
/** A statement that starts with CREATE, DROP or ALTER (leading blanks and comments aside). */
const DDL = /^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*(?:create|drop|alter)\b/i;
/** A statement that starts with ROLLBACK (leading blanks and comments aside). */
const ROLLBACK = /^(?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*rollback\b/i;
/**
 * Text that may hold a CREATE, DROP or ALTER anywhere (a script of several statements; a match
 * inside a string or comment only costs re-reading column names).
 */
const DDL_ANYWHERE = /\b(?:create|drop|alter)\b/i;
/** Text that may hold a ROLLBACK anywhere. */
const ROLLBACK_ANYWHERE = /\brollback\b/i;

/** A synchronous sql.js database with a prepared-statement cache, wrapped as {@link SyncSqlDb}. */
export class SqlJsDb implements SyncSqlDb {
  private db: Database;
  private readonly statements = new Map<string, CachedStatement>();
  private closed = false;
  /**
   * True once a schema change (CREATE, DROP, ALTER) ran on this connection: from then on a
   * ROLLBACK, which may undo it, also forgets the column names read. Episode databases never
   * change their schema, so their BEGIN/ROLLBACK keep the names (re-reading them costs ~0.4 µs
   * per column of every statement at its next run).
   */
  private schemaChanged = false;

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

  private prepared(sql: string): CachedStatement {
    this.open();
    let entry = this.statements.get(sql);
    if (!entry) {
      if (this.statements.size >= CACHE_LIMIT) this.clearCache();
      let st: Statement;
      try {
        st = this.db.prepare(sql);
      } catch (e) {
        throw asError(e);
      }
      entry = {
        st,
        names: undefined,
        dml: DML.test(sql),
        ddl: DDL.test(sql),
        rollback: ROLLBACK.test(sql),
        done: false,
      };
      this.statements.set(sql, entry);
    }
    return entry;
  }

  private clearCache(): void {
    for (const { st } of this.statements.values()) st.free();
    this.statements.clear();
  }

  /**
   * Forget the column names read so far: a schema change (DDL through {@link exec} or
   * {@link runSync}, or a ROLLBACK that may undo one) may change what `SELECT *` of a cached
   * statement returns.
   */
  private forgetNames(): void {
    for (const entry of this.statements.values()) entry.names = undefined;
  }

  /** After `entry` ran: forget the column names when it may have changed the schema. */
  private afterStatement(entry: CachedStatement): void {
    if (entry.ddl) this.schemaChanged = true;
    if (entry.ddl || (entry.rollback && this.schemaChanged)) this.forgetNames();
  }

  /**
   * Synchronous query, used by the async methods and the worker adapters.
   *
   * A statement that ran to its end is not reset here (sql.js's reset is two calls into SQLite,
   * clearing the bindings and resetting, plus freeing the bound texts): SQLite has already halted
   * it (it holds no cursor and no open statement, so a RELEASE or ROLLBACK after it is not
   * refused), its next step starts it again, and its next run resets it ({@link
   * CachedStatement.done}). A statement that failed or stopped at a row is reset at once.
   */
  allSync(sql: string, params?: SqlParams): SqlRow[] {
    const entry = this.prepared(sql);
    const st = entry.st;
    let finished = false;
    try {
      if (params) st.bind(params as never);
      else if (entry.done) st.reset();
      entry.done = false;
      const rows: SqlRow[] = [];
      let names = entry.names;
      while (st.step()) {
        const values = st.get();
        // getAsObject() re-reads the column names on every row; read them once per statement
        // (again when the column count changed: the schema changed under the statement).
        if (names?.length !== values.length) names = entry.names = st.getColumnNames();
        const row: SqlRow = {};
        for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlRow[string];
        rows.push(row);
      }
      finished = true;
      return rows;
    } finally {
      if (finished) entry.done = true;
      else st.reset();
      this.afterStatement(entry);
    }
  }

  /**
   * Synchronous statement. `changes` is `sqlite3_changes` when the statement changed rows and 0
   * otherwise: after an INSERT, UPDATE, DELETE or REPLACE `sqlite3_changes` is its own count (0
   * included); after anything else (DDL, SAVEPOINT, SELECT) SQLite leaves it at the last write's
   * count, so `total_changes()` before and after tells whether this statement changed anything.
   */
  runSync(sql: string, params?: SqlParams): RunResult {
    const entry = this.prepared(sql);
    const before = entry.dml ? 0 : this.totalChanges();
    const st = entry.st;
    try {
      if (params) st.bind(params as never);
      else if (entry.done) st.reset();
      entry.done = false;
      st.step();
    } finally {
      st.reset();
      this.afterStatement(entry);
    }
    if (entry.dml) return { changes: this.db.getRowsModified() };
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
    } finally {
      if (DDL_ANYWHERE.test(sql)) this.schemaChanged = true;
      if (this.schemaChanged && (DDL_ANYWHERE.test(sql) || ROLLBACK_ANYWHERE.test(sql))) this.forgetNames();
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
