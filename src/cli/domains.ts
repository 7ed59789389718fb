/**
 * Domain resolution for every command: a built-in name, a domain folder, or a tau2-bench domain
 * with its data folder (`--data`).
 */
import { DomainFileError, type Domain } from '../core/schema/domain.ts';
import type { Task } from '../core/schema/task.ts';
import { DomainRuntime, type BuiltDatabase } from '../core/env/environment.ts';
import { taskDefects } from '../core/gate/gate.ts';
import { sqlJsFactory } from '../adapters/shared/sqljs-db.ts';
import { loadDomain } from '../adapters/node/load-domain.ts';
import {
  TAU2_DOMAIN_NAMES,
  loadTau2Domain,
  tasksInSplit,
  type Tau2Domain,
  type Tau2DomainName,
} from '../adapters/node/tau2-loader.ts';
import { UsageError } from './participants.ts';
import { cachedTau2Part, tau2CacheDir } from '../adapters/node/tau2-data.ts';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tasksWithBank, type TaskBank } from '../core/evolution/bank.ts';
import { readBank } from '../adapters/node/task-bank.ts';

const TAU2: readonly string[] = TAU2_DOMAIN_NAMES;

/** Where a domain comes from on the command line. */
export interface DomainSpec {
  /** `carrier`, a domain folder path, or `tau2-airline` / `tau2-retail` / `tau2-telecom`. */
  domain: string;
  /**
   * tau2-bench data folder (`data/tau2/domains/<name>/` of a checkout); tau2 domains only.
   * Default: the cache filled by `switchboard data tau2`.
   */
  data?: string;
  /**
   * tau2-telecom only: the split whose tasks are loaded (default `base`); its 14 MB tasks.json is
   * not validated whole. Other domains load every task.
   */
  split?: string;
}

/** A loaded domain ready for episodes. */
export interface OpenDomain {
  domain: Domain;
  runtime: DomainRuntime;
}

/**
 * The data folder of a tau2 domain given no `--data`: `$SWITCHBOARD_TAU2_DATA/<part>` when that
 * variable is set (a folder holding `airline/`, `retail/`, `telecom/`, as the tests read it), else
 * the cache `switchboard data tau2` fills.
 * @throws UsageError naming the variable when it is set but holds no `<part>/` folder; telling the
 *   user to run `npx switchboard data tau2` or pass `--data` when the cache does not hold it.
 */
export function tau2DataFromCache(domain: string, env: NodeJS.ProcessEnv = process.env): string {
  const part = domain.slice('tau2-'.length);
  const root = env.SWITCHBOARD_TAU2_DATA;
  if (root) {
    const dir = join(root, part);
    if (existsSync(dir) && statSync(dir).isDirectory()) return dir;
    throw new UsageError(
      `${domain}: SWITCHBOARD_TAU2_DATA=${root} has no ${part}/ folder (it should hold airline/, retail/, telecom/); unset it to use the cache, or pass --data <dir>`,
    );
  }
  const dir = cachedTau2Part(part, env);
  if (dir) return dir;
  throw new UsageError(
    `${domain} needs tau2-bench's ${part} data, which is not in the cache (${join(tau2CacheDir(), part)}): run \`npx switchboard data tau2\` to download it, or pass --data <dir> (data/tau2/domains/${part}/ of a tau2-bench checkout), or set SWITCHBOARD_TAU2_DATA to a folder holding ${part}/`,
  );
}

/**
 * Load and build a domain and check its data (schema, seed, every task's initial rows). A tau2
 * domain reads `spec.data`, else the cache. With `built` (another thread's runtime of the same
 * domain, `DomainRuntime.built`), its database is used instead of building it again (a tau2
 * domain's seed files are then not imported either: its `seed` is empty). Loader
 * errors become {@link UsageError}s (one line, exit 2) unless they are {@link DomainFileError}s,
 * which already name the file and field.
 */
