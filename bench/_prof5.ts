import { fileURLToPath } from 'node:url';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain } from '../src/adapters/node/tau2-loader.ts';
const domain = await loadTau2Domain('tau2-airline', fileURLToPath(new URL(`../../shared/tau2/airline/`, import.meta.url)));
const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
const env = await runtime.open();
for (let i = 0; i < 5; i++) {
  let t0 = performance.now(); const a = await env.exportState(); const t1 = performance.now() - t0;
  const b = await env.exportState();
  t0 = performance.now(); const d = runtime.diff(a, b); const t2 = performance.now() - t0;
  console.log('export', t1.toFixed(1), 'diff', t2.toFixed(1), d.equal, Object.values(a).reduce((n, r) => n + r.length, 0));
}
