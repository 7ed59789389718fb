/**
 * Body of the Node database worker (`worker_threads`): exposes a {@link DbService} over sql.js
 * to the parent thread through comlink. Started by {@link ./worker-db.ts} through
 * `ts-worker.mjs`, which registers tsx so this TypeScript module can load.
 */
import { parentPort } from 'node:worker_threads';
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { createDbService } from '../shared/db-service.ts';
import { loadSqlJs } from '../shared/sqljs-db.ts';

if (!parentPort) throw new Error('db-thread.ts must run in a worker thread');
expose(
  createDbService(() => loadSqlJs()),
  nodeEndpoint(parentPort),
);
