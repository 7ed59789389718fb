/**
 * The hardening step between two evolve rounds: the round's `always_pass` tasks go through
 * {@link hardenTasks} (the gate is the only door), and the next round's task list has each
 * admitted variant in place of its parent, in the parent's position. A parent without an
 * admitted variant stays. With channel levels (the channel axis), a task no task pattern
 * hardened may move one step up the channel ladder instead; task-axis variants keep their
 * parent's level. Parents are not deleted from the bank; they are only not sampled.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Task } from '../schema/task.ts';
import { channelVariant } from './channel-axis.ts';
import { gateVariants, hardenTasks, type HardenReport } from './harden.ts';
import type { LabelReport } from './labels.ts';
import type { ChannelLevel, HardPatternLibrary } from './patterns.ts';

/** Settings of the hardening step (see {@link hardenTasks}). */
export interface HardenSettings {
  /** Task-axis patterns to try; default all. */
  patterns?: readonly string[];
  /** Variants admitted per always-passed task. Default 1. */
  perTask?: number;
  library?: HardPatternLibrary;
  /**
   * Also the channel axis (`harsher_channel`, needs a run with a named channel preset): an
   * always-passed task that no task pattern hardened moves one step up the channel ladder
   * ({@link channelVariant}). With `patterns: []` the channel is the only axis. Default false.
   */
  channel?: boolean;
}

/**
 * Harden the always-passed tasks of one round.
 * @param seed the round's base seed (also the mutators' seed)
 * @param levels each task's channel level (by task id), for the channel axis; variants are added to it
 * @returns the admitted variants, the next round's tasks, and the report
 */
export async function hardenRound(
  runtime: DomainRuntime,
  tasks: readonly Task[],
  labels: LabelReport,
  seed: number,
  settings: HardenSettings,
  levels?: Map<string, ChannelLevel>,
): Promise<{ variants: Task[]; next: Task[]; report: HardenReport }> {
  const passed = tasks.filter((t) => labels.tasks.some((x) => x.task_id === t.id && x.label === 'always_pass'));
  const { variants, report } =
    settings.patterns?.length === 0
      ? { variants: [] as Task[], report: { seed, admitted: [], rejected: [], skipped: [] } as HardenReport }
      : await hardenTasks({
          runtime,
          tasks: passed,
          seed,
          ...(settings.patterns ? { patterns: settings.patterns } : {}),
          ...(settings.perTask ? { perTask: settings.perTask } : {}),
          ...(settings.library ? { library: settings.library } : {}),
        });
  if (levels) {
    for (const v of variants) {
      const level = levels.get(v.lineage?.parent?.task_id ?? '');
      if (level) levels.set(v.id, level);
    }
    const hardened = new Set(variants.map((v) => v.lineage?.parent?.task_id));
    for (const base of settings.channel ? passed.filter((t) => !hardened.has(t.id)) : []) {
      const from = levels.get(base.id)!;
      const out = channelVariant(base, from, seed, settings.library);
      if (!out) {
        report.skipped.push({
          parent: base.id,
          pattern: 'harsher_channel',
          reason: 'the channel is at the top of the ladder',
        });
        continue;
      }
      const { accepted, reasons } = await gateVariants(runtime, [out.task]);
      const row = { task_id: out.task.id, parent: base.id, pattern: 'harsher_channel', reason: out.reason };
      if (!accepted.has(out.task.id)) {
        report.rejected.push({ ...row, gate_reasons: reasons.get(out.task.id) ?? [] });
        continue;
      }
      variants.push(out.task);
      levels.set(out.task.id, out.to);
      report.admitted.push({ ...row, channel: { from, to: out.to } });
    }
  }
  const byParent = new Map<string, Task[]>();
  for (const v of variants) {
    const parent = v.lineage?.parent?.task_id ?? '';
    byParent.set(parent, [...(byParent.get(parent) ?? []), v]);
  }
  const next = tasks.flatMap((t) => byParent.get(t.id) ?? [t]);
  return { variants, next, report };
}
