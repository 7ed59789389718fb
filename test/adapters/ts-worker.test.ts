/**
 * ts-worker.mjs, the entry of every worker thread whose body may be TypeScript (rollout threads,
 * the database and environment workers): a prebuilt JavaScript entry (`run`'s rollout threads
 * from bin/prebuilt.mjs) starts without importing tsx at all (issue 15 item 5: importing it cost
 * ~100 ms of each rollout thread's start, under load), and is marked as prebuilt; any other
 * entry still gets tsx's loader.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

const tsWorker = new URL('../../src/adapters/node/ts-worker.mjs', import.meta.url);
/** Resolve hooks that refuse tsx, registered in the thread before ts-worker.mjs runs. */
const noTsx = new URL('../fixtures/threads/no-tsx-hooks.mjs', import.meta.url).href;
const refuseTsx = `data:text/javascript,import { register } from 'node:module'; register(${JSON.stringify(noTsx)});`;

/** The first message of a thread on ts-worker.mjs with `entry` (its error's message if it fails first). */
function firstMessage(entry: URL): Promise<unknown> {
  const worker = new Worker(tsWorker, { workerData: { entry: entry.href }, execArgv: ['--import', refuseTsx] });
  return new Promise<unknown>((resolve) => {
    worker.once('message', resolve);
    worker.once('error', (e) => resolve(`failed: ${e.message}`));
  }).finally(() => worker.terminate());
}

describe('ts-worker.mjs', () => {
  it('a .js entry starts where tsx cannot be imported, marked as prebuilt; another entry imports tsx', async () => {
    const js = new URL('../fixtures/threads/js-entry.js', import.meta.url);
    expect(await firstMessage(js)).toEqual({ up: true, prebuilt: js.href });
    // The same module under a name that is not the prebuilt .js loads tsx, as a .ts entry does.
    const other = new URL('../fixtures/threads/js-entry.mjs', import.meta.url);
    expect(await firstMessage(other)).toBe('failed: tsx imported: tsx/esm/api');
  }, 30_000);
});
