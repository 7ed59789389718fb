/**
 * The hardening step between two evolve rounds: the round's `always_pass` tasks go through
 * {@link hardenTasks} (the gate is the only door), and the next round's task list has each
 * admitted variant in place of its parent, in the parent's position. A parent without an
 * admitted variant stays. Parents are not deleted from the bank; they are only not sampled.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Task } from '../schema/task.ts';
import { hardenTasks, type HardenReport } from './harden.ts';
import type { LabelReport } from './labels.ts';
import type { HardPatternLibrary } from './patterns.ts';

/** Settings of the hardening step (see {@link hardenTasks}). */
export interface HardenSettings {
  /** Task-axis patterns to try; default all. */
  patterns?: readonly string[];
  /** Variants admitted per always-passed task. Default 1. */
  perTask?: number;
  library?: HardPatternLibrary;
}

/**
 * Harden the always-passed tasks of one round.
 * @param seed the round's base seed (also the mutators' seed)
 * @returns the admitted variants, the next round's tasks, and the report
 */
export async function hardenRound(
  runtime: DomainRuntime,
  tasks: readonly Task[],
  labels: LabelReport,
  seed: number,
  settings: HardenSettings,
): Promise<{ variants: Task[]; next: Task[]; report: HardenReport }> {
  const passed = new Set(labels.tasks.filter((t) => t.label === 'always_pass').map((t) => t.task_id));
  const { variants, report } = await hardenTasks({
    runtime,
    tasks: tasks.filter((t) => passed.has(t.id)),
    seed,
    ...(settings.patterns ? { patterns: settings.patterns } : {}),
    ...(settings.perTask ? { perTask: settings.perTask } : {}),
    ...(settings.library ? { library: settings.library } : {}),
  });
  const byParent = new Map<string, Task[]>();
  for (const v of variants) {
    const parent = v.lineage?.parent?.task_id ?? '';
    byParent.set(parent, [...(byParent.get(parent) ?? []), v]);
  }
  const next = tasks.flatMap((t) => byParent.get(t.id) ?? [t]);
  return { variants, next, report };
}
