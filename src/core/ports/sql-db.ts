/**
 * The database port. Every domain database — agent side and user side — lives behind this
 * interface, so the same environment code runs over sql.js in-process, in a Node
 * `worker_threads` Worker, or in a browser Web Worker (through comlink).
 *
 * All methods are async because the database may live in another thread.
 */

/** A value SQLite can bind or return. Booleans are stored as 0/1 by the tools themselves. */
export type SqlValue = string | number | null | Uint8Array;

/**
 * Positional (`?`, `?NNN`) or named (`:name`, `$name`, `@name`) parameters. Named keys carry
 * their prefix as written in the SQL (`{ ':id': 7 }`); a key the statement does not name is
 * ignored and an unbound parameter is NULL (SQLite's rules).
 */
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** One result row: column name → value. */
export type SqlRow = Record<string, SqlValue>;

/** Result of a statement that changes rows. */
export interface RunResult {
  /**
   * Rows changed by this statement (`sqlite3_changes`; rows changed by triggers do not count).
   * 0 for statements that change no rows (DDL, SAVEPOINT, SELECT).
   */
  changes: number;
}

/** Asynchronous SQL database port. */
export interface SqlDb {
  /** Run one or more statements without parameters (DDL, seed scripts). */
  exec(sql: string): Promise<void>;
  /** Run one parameterized statement that returns no rows. */
  run(sql: string, params?: SqlParams): Promise<RunResult>;
  /** Run one parameterized query and return every row. */
  all(sql: string, params?: SqlParams): Promise<SqlRow[]>;
  /**
   * Run a batch of parameterized statements in one round trip (one message to a worker).
   * Returns the rows of each statement in order (empty for statements that return none).
   */
  batch(statements: readonly { sql: string; params?: SqlParams }[]): Promise<SqlRow[][]>;
  /** Serialize the whole database (an SQLite file image). */
  snapshot(): Promise<Uint8Array>;
  /**
   * Replace the whole database with a file image from {@link SqlDb.snapshot}. The image is not
   * consumed (it may be restored again). Rejects, leaving the database as it was, when the image
   * is not an SQLite file.
   */
  restore(image: Uint8Array): Promise<void>;
  /** Free the database. Further calls reject with `Error("database is closed")`; a second `close` is a no-op. */
  close(): Promise<void>;
}

/**
 * A {@link SqlDb} in the caller's thread that can also answer synchronously (sql.js in-process).
 * `allSync` and `runSync` do what `all` and `run` do, returning (or throwing) at once: the
 * environment runs its own statements and hands its tools' rows through them without a promise
 * per layer (each awaited async layer cost ~0.2-0.3 µs per statement in sql.js).
 */
export interface SyncSqlDb extends SqlDb {
  allSync(sql: string, params?: SqlParams): SqlRow[];
  runSync(sql: string, params?: SqlParams): RunResult;
}

/** `db` as a {@link SyncSqlDb} when it has both synchronous methods, else undefined. */
export function syncSqlDb(db: SqlDb): SyncSqlDb | undefined {
  const maybe = db as Partial<SyncSqlDb>;
  return typeof maybe.allSync === 'function' && typeof maybe.runSync === 'function' ? (db as SyncSqlDb) : undefined;
}

/**
 * Opens a fresh database, optionally from a file image (copied: the caller keeps it). Rejects
 * when the image is not an SQLite file.
 */
export type SqlDbFactory = (image?: Uint8Array) => Promise<SqlDb>;
