/** A progress bar on stderr (cli-progress), or nothing when `io.progress` is off. */
import cliProgress from 'cli-progress';
import type { CliIo } from './io.ts';

/** A bar of `total` steps labelled `label`; `tick()` advances it, `stop()` ends it. */
export function bar(io: CliIo, total: number, label: string): { tick(): void; stop(): void } {
  if (!io.progress) return { tick() {}, stop() {} };
  const b = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} · {duration_formatted}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  b.start(total, 0);
  return { tick: () => b.increment(), stop: () => b.stop() };
}
