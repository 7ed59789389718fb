/**
 * The environment worker's mailbox transport (issue 15, item 2) at its edges: payloads larger
 * than the mailbox go over the message port and arrive whole; a thread that dies mid-call is an
 * InfrastructureError (a sandbox fault: the rollout is invalid), never a hang; closing the worker
 * mid-call stops even a tool that never returns.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EnvWorker, type RemoteEnvironment } from '../../src/adapters/node/worker-env.ts';
import { loadDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../src/core/env/environment.ts';
import { InfrastructureError } from '../../src/core/errors.ts';
import { expectSameReferenceCalls } from './worker-env-helpers.ts';

/** The fixture's folder (named through its domain.ts, which the worker imports). */
const FAULTY = dirname(fileURLToPath(new URL('../fixtures/faulty-env-domain/domain.ts', import.meta.url)));
const call = (name: string, args: Record<string, unknown> = {}) => ({ id: `c-${name}`, name, arguments: args });

/** Start a worker on the faulty domain and open its pay task. */
async function started(options: { mailboxBytes?: number; spinUs?: number } = {}) {
  const worker = await EnvWorker.start({ domain: FAULTY }, options);
  return { worker, env: await worker.open('pay-10') };
}

/** Run `body` with the pay task open in this thread (`local`) and in a worker (`env`); both closed after. */
async function sideBySide(
  body: (sides: { local: Environment; env: RemoteEnvironment; worker: EnvWorker }) => Promise<void>,
): Promise<void> {
  const domain = await loadDomain(FAULTY);
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const local = await runtime.open(domain.tasks[0]);
  const { worker, env } = await started();
  try {
    await body({ local, env, worker });
  } finally {
    await worker.close();
    await runtime.close();
  }
}

describe('environment worker, payloads larger than its mailbox', () => {
  it(
    'carries a 1 MB tool result and a 1 MB argument whole, as in-process',
    () =>
      sideBySide(async ({ local, env }) => {
        // 1 MB result from a short request (the reply goes over the port).
        const big = call('echo_big', { text: 'héllo ✓ ', size: 1_000_000 });
        const expected = await local.call(big);
        expect(expected.content.length).toBe(1_000_000 + '{"length":8,"body":""}'.length);
        expect(await env.call(big)).toStrictEqual(expected);
        // 1 MB argument (the request goes over the port), short result.
        const longText = 'x'.repeat(1_048_576);
        const echoed = await env.call(call('echo_big', { text: longText, size: 3 }));
        expect(echoed.content).toBe('{"length":1048576,"body":"xxx"}');
        // The mailbox is still in step: an ordinary call after both.
        const found = await env.call(call('find_account', { phone: '5550001' }));
        expect(found).toStrictEqual(await local.call(call('find_account', { phone: '5550001' })));
      }),
    60_000,
  );

  it(
    'carries ASCII, Latin-1, wider text and a lone surrogate exactly, in the mailbox and over the port',
    () =>
      sideBySide(async ({ local, env }) => {
        // Latin-1 text goes one byte a character, wider text as UTF-8; a lone surrogate in an
        // argument goes escaped in the call's JSON, one in a result as v8 bytes (UTF-8 has none).
        for (const text of ['plain', 'café ÿ ½', 'café ✓ 😀 ĀŁ', 'half \ud83d here', '\udc00'])
          for (const size of [7, 40_000, 200_000]) {
            const c = call('echo_big', { text, size });
            const got = await env.call(c);
            expect(got).toStrictEqual(await local.call(c));
            expect(JSON.parse(got.content).body).toBe(text.repeat(Math.ceil(size / text.length)).slice(0, size));
          }
      }),
    60_000,
  );

  it('with a 64-byte mailbox (every call and outcome goes over the port) answers are unchanged', async () => {
    const domain = await loadDomain(FAULTY);
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const worker = await EnvWorker.start({ domain: FAULTY }, { mailboxBytes: 64, spinUs: 0 });
    try {
      const { calls, writes } = await expectSameReferenceCalls(worker, runtime, domain.tasks);
      expect({ calls, writes }).toEqual({ calls: 2, writes: 4 });
    } finally {
      await worker.close();
      await runtime.close();
    }
  }, 60_000);
});

