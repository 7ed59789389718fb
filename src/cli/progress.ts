/** A progress bar on stderr (cli-progress), or nothing when `io.progress` is off. */
import { createRequire } from 'node:module';
import type CliProgress from 'cli-progress';
import type { CliIo } from './io.ts';

/**
 * `cli-progress`, loaded when a bar is first shown (it is CommonJS, so `require` loads it
 * synchronously): importing it cost ~15 ms of every CLI start (issue 15 item 6), and runs
 * without a terminal (`--json`, pipes) show no bar.
 */
let cliProgress: typeof CliProgress | undefined;

/** A bar of `total` steps labelled `label`; `tick()` advances it, `stop()` ends it. */
export function bar(io: CliIo, total: number, label: string): { tick(): void; stop(): void } {
  if (!io.progress) return { tick() {}, stop() {} };
  cliProgress ??= createRequire(import.meta.url)('cli-progress') as typeof CliProgress;
  const b = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} · {duration_formatted}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  b.start(total, 0);
  return { tick: () => b.increment(), stop: () => b.stop() };
}
