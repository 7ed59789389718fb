// Entry of a Node worker thread whose body is TypeScript. Loader hooks registered in the parent
// thread with tsx's `register()` (bin/switchboard.mjs) or by vitest's transform do not apply
// inside a `new Worker` (only --import/--loader flags in execArgv carry over), so this plain
// JavaScript file registers tsx in the new thread and then imports the module named by
// `workerData.entry` (a file: URL).
import { workerData } from 'node:worker_threads';

// A prebuilt JavaScript entry (bin/prebuilt.mjs) needs no loader, nor tsx's module (importing it
// cost ~40-100 ms of each rollout thread's start); marked as in bin/switchboard.mjs, so that a
// domain folder's domain.ts still gets one (src/adapters/node/ts-imports.ts).
if (workerData.entry.endsWith('.js')) globalThis[Symbol.for('switchboard.prebuilt')] = workerData.entry;
else (await import('tsx/esm/api')).register();
await import(workerData.entry);
