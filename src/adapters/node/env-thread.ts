/**
 * Body of the Node environment worker (`worker_threads`, started by {@link ./worker-env.ts}
 * through `ts-worker.mjs`): loads the domain named by its source, builds the runtime over
 * in-thread sql.js, tells the parent it is ready (or why it cannot start), and then answers each
 * request posted to its mailbox (`mailbox.ts`, encoded by `env-wire.ts`) with the {@link EnvService}.
 *
 * Tracing this thread: `console.log` and `process.stderr.write` show only their first write once
 * it serves (a worker's stdio write completes through the thread's event loop, which does not run
 * while it spins and blocks in `Atomics.wait`; the later writes wait behind the first);
 * `fs.writeSync(2, …)` writes at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DomainRuntime, type ToolOutcome } from '../../core/env/environment.ts';
import { createEnvService, type EnvService } from '../shared/env-service.ts';
import { sqlJsFactory } from '../shared/sqljs-db.ts';
import { decodeRequest, encodeOutcome, encodeValue } from './env-wire.ts';
import { FreeCoreWatch } from './cpu-time.ts';
import { serveMailbox } from './mailbox.ts';
import { loadEnvWorkerDomain, type EnvThreadData } from './worker-env.ts';

const { source, mailbox, spinUs, spinWhileFree } = (workerData as { data: EnvThreadData }).data;
let serve: EnvService | undefined;
try {
  serve = createEnvService(await DomainRuntime.create(await loadEnvWorkerDomain(source), await sqlJsFactory()));
} catch (e) {
  // The thread then ends on its own (nothing keeps it alive); the parent rejects its start.
  parentPort!.postMessage({ ready: false, error: e instanceof Error ? e.message : String(e) });
}
if (serve) {
  const service = serve;
  const watch = new FreeCoreWatch();
  parentPort!.postMessage({ ready: true });
  await serveMailbox(
    mailbox,
    async (payload) => {
      const request = decodeRequest(payload);
      const reply = await service(request);
      return request.op === 'call' ? encodeOutcome(reply as ToolOutcome) : encodeValue(reply);
    },
    spinUs,
    spinWhileFree ? () => watch.free() : undefined,
  );
}
