/**
 * `switchboard data tau2 [--only airline,retail,telecom,noise] [--base-url <url>] [--json]`:
 * download tau2-bench's data files at the pinned commit into the cache (see
 * src/adapters/node/tau2-data.ts), checking every file against the manifest in
 * src/core/tau2/data-manifest.ts. Exit 0 when every part is present and verified, 1 when a
 * download or check failed (the message names the file), 2 on bad usage.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { TAU2_DATA_MANIFEST, TAU2_DATA_PARTS, Tau2DataError } from '../../core/tau2/data-manifest.ts';
import { downloadTau2Data, tau2CacheDir, type Tau2PartResult } from '../../adapters/node/tau2-data.ts';
import type { CliIo } from '../io.ts';
import { UsageError } from '../participants.ts';

/** Parse `--only a,b`: parts of {@link TAU2_DATA_PARTS}, no repeats. */
function partsOption(value: string): string[] {
  const parts = [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = parts.filter((p) => !(TAU2_DATA_PARTS as readonly string[]).includes(p));
  if (parts.length === 0 || unknown.length) {
    throw new InvalidArgumentError(`--only takes parts from ${TAU2_DATA_PARTS.join(', ')}`);
  }
  return parts;
}

interface DataOpts {
  only?: string[];
  baseUrl?: string;
  json?: boolean;
}

/** Register `data` on the program. */
export function registerData(program: Command, io: CliIo, setCode: (c: number) => void): Command {
  return program
    .command('data')
    .argument('<set>', 'the data set: tau2')
    .option('--only <parts>', `comma-separated parts (default all: ${TAU2_DATA_PARTS.join(',')})`, partsOption)
    .option(
      '--base-url <url>',
      'raw-file base URL (default $SWITCHBOARD_TAU2_BASE_URL, else https://raw.githubusercontent.com/sierra-research/tau2-bench)',
    )
    .option('--json', 'print one JSON document')
    .action(async (set: string, opts: DataOpts) => {
      if (set !== 'tau2') throw new UsageError(`unknown data set "${set}" (known: tau2)`);
      const cacheDir = tau2CacheDir();
      if (!opts.json) io.err(`tau2-bench ${TAU2_DATA_MANIFEST.commit.slice(0, 12)} → ${cacheDir}`);
      let results: Tau2PartResult[];
      try {
        results = await downloadTau2Data({
          ...(opts.only ? { parts: opts.only } : {}),
          ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
          log: opts.json ? () => {} : (line) => io.err(line),
        });
      } catch (e) {
        if (!(e instanceof Tau2DataError)) throw e;
        const message = e.message.includes(': cannot reach ')
          ? `${e.message}; downloading needs access to that host (or --base-url of a mirror with the same layout)`
          : e.message;
        io.err(`switchboard: ${message}`);
        if (opts.json) io.out(JSON.stringify({ error: message }));
        setCode(1);
        return;
      }
      if (opts.json)
        io.out(JSON.stringify({ commit: TAU2_DATA_MANIFEST.commit, cache: cacheDir, parts: results }, null, 2));
      else {
        for (const r of results) {
          io.out(`${r.part}: ${r.status}, ${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB, verified → ${r.dir}`);
        }
      }
    });
}
