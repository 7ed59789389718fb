/**
 * Rollout worker: hosts the built-in domains ({@link DomainRuntime} over sql.js in this thread)
 * and runs calls and batches for the page through comlink (see
 * `src/adapters/browser/rollout-service.ts`; the page side is
 * `src/adapters/browser/rollout-client.ts`). The sql.js wasm is a bundled asset.
 */
import { expose } from 'comlink';
import wasmUrl from 'sql.js/dist/sql-wasm.wasm?url';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { createRolloutService } from '../src/adapters/browser/rollout-service.ts';

// sql.js's browser build asks for `sql-wasm-browser.wasm`, byte-identical to `sql-wasm.wasm`.
expose(createRolloutService(() => sqlJsFactory((file) => (file.endsWith('.wasm') ? wasmUrl : file))));
