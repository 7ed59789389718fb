/**
 * Browser database worker: sql.js databases served to the page through comlink (see
 * `src/adapters/shared/db-service.ts`). Started by `src/adapters/browser/worker-db.ts`.
 * The wasm binary is bundled by vite as an asset and located through its URL.
 */
import { expose } from 'comlink';
import wasmUrl from 'sql.js/dist/sql-wasm.wasm?url';
import { createDbService } from '../src/adapters/shared/db-service.ts';
import { loadSqlJs } from '../src/adapters/shared/sqljs-db.ts';

// sql.js's browser build asks for `sql-wasm-browser.wasm`; that file is byte-identical to
// `sql-wasm.wasm`, so every `.wasm` request gets the bundled asset.
expose(createDbService(() => loadSqlJs((file) => (file.endsWith('.wasm') ? wasmUrl : file))));
