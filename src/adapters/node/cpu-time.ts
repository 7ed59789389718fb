/**
 * CPU time of this thread, this process and the whole machine (Linux: /proc; proc(5)), and from
 * them whether the machine leaves a core free for a thread: what the run's rollout threads
 * (`src/cli/run-trials.ts`, issue 15 item 5) and the environment worker's spin (`mailbox.ts`,
 * issue 15 item 2) decide on. Each reading is a file read, ~20 µs: take them ms apart, not per call.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * This thread's CPU time in ms: on Linux from /proc/thread-self/stat (utime + stime, in the
 * kernel's USER_HZ ticks of 10 ms), elsewhere the whole process's (`process.cpuUsage`, which
 * also counts V8's background compiler threads).
 */
export function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
}

/**
 * ms of CPU time every process of this machine has used since it booted (Linux: the first line of
 * /proc/stat, busy time of all CPUs in USER_HZ ticks of 10 ms: user, nice, system, irq, softirq
 * and steal, a VM's time taken by the host; proc(5)); undefined where there is no /proc/stat.
 */
export function machineBusyMs(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8');
    const f = line.slice(0, line.indexOf('\n')).split(/\s+/);
    // cpu user nice system idle iowait irq softirq steal ...
    return [1, 2, 3, 6, 7, 8].reduce((sum, i) => sum + Number(f[i] ?? 0), 0) * 10;
  } catch {
    return undefined;
  }
}

/**
 * ms of CPU time that processes other than this one have used on this machine since it booted
 * ({@link machineBusyMs} minus this process's `process.cpuUsage`, every thread of it). 0 where
 * there is no /proc/stat: the other cores are then taken to be free, as before this was measured.
 */
export function otherProcessesCpuMs(): number {
  const busy = machineBusyMs();
  if (busy === undefined) return 0;
  const u = process.cpuUsage();
  return busy - (u.user + u.system) / 1000;
}

/**
 * Shortest span, ms, a {@link FreeCoreWatch} reading covers: the clocks tick in 10 ms, so over
 * 250 ms the CPU of the rest of the machine is known to ±0.12 cores (a tick on each of two CPUs
 * and one of this thread's, either way).
 */
export const FREE_CORE_SPAN_MS = 250;

/**
 * How much of a core the rest of the machine may use beyond the others, and the core still count
 * as free for this thread ({@link FreeCoreWatch}). Beside an environment worker, a caller making
 * calls back to back uses one core (it spins for each reply), plus its V8 helper threads' few
 * percent; a CPU-bound process beside them adds at least half a core (what it gets of a core it
 * shares). Read on the 2-core VM by the worker of a tau2 call loop: 1.96–2.01 cores with one or two
 * such processes besides other work, 1.28–1.65 while other processes used 0.3–0.4 cores.
 */
export const FREE_CORE_SLACK = 0.25;

/**
 * Whether the machine leaves a core free for this thread: the CPU everything else used (every
 * process, this one's other threads included, less this thread's own) over the last span of at
 * least {@link FREE_CORE_SPAN_MS}, in cores, is at most `cores − 1 +` {@link FREE_CORE_SLACK}.
 * {@link free} reads the clocks at most once per span (a reading is ~40 µs) and answers from the
 * last reading between; it is false until a first span has been read, and always where there is
 * no /proc/stat.
 */
export class FreeCoreWatch {
  private mark: { wall: number; busy: number; own: number } | undefined;
  private answer = false;

  /**
   * @param cores cores of the machine (default `availableParallelism()`).
   * @param clocks ms of wall time, of the machine's busy CPU ({@link machineBusyMs}) and of this
   *   thread's CPU ({@link threadCpuMs}); tests pass their own.
   */
  constructor(
    private readonly cores = availableParallelism(),
    private readonly clocks: { now(): number; busy(): number | undefined; own(): number } = {
      now: () => performance.now(),
      busy: machineBusyMs,
      own: threadCpuMs,
    },
  ) {}

  /** Whether a core was free for this thread over the last span read (see the class). */
  free(): boolean {
    const wall = this.clocks.now();
    if (this.mark && wall - this.mark.wall < FREE_CORE_SPAN_MS) return this.answer;
    const busy = this.clocks.busy();
    if (busy === undefined) return false;
    const at = { wall, busy, own: this.clocks.own() };
    if (this.mark) {
      const others = (at.busy - this.mark.busy - (at.own - this.mark.own)) / (at.wall - this.mark.wall);
      this.answer = others <= this.cores - 1 + FREE_CORE_SLACK;
    }
    this.mark = at;
    return this.answer;
  }
}
