/**
 * Benchmark harness: runs named cases with tinybench and prints one line per case with the
 * median (p50) latency and, where the issue set a target, the target and the ratio median /
 * target (no verdict: a figure taken on a loaded machine is read as a ratio, not as a pass).
 */
import { Bench } from 'tinybench';

/** One benchmark case. `targetMs` is the goal for the median, when there is one. */
export interface BenchCase {
  name: string;
  fn: () => Promise<unknown> | unknown;
  targetMs?: number;
}

/** Result line of one case. */
export interface BenchResult {
  name: string;
  medianMs: number;
  samples: number;
  targetMs?: number;
}

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function fmt(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`;
  return `${ms.toFixed(2)} ms`;
}

/** `speedup` (another's time / ours) as words: `12× faster` or `1.31× slower`. */
export function versus(speedup: number): string {
  if (speedup >= 1) return `${speedup >= 10 ? speedup.toFixed(0) : speedup.toFixed(2)}× faster`;
  return `${(1 / speedup).toFixed(2)}× slower`;
}

/** Run the cases and print the table. Returns the medians. */
export async function runCases(cases: readonly BenchCase[], time = 1000): Promise<BenchResult[]> {
  const bench = new Bench({ time, warmupTime: 200 });
  for (const c of cases) bench.add(c.name, c.fn);
  await bench.run();
  const out: BenchResult[] = [];
  for (const [i, task] of bench.tasks.entries()) {
    const c = cases[i]!;
    const r = task.result;
    if (!r || !('latency' in r)) throw new Error(`benchmark "${c.name}" failed: ${JSON.stringify(r)}`);
    const p50 = r.latency.p50;
    const parts = [`  ${c.name.padEnd(46)} median ${fmt(p50).padStart(10)}  (${r.latency.samplesCount} samples)`];
    if (c.targetMs !== undefined)
      parts.push(`target ≤ ${fmt(c.targetMs)}  ratio ${(p50 / c.targetMs).toFixed(2)} (≤ 1 is within it)`);
    console.log(parts.join('  ·  '));
    out.push({
      name: c.name,
      medianMs: p50,
      samples: r.latency.samplesCount,
      ...(c.targetMs !== undefined ? { targetMs: c.targetMs } : {}),
    });
  }
  return out;
}