describe('environment worker, calls made while one is in flight', () => {
  it(
    'queues them and answers each as in-process, in order, one request per call',
    () =>
      sideBySide(async ({ local, env, worker }) => {
        // busy_ms 5 outlasts the caller's spin (100 µs) and block (2 ms): its reply is awaited and
        // the others queue behind it; an unknown tool and bad arguments are error outcomes, not rejections.
        const calls = [
          call('busy_ms', { ms: 5 }),
          call('find_account', { phone: '5550001' }),
          call('no_such_tool'),
          call('echo_big', { text: 'ab', size: 70_000 }),
          call('busy_ms', { ms: 'soon' }),
          call('find_account', { phone: '5550002' }),
          call('busy_ms', { ms: 0 }),
        ];
        const before = worker.requests;
        const answered: string[] = [];
        const remote = await Promise.all(
          calls.map((c) =>
            env.call(c).then((o) => {
              answered.push(c.name);
              return o;
            }),
          ),
        );
        expect(worker.requests).toBe(before + calls.length);
        expect(answered).toEqual(calls.map((c) => c.name));
        const expected = [];
        for (const c of calls) expected.push(await local.call(c));
        expect(expected.map((o) => o.error)).toEqual([false, false, true, false, true, false, false]);
        expect(remote).toStrictEqual(expected);
        expect(env.writes).toStrictEqual(local.writes);
      }),
    60_000,
  );
});

describe('environment worker, a thread that dies mid-call', () => {
  it('a tool ending the thread: the call rejects with an InfrastructureError, and so does every later one', async () => {
    const { worker, env } = await started();
    const pending = env.call(call('exit_thread'));
    await expect(pending).rejects.toThrow(InfrastructureError);
    await expect(pending).rejects.toThrow('environment worker exited with code 3');
    await expect(env.call(call('find_account', { phone: '5550001' }))).rejects.toThrow(
      'environment worker exited with code 3',
    );
    await expect(worker.open('pay-10')).rejects.toThrow(InfrastructureError);
    await worker.close();
  }, 60_000);

  it('an uncaught error mid-call: InfrastructureError naming it', async () => {
    const { worker, env } = await started();
    const pending = env.call(call('throw_later'));
    await expect(pending).rejects.toThrow(InfrastructureError);
    await expect(pending).rejects.toThrow('environment worker failed: boom from a timer');
    await worker.close();
  }, 60_000);

  it('a tool whose promise never settles: the idle thread ends and the call rejects', async () => {
    const { worker, env } = await started();
    const pending = env.call(call('never_answer'));
    await expect(pending).rejects.toThrow(InfrastructureError);
    await expect(pending).rejects.toThrow(/^environment worker exited with code \d+$/);
    await worker.close();
  }, 60_000);
});

describe('environment worker, closed by its caller', () => {
  it('close() mid-call stops a tool that never returns; the call and queued ones reject as closed', async () => {
    const { worker, env } = await started();
    const stuck = env.call(call('spin_forever')).catch((e: unknown) => e);
    const queued = env.call(call('find_account', { phone: '5550001' })).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await worker.close();
    for (const e of [await stuck, await queued]) {
      expect(e).toBeInstanceOf(Error);
      expect(e).not.toBeInstanceOf(InfrastructureError);
      expect((e as Error).message).toBe('environment worker is closed');
    }
    await expect(worker.open('pay-10')).rejects.toThrow('environment worker is closed');
    await worker.close();
  }, 60_000);
});

describe('environment worker, forgotten', () => {
  it('an idle worker never closed does not keep the process alive', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-env-worker-'));
    try {
      const script = join(dir, 'forget.mts');
      const module = new URL('../../src/adapters/node/worker-env.ts', import.meta.url).href;
      await writeFile(
        script,
        `import { EnvWorker } from ${JSON.stringify(module)};
const worker = await EnvWorker.start({ domain: ${JSON.stringify(FAULTY)} });
const env = await worker.open('pay-10');
console.log((await env.call({ id: 'c', name: 'find_account', arguments: { phone: '5550002' } })).content);
`,
      );
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        timeout: 60_000,
      });
      expect(stdout).toBe('{"account_id":"A2","name":"Bo","balance":5}\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
