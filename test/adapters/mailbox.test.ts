/**
 * The environment worker's mailbox (src/adapters/node/mailbox.ts): when the serving thread spins
 * for the next request ({@link SpinWindow}), and how often each side slept waiting for the other
 * (`counts`, which the tau2 bench prints beside the worker's fixed cost per call), read through an
 * {@link EnvWorker} on the faulty fixture domain.
 */
import { setTimeout as pause } from 'node:timers/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SpinWindow, takeWindowUs } from '../../src/adapters/node/mailbox.ts';
import { EnvWorker } from '../../src/adapters/node/worker-env.ts';

const FAULTY = dirname(fileURLToPath(new URL('../fixtures/faulty-env-domain/domain.ts', import.meta.url)));
const busy = (ms: number) => ({ id: `b${ms}`, name: 'busy_ms', arguments: { ms } });

describe('SpinWindow', () => {
  it('spins while its spins see the request; after misses in a row skips 1, 2, 4, … 256 waits', () => {
    const w = new SpinWindow(200);
    /** The waits of `n` at which it spins, each spin a hit or a miss. */
    const spins = (n: number, hit: boolean) => {
      const at: number[] = [];
      for (let i = 0; i < n; i++) {
        const us = w.next();
        if (us === 0) continue;
        expect(us).toBe(200);
        at.push(i);
        w.spun(hit);
      }
      return at;
    };
    expect(spins(3, true)).toEqual([0, 1, 2]);
    // Misses: skips 1, 2, 4, … 256, then 256 again.
    expect(spins(778, false)).toEqual([0, 2, 5, 10, 19, 36, 69, 134, 263, 520, 777]);
    // The last miss left 256 waits to skip; then one hit, and it spins at every wait again.
    expect(spins(256 + 4, true)).toEqual([256, 257, 258, 259]);
  });

  it('while a core is free: a miss skips no wait, skips left are dropped; the probe is asked only after a miss or before a skip', () => {
    let free = false;
    let asked = 0;
    const w = new SpinWindow(200, () => {
      asked++;
      return free;
    });
    /** What `next` gives for `n` waits, each spin recorded as a hit or a miss. */
    const waits = (n: number, hit: boolean) =>
      Array.from({ length: n }, () => {
        const us = w.next();
        if (us > 0) w.spun(hit);
        return us;
      });
    // Hits: the probe is never asked.
    expect(waits(3, true)).toEqual([200, 200, 200]);
    expect(asked).toBe(0);
    // No core free: misses back off as without a probe (skips 1, then 2), the probe asked at each miss and skip.
    expect(waits(5, false)).toEqual([200, 0, 200, 0, 0]);
    expect(asked).toBe(5);
    // A core free again: the skips left (4 after the third miss) are dropped at the next wait; misses then skip nothing.
    expect(waits(1, false)).toEqual([200]);
    free = true;
    expect(waits(4, false)).toEqual([200, 200, 200, 200]);
    expect(asked).toBe(6 + 5);
    // Busy again: a miss skips 1 (the back-off restarted when the skips were dropped).
    free = false;
    expect(waits(4, false)).toEqual([200, 0, 200, 0]);
  });

  it('never spins with a window of 0', () => {
    const w = new SpinWindow(0);
    expect([w.next(), w.next()]).toEqual([0, 0]);
  });
});

describe('takeWindowUs', () => {
  it('gives a sleeping serving thread 200 µs without asking the probe, an awake one 100 µs while a core is free, else 10 µs', () => {
    let asked = 0;
    const probe = (free: boolean) => () => {
      asked++;
      return free;
    };
    expect(takeWindowUs(true, probe(true))).toBe(200);
    expect(takeWindowUs(true, probe(false))).toBe(200);
    expect(asked).toBe(0);
    expect(takeWindowUs(false, probe(true))).toBe(100);
    expect(takeWindowUs(false, probe(false))).toBe(10);
    expect(asked).toBe(2);
  });
});

describe('mailbox sleep counts', () => {
  it.each([
    ['never spins', { spinUs: 0 }],
    ['spins (the default: no skips while a core is free)', {}],
    ['spins, backing off after every miss', { spinWhileFree: false }],
  ])(
    'a worker that %s sleeps through a pause: each request after one wakes it',
    async (_, options) => {
      const worker = await EnvWorker.start({ domain: FAULTY }, options);
      try {
        // The open may come before the new worker's first wait: counted from after it. The pauses are long:
        // a spinning worker descheduled on a loaded machine for longer than one would see the request spinning.
        const env = await worker.open('pay-10');
        const before = worker.counts();
        for (let i = 0; i < 3; i++) {
          await pause(200);
          expect((await env.call(busy(0))).error).toBe(false);
        }
        const after = worker.counts();
        expect([after.requests - before.requests, after.serverWoken - before.serverWoken]).toEqual([3, 3]);
      } finally {
        await worker.close();
      }
    },
    30_000,
  );

  it('a caller that does not spin sleeps in its block until the reply wakes it, or awaits it', async () => {
    const blocking = await EnvWorker.start({ domain: FAULTY }, { replySpinUs: 0, blockMs: 60_000 });
    const awaiting = await EnvWorker.start({ domain: FAULTY }, { replySpinUs: 0, blockMs: 0 });
    try {
      for (const worker of [blocking, awaiting]) {
        const env = await worker.open('pay-10');
        const before = worker.counts();
        // 200 ms: longer than this thread could be descheduled between its post and its block on a loaded machine.
        expect((await env.call(busy(200))).error).toBe(false);
        const after = worker.counts();
        expect([
          after.requests - before.requests,
          after.callerWoken - before.callerWoken,
          after.awaited - before.awaited,
        ]).toEqual(worker === blocking ? [1, 1, 0] : [1, 0, 1]);
      }
    } finally {
      await blocking.close();
      await awaiting.close();
    }
  }, 30_000);
});
