/**
 * bench/mode-clock.ts: a pool-bench mode's clocks run only in its own rounds, so the scheduler's
 * pace (ms per trial in this thread, and with it the trials kept waiting in a worker) is not
 * stretched by the other modes' rounds.
 */
import { describe, expect, it } from 'vitest';
import { ModeClock } from '../../bench/mode-clock.ts';
import { TrialPace, poolAhead } from '../../src/cli/run-trials.ts';

/** Fake process clocks: wall, this thread's CPU and other processes' CPU, moved by hand. */
function fakeClocks() {
  const t = { wall: 1000, cpu: 500, others: 40 };
  return { t, base: { now: () => t.wall, cpu: () => t.cpu, others: () => t.others } };
}

describe('ModeClock', () => {
  it("counts wall, CPU and other processes' CPU only between start and stop", () => {
    const { t, base } = fakeClocks();
    const clock = new ModeClock(base);
    const read = () => [clock.now(), clock.cpuMs(), clock.othersMs()];
    expect(read()).toEqual([0, 0, 0]);
    clock.start();
    t.wall += 10;
    t.cpu += 8;
    t.others += 1;
    // Running: the time so far in this round.
    expect(read()).toEqual([10, 8, 1]);
    clock.stop();
    // Another mode's round: nothing counted.
    t.wall += 50;
    t.cpu += 45;
    t.others += 7;
    expect(read()).toEqual([10, 8, 1]);
    clock.stop();
    clock.start();
    clock.start(); // a second start keeps the first
    t.wall += 4;
    t.cpu += 3;
    t.others += 2;
    clock.stop();
    expect(read()).toEqual([14, 11, 3]);
  });

  it("gives a scheduler's TrialPace the mode's ms per trial, where the process's clocks stretch it by the other mode's rounds", () => {
    const { t, base } = fakeClocks();
    const clock = new ModeClock(base);
    const own = new TrialPace(clock.now, clock.cpuMs, clock.othersMs);
    const shared = new TrialPace(base.now, base.cpu, base.others);
    let last: [number | undefined, number | undefined] = [undefined, undefined];
    // 128 rounds of this mode (8 trials of 0.75 ms each), each followed by another mode's 6 ms round.
    let n = 0;
    for (let round = 0; round < 128; round++) {
      clock.start();
      for (let i = 0; i < 8; i++) {
        own.started();
        shared.started();
        t.wall += 0.75;
        t.cpu += 0.75;
        n++;
        const a = own.finished(n);
        const b = shared.finished(n);
        if (a !== undefined) last = [a, last[1]];
        if (b !== undefined) last = [last[0], b];
      }
      clock.stop();
      t.wall += 6;
      t.cpu += 6;
    }
    expect(last[0]).toBeCloseTo(0.75, 10);
    // 0.75 ms of trials and 0.75 ms of the other mode per trial: twice the time.
    expect(last[1]).toBeCloseTo(1.5, 10);
    // Trials kept waiting in a worker: 4 (the most) on the mode's clocks, 2 on the process's.
    expect([poolAhead(last[0]), poolAhead(last[1])]).toEqual([4, 2]);
  });
});
