/**
 * bench/call-timer.ts: each call's wall time alone, the block's CPU once, spread over its calls.
 */
import { describe, expect, it } from 'vitest';
import { CallTimer } from '../../bench/call-timer.ts';

/** Keep this thread busy for `ms` (CPU time, unless the process is descheduled). */
async function busy(ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('CallTimer', () => {
  it('gives one sample per call: its wall time, and the block CPU divided by the calls', async () => {
    const timer = new CallTimer();
    const walls = [await timer.time(() => busy(3)), await timer.time(() => busy(6))];
    await busy(9); // untimed work between calls: counted in the CPU, not in any wall
    const samples = timer.finish();
    expect(samples.map((s) => s.wall)).toEqual(walls);
    expect(walls[0]).toBeGreaterThanOrEqual(3);
    expect(walls[1]).toBeGreaterThanOrEqual(6);
    expect(walls[1]! - walls[0]!).toBeGreaterThan(1);
    // One CPU figure for the block: the same for both calls.
    expect(samples[0]!.cpu).toBe(samples[1]!.cpu);
    expect(samples[0]!.cpu).toBeGreaterThan(0);
  });

  it('records nothing for a call that throws', async () => {
    const timer = new CallTimer();
    await expect(timer.time(async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await timer.time(() => busy(1));
    expect(timer.finish()).toHaveLength(1);
  });
});
