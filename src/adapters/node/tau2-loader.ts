/**
 * Load tau2-bench's airline and retail domains from a tau2-bench data folder (Node). The folder
 * is the user's — a tau2-bench checkout's `data/tau2/domains/<airline|retail>/` — and holds
 * `db.json`, `tasks.json`, `policy.md` and `split_tasks.json`; the code half and `schema.sql` come
 * from `domains/tau2-airline/` and `domains/tau2-retail/`.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { SqlRow } from '../../core/ports/sql-db.ts';
import { DomainFileError, buildDomain, fieldPath, type Domain, type DomainDefinition } from '../../core/schema/domain.ts';
import type { Task } from '../../core/schema/task.ts';
import { PyJsonSyntaxError, parsePyJson, type PyJson } from '../../core/tau2/py-json.ts';
import { tau2Airline } from '../../../domains/tau2-airline/domain.ts';
import { importTau2Db as importAirlineDb } from '../../../domains/tau2-airline/db-json.ts';
import { tau2Retail } from '../../../domains/tau2-retail/domain.ts';
import { importTau2Db as importRetailDb } from '../../../domains/tau2-retail/db-json.ts';

/** The tau2-bench domains we run. */
export type Tau2DomainName = 'tau2-airline' | 'tau2-retail';

/** File names inside a tau2-bench domain data folder. */
export const TAU2_FILES = {
  db: 'db.json',
  tasks: 'tasks.json',
  policy: 'policy.md',
  splits: 'split_tasks.json',
} as const;

const DOMAINS: Readonly<Record<Tau2DomainName, { def: DomainDefinition; importDb: (doc: PyJson, file: string) => Record<string, SqlRow[]> }>> = {
  'tau2-airline': { def: tau2Airline, importDb: importAirlineDb },
  'tau2-retail': { def: tau2Retail, importDb: importRetailDb },
};

/** Task id lists of `split_tasks.json` (tau2's `get_tasks_split`): `base` is every task. */
export interface Tau2Splits {
  base: string[];
  train: string[];
  test: string[];
  /** Any further split the file names. */
  [split: string]: string[];
}

const SplitsFile = z.record(z.string(), z.array(z.string())).superRefine((splits, ctx) => {
  for (const split of ['base', 'train', 'test']) {
    if (!Object.hasOwn(splits, split)) ctx.addIssue({ code: 'custom', path: [split], message: 'missing split' });
  }
});

/** A loaded tau2 domain: our `Domain` plus the task splits of its data folder. */
export interface Tau2Domain extends Domain {
  splits: Tau2Splits;
  /** The folder the data was read from. */
  dataDir: string;
}

/** Timings of one {@link loadTau2Domain} call, ms. */
export interface Tau2LoadTimings {
  readFiles: number;
  /** db.json parse + validation + conversion to rows. */
  importDb: number;
  /** Tasks, policy and seed validation (`buildDomain`). */
  buildDomain: number;
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`${path}: cannot read${code === 'ENOENT' ? ' (no such file)' : ''} (${(e as Error).message})`);
  }
}

async function checkDir(dataDir: string): Promise<void> {
  let isDir = false;
  try {
    isDir = (await stat(dataDir)).isDirectory();
  } catch {
    throw new Error(`${dataDir}: no such tau2-bench data folder (expected ${Object.values(TAU2_FILES).join(', ')})`);
  }
  if (!isDir) throw new Error(`${dataDir}: not a folder (expected a tau2-bench data folder)`);
}

/** Parse a JSON file with Python's semantics (dict order, int/float); errors name the file. */
function parseJsonFile(path: string, text: string): PyJson {
  try {
    return parsePyJson(text);
  } catch (e) {
    if (e instanceof PyJsonSyntaxError) throw new DomainFileError(path, '', `not valid JSON (${e.message})`);
    throw e;
  }
}

function parseSplits(path: string, text: string): Tau2Splits {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new DomainFileError(path, '', `not valid JSON (${(e as Error).message})`);
  }
  const parsed = SplitsFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(path, fieldPath(issue.path), issue.message);
  }
  return parsed.data as Tau2Splits;
}

