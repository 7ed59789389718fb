/**
 * The environment worker (issue 15, item 2) on a built-in domain (no tau2 data needed): tool calls
 * answered as in-process in one round trip each, and start-up failures named.
 */
import { describe, expect, it } from 'vitest';
import { EnvWorker } from '../../src/adapters/node/worker-env.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { expectSameReferenceCalls } from './worker-env-helpers.ts';

describe('environment worker, carrier', () => {
  it('runs every reference action of the first tasks as in-process, one round trip per call', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const worker = await EnvWorker.start({ domain: 'carrier' });
    try {
      const { calls, writes } = await expectSameReferenceCalls(worker, runtime, domain.tasks.slice(0, 5));
      // 20 reference calls (one a caller's user tool), 41 column writes.
      expect({ calls, writes }).toEqual({ calls: 20, writes: 41 });
    } finally {
      await worker.close();
      await runtime.close();
    }
    await expect(worker.open(domain.tasks[0])).rejects.toThrow('environment worker is closed');
  }, 120_000);
});

describe('environment worker start', () => {
  it('rejects with the loader error when the domain cannot be loaded', async () => {
    await expect(EnvWorker.start({ domain: 'tau2-airline' })).rejects.toThrow(
      'tau2-airline: the environment worker needs its tau2-bench data folder',
    );
    await expect(EnvWorker.start({ domain: '/no/such/domain-folder' })).rejects.toThrow('no such domain folder');
  }, 60_000);
});
