/**
 * Memory of a large run (issue 11): `switchboard run --out` of carrier with the scripted
 * participants, at 500 and 2,000 episodes (15 tasks × trials), in this process. Prints the
 * resident set size (RSS) sampled every 20 ms: before, peak, and the size of trajectories.jsonl.
 * The file is written and read line by line, so no step builds one string of the whole file;
 * the episodes' parsed trajectories are still held until the summary is computed.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli/main.ts';
import { readJsonl } from '../src/adapters/node/training-files.ts';
import { Trajectory } from '../src/core/schema/trajectory.ts';

const MB = 1024 * 1024;
const quiet = { progress: false, out() {}, err() {} };

/** One run of `trials` trials per carrier task; RSS in MB. */
export async function measureRun(trials: number): Promise<{
  episodes: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  fileMb: number;
  readBackPeakMb: number;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-bench-run-'));
  try {
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const code = await main(
      ['run', '--domain', 'carrier', '--trials', String(trials), '--concurrency', '4', '--out', dir, '--json'],
      quiet,
    );
    if (code !== 0) throw new Error(`bench run exited ${code}`);
    const runPeak = peak;
    peak = process.memoryUsage().rss;
    const back = await readJsonl(join(dir, 'trajectories.jsonl'), Trajectory);
    clearInterval(timer);
    const file = (await stat(join(dir, 'trajectories.jsonl'))).size;
    return {
      episodes: back.length,
      rssBeforeMb: before / MB,
      rssPeakMb: runPeak / MB,
      fileMb: file / MB,
      readBackPeakMb: peak / MB,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The lines `npm run bench` prints. */
export async function largeRunLines(): Promise<string> {
  const rows = [];
  for (const trials of [34, 134]) rows.push(await measureRun(trials));
  return rows
    .map(
      (r) =>
        `  ${String(r.episodes).padStart(5)} episodes  file ${r.fileMb.toFixed(1).padStart(6)} MB  RSS before ${r.rssBeforeMb.toFixed(0)} MB, peak in run ${r.rssPeakMb.toFixed(0)} MB, peak reading back ${r.readBackPeakMb.toFixed(0)} MB`,
    )
    .join('\n');
}
