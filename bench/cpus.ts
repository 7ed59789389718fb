/**
 * The CPUs a bench may pin a child process to, and the command that pins it.
 *
 * The two vCPUs of the VM the benches are run on are not always equally fast: in spells of
 * minutes one of them runs memory-heavy JavaScript ~1.6× slower than the other (session 20, with
 * nothing else of ours running: a JSON round-trip loop pinned to one CPU 70 ms and to the other
 * 110 ms, a warm carrier episode 700 µs of CPU and 1,050–1,450 µs; an arithmetic loop the same on
 * both). The vCPU then shares its host core or caches with another guest's load. A comparison
 * whose two sides run on different CPUs reads that spell as a difference between the sides, so
 * the benches that compare processes pin both sides to one CPU, or measure each CPU.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The CPUs this process may run on, ascending (Linux: `Cpus_allowed_list` in /proc/self/status, a
 * list such as `0-1` or `0,2-3`; proc(5)); `[0]` where that cannot be read.
 */
export function allowedCpus(): number[] {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return (list && parseCpuList(list[1]!)) || [0];
  } catch {
    return [0];
  }
}

/**
 * The CPUs of a Linux CPU list (cpuset(7)'s "List format": `0-3`, `0,2-3`, `1`), ascending and
 * without repeats; undefined when `text` is not one.
 */
export function parseCpuList(text: string): number[] | undefined {
  const cpus = new Set<number>();
  for (const part of text.split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!range) return undefined;
    const lo = Number(range[1]);
    const hi = Number(range[2] ?? range[1]);
    if (hi < lo) return undefined;
    for (let c = lo; c <= hi; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/**
 * `command args` run under util-linux's `taskset -c <cpu>`, as a spawn's command and arguments:
 * the process and every thread and child process it starts run on CPU `cpu` only (affinity is
 * inherited; sched_setaffinity(2)). Spawning it fails with ENOENT where `taskset` is missing.
 */
export function pinnedTo(cpu: number, command: string, args: readonly string[]): [string, string[]] {
  return ['taskset', ['-c', String(cpu), command, ...args]];
}

/** Whether {@link pinnedTo} can run here: util-linux's `taskset` answers `--version` (Linux only). */
export function canPin(): boolean {
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Pin thread `tid` of this process (a Linux thread id; the JavaScript thread's is the process
 * id) to the CPUs `cpus` (`taskset -p -c`; sched_setaffinity(2) of that one thread: the others,
 * V8's helpers included, keep theirs).
 * @throws when `taskset` fails (see {@link canPin}).
 */
function pinThread(tid: string, cpus: readonly number[]): void {
  execFileSync('taskset', ['-p', '-c', cpus.join(','), tid], { stdio: 'ignore' });
}

/**
 * The placement of round `r` of a comparison between this thread alone and this thread with
 * worker threads `workers` (`tids`): this thread on one of the first two CPUs of `cpus`, the
 * workers on the other, the two swapped every round, so that over an even number of rounds each
 * way ran as long on each CPU (a spell of one slow vCPU then slows both ways alike, where unpinned it fell on whichever thread
 * sat there). Does nothing with fewer than two CPUs; needs `taskset` ({@link canPin}), and throws
 * as {@link pinThread} does; {@link unpinThreads} ends it.
 */
export function placeRound(r: number, self: string, workers: readonly string[], cpus: readonly number[]): void {
  if (cpus.length < 2) return;
  const [a, b] = r % 2 ? [cpus[1]!, cpus[0]!] : [cpus[0]!, cpus[1]!];
  pinThread(self, [a]);
  for (const tid of workers) pinThread(tid, [b]);
}

/** Let threads `tids` run on every CPU in `cpus` again (after {@link placeRound}). */
export function unpinThreads(tids: readonly string[], cpus: readonly number[]): void {
  for (const tid of tids) pinThread(tid, cpus);
}
