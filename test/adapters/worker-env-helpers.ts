/**
 * Shared check of the environment-worker tests: each task's reference actions run in this
 * thread and in the worker must give strictly equal outcomes, writes and changes, at one request
 * to the worker per call.
 */
import { expect } from 'vitest';
import type { EnvWorker } from '../../src/adapters/node/worker-env.ts';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import type { Task } from '../../src/core/schema/task.ts';

/** Run every reference action of `tasks` both ways; returns the calls, column writes and failed calls. */
export async function expectSameReferenceCalls(
  worker: EnvWorker,
  runtime: DomainRuntime,
  tasks: readonly Task[],
): Promise<{ calls: number; writes: number; failed: number }> {
  const counts = { calls: 0, writes: 0, failed: 0 };
  for (const task of tasks) {
    const local = await runtime.open(task);
    const remote = await worker.open(task);
    for (const [i, a] of (task.evaluation_criteria?.actions ?? []).entries()) {
      const call = { id: `r${i}`, name: a.name, arguments: a.arguments };
      const expected = await local.call(call, a.requestor, i);
      const before = worker.requests;
      const got = await remote.call(call, a.requestor, i);
      expect(worker.requests).toBe(before + 1);
      expect(got).toStrictEqual(expected);
      counts.calls++;
      counts.writes += got.writes.length;
      if (got.error) counts.failed++;
    }
    expect(remote.writes).toStrictEqual(local.writes);
    expect(await remote.changes()).toStrictEqual(await local.changes());
    await local.close();
    await remote.close();
  }
  return counts;
}
