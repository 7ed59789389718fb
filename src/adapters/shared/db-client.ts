/**
 * Main-thread side of a database worker: {@link SqlDb}s whose calls go over comlink to a
 * {@link DbService}. Used by the Node adapter (`src/adapters/node/worker-db.ts`); free of
 * platform code, the platform supplies how it learns that the worker died and whether it wants
 * to know when calls are in flight.
 */
import type { Remote } from 'comlink';
import type { RunResult, SqlDb, SqlDbFactory, SqlParams, SqlRow } from '../../core/ports/sql-db.ts';
import type { BatchStatement, DbService } from './db-service.ts';

/** What a platform tells the client about its worker. */
export interface WorkerWatch {
  /**
   * Called with `true` when the first call starts and `false` when the last in-flight call ends
   * (Node uses it to keep the process alive only while the worker has work).
   */
  onBusy?(busy: boolean): void;
}

/**
 * A comlink connection to a {@link DbService}. Every call rejects, instead of hanging, once the
 * worker has failed ({@link DbServiceClient.fail}).
 */
export class DbServiceClient {
  /** Reject functions of the calls in flight (no listener piles up on a shared promise). */
  private readonly pending = new Set<(e: Error) => void>();
  private failure: Error | undefined;

  constructor(
    private readonly service: Remote<DbService>,
    private readonly watch: WorkerWatch = {},
  ) {}

  /**
   * Mark the worker as gone (crashed, failed to load, terminated). Pending and later calls
   * reject with `error`. Only the first failure counts.
   */
  fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    const pending = [...this.pending];
    this.pending.clear();
    for (const reject of pending) reject(error);
    if (pending.length > 0) this.watch.onBusy?.(false);
  }

  /** Run one request against the service; rejects with the worker's failure if it dies first. */
  call<T>(request: (service: Remote<DbService>) => Promise<T>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) this.watch.onBusy?.(true);
      this.pending.add(reject);
      const settle = (): boolean => {
        // False when fail() already rejected this call.
        if (!this.pending.delete(reject)) return false;
        if (this.pending.size === 0) this.watch.onBusy?.(false);
        return true;
      };
      let sent: Promise<T>;
      try {
        sent = request(this.service);
      } catch (e) {
        sent = Promise.reject(e);
      }
      sent.then(
        (value) => settle() && resolve(value),
        (error: unknown) => settle() && reject(error),
      );
    });
  }

  /** Wait until the worker has loaded sql.js. Rejects when it cannot (e.g. the wasm is missing). */
  ready(): Promise<void> {
    return this.call((s) => s.ready());
  }

  /** A {@link SqlDbFactory} whose databases live in the worker. */
  readonly factory: SqlDbFactory = async (image) => {
    const handle = await this.call((s) => s.open(image));
    return new RemoteSqlDb(this, handle);
  };
}

/** A factory of databases that live in one worker, plus a way to stop the worker. */
export type WorkerSqlDbFactory = SqlDbFactory & {
  /**
   * Stop the worker. Its databases are gone: pending and later calls on them, and later factory
   * calls, reject with `Error("database worker terminated")`. Safe to call twice.
   */
  terminate(): Promise<void>;
};

/** How {@link connectDbWorker} drives a platform's worker. */
export interface DbWorkerHandle extends WorkerWatch {
  /** Stop the thread (`Worker.terminate`). */
  stop(): unknown;
  /** Arrange for `fail` to be called when the worker dies or cannot load (error/exit events). */
  onFailure(fail: (error: Error) => void): void;
}

/**
 * Wrap a started database worker as a {@link WorkerSqlDbFactory}: waits until the worker has
 * loaded sql.js, and stops it if that fails.
 * @throws (rejects) with the worker's error when it cannot load.
 */
export async function connectDbWorker(service: Remote<DbService>, worker: DbWorkerHandle): Promise<WorkerSqlDbFactory> {
  const client = new DbServiceClient(service, worker);
  worker.onFailure((e) => client.fail(e));
  let stopped = false;
  const terminate = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    client.fail(new Error('database worker terminated'));
    await worker.stop();
  };
  try {
    await client.ready();
  } catch (e) {
    await terminate();
    throw e;
  }
  return Object.assign((image?: Uint8Array) => client.factory(image), { terminate });
}

/**
 * One database in a worker. File images passed in (`restore`, the factory's `image`) are copied
 * to the worker, so the caller may reuse them; images from `snapshot` are transferred back.
 * After {@link RemoteSqlDb.close} every call but `close` rejects with
 * `Error("database is closed")`.
 */
export class RemoteSqlDb implements SqlDb {
  private closed = false;

  constructor(
    private readonly client: DbServiceClient,
    /** The worker's handle of this database. */
    readonly handle: number,
  ) {}

  private call<T>(request: (service: Remote<DbService>, handle: number) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    return this.client.call((s) => request(s, this.handle));
  }

  exec(sql: string): Promise<void> {
    return this.call((s, h) => s.exec(h, sql));
  }

  run(sql: string, params?: SqlParams): Promise<RunResult> {
    return this.call((s, h) => s.run(h, sql, params));
  }

  all(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    return this.call((s, h) => s.all(h, sql, params));
  }

  batch(statements: readonly BatchStatement[]): Promise<SqlRow[][]> {
    return this.call((s, h) => s.batch(h, statements));
  }

  snapshot(): Promise<Uint8Array> {
    return this.call((s, h) => s.snapshot(h));
  }

  restore(image: Uint8Array): Promise<void> {
    return this.call((s, h) => s.restore(h, image));
  }

  /** Free the database in the worker; closing twice is a no-op. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.call((s) => s.close(this.handle));
  }
}
