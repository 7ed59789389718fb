/**
 * Hardening: turn tasks (the always-passed ones of an evolve round) into harder variants with the
 * hard-pattern library ({@link applyPattern}), and admit a variant only through the gate
 * ({@link gateDomain}: its reference solution replays without a failed write or a broken rule,
 * its assertions cite policy rules, the reference agent scores 1 and a do-nothing agent 0 — also
 * for imported domains such as tau2's, whose own tasks the gate keeps when a do-nothing agent
 * passes; a derived variant is not kept). Base tasks are never modified: variants are new tasks
 * (a derived bank for imported domains). Every attempt is reported: admitted, rejected with the
 * gate's reasons, or skipped with the mutator's reason.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { gateDomain } from '../gate/gate.ts';
import { seededRng } from '../ports/rng.ts';
import type { Task } from '../schema/task.ts';
import { applyPattern, HARD_PATTERNS, type ChannelLevel, type HardPatternLibrary } from './patterns.ts';

/** Options of {@link hardenTasks}. */
export interface HardenOptions {
  runtime: DomainRuntime;
  /** The tasks to harden (never modified). */
  tasks: readonly Task[];
  /** Seed of the mutators and of the pattern order. */
  seed: number;
  /** Task-axis patterns to try; default every one in the library, in a seeded rotation per task. */
  patterns?: readonly string[];
  /** Variants to admit per task: patterns are tried in order until this many pass the gate. Default 1. */
  perTask?: number;
  library?: HardPatternLibrary;
}

/** One variant the gate admitted. */
export interface AdmittedVariant {
  task_id: string;
  parent: string;
  pattern: string;
  reason: string;
  /** A channel-axis variant (`harsher_channel`): the level it moved from and to. */
  channel?: { from: ChannelLevel; to: ChannelLevel };
}

/** One variant the gate refused, with its reasons. */
export interface RejectedVariant {
  task_id: string;
  parent: string;
  pattern: string;
  reason: string;
  gate_reasons: string[];
}

/** A pattern that does not apply to a task, with the mutator's reason. */
export interface SkippedPattern {
  parent: string;
  pattern: string;
  reason: string;
}

/** What {@link hardenTasks} did. */
export interface HardenReport {
  seed: number;
  admitted: AdmittedVariant[];
  rejected: RejectedVariant[];
  skipped: SkippedPattern[];
}

/** The task-axis pattern ids of a library, in file order. */
export function taskPatternIds(library: HardPatternLibrary = HARD_PATTERNS): string[] {
  return library.patterns.filter((p) => p.axis === 'task').map((p) => p.id);
}

/**
 * Gate candidate variants on `runtime`'s database: the accepted ones and the refused ones with
 * reasons. A do-nothing pass refuses a variant even in an imported domain.
 */
export async function gateVariants(
  runtime: DomainRuntime,
  candidates: readonly Task[],
): Promise<{ accepted: Set<string>; reasons: Map<string, string[]> }> {
  const gated = runtime.withTasks([...candidates]);
  try {
    const report = await gateDomain(gated);
    const reasons = new Map<string, string[]>();
    const accepted = new Set<string>();
    for (const v of report.tasks) {
      const r = [...v.reasons];
      if (v.noop_reward !== null && v.noop_reward !== 0 && !r.some((x) => x.startsWith('do-nothing agent')))
        r.push(`do-nothing agent scores ${v.noop_reward}, not 0`);
      if (r.length === 0) accepted.add(v.task_id);
      else reasons.set(v.task_id, r);
    }
    return { accepted, reasons };
  } finally {
    await gated.close();
  }
}

/**
 * Harden tasks. Per task, patterns are tried in a seeded rotation of `patterns` and each
 * variant is gated, until `perTask` are admitted or the patterns run out.
 * @returns the admitted variants (new tasks, lineage set) and the report
 * @throws RangeError for an unknown pattern id
 */
export async function hardenTasks(opts: HardenOptions): Promise<{ variants: Task[]; report: HardenReport }> {
  const library = opts.library ?? HARD_PATTERNS;
  const ids = opts.patterns ? [...opts.patterns] : taskPatternIds(library);
  const perTask = opts.perTask ?? 1;
  const report: HardenReport = { seed: opts.seed, admitted: [], rejected: [], skipped: [] };
  const variants: Task[] = [];
  const known = new Set(opts.runtime.domain.tasks.map((t) => t.id));
  for (const base of opts.tasks) {
    const start = seededRng(opts.seed).fork(`harden:${base.id}`).int(ids.length);
    const order = ids.map((_, i) => ids[(start + i) % ids.length]!);
    let admitted = 0;
    for (const pattern of order) {
      if (admitted >= perTask) break;
      let out: Awaited<ReturnType<typeof applyPattern>>;
      try {
        out = await applyPattern(base, pattern, {
          domain: opts.runtime.domain,
          runtime: opts.runtime,
          seed: opts.seed,
          library,
        });
      } catch (e) {
        if (e instanceof RangeError) throw e;
        out = { skip: `the mutator failed: ${(e as Error).message}` };
      }
      if ('skip' in out) {
        report.skipped.push({ parent: base.id, pattern, reason: out.skip });
        continue;
      }
      if (known.has(out.task.id)) {
        report.skipped.push({ parent: base.id, pattern, reason: `variant ${out.task.id} is already in the bank` });
        continue;
      }
      const { accepted, reasons } = await gateVariants(opts.runtime, [out.task]);
      if (accepted.has(out.task.id)) {
        admitted++;
        known.add(out.task.id);
        variants.push(out.task);
        report.admitted.push({ task_id: out.task.id, parent: base.id, pattern, reason: out.reason });
      } else
        report.rejected.push({
          task_id: out.task.id,
          parent: base.id,
          pattern,
          reason: out.reason,
          gate_reasons: reasons.get(out.task.id) ?? [],
        });
    }
  }
  return { variants, report };
}
