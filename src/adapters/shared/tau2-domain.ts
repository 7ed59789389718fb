/**
 * The platform-neutral half of loading a tau2-bench data folder (db.json, tasks.json,
 * policy.md, split_tasks.json; telecom: the files of {@link TELECOM_FILES}) into one of our tau2
 * domains: parsing, validation, database import and the domain build. The Node loader
 * (`src/adapters/node/tau2-loader.ts`) reads the files from disk; the page reads them from a
 * folder the user opens or from its download store. Both call {@link buildTau2Domain} (telecom:
 * {@link buildTau2TelecomDomain}).
 */
import { z } from 'zod';
import type { SqlRow } from '../../core/ports/sql-db.ts';
import {
  DomainFileError,
  buildDomain,
  fieldPath,
  type Domain,
  type DomainDefinition,
} from '../../core/schema/domain.ts';
import type { Task } from '../../core/schema/task.ts';
import { PyJsonSyntaxError, parsePyJson, type PyJson } from '../../core/tau2/py-json.ts';
import { tau2Airline } from '../../../domains/tau2-airline/domain.ts';
import { importTau2Db as importAirlineDb } from '../../../domains/tau2-airline/db-json.ts';
import { tau2Retail } from '../../../domains/tau2-retail/domain.ts';
import { importTau2Db as importRetailDb } from '../../../domains/tau2-retail/db-json.ts';
import { tau2Telecom } from '../../../domains/tau2-telecom/domain.ts';
import { importTelecomDb } from '../../../domains/tau2-telecom/db-toml.ts';
import { Task as TaskSchema } from '../../core/schema/task.ts';

/** The tau2-bench domains we run. */
export type Tau2DomainName = 'tau2-airline' | 'tau2-retail' | 'tau2-telecom';
/** Every tau2 domain name, in the order we list them. */
export const TAU2_DOMAIN_NAMES: readonly Tau2DomainName[] = ['tau2-airline', 'tau2-retail', 'tau2-telecom'];
/** The tau2 domains whose data folder holds db.json, tasks.json, policy.md, split_tasks.json. */
export type Tau2JsonDomainName = Exclude<Tau2DomainName, 'tau2-telecom'>;

/** File names inside a tau2-bench domain data folder. */
export const TAU2_FILES = {
  db: 'db.json',
  tasks: 'tasks.json',
  policy: 'policy.md',
  splits: 'split_tasks.json',
} as const;

/** The airline and retail code halves and db.json importers. */
export const TAU2_DOMAINS: Readonly<
  Record<
    Tau2JsonDomainName,
    { def: DomainDefinition; importDb: (doc: PyJson, file: string) => Record<string, SqlRow[]> }
  >
