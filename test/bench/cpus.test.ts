import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { allowedCpus, canPin, parseCpuList, pinnedTo, placeRound, unpinThreads } from '../../bench/cpus.ts';
import { MAIN_TID, threadIds } from '../../bench/thread-cpu.ts';
import { coreRatios } from '../../bench/pool.ts';

const run = promisify(execFile);

describe('bench CPUs', () => {
  it('reads a Linux CPU list', () => {
    expect(parseCpuList('0-1')).toEqual([0, 1]);
    expect(parseCpuList('0,2-3')).toEqual([0, 2, 3]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(parseCpuList('3,1-2,2')).toEqual([1, 2, 3]);
    expect(parseCpuList('')).toBeUndefined();
    expect(parseCpuList('2-1')).toBeUndefined();
    expect(parseCpuList('0-1\n')).toBeUndefined();
    expect(parseCpuList('a')).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')('pins a child process, and what it starts, to the CPU asked', async () => {
    const cpu = allowedCpus().at(-1)!;
    const [cmd, args] = pinnedTo(cpu, 'sh', ['-c', 'sh -c "grep Cpus_allowed_list: /proc/self/status"']);
    const { stdout } = await run(cmd, args);
    expect(stdout.trim()).toBe(`Cpus_allowed_list:\t${cpu}`);
  });

  it('compares 2 threads with each pinned CPU round by round', () => {
    // Round 0: the second CPU at 0.6 of the first; round 2: equal.
    const r = coreRatios(
      [1800, 1700, 1600],
      [
        [1000, 900, 800],
        [600, 700, 800],
      ],
    );
    // Per round ÷ mean 800: 2.25, 2.125, 2.
    expect(r.toMean).toBe(2.125);
    expect(r.toFaster).toBeCloseTo(1700 / 900, 12);
    expect(r.toSlower).toBeCloseTo(1700 / 700, 12);
    expect(r.efficiency).toBe(1700 / 1600);
    expect(r.secondToFirst).toBeCloseTo(700 / 900, 12);
    const one = coreRatios([1800, 1500], [[1000, 1000, 1000]]);
    expect(one.toMean).toBe(1.65);
    expect(one.secondToFirst).toBeUndefined();
  });
});

describe('bench thread placement', () => {
  const cpus = allowedCpus();
  it.runIf(process.platform === 'linux' && cpus.length >= 2 && canPin())(
    'puts this thread and a worker on different CPUs, swaps them each round, and frees both',
    async () => {
      const before = threadIds();
      const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
      await new Promise((resolve) => worker.once('online', resolve));
      try {
        const started = [...threadIds()].filter((t) => !before.has(t));
        expect(started.length).toBeGreaterThanOrEqual(1);
        const allowed = (tid: string) =>
          parseCpuList(/^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/self/task/${tid}/status`, 'utf8'))![1]!);
        const [a, b] = cpus as [number, number];
        placeRound(0, MAIN_TID, started, [a, b]);
        expect(allowed(MAIN_TID)).toEqual([a]);
        for (const t of started) expect(allowed(t)).toEqual([b]);
        placeRound(1, MAIN_TID, started, [a, b]);
        expect(allowed(MAIN_TID)).toEqual([b]);
        for (const t of started) expect(allowed(t)).toEqual([a]);
        unpinThreads([MAIN_TID, ...started], cpus);
        for (const t of [MAIN_TID, ...started]) expect(allowed(t)).toEqual(cpus);
      } finally {
        unpinThreads([MAIN_TID], cpus);
        await worker.terminate();
      }
    },
  );
});