/**
 * Read `split_tasks.json` of a tau2-bench data folder.
 *
 * @returns the task ids of each split (`base`, `train`, `test`, and any other the file has).
 * @throws Error naming the path when the folder or file is missing; `DomainFileError` naming the
 *   file and field when it is not valid JSON or a split is not a list of ids.
 */
export async function taskSplits(dataDir: string): Promise<Tau2Splits> {
  await checkDir(dataDir);
  const path = join(dataDir, TAU2_FILES.splits);
  return parseSplits(path, await readText(path));
}

/**
 * The tasks of one split, in the order of `tasks` (tau2's `get_tasks(split)`).
 * @throws Error naming the known splits when `split` is not one of them.
 */
export function tasksInSplit(tasks: readonly Task[], splits: Tau2Splits, split: string): Task[] {
  const ids = Object.hasOwn(splits, split) ? splits[split] : undefined;
  if (!ids) throw new Error(`unknown task split "${split}"; known splits: ${Object.keys(splits).join(', ')}`);
  const wanted = new Set(ids);
  return tasks.filter((t) => wanted.has(t.id));
}

/** Absolute path of the `schema.sql` of a tau2 domain folder in this repository. */
export function tau2SchemaPath(name: Tau2DomainName): string {
  return fileURLToPath(new URL(`../../../domains/${name}/schema.sql`, import.meta.url));
}

/**
 * Load a tau2-bench domain: our code half and schema with the user's data folder. The seed is
 * db.json imported into the schema's tables.
 *
 * @param name `tau2-airline` or `tau2-retail`.
 * @param dataDir the tau2-bench data folder of that domain (absolute, or relative to the working
 *   directory).
 * @param timings filled with how long each step took, when given.
 * @throws Error naming the path when the folder or a file is missing; `DomainFileError` naming
 *   the file (full path) and field when a file is malformed (invalid JSON, a db.json record that
 *   does not fit tau2's data model, a task that does not fit our Task schema, a split naming an
 *   unknown task).
 */
export async function loadTau2Domain(name: Tau2DomainName, dataDir: string, timings?: Tau2LoadTimings): Promise<Tau2Domain> {
  const entry = Object.hasOwn(DOMAINS, name) ? DOMAINS[name] : undefined;
  if (!entry) throw new Error(`unknown tau2 domain "${String(name)}"; known: ${Object.keys(DOMAINS).join(', ')}`);
  let t0 = performance.now();
  await checkDir(dataDir);
  const paths = {
    db: join(dataDir, TAU2_FILES.db),
    tasks: join(dataDir, TAU2_FILES.tasks),
    policy: join(dataDir, TAU2_FILES.policy),
    splits: join(dataDir, TAU2_FILES.splits),
    schema: tau2SchemaPath(name),
  };
  const [dbText, tasksText, policy, splitsText, schema] = await Promise.all([
    readText(paths.db),
    readText(paths.tasks),
    readText(paths.policy),
    readText(paths.splits),
    readText(paths.schema),
  ]);
  if (timings) timings.readFiles = performance.now() - t0;
  t0 = performance.now();
  const seed = entry.importDb(parseJsonFile(paths.db, dbText), paths.db);
  if (timings) timings.importDb = performance.now() - t0;
  t0 = performance.now();
  const domain = buildDomain(entry.def, { policy, schema, seed: JSON.stringify(seed), tasks: tasksText }, {
    policy: paths.policy,
    schema: paths.schema,
    seed: paths.db,
    tasks: paths.tasks,
  });
  if (timings) timings.buildDomain = performance.now() - t0;
  const splits = parseSplits(paths.splits, splitsText);
  const known = new Set(domain.tasks.map((t) => t.id));
  for (const [split, ids] of Object.entries(splits)) {
    ids.forEach((id, i) => {
      if (!known.has(id)) throw new DomainFileError(paths.splits, `${split}[${i}]`, `unknown task id "${id}"`);
    });
  }
  return { ...domain, splits, dataDir };
}
