/**
 * The versioned task bank: every task carries its lineage (version, parent, generation, the
 * reason for each change; `Task.lineage`), and a bank folder holds
 * - `tasks.json`: the current version of every task the bank adds or changes (hardened variants,
 *   repaired tasks); the domain's own files are never modified (tau2 tasks stay as they are);
 * - `versions.jsonl`: every version of those tasks ever admitted, one task per line, so old
 *   trajectories stay re-gradable against the version they were scored with;
 * - `manifest.json` ({@link BankManifest}): one entry per task (base and bank) with its lineage
 *   and a content digest.
 * A trajectory records the version of its task (`task_version`); `replay --fresh-tasks`
 * re-scores against the current version instead (as tau2-bench re-evaluates results with fresh
 * task definitions).
 */
import { z } from 'zod';
import { hash32 } from '../ports/rng.ts';
import { TaskChange, type Lineage, type Task } from '../schema/task.ts';

/** Lineage of a task, with the defaults of an original task (version 1, generation 0). */
export function lineageOf(task: Task): Required<Pick<Lineage, 'version' | 'generation' | 'changes'>> & {
  parent: NonNullable<Lineage['parent']> | null;
} {
  const l = task.lineage;
  return {
    version: l?.version ?? 1,
    parent: l?.parent ?? null,
    generation: l?.generation ?? 0,
    changes: l?.changes ?? [],
  };
}

/** JSON with object keys sorted (a stable text to hash). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** Content digest of a task without its lineage: FNV-1a 32-bit of its canonical JSON, 8 hex digits. */
export function taskDigest(task: Task): string {
  const { lineage: _, ...content } = task;
  return hash32(canonical(content)).toString(16).padStart(8, '0');
}

/** One task in the manifest. */
export const BankEntry = z.object({
  task_id: z.string().min(1),
  /** `base`: the domain's own task; `bank`: added or changed by the bank. */
  origin: z.enum(['base', 'bank']),
  version: z.number().int().min(1),
  parent: z.object({ task_id: z.string(), version: z.number().int() }).nullable(),
  generation: z.number().int().min(0),
  digest: z.string().regex(/^[0-9a-f]{8}$/),
  changes: z.array(TaskChange),
});
export type BankEntry = z.infer<typeof BankEntry>;

/** The manifest file (`manifest.json`) of a bank folder. */
export const BankManifest = z.object({
  format: z.literal('switchboard.task-bank'),
  version: z.literal(1),
  domain: z.string().min(1),
  tasks: z.array(BankEntry),
});
export type BankManifest = z.infer<typeof BankManifest>;

/** A bank in memory: current versions of its own tasks and every version ever admitted. */
export interface TaskBank {
  domain: string;
  /** Current version of each bank task (variants, repairs), in admission order. */
  tasks: Task[];
  /** Every version of the bank's tasks, oldest first. */
  versions: Task[];
}

/** The manifest of a bank over the domain's own tasks. */
export function bankManifest(domain: string, base: readonly Task[], bank: TaskBank): BankManifest {
  const own = new Set(bank.tasks.map((t) => t.id));
  const entry = (t: Task, origin: BankEntry['origin']): BankEntry => {
    const l = lineageOf(t);
    return { task_id: t.id, origin, ...l, digest: taskDigest(t) };
  };
  return {
    format: 'switchboard.task-bank',
    version: 1,
    domain,
    tasks: [
      ...base.filter((t) => !own.has(t.id)).map((t) => entry(t, 'base')),
      ...bank.tasks.map((t) => entry(t, 'bank')),
    ],
  };
}

/**
 * Add tasks to a bank: a new id is appended; an id already there (a repair) replaces the current
 * version, which must be higher. Every version goes to `versions`.
 * @throws RangeError when a task's version is not above the current one of the same id
 */
export function admitToBank(bank: TaskBank, tasks: readonly Task[]): TaskBank {
  const current = new Map(bank.tasks.map((t) => [t.id, t]));
  for (const t of tasks) {
    const old = current.get(t.id);
    if (old && lineageOf(t).version <= lineageOf(old).version)
      throw new RangeError(
        `task ${t.id}: version ${lineageOf(t).version} is not above the bank's ${lineageOf(old).version}`,
      );
    current.set(t.id, t);
  }
  return { domain: bank.domain, tasks: [...current.values()], versions: [...bank.versions, ...tasks] };
}

/**
 * The tasks a command runs with a bank: the domain's tasks with bank versions in place of same-id
 * tasks, then the bank's new tasks.
 */
export function tasksWithBank(base: readonly Task[], bank: TaskBank): Task[] {
  const own = new Map(bank.tasks.map((t) => [t.id, t]));
  const ids = new Set(base.map((t) => t.id));
  return [...base.map((t) => own.get(t.id) ?? t), ...bank.tasks.filter((t) => !ids.has(t.id))];
}

/**
 * The version `version` of task `id`: from the bank's history, else the base task when it is
 * that version; undefined when neither has it.
 */
export function taskVersion(base: readonly Task[], bank: TaskBank, id: string, version: number): Task | undefined {
  const fromBank = bank.versions.find((t) => t.id === id && lineageOf(t).version === version);
  if (fromBank) return fromBank;
  const b = base.find((t) => t.id === id);
  return b && lineageOf(b).version === version ? b : undefined;
}
