/**
 * Benchmark harness: runs named cases with tinybench and prints one line per case with the
 * median (p50) latency, the target, and the ratio median / target (≤ 1 meets the target).
 */
import { Bench } from 'tinybench';

/** One benchmark case. `targetMs` is the goal for the median, when there is one. */
export interface BenchCase {
  name: string;
  fn: () => Promise<unknown> | unknown;
  targetMs?: number;
  /** For reference: another implementation's median on this machine, in ms. */
  baselineMs?: { label: string; ms: number };
}

/** Result line of one case. */
export interface BenchResult {
  name: string;
  medianMs: number;
  samples: number;
  targetMs?: number;
}

function fmt(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`;
  return `${ms.toFixed(2)} ms`;
}

/** `speedup` (baseline time / ours) as words: `12× faster than` or `1.31× slower than`. */
export function versus(speedup: number): string {
  if (speedup >= 1) return `${speedup >= 10 ? speedup.toFixed(0) : speedup.toFixed(2)}× faster than`;
  return `${(1 / speedup).toFixed(2)}× slower than`;
}

/** Run the cases and print the table. Returns the medians. */
export async function runCases(title: string, cases: readonly BenchCase[], time = 1000): Promise<BenchResult[]> {
  const bench = new Bench({ time, warmupTime: 200 });
  for (const c of cases) bench.add(c.name, c.fn);
  await bench.run();
  console.log(`\n${title}`);
  const out: BenchResult[] = [];
  for (const [i, task] of bench.tasks.entries()) {
    const c = cases[i]!;
    const r = task.result;
    if (!r || !('latency' in r)) throw new Error(`benchmark "${c.name}" failed: ${JSON.stringify(r)}`);
    const median = r.latency.p50;
    const parts = [`  ${c.name.padEnd(46)} median ${fmt(median).padStart(10)}  (${r.latency.samplesCount} samples)`];
    if (c.targetMs !== undefined)
      parts.push(
        `target ≤ ${fmt(c.targetMs)}  ratio ${(median / c.targetMs).toFixed(2)}  ${median <= c.targetMs ? 'meets' : 'MISSES'}`,
      );
    if (c.baselineMs) parts.push(`${versus(c.baselineMs.ms / median)} ${c.baselineMs.label} (${fmt(c.baselineMs.ms)})`);
    console.log(parts.join('  ·  '));
    out.push({
      name: c.name,
      medianMs: median,
      samples: r.latency.samplesCount,
      ...(c.targetMs !== undefined ? { targetMs: c.targetMs } : {}),
    });
  }
  return out;
}
