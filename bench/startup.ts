/**
 * CLI start-up (issue 15, item 6): wall time from spawn to exit and peak RSS of `node -e 0`
 * (for scale), `node bin/switchboard.mjs --help` (target ≤ 150 ms, ≤ 100 MiB) and a one-task
 * reference run on carrier, from the prebuilt bundle (built before timing), medians of
 * {@link SPAWNS} spawns each. Peak RSS is getrusage's maxRSS of the CLI process, written at exit
 * by `bench/startup-rss.mjs` (`node --import` it) in spawns of their own, untimed: the hook sets up
 * Node's ESM loader and a file write, which made `node -e 0` ~10 ms slower (103–111 ms against
 * ~92) and every timed figure here with it, until session 21. The wall time includes Node's own start.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { median } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SPAWNS = 7;
const run = promisify(execFile);

/** Issue 15's bar for `switchboard --help`: start to exit, and peak RSS. */
const HELP_TARGET = { ms: 150, mib: 100 };

/** Medians over {@link SPAWNS} spawns of `node <args>`: wall ms and peak RSS in MiB. */
async function measure(args: string[]): Promise<{ ms: number; rssMib: number; minMs: number; maxMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-bench-startup-'));
  try {
    const ms: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < SPAWNS; i++) {
      const file = join(dir, `rss-${i}`);
      const t0 = performance.now();
      await run(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
      ms.push(performance.now() - t0);
      await run(process.execPath, ['--import', join(ROOT, 'bench/startup-rss.mjs'), ...args], {
        cwd: ROOT,
        env: { ...process.env, SB_MAXRSS_FILE: file },
        maxBuffer: 16 * 1024 * 1024,
      });
      rss.push(Number(await readFile(file, 'utf8')) / 1024);
    }
    return { ms: median(ms), rssMib: median(rss), minMs: Math.min(...ms), maxMs: Math.max(...ms) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Printable lines: one per command, with the machine's load average (the figures are noisy under load). */
export async function startupBenchLines(): Promise<string[]> {
  // Built before timing: the first start after a source change bundles the CLI (bin/prebuilt.mjs).
  await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: ROOT });
  const cases: [string, string[]][] = [
    ['node -e 0 (Node alone, for scale)', ['-e', '0']],
    ['switchboard --help', ['bin/switchboard.mjs', '--help']],
    [
      'run --agent reference, 1 carrier task',
      [
        'bin/switchboard.mjs',
        'run',
        '--domain',
        'carrier',
        '--agent',
        'reference',
        '--task-ids',
        'carrier-pay-balance-1',
        '--json',
      ],
    ],
  ];
  const lines: string[] = [];
  let bare: { ms: number; rssMib: number } | undefined;
  for (const [label, args] of cases) {
    const m = await measure(args);
    bare ??= m;
    const vsNode =
      m === bare
        ? ''
        : `  ·  ${(m.ms / bare.ms).toFixed(2)}× Node's own start, +${(m.ms - bare.ms).toFixed(0)} ms, +${(m.rssMib - bare.rssMib).toFixed(0)} MiB`;
    const target =
      label === 'switchboard --help'
        ? `  ·  target ≤ ${HELP_TARGET.ms} ms and ≤ ${HELP_TARGET.mib} MiB (ratio ${(m.ms / HELP_TARGET.ms).toFixed(2)}, ${(m.rssMib / HELP_TARGET.mib).toFixed(2)}; Node alone is ${(bare.ms / HELP_TARGET.ms).toFixed(2)} of the time target in this run)`
        : '';
    lines.push(
      `  ${label.padEnd(40)} start-to-exit median ${m.ms.toFixed(0)} ms (min ${m.minMs.toFixed(0)}, max ${m.maxMs.toFixed(0)}), peak RSS median ${m.rssMib.toFixed(0)} MiB${vsNode}${target}`,
    );
  }
  const { loadavg, cpus } = await import('node:os');
  lines.push(
    `  (${SPAWNS} spawns each; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores: other work on the machine slows these figures)`,
  );
  return lines;
}
