/**
 * {@link SqlDb} over sql.js (SQLite compiled to WebAssembly), in the current thread. Used directly
 * in Node, inside `workers/db.worker.ts` in the browser and inside the Node worker adapter.
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

/** A synchronous sql.js database with a prepared-statement cache, wrapped as {@link SqlDb}. */
export class SqlJsDb implements SqlDb {
  private db: Database;
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly SQL: SqlJsStatic,
    image?: Uint8Array,
  ) {
    this.db = new SQL.Database(image);
  }

  private prepared(sql: string): Statement {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size >= CACHE_LIMIT) this.clearCache();
      st = this.db.prepare(sql);
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
      while (st.step()) rows.push(st.getAsObject() as SqlRow);
      return rows;
    } finally {
      st.reset();
    }
  }

  runSync(sql: string, params?: SqlParams): RunResult {
    const st = this.prepared(sql);
    try {
      if (params) st.bind(params as never);
      st.step();
    } finally {
      st.reset();
    }
    return { changes: this.db.getRowsModified() };
  }

  async exec(sql: string): Promise<void> {
    this.db.exec(sql);
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
    // sql.js's export() frees every prepared statement; drop our references first.
    this.statements.clear();
    return this.db.export();
  }

  async restore(image: Uint8Array): Promise<void> {
    this.clearCache();
    this.db.close();
    this.db = new this.SQL.Database(image);
  }

  async close(): Promise<void> {
    this.clearCache();
    this.db.close();
  }
}

/** A factory of in-thread sql.js databases. */
export async function sqlJsFactory(locateFile?: (file: string) => string): Promise<SqlDbFactory> {
  const SQL = await loadSqlJs(locateFile);
  return async (image) => new SqlJsDb(SQL, image);
}
