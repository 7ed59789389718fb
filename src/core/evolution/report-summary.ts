/**
 * The summary of an evolve report (`report.json` → `summary`; the page's Evolution view reads it):
 * the label histogram before (first round) and after (last round), each task's lineage through
 * the rounds (its label per round, the task it was derived from, the pattern and the reason), and
 * the tasks hardened, rejected by the gate and repaired, each with its reason.
 */
import { TASK_LABELS, type TaskLabel } from './labels.ts';

/** The parts of a report the summary reads (a report.json parsed as it is). */
export interface SummarySource {
  rounds: readonly {
    round: number;
    labels: { histogram: Record<TaskLabel, number>; tasks: readonly { task_id: string; label: TaskLabel }[] };
    attribution?: readonly { task_id: string; verdict: 'broken' | 'hard' }[];
    hardening?: {
      admitted: readonly {
        task_id: string;
        parent: string;
        pattern: string;
        reason: string;
        channel?: { from: { preset: string; barge_in: number }; to: { preset: string; barge_in: number } };
      }[];
      rejected: readonly { task_id: string; parent: string; pattern: string; reason: string; gate_reasons: string[] }[];
    };
    repairs?: readonly { task_id: string; status: string; version?: number; detail: string }[];
  }[];
}

/** One task's line of descent. */
export interface TaskLineage {
  task_id: string;
  /** The task it was derived from (a hardened variant's parent), or null. */
  parent: string | null;
  /** 0 for a task of the domain, parent's + 1 for a variant. */
  generation: number;
  /** The hard pattern that made it, or null. */
  pattern: string | null;
  /** Why it exists (the mutator's reason), or null. */
  reason: string | null;
  /** The round that admitted it, or null for a task of the domain. */
  admitted_round: number | null;
  /** Its label in each round, by round number (null when it did not run that round). */
  labels: (TaskLabel | null)[];
  /** Its attribution verdict in each round (null when it was not always failed). */
  verdicts: ('broken' | 'hard' | null)[];
}

/** The summary. */
export interface EvolveSummary {
  /** Label histogram of the first round and of the last. */
  labels_before: Record<TaskLabel, number>;
  labels_after: Record<TaskLabel, number>;
  /** Every task of every round, parents before their variants. */
  lineage: TaskLineage[];
  /** Variants the gate admitted; a channel-axis one (`harsher_channel`) with the level it moved from and to. */
  hardened: {
    round: number;
    task_id: string;
    parent: string;
    pattern: string;
    reason: string;
    channel?: { from: { preset: string; barge_in: number }; to: { preset: string; barge_in: number } };
  }[];
  /** Variants the gate refused, with its reasons. */
  rejected: { round: number; task_id: string; parent: string; pattern: string; reasons: string[] }[];
  /** Model repairs admitted in the loop (`evolve --repair-agent`): round, task, its new version and the model's reason. */
  repaired: { round: number; task_id: string; version: number; reason: string }[];
}

const empty = () => Object.fromEntries(TASK_LABELS.map((l) => [l, 0])) as Record<TaskLabel, number>;

/** Summarize a report. */
export function summarizeEvolve(report: SummarySource): EvolveSummary {
  const rounds = report.rounds;
  const n = rounds.length;
  const byId = new Map<string, TaskLineage>();
  const order: string[] = [];
  const ensure = (id: string): TaskLineage => {
    let t = byId.get(id);
    if (!t) {
      t = {
        task_id: id,
        parent: null,
        generation: 0,
        pattern: null,
        reason: null,
        admitted_round: null,
        labels: Array(n).fill(null),
        verdicts: Array(n).fill(null),
      };
      byId.set(id, t);
      order.push(id);
    }
    return t;
  };
  const hardened: EvolveSummary['hardened'] = [];
  const rejected: EvolveSummary['rejected'] = [];
  const repaired: EvolveSummary['repaired'] = [];
  rounds.forEach((r, i) => {
    for (const x of r.repairs ?? [])
      if (x.status === 'admitted')
        repaired.push({ round: r.round, task_id: x.task_id, version: x.version ?? 1, reason: x.detail });
    for (const row of r.labels.tasks) ensure(row.task_id).labels[i] = row.label;
    for (const a of r.attribution ?? []) ensure(a.task_id).verdicts[i] = a.verdict;
    for (const v of r.hardening?.admitted ?? []) {
      const parent = ensure(v.parent);
      const t = ensure(v.task_id);
      Object.assign(t, {
        parent: v.parent,
        generation: parent.generation + 1,
        pattern: v.pattern,
        reason: v.reason,
        admitted_round: r.round,
      });
      hardened.push({ round: r.round, ...v });
    }
    for (const v of r.hardening?.rejected ?? [])
      rejected.push({
        round: r.round,
        task_id: v.task_id,
        parent: v.parent,
        pattern: v.pattern,
        reasons: [...v.gate_reasons],
      });
  });
  // Parents before their variants: a depth-first walk from the domain's tasks.
  const children = new Map<string, string[]>();
  for (const id of order) {
    const p = byId.get(id)!.parent;
    if (p) children.set(p, [...(children.get(p) ?? []), id]);
  }
  const lineage: TaskLineage[] = [];
  const visit = (id: string) => {
    lineage.push(byId.get(id)!);
    for (const c of children.get(id) ?? []) visit(c);
  };
  for (const id of order) if (!byId.get(id)!.parent) visit(id);
  return {
    labels_before: { ...empty(), ...(rounds[0]?.labels.histogram ?? {}) },
    labels_after: { ...empty(), ...(rounds[n - 1]?.labels.histogram ?? {}) },
    lineage,
    hardened,
    rejected,
    repaired,
  };
}
