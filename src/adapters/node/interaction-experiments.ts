/**
 * Files for `switchboard metrics`: tau2-bench voice experiments (a `results.json` with a
 * `simulations/` folder beside it, or one results file with the simulations inline, or any
 * folder holding such experiments) read into metric calls per domain.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { InputError } from '../../core/errors.ts';
import type { MetricCall } from '../../core/duplex/interaction-metrics.ts';
import { tau2ResultsInfo, tau2Simulation } from '../../core/duplex/tau2-ticks.ts';
import { DuplexRecord, spanTicks } from '../../core/duplex/record.ts';
import { FileFieldError } from '../../core/errors.ts';

/** One experiment (one domain) ready for the panel. */
export interface LoadedExperiment {
  /** The results file it came from. */
  file: string;
  domain: string;
  /** The recorded tick length (s), or null. */
  tick_duration_sec: number | null;
  calls: (MetricCall & { id: string; task_id: string })[];
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false;
}

async function findBelow(dir: string, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === name) out.push(join(entry.parentPath, entry.name));
  }
  return out.sort();
}

/** Our runs' trajectories of `--duplex` calls, per domain, with their tick length. */
export interface LoadedRun {
  file: string;
  /** Domain → calls (valid trajectories with a timeline only). */
  domains: Map<string, MetricCall[]>;
  /** Tick length of the calls in ms (null when none had a timeline). */
  tick_ms: number | null;
}

/**
 * True for a path that names our run: a `.jsonl` file or a folder holding `trajectories.jsonl`.
 */
export async function isRunPath(path: string): Promise<boolean> {
  const p = resolve(path);
  if (p.endsWith('.jsonl')) return true;
  return (await stat(join(p, 'trajectories.jsonl')).catch(() => null))?.isFile() ?? false;
}

/**
 * Read a run's `trajectories.jsonl` (or the file itself) line by line, keeping the duplex
 * records of valid trajectories.
 *
 * @throws FileFieldError naming the file, line and field of a malformed line or duplex record.
 */
export async function loadRun(path: string): Promise<LoadedRun> {
  const p = resolve(path);
  const file = p.endsWith('.jsonl') ? p : join(p, 'trajectories.jsonl');
  if (!(await stat(file).catch(() => null))?.isFile()) throw new InputError(`${path}: no such file`);
  const domains = new Map<string, MetricCall[]>();
  let tickMs: number | null = null;
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    let t: { valid?: unknown; domain?: unknown; duplex?: unknown };
    try {
      t = JSON.parse(line);
    } catch (e) {
      throw new FileFieldError(file, `line ${n}`, `not JSON (${(e as Error).message})`);
    }
    if (t.duplex === undefined || t.valid !== true) continue;
    const r = DuplexRecord.safeParse(t.duplex);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw new FileFieldError(file, `line ${n}: duplex.${issue.path.join('.')}`, issue.message);
    }
    if (r.data.total_ticks === 0) continue;
    const domain = typeof t.domain === 'string' ? t.domain : '';
    const list = domains.get(domain) ?? [];
    list.push({ ticks: spanTicks(r.data) });
    domains.set(domain, list);
    tickMs = r.data.turn_taking.tick_ms;
  }
  return { file, domains, tick_ms: tickMs };
}

/**
 * The results files named by `paths`: a `results.json` file, a folder holding one, or a folder
 * searched below for them. Sorted, without duplicates.
 *
 * @throws InputError for a path that does not exist or a folder without any results.json (the
 * message names the run outputs, `trajectories.jsonl` folders, found below it instead).
 */
export async function discoverResults(paths: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const raw of paths) {
    const p = resolve(raw);
    const info = await stat(p).catch(() => null);
    if (!info) throw new InputError(`${raw}: no such file or folder`);
    if (info.isFile()) found.add(p);
    else if ((await stat(join(p, 'results.json')).catch(() => null))?.isFile()) found.add(join(p, 'results.json'));
    else {
      const below = await findBelow(p, 'results.json');
      if (below.length === 0) {
        // Our runs are not searched for (a folder of runs may mix turn-based and --duplex ones), but
        // a folder holding them is named in the message, so that the user knows what to pass.
        const runs = (await findBelow(p, 'trajectories.jsonl')).map(dirname);
        const hint = runs.length
          ? `; a run's output is read when named itself, its --out folder or trajectories.jsonl (below it: ${runs.slice(0, 3).join(', ')}${runs.length > 3 ? ', …' : ''})`
          : '';
        throw new InputError(`${raw}: no results.json in this folder or below it${hint}`);
      }
      for (const f of below) found.add(f);
    }
  }
  return [...found].sort();
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch((e: Error) => {
    throw new InputError(`${file}: cannot read (${e.message})`);
  });
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file}: not JSON (${(e as Error).message})`);
  }
}

/**
 * Load one experiment: the folder format (every `simulations/*.json` beside the results file,
 * in name order) when that folder exists, else the simulations inline in the results file.
 *
 * @throws InputError / FileFieldError naming the file and field of malformed input.
 */
export async function loadExperiment(file: string): Promise<LoadedExperiment> {
  const info = tau2ResultsInfo(await readJson(file), file);
  const simsDir = join(dirname(file), 'simulations');
  const calls: LoadedExperiment['calls'] = [];
  if (await isDir(simsDir)) {
    const names = (await readdir(simsDir)).filter((n) => n.endsWith('.json')).sort();
    for (const n of names) {
      const simFile = join(simsDir, n);
      calls.push(tau2Simulation(await readJson(simFile), simFile));
    }
  } else {
    (info.simulations ?? []).forEach((s, i) => calls.push(tau2Simulation(s, file, `simulations[${i}]`)));
  }
  return { file, domain: info.domain, tick_duration_sec: info.tick_duration_sec, calls };
}
