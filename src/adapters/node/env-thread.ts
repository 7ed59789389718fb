/**
 * Body of the Node environment worker (`worker_threads`, started by {@link ./worker-env.ts}
 * through `ts-worker.mjs`): loads the domain named by its source, builds the runtime over
 * in-thread sql.js, and answers each request with the {@link EnvService}.
 */
import { DomainRuntime } from '../../core/env/environment.ts';
import { createEnvService, type EnvRequest } from '../shared/env-service.ts';
import { sqlJsFactory } from '../shared/sqljs-db.ts';
import { serveThreadJobs } from './thread-pool.ts';
import { loadEnvWorkerDomain, type EnvWorkerSource } from './worker-env.ts';

await serveThreadJobs(async (source: EnvWorkerSource) => {
  const runtime = await DomainRuntime.create(await loadEnvWorkerDomain(source), await sqlJsFactory());
  const serve = createEnvService(runtime);
  return (request: EnvRequest) => serve(request);
});