> = {
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

/** A tau2 domain built from its files: our `Domain` plus the task splits. */
export interface Tau2BuiltDomain extends Domain {
  splits: Tau2Splits;
}

/** Timings of one {@link loadTau2Domain} call, ms. */
export interface Tau2LoadTimings {
  readFiles: number;
  /** db.json parse + validation + conversion to rows. */
  importDb: number;
  /** Tasks, policy and seed validation (`buildDomain`). */
  buildDomain: number;
}

/** Parse a JSON file with Python's semantics (dict order, int/float); errors name the file. */
export function parseJsonFile(path: string, text: string): PyJson {
  try {
    return parsePyJson(text);
  } catch (e) {
    if (e instanceof PyJsonSyntaxError) throw new DomainFileError(path, '', `not valid JSON (${e.message})`);
    throw e;
  }
}

export function parseSplits(path: string, text: string): Tau2Splits {
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
 * The tasks of one split, in the order of `tasks` (tau2's `get_tasks(split)`).
 * @throws Error naming the known splits when `split` is not one of them.
 */
export function tasksInSplit(tasks: readonly Task[], splits: Tau2Splits, split: string): Task[] {
  const ids = Object.hasOwn(splits, split) ? splits[split] : undefined;
  if (!ids) throw new Error(`unknown task split "${split}"; known splits: ${Object.keys(splits).join(', ')}`);
  const wanted = new Set(ids);
  return tasks.filter((t) => wanted.has(t.id));
}

/** The texts of a tau2 data folder plus our schema for the domain. */
export interface Tau2Texts {
  db: string;
  tasks: string;
  policy: string;
  splits: string;
  schema: string;
}

/**
 * Build tau2 domain `name` from the texts of its data folder (`paths` name the files in errors).
 * @param timings `importDb` and `buildDomain` are filled in when given.
 * @param options `seed: false`: db.json is neither read nor checked and the domain's seed is
 *   empty, for a caller whose database is already built from it (a rollout thread handed the
 *   CLI's thread's `DomainRuntime.built()`; tau2-airline's import is ~0.2–0.45 s of CPU).
 * @throws `DomainFileError` naming the file and field when a file is malformed (invalid JSON, a
 *   db.json record that does not fit tau2's data model, a task that does not fit our Task
 *   schema, a split naming an unknown task); Error for an unknown domain name.
 */
export function buildTau2Domain(
  name: Tau2JsonDomainName,
  texts: Tau2Texts,
  paths: Record<keyof Tau2Texts, string>,
  timings?: Partial<Tau2LoadTimings>,
  options: { seed?: boolean } = {},
): Tau2BuiltDomain {
  const entry = Object.hasOwn(TAU2_DOMAINS, name) ? TAU2_DOMAINS[name] : undefined;
  if (!entry) throw new Error(`unknown tau2 domain "${String(name)}"; known: ${Object.keys(TAU2_DOMAINS).join(', ')}`);
  let t0 = performance.now();
  const seed = options.seed === false ? {} : entry.importDb(parseJsonFile(paths.db, texts.db), paths.db);
  if (timings) timings.importDb = performance.now() - t0;
  t0 = performance.now();
  const domain = buildDomain(
    entry.def,
    { policy: texts.policy, schema: texts.schema, seed: JSON.stringify(seed), tasks: texts.tasks },
    {
      policy: paths.policy,
      schema: paths.schema,
      seed: paths.db,
      tasks: paths.tasks,
    },
  );
  if (timings) timings.buildDomain = performance.now() - t0;
  const splits = parseSplits(paths.splits, texts.splits);
  const known = new Set(domain.tasks.map((t) => t.id));
  for (const [split, ids] of Object.entries(splits)) {
    ids.forEach((id, i) => {
      if (!known.has(id)) throw new DomainFileError(paths.splits, `${split}[${i}]`, `unknown task id "${id}"`);
    });
  }
  return { ...domain, splits };
}

/**
 * File names inside tau2-bench's telecom data folder (`data/tau2/domains/telecom/`). The agent's
 * policy is `main_policy.md` joined with the tech support manual, as tau2 joins them.
 */
export const TELECOM_FILES = {
  db: 'db.toml',
  userDb: 'user_db.toml',
  tasks: 'tasks.json',
  splits: 'split_tasks.json',
  policy: 'main_policy.md',
  techSupport: 'tech_support_manual.md',
} as const;

/** tau2's default telecom split: `base` (114 tasks). */
export const TELECOM_DEFAULT_SPLIT = 'base';

/** The agent's policy as tau2 builds it from the main policy and the tech support manual. */
export function telecomPolicy(main: string, techSupport: string): string {
  return `<main_policy>\n${main}\n</main_policy>\n<tech_support_policy>\n${techSupport}\n</tech_support_policy>`;
}

/** The texts of a telecom data folder plus our schema. */
export type TelecomTexts = Record<keyof typeof TELECOM_FILES | 'schema', string>;

/**
 * Build tau2-telecom from the texts of its data folder, keeping only the tasks of one split:
 * tasks.json holds 2,285 tasks (14 MB), so it is parsed once and only the selected tasks are
 * validated and kept. `splits` still lists every split.
 *
 * @param split `base` (default, tau2's), `small`, `full`, `train`, `test`, or any split the file has.
 * @throws `DomainFileError` naming the file and field when a file is malformed (TOML that does not
 *   fit tau2's data model, a task that does not fit our Task schema, a split naming a task that
 *   tasks.json lacks); Error for an unknown split.
 * @param options.seed false: the databases are neither read nor checked and the seed is empty
 *   (as {@link buildTau2Domain}'s).
 */
export function buildTau2TelecomDomain(
  texts: TelecomTexts,
  paths: TelecomTexts,
  options: { split?: string; seed?: boolean } = {},
  timings?: Partial<Tau2LoadTimings>,
): Tau2BuiltDomain {
  let t0 = performance.now();
  const seed =
    options.seed === false
      ? {}
      : importTelecomDb({ db: texts.db, userDb: texts.userDb }, { db: paths.db, userDb: paths.userDb });
  if (timings) timings.importDb = performance.now() - t0;
  t0 = performance.now();
  const splits = parseSplits(paths.splits, texts.splits);
  const split = options.split ?? TELECOM_DEFAULT_SPLIT;
  const wanted = Object.hasOwn(splits, split) ? new Set(splits[split]) : undefined;
  if (!wanted) throw new Error(`unknown task split "${split}"; known splits: ${Object.keys(splits).join(', ')}`);
  let all: unknown;
  try {
    all = JSON.parse(texts.tasks);
  } catch (e) {
    throw new DomainFileError(paths.tasks, '', `not valid JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(all)) throw new DomainFileError(paths.tasks, '', 'expected a list of tasks');
  const ids = new Set<string>();
  const selected: unknown[] = [];
  all.forEach((raw, i) => {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') throw new DomainFileError(paths.tasks, `[${i}].id`, 'expected a string task id');
    ids.add(id);
    if (!wanted.has(id)) return;
    const parsed = TaskSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DomainFileError(
        paths.tasks,
        `[${i}]${fieldPath(issue.path) ? `.${fieldPath(issue.path)}` : ''}`,
        `${issue.message} (task ${id})`,
      );
    }
    selected.push(raw);
  });
  for (const [name, list] of Object.entries(splits)) {
    list.forEach((id, i) => {
      if (!ids.has(id)) throw new DomainFileError(paths.splits, `${name}[${i}]`, `unknown task id "${id}"`);
    });
  }
  const domain = buildDomain(
    tau2Telecom,
    {
      policy: telecomPolicy(texts.policy, texts.techSupport),
      schema: texts.schema,
      seed: JSON.stringify(seed),
      tasks: JSON.stringify(selected),
    },
    { policy: paths.policy, schema: paths.schema, seed: paths.db, tasks: paths.tasks },
  );
  if (timings) timings.buildDomain = performance.now() - t0;
  return { ...domain, splits };
}
