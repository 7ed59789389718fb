/**
 * Timing of µs-scale calls (tool calls) without a system call next to the timed window.
 *
 * `sample()` (tau2-score.ts) reads the process's CPU time around its call, and reading it is a
 * system call (`getrusage`). On the 2-vCPU KVM guests this project is measured on, the kernel
 * isolates page tables (PTI) and the CPU offers no PCID, so every system call flushes the TLB:
 * the call timed right after it starts with every page of the heap and the wasm memory to look
 * up again. Measured (session 18, same process, blocks of 50 calls on fresh environments with and
 * without a `process.cpuUsage()` just before the timed window, 30 pairs alternating, medians of
 * the pairs' ratios): book_reservation 80.0 → 92.7 µs (×1.16), update_reservation_flights 59.4 →
 * 69.8 µs (×1.18), send_certificate 9.1 → 13.3 µs (×1.45). tau2-bench's side is timed with
 * `time.perf_counter()` alone (a vDSO read, no system call), so the per-call `getrusage` made
 * ours read slower than it is. Reading the monotonic clock (`performance.now()`) is a vDSO call
 * too, and is all that is read per call here.
 */
import type { Sample } from './tau2-score.ts';

/**
 * Times the calls of one block: each call's wall time alone, and the process's CPU time over the
 * whole block, read once at its start and once at {@link finish}. The CPU figure is the block's
 * CPU ÷ its calls: a call's own CPU plus its share of the untimed work between calls (a write's
 * close and open of its environment, a deliberate sleep), and of other threads' work meanwhile
 * (V8's helpers, an environment worker's thread).
 */
export class CallTimer {
  private readonly cpu0 = process.cpuUsage();
  private readonly walls: number[] = [];

  /** Run `fn` and record its wall time (ms); the time, or `fn`'s error (the call is then not recorded). */
  async time(fn: () => Promise<unknown>): Promise<number> {
    const t0 = performance.now();
    await fn();
    const wall = performance.now() - t0;
    this.walls.push(wall);
    return wall;
  }

  /** One sample per call timed, in order (ms): its wall time, and the block's CPU ÷ its calls. Call once, after the last call. */
  finish(): Sample[] {
    const c = process.cpuUsage(this.cpu0);
    const cpu = (c.user + c.system) / 1000 / Math.max(1, this.walls.length);
    return this.walls.map((wall) => ({ wall, cpu }));
  }
}
