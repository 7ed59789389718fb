/**
 * CPU clocks of this thread and of the machine (`cpu-time.ts`), and {@link FreeCoreWatch}: whether
 * the machine leaves a core free for a thread, which the environment worker's spin policy asks
 * after a miss (issue 15, item 2).
 */
import { describe, expect, it } from 'vitest';
import {
  FREE_CORE_SLACK,
  FREE_CORE_SPAN_MS,
  FreeCoreWatch,
  machineBusyMs,
  otherProcessesCpuMs,
  threadCpuMs,
} from '../../src/adapters/node/cpu-time.ts';

/** Clocks a test sets: wall, machine busy and own CPU in ms; `reads` counts the reads of the machine's clock. */
function clocks() {
  const c = { wall: 0, busy: 0 as number | undefined, own: 0, reads: 0 };
  return {
    c,
    clocks: {
      now: () => c.wall,
      busy: () => {
        c.reads++;
        return c.busy;
      },
      own: () => c.own,
    },
  };
}

describe('FreeCoreWatch', () => {
  it('free while the rest of the machine used at most cores − 1 + 0.25 cores over the last span of ≥ 250 ms', () => {
    expect([FREE_CORE_SPAN_MS, FREE_CORE_SLACK]).toEqual([250, 0.25]);
    const { c, clocks: k } = clocks();
    const watch = new FreeCoreWatch(2, k);
    // No span read yet: not free; the first read only sets the mark.
    expect(watch.free()).toBe(false);
    expect(c.reads).toBe(1);
    // 250 ms later: 400 ms busy on the machine, 100 of them this thread's own: 300 / 250 = 1.2 cores → free.
    c.wall = 250;
    c.busy = 400;
    c.own = 100;
    expect(watch.free()).toBe(true);
    // Within the span the last answer stands, without reading the clocks.
    c.busy = 10_000;
    c.wall = 499;
    expect(watch.free()).toBe(true);
    expect(c.reads).toBe(2);
    // Over 250 → 500 ms: 9,600 − 0 ms of others… far above: not free.
    c.wall = 500;
    expect(watch.free()).toBe(false);
    // Exactly 1.25 cores of the others over 500 → 900 ms (500 ms busy, none of it own): free; 1.26: not.
    c.wall = 900;
    c.busy += 500;
    expect(watch.free()).toBe(true);
    c.wall = 1300;
    c.busy += 504;
    expect(watch.free()).toBe(false);
    // This thread's own CPU does not count: 900 busy of which 500 own is 1.0 core of others.
    c.wall = 1700;
    c.busy += 900;
    c.own += 500;
    expect(watch.free()).toBe(true);
  });

  it('on 4 cores the bound is 3.25 cores; with no /proc/stat, never free', () => {
    const { c, clocks: k } = clocks();
    const watch = new FreeCoreWatch(4, k);
    watch.free();
    c.wall = 1000;
    c.busy = 3250;
    expect(watch.free()).toBe(true);
    c.wall = 2000;
    c.busy += 3300;
    expect(watch.free()).toBe(false);
    const none = clocks();
    none.c.busy = undefined;
    const blind = new FreeCoreWatch(2, none.clocks);
    none.c.wall = 1000;
    expect([blind.free(), blind.free()]).toEqual([false, false]);
  });
});

describe('CPU clocks', () => {
  it("the machine's busy time grows at least by this thread's CPU time (Linux: /proc)", () => {
    const busy0 = machineBusyMs();
    if (busy0 === undefined) return; // no /proc/stat: nothing to compare
    const own0 = threadCpuMs();
    const others0 = otherProcessesCpuMs();
    // Spin until this thread has used 100 ms of CPU (its clock ticks in 10 ms).
    let x = 0;
    while (threadCpuMs() - own0 < 100) for (let i = 0; i < 1e5; i++) x += i;
    expect(x).toBeGreaterThan(0);
    const own = threadCpuMs() - own0;
    // Each clock ticks in 10 ms (the machine's on each CPU), so allow a tick per clock and CPU.
    expect(machineBusyMs()! - busy0).toBeGreaterThanOrEqual(own - 30);
    // The other processes' clock leaves this process's time out: it grew less than the machine's.
    expect(otherProcessesCpuMs() - others0).toBeLessThan(machineBusyMs()! - busy0);
  });
});
