/**
 * CPU time of each thread of this process (Linux: /proc/self/task/<tid>/schedstat, whose first
 * field is the ns the thread ran on a CPU; proc(5)), for the pool bench's reading of where an
 * episode's CPU goes: the JavaScript thread that ran it, the rollout threads, or the helper
 * threads of V8 and libuv (concurrent and parallel garbage collection, background compilation,
 * file writes) that the process has besides.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** ns of CPU per thread id, now; empty where /proc is not there (not Linux). */
export function threadCpuNs(): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** This process's thread ids now (for telling the threads a pool starts from those it had). */
export function threadIds(): Set<string> {
  return new Set(threadCpuNs().keys());
}

/** The JavaScript thread of the process: its id is the process's. */
export const MAIN_TID = String(process.pid);

/**
 * CPU in ns between two {@link threadCpuNs} readings, split into this (main) thread, the
 * threads in `rollout` (a pool's workers), and every other thread (V8's and libuv's helpers;
 * other pools' idle workers count here too).
 */
export function splitCpu(
  before: Map<string, number>,
  after: Map<string, number>,
  rollout: ReadonlySet<string>,
): { main: number; rollout: number; helpers: number } {
  const out = { main: 0, rollout: 0, helpers: 0 };
  for (const [tid, ns] of after) {
    const d = ns - (before.get(tid) ?? 0);
    if (tid === MAIN_TID) out.main += d;
    else if (rollout.has(tid)) out.rollout += d;
    else out.helpers += d;
  }
  return out;
}
