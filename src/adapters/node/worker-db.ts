/**
 * The {@link SqlDb} port in Node: in-process sql.js, or sql.js in a `worker_threads` Worker
 * reached through comlink.
 *
 * How the worker loads TypeScript: the Worker is started on `ts-worker.mjs` (plain JavaScript),
 * which registers tsx's ESM loader inside the new thread and then imports `db-thread.ts`. Module
 * hooks registered in the parent (by `bin/switchboard.mjs`, `tsx`, or vitest's own transform)
 * are not inherited by worker threads, so the worker registers its own; this works the same
 * under `node bin/switchboard.mjs`, `npx tsx` and vitest.
 */
import { Worker } from 'node:worker_threads';
import { wrap } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { SqlDbFactory } from '../../core/ports/sql-db.ts';
import { connectDbWorker, type WorkerSqlDbFactory } from '../shared/db-client.ts';
import type { DbService } from '../shared/db-service.ts';
import { sqlJsFactory } from '../shared/sqljs-db.ts';

export type { WorkerSqlDbFactory };

/**
 * Start a worker thread that holds sql.js databases and return a factory of {@link SqlDb}s served
 * from it over comlink.
 *
 * Every database opened by this factory lives in the same worker (addressed by a handle), so
 * the thread and the wasm module are started once; calls from all of them run one at a time in
 * that thread. For parallel work, create one factory per parallel lane.
 *
 * File images passed to the factory or to `restore` are copied to the worker (the caller may
 * reuse them); images from `snapshot` are transferred back without a copy.
 *
 * The worker keeps the process alive only while a call is in flight, so a forgotten
 * `terminate()` does not hang the CLI at exit; call it anyway to free the thread.
 *
 * If the worker exits or throws (a crash, or failing to load), every pending and later call
 * rejects with an Error naming the cause, instead of hanging.
 *
 * @throws (rejects) when the worker cannot start or cannot load sql.js.
 */
export function workerSqlDbFactory(): Promise<WorkerSqlDbFactory> {
  return connectNodeDbWorker(
    new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { entry: new URL('./db-thread.ts', import.meta.url).href },
    }),
  );
}

/**
 * Serve databases from an already started worker thread that exposes a {@link DbService} on its
 * `parentPort` (what `db-thread.ts` does). Exposed for tests of failure handling.
 */
export function connectNodeDbWorker(worker: Worker): Promise<WorkerSqlDbFactory> {
  worker.unref();
  return connectDbWorker(wrap<DbService>(nodeEndpoint(worker)), {
    stop: () => worker.terminate(),
    onBusy: (busy) => (busy ? worker.ref() : worker.unref()),
    onFailure(fail) {
      worker.on('error', (e) => fail(new Error(`database worker failed: ${e.message}`, { cause: e })));
      worker.on('messageerror', (e) => fail(new Error(`database worker message error: ${e.message}`)));
      worker.on('exit', (code) => fail(new Error(`database worker exited with code ${code}`)));
    },
  });
}

/** The in-process sql.js factory ({@link sqlJsFactory}): no thread, lowest latency. */
export function inProcessSqlDbFactory(): Promise<SqlDbFactory> {
  return sqlJsFactory();
}
