import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { connectNodeDbWorker, inProcessSqlDbFactory, workerSqlDbFactory } from '../../src/adapters/node/worker-db.ts';
import type { Remote } from 'comlink';
import { DbServiceClient } from '../../src/adapters/shared/db-client.ts';
import { ownBuffer, type DbService } from '../../src/adapters/shared/db-service.ts';
import { describeSqlDbConformance } from './sql-db-conformance.ts';

describeSqlDbConformance('in-process sql.js', inProcessSqlDbFactory);
describeSqlDbConformance('Node worker_threads', workerSqlDbFactory);

describe('Node worker adapter', () => {
  it('keeps databases of one factory apart', async () => {
    const factory = await workerSqlDbFactory();
    try {
      const a = await factory();
      const b = await factory();
      await a.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1);');
      await b.exec('CREATE TABLE t (x); INSERT INTO t VALUES (2), (3);');
      expect(await a.all('SELECT x FROM t ORDER BY x')).toEqual([{ x: 1 }]);
      expect(await b.all('SELECT x FROM t ORDER BY x')).toEqual([{ x: 2 }, { x: 3 }]);
      await a.close();
      expect(await b.all('SELECT count(*) AS n FROM t')).toEqual([{ n: 2 }]);
    } finally {
      await factory.terminate();
    }
  });

  it('snapshot images arrive as whole, owned buffers', async () => {
    const factory = await workerSqlDbFactory();
    try {
      const db = await factory();
      await db.exec('CREATE TABLE t (x)');
      const image = await db.snapshot();
      expect(image.byteOffset).toBe(0);
      expect(image.byteLength).toBe(image.buffer.byteLength);
      expect(image.byteLength % 512).toBe(0);
    } finally {
      await factory.terminate();
    }
  });

  it('rejects pending and later calls after terminate, instead of hanging', async () => {
    const factory = await workerSqlDbFactory();
    const db = await factory();
    await db.exec('CREATE TABLE t (x)');
    // A query that keeps the worker busy long enough to be cut off.
    const pending = db.all(
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50000000) SELECT count(*) AS n FROM c',
    );
    const cutOff = expect(pending).rejects.toThrow('database worker terminated');
    await factory.terminate();
    await cutOff;
    await expect(db.all('SELECT 1')).rejects.toThrow('database worker terminated');
    await expect(factory()).rejects.toThrow('database worker terminated');
    await expect(factory.terminate()).resolves.toBeUndefined();
  });
});

describe('Node worker failures', () => {
  const bootstrap = new URL('../../src/adapters/node/ts-worker.mjs', import.meta.url);

  it('rejects the factory when the worker module cannot load', async () => {
    const worker = new Worker(bootstrap, {
      workerData: { entry: new URL('./no-such-thread.ts', import.meta.url).href },
    });
    const error = await connectNodeDbWorker(worker).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^database worker failed: Cannot find module .*no-such-thread\.ts/);
  });

  it('rejects a pending call when the worker exits', async () => {
    const worker = new Worker('setTimeout(() => process.exit(3), 50)', { eval: true });
    await expect(connectNodeDbWorker(worker)).rejects.toThrow('database worker exited with code 3');
  });
});

describe('DbServiceClient', () => {
  /** A fake service whose `all` calls wait until the test settles them. */
  function fake() {
    const waiting: { resolve(rows: unknown[]): void; reject(e: Error): void }[] = [];
    const service = {
      all: () => new Promise((resolve, reject) => waiting.push({ resolve, reject })),
    } as unknown as Remote<DbService>;
    const busy: boolean[] = [];
    const client = new DbServiceClient(service, { onBusy: (b) => busy.push(b) });
    return { client, waiting, busy };
  }

  it('reports busy once for overlapping calls and idle when the last one settles', async () => {
    const { client, waiting, busy } = fake();
    const a = client.call((s) => s.all(1, 'a'));
    const b = client.call((s) => s.all(1, 'b'));
    expect(busy).toEqual([true]);
    waiting[0]!.resolve([{ x: 1 }]);
    expect(await a).toEqual([{ x: 1 }]);
    expect(busy).toEqual([true]);
    waiting[1]!.reject(new Error('no such table: t'));
    await expect(b).rejects.toThrow('no such table: t');
    expect(busy).toEqual([true, false]);
  });

  it('rejects calls in flight and later calls with the first failure', async () => {
    const { client, waiting, busy } = fake();
    const a = client.call((s) => s.all(1, 'a'));
    client.fail(new Error('database worker exited with code 1'));
    client.fail(new Error('second failure is ignored'));
    await expect(a).rejects.toThrow('database worker exited with code 1');
    expect(busy).toEqual([true, false]);
    // A late answer from the dead worker changes nothing.
    waiting[0]!.resolve([]);
    await expect(client.call((s) => s.all(1, 'b'))).rejects.toThrow('database worker exited with code 1');
    expect(busy).toEqual([true, false]);
    expect(waiting).toHaveLength(1);
  });

  it('turns a request that throws while sending into a rejection', async () => {
    const { client, busy } = fake();
    const call = client.call(() => {
      throw new Error('could not be cloned');
    });
    await expect(call).rejects.toThrow('could not be cloned');
    expect(busy).toEqual([true, false]);
  });
});

describe('ownBuffer', () => {
  it('keeps an array that owns its buffer and copies a view into a larger one', () => {
    const whole = new Uint8Array([1, 2, 3]);
    expect(ownBuffer(whole)).toBe(whole);
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const view = backing.subarray(1, 4);
    const owned = ownBuffer(view);
    expect(owned).not.toBe(view);
    expect(Array.from(owned)).toEqual([1, 2, 3]);
    expect(owned.buffer.byteLength).toBe(3);
    expect(Array.from(backing)).toEqual([9, 1, 2, 3, 9]);
  });
});
