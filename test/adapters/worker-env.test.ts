/**
 * The environment worker (issue 15, item 2): every tau2-airline and tau2-retail reference action
 * run whole in a worker thread gives exactly the outcome (content, error flag, writes, rule
 * violations, kind) it gives in this thread, in one round trip per call, and leaves the same
 * changes. Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvWorker } from '../../src/adapters/node/worker-env.ts';
import type { Tau2DomainName } from '../../src/adapters/node/tau2-loader.ts';
import { tau2DataDir, tau2Runtime } from '../domains/tau2-helpers.ts';
import { expectSameReferenceCalls } from './worker-env-helpers.ts';

const EXPECTED: Record<string, { calls: number; writes: number; failed: number }> = {
  'tau2-airline': { calls: 142, writes: 1361, failed: 0 },
  'tau2-retail': { calls: 550, writes: 1005, failed: 18 },
};

describe.each([
  ['tau2-airline', 'airline'],
  ['tau2-retail', 'retail'],
] as const)('environment worker, %s', (name: Tau2DomainName, part) => {
  let worker: EnvWorker;
  beforeAll(async () => {
    worker = await EnvWorker.start({ domain: name, data: tau2DataDir(part) });
  }, 120_000);
  afterAll(() => worker?.close());

  it('answers every reference action as in-process, one round trip per call', async () => {
    const { domain, runtime } = await tau2Runtime(name);
    const { calls, writes, failed } = await expectSameReferenceCalls(worker, runtime, domain.tasks);
    // The reference solutions as the loader builds them (tau2-reference-replay.test.ts checks
    // which of their calls fail).
    const actions = domain.tasks.reduce((n, t) => n + (t.evaluation_criteria?.actions?.length ?? 0), 0);
    expect(calls).toBe(actions);
    // Column writes and failing calls of all reference solutions (retail's 18 failures are the
    // golden ones of tau2-reference-failures.json).
    expect({ calls, writes, failed }).toEqual(EXPECTED[name]);
  }, 300_000);

  it('answers bad calls with the same error outcomes, and refuses unknown tasks and closed environments', async () => {
    const { domain, runtime } = await tau2Runtime(name);
    const task = domain.tasks[0]!;
    const local = await runtime.open(task);
    const remote = await worker.open(task.id);
    for (const call of [
      { id: 'x1', name: 'no_such_tool', arguments: {} },
      { id: 'x2', name: domain.tools[0]!.name, arguments: { not_an_argument: [1, 2] } },
    ]) {
      const expected = await local.call(call);
      expect(expected.error).toBe(true);
      expect(await remote.call(call)).toStrictEqual(expected);
    }
    await local.close();
    await remote.close();
    await remote.close();
    await expect(remote.call({ id: 'x3', name: 'think', arguments: { thought: 'x' } })).rejects.toThrow(
      'environment is closed',
    );
    await expect(worker.open('no-such-task')).rejects.toThrow(`${name} has no task no-such-task`);
    const requests = worker.requests;
    await expect(worker.request({ op: 'changes', env: remote.handle })).rejects.toThrow(
      `environment ${remote.handle} is not open`,
    );
    expect(worker.requests).toBe(requests + 1);
  });
});
