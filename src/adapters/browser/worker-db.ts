/**
 * The {@link SqlDb} port in the browser: sql.js in a module Web Worker (`workers/db.worker.ts`),
 * reached through comlink. Same client as the Node worker adapter
 * (`src/adapters/shared/db-client.ts`).
 */
import { wrap } from 'comlink';
import { connectDbWorker, type WorkerSqlDbFactory } from '../shared/db-client.ts';
import type { DbService } from '../shared/db-service.ts';

export type { WorkerSqlDbFactory };

/**
 * Start a database Web Worker and return a factory of {@link SqlDb}s served from it.
 *
 * All databases of one factory live in that worker (addressed by handles) and their calls run
 * one at a time there. Images given to the factory or to `restore` are copied into the worker;
 * `snapshot` images are transferred back without a copy. If the worker fails (cannot load, or
 * throws), every pending and later call rejects with an Error instead of hanging.
 *
 * @throws (rejects) when the worker or the sql.js wasm cannot be loaded.
 */
export function workerSqlDbFactory(): Promise<WorkerSqlDbFactory> {
  const worker = new Worker(new URL('../../../workers/db.worker.ts', import.meta.url), {
    type: 'module',
    name: 'switchboard-db',
  });
  return connectDbWorker(wrap<DbService>(worker), {
    stop: () => worker.terminate(),
    onFailure(fail) {
      worker.addEventListener('error', (e) =>
        fail(new Error(`database worker failed: ${e.message || 'the worker script could not be loaded'}`)),
      );
      worker.addEventListener('messageerror', () => fail(new Error('database worker message could not be read')));
    },
  });
}
