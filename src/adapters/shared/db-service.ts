/**
 * The object a database worker exposes through comlink: many sql.js databases in one thread,
 * addressed by integer handles. Served by `src/adapters/node/db-thread.ts` (Node
 * `worker_threads`; platform-free, so a browser Web Worker could serve it too); the main-thread side is
 * {@link ./db-client.ts}.
 */
import { transfer } from 'comlink';
import type { SqlJsStatic } from 'sql.js';
import type { RunResult, SqlParams, SqlRow } from '../../core/ports/sql-db.ts';
import { SqlJsDb } from './sqljs-db.ts';

/** One statement of {@link DbService.batch}. */
export interface BatchStatement {
  sql: string;
  params?: SqlParams;
}

/**
 * The database service of a worker. Every method but {@link DbService.ready} and
 * {@link DbService.open} takes the handle `open` returned and mirrors the same-named method of
 * the SqlDb port. Failures are `Error`s (SQLite's message unchanged); a handle that was closed or
 * never opened rejects with `Error("database <handle> is closed")`.
 */
export interface DbService {
  /** Load sql.js (the wasm module) in the worker; resolves when databases can be opened. */
  ready(): Promise<void>;
  /** Open a fresh database, or one from an SQLite file image (copied); returns its handle (≥ 1). */
  open(image?: Uint8Array): Promise<number>;
  exec(handle: number, sql: string): Promise<void>;
  run(handle: number, sql: string, params?: SqlParams): Promise<RunResult>;
  all(handle: number, sql: string, params?: SqlParams): Promise<SqlRow[]>;
  batch(handle: number, statements: readonly BatchStatement[]): Promise<SqlRow[][]>;
  /** The file image; its buffer is transferred to the caller, not copied. */
  snapshot(handle: number): Promise<Uint8Array>;
  restore(handle: number, image: Uint8Array): Promise<void>;
  /** Free the database and forget its handle. Closing an unknown handle is a no-op. */
  close(handle: number): Promise<void>;
}

/**
 * A Uint8Array that owns its whole ArrayBuffer, so the buffer can be transferred without
 * detaching bytes that belong to someone else.
 */
export function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const buf = bytes.buffer;
  if (buf instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buf.byteLength) {
    return bytes as Uint8Array<ArrayBuffer>;
  }
  return bytes.slice();
}

/**
 * Build the service over sql.js.
 * @param load resolves to the sql.js module (called once, on the first `ready` or `open`).
 */
export function createDbService(load: () => Promise<SqlJsStatic>): DbService {
  const dbs = new Map<number, SqlJsDb>();
  let next = 1;
  let sql: Promise<SqlJsStatic> | undefined;
  const module = (): Promise<SqlJsStatic> => (sql ??= load());
  const db = (handle: number): SqlJsDb => {
    const found = dbs.get(handle);
    if (!found) throw new Error(`database ${handle} is closed`);
    return found;
  };

  return {
    async ready() {
      await module();
    },
    async open(image) {
      const handle = next++;
      dbs.set(handle, new SqlJsDb(await module(), image));
      return handle;
    },
    exec: async (handle, text) => db(handle).exec(text),
    run: async (handle, text, params) => db(handle).runSync(text, params),
    all: async (handle, text, params) => db(handle).allSync(text, params),
    batch: async (handle, statements) => db(handle).batch(statements),
    async snapshot(handle) {
      const image = ownBuffer(await db(handle).snapshot());
      return transfer(image, [image.buffer]);
    },
    restore: async (handle, image) => db(handle).restore(image),
    async close(handle) {
      const found = dbs.get(handle);
      if (!found) return;
      dbs.delete(handle);
      await found.close();
    },
  };
}