export async function openDomain(spec: DomainSpec, built?: BuiltDatabase): Promise<OpenDomain> {
  const isTau2 = TAU2.includes(spec.domain);
  if (!isTau2 && spec.data)
    throw new UsageError(`--data is only for the tau2 domains (${TAU2.join(', ')}), not "${spec.domain}"`);
  const domain = await (isTau2
    ? loadTau2Domain(spec.domain as Tau2DomainName, spec.data ?? tau2DataFromCache(spec.domain), undefined, {
        split: spec.split,
        // The database is built already: its seed files are not imported again.
        ...(built ? { seed: false } : {}),
      })
    : loadDomain(spec.domain)
  ).catch((e: unknown) => {
    if (e instanceof DomainFileError) throw e;
    const message = (e as Error).message;
    throw new UsageError(
      message.startsWith('unknown domain') ? `${message}; tau2-bench domains: ${TAU2.join(', ')}` : message,
    );
  });
  let runtime: DomainRuntime;
  try {
    runtime = built
      ? DomainRuntime.fromBuilt(domain, built, await sqlJsFactory())
      : await DomainRuntime.create(domain, await sqlJsFactory());
    // Every task's initial rows, before any rollout is spent (issue 11).
    await runtime.checkTaskStates();
  } catch (e) {
    if (e instanceof DomainFileError) throw e;
    throw new UsageError(
      `domain ${domain.name}: building its database from the schema and seed failed: ${(e as Error).message}`,
    );
  }
  return { domain, runtime };
}

/**
 * The domain with a task bank's tasks ({@link tasksWithBank}: bank versions replace same-id
 * tasks, new tasks follow), on the same database image. Without `dir`, the domain as it is and
 * an empty bank.
 * @throws DomainFileError naming the bank file and field of the first problem
 */
export async function withBankTasks(
  open: OpenDomain,
  dir: string | undefined,
): Promise<OpenDomain & { bank: TaskBank }> {
  if (!dir) return { ...open, bank: { domain: open.domain.name, tasks: [], versions: [] } };
  const { bank } = await readBank(dir, open.domain.name);
  const runtime = open.runtime.withTasks(tasksWithBank(open.domain.tasks, bank));
  await runtime.checkTaskStates();
  return { domain: runtime.domain, runtime, bank };
}

/**
 * The gate's static checks ({@link taskDefects}) on the tasks a command will run, before it
 * spends any rollout (issue 11): the gate refuses such a task, `run` stops.
 * @throws DomainFileError naming the tasks file and the field of the first defect.
 */
export function checkTaskDefects(open: OpenDomain, tasks: readonly Task[]): void {
  for (const task of tasks) {
    const d = taskDefects(open.runtime, task)[0];
    if (!d) continue;
    const at = open.domain.tasks.indexOf(task);
    throw new DomainFileError(
      open.domain.files?.tasks ?? 'tasks.json',
      `${at >= 0 ? `[${at}]` : `(task ${task.id})`}.${d.field}`,
      `${d.message} (task ${task.id})`,
    );
  }
}

/**
 * {@link openDomain} (on `built` when given), then the tasks a command works on ({@link
 * selectTasks}), checked by the gate's static checks ({@link checkTaskDefects}) before any
 * rollout is spent.
 * @throws as {@link openDomain}, {@link selectTasks} and {@link checkTaskDefects}.
 */
export async function openTasks(
  spec: DomainSpec,
  select: { taskIds?: string; split?: string },
  built?: BuiltDatabase,
): Promise<OpenDomain & { tasks: Task[] }> {
  const open = await openDomain({ ...spec, split: spec.split ?? select.split }, built);
  const tasks = selectTasks(open.domain, select);
  checkTaskDefects(open, tasks);
  return { ...open, tasks };
}

/**
 * The tasks a command works on: `--split` (tau2 domains: base, train, test) then `--task-ids`.
 * @throws UsageError for an unknown split, unknown ids, or a selection that is empty.
 */
export function selectTasks(domain: Domain, opts: { taskIds?: string; split?: string }): Task[] {
  let tasks: Task[] = domain.tasks;
  if (opts.split !== undefined) {
    const splits = (domain as Partial<Tau2Domain>).splits;
    if (!splits)
      throw new UsageError(`--split needs a domain with task splits (${TAU2.join(', ')}), not ${domain.name}`);
    try {
      tasks = tasksInSplit(tasks, splits, opts.split);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  if (opts.taskIds !== undefined) {
    const wanted = [
      ...new Set(
        opts.taskIds
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ];
    if (wanted.length === 0) throw new UsageError('--task-ids names no task');
    const known = new Set(tasks.map((t) => t.id));
    const unknown = wanted.filter((id) => !known.has(id));
    if (unknown.length) {
      throw new UsageError(
        `unknown task id(s) in ${domain.name}${opts.split ? ` split ${opts.split}` : ''}: ${unknown.join(', ')}`,
      );
    }
    tasks = tasks.filter((t) => wanted.includes(t.id));
  }
  if (tasks.length === 0) throw new UsageError(`no task selected in ${domain.name}`);
  return tasks;
}
