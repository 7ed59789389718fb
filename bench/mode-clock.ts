/**
 * Clocks for one of several trial schedulers (`scheduleTrials`) that share this thread, as the pool
 * bench's modes do, their rounds alternating: wall time, this thread's CPU time and other
 * processes' CPU time, in ms, each advancing only while the mode's own rounds run ({@link start}
 * to {@link stop}). A scheduler paces its trials by these clocks (`TrialPace`: ms per trial in
 * this thread, from which it sets how many trials wait in each worker, `poolAhead`). On the
 * process's own clocks, the other modes' rounds counted as its time: the 2-thread mode's estimate
 * read 1.4–2.5 ms per trial where its trials took ~0.75 ms, so it kept 1–2 trials waiting in the
 * worker instead of 4, and the worker ran out of trials between the CLI thread's loop turns
 * (issue 15, item 5). A `run` has one scheduler per process, whose clocks are the process's.
 */
import { performance } from 'node:perf_hooks';
import { otherProcessesCpuMs, threadCpuMs } from '../src/adapters/node/cpu-time.ts';

/** The three clocks, in ms: wall time, this thread's CPU time, other processes' CPU time. */
export interface Clocks {
  now(): number;
  cpu(): number;
  others(): number;
}

/** The process's own {@link Clocks}. */
const PROCESS_CLOCKS: Clocks = { now: () => performance.now(), cpu: threadCpuMs, others: otherProcessesCpuMs };

export class ModeClock {
  private readonly spent = { wall: 0, cpu: 0, others: 0 };
  private from: { wall: number; cpu: number; others: number } | undefined;

  /** @param base the clocks it counts from (default the process's; tests pass their own). */
  constructor(private readonly base: Clocks = PROCESS_CLOCKS) {}

  /** The mode's round starts: its clocks run (a second start before a stop changes nothing). */
  start(): void {
    this.from ??= this.read();
  }

  /** The mode's round ended: its clocks stop (a stop while stopped changes nothing). */
  stop(): void {
    if (!this.from) return;
    const at = this.read();
    this.spent.wall += at.wall - this.from.wall;
    this.spent.cpu += at.cpu - this.from.cpu;
    this.spent.others += at.others - this.from.others;
    this.from = undefined;
  }

  /** ms of wall time in the mode's rounds. */
  readonly now = (): number => this.spent.wall + (this.from ? this.base.now() - this.from.wall : 0);
  /** ms of this thread's CPU time in the mode's rounds. */
  readonly cpuMs = (): number => this.spent.cpu + (this.from ? this.base.cpu() - this.from.cpu : 0);
  /** ms of other processes' CPU time in the mode's rounds. */
  readonly othersMs = (): number => this.spent.others + (this.from ? this.base.others() - this.from.others : 0);

  private read() {
    return { wall: this.base.now(), cpu: this.base.cpu(), others: this.base.others() };
  }
}
