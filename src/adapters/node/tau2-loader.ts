/**
 * Load tau2-bench's airline, retail and telecom domains from a tau2-bench data folder (Node). The
 * folder is the user's — a tau2-bench checkout's `data/tau2/domains/<airline|retail|telecom>/` —
 * and holds `db.json`, `tasks.json`, `policy.md` and `split_tasks.json` (telecom: the files of
 * `TELECOM_FILES`); the code half and `schema.sql` come from `domains/tau2-<name>/`.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  TAU2_DOMAINS,
  TAU2_DOMAIN_NAMES,
  TAU2_FILES,
  TELECOM_FILES,
  buildTau2Domain,
  buildTau2TelecomDomain,
  parseSplits,
  tasksInSplit,
  type Tau2BuiltDomain,
  type Tau2DomainName,
  type Tau2JsonDomainName,
  type Tau2LoadTimings,
  type Tau2Splits,
} from '../shared/tau2-domain.ts';

export { TAU2_DOMAIN_NAMES, TAU2_FILES, tasksInSplit };
export type { Tau2DomainName, Tau2LoadTimings, Tau2Splits };

/** A loaded tau2 domain: our `Domain` plus the task splits of its data folder. */
export interface Tau2Domain extends Tau2BuiltDomain {
  /** The folder the data was read from. */
  dataDir: string;
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

/**
 * Read `split_tasks.json` of a tau2-bench data folder.
 *
 * @returns the task ids of each split (`base`, `train`, `test`, and any other the file has).
 * @throws Error naming the path when the folder or file is missing; `DomainFileError` naming the
 *   file and field when it is not valid JSON or a split is not a list of ids.
 */
export async function taskSplits(dataDir: string): Promise<Tau2Splits> {
  // airline, retail and telecom name it alike.
  await checkDir(dataDir);
  const path = join(dataDir, TAU2_FILES.splits);
  return parseSplits(path, await readText(path));
}

/** Absolute path of the `schema.sql` of a tau2 domain folder in this repository. */
export function tau2SchemaPath(name: Tau2DomainName): string {
  return fileURLToPath(new URL(`../../../domains/${name}/schema.sql`, import.meta.url));
}

/**
 * Load a tau2-bench domain: our code half and schema with the user's data folder. The seed is
 * db.json (telecom: db.toml and user_db.toml) imported into the schema's tables.
 *
 * @param name `tau2-airline`, `tau2-retail` or `tau2-telecom`.
 * @param dataDir the tau2-bench data folder of that domain (absolute, or relative to the working
 *   directory).
 * @param timings filled with how long each step took, when given.
 * @param options `split`: telecom's task split; `seed: false`: the database files are not
 *   imported and the seed is empty (see {@link buildTau2Domain}).
 * @throws Error naming the path when the folder or a file is missing; `DomainFileError` naming
 *   the file (full path) and field when a file is malformed (invalid JSON, a db.json record that
 *   does not fit tau2's data model, a task that does not fit our Task schema, a split naming an
 *   unknown task).
 */
export async function loadTau2Domain(
  name: Tau2DomainName,
  dataDir: string,
  timings?: Tau2LoadTimings,
  options: { split?: string; seed?: boolean } = {},
): Promise<Tau2Domain> {
  if (!TAU2_DOMAIN_NAMES.includes(name))
    throw new Error(`unknown tau2 domain "${String(name)}"; known: ${TAU2_DOMAIN_NAMES.join(', ')}`);
  const t0 = performance.now();
  await checkDir(dataDir);
  if (name === 'tau2-telecom') {
    const paths = Object.fromEntries([
      ...Object.entries(TELECOM_FILES).map(([k, f]) => [k, join(dataDir, f)]),
      ['schema', tau2SchemaPath(name)],
    ]) as Record<keyof typeof TELECOM_FILES | 'schema', string>;
    const entries = await Promise.all(Object.entries(paths).map(async ([k, p]) => [k, await readText(p)] as const));
    const texts = Object.fromEntries(entries) as typeof paths;
    if (timings) timings.readFiles = performance.now() - t0;
    return { ...buildTau2TelecomDomain(texts, paths, options, timings), dataDir };
  }
  if (!Object.hasOwn(TAU2_DOMAINS, name)) throw new Error(`unknown tau2 domain "${String(name)}"`);
  const paths = {
    db: join(dataDir, TAU2_FILES.db),
    tasks: join(dataDir, TAU2_FILES.tasks),
    policy: join(dataDir, TAU2_FILES.policy),
    splits: join(dataDir, TAU2_FILES.splits),
    schema: tau2SchemaPath(name),
  };
  const [db, tasks, policy, splits, schema] = await Promise.all([
    readText(paths.db),
    readText(paths.tasks),
    readText(paths.policy),
    readText(paths.splits),
    readText(paths.schema),
  ]);
  if (timings) timings.readFiles = performance.now() - t0;
  return {
    ...buildTau2Domain(name as Tau2JsonDomainName, { db, tasks, policy, splits, schema }, paths, timings, {
      seed: options.seed !== false,
    }),
    dataDir,
  };
}
