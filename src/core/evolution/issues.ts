/**
 * Task issues, stored with the task bank (`bank/issues.json` of an evolve run, format
 * `switchboard.task-issues`): one issue per finding of attribution, identified by (task, finding
 * kind, field), with its status, resolution and evidence trajectories. The next run reads the
 * file back (`evolve --previous`) and carries every issue on ({@link updateIssues}): an issue
 * whose finding is found again stays open with the new evidence, one whose task no longer fails
 * (or whose check no longer fires) is resolved with the reason, one whose task did not run is
 * left as it is, and a resolved issue found again is reopened.
 */
import { z } from 'zod';
import type { LabelReport } from './labels.ts';
import { FINDING_KINDS, type Attribution, type Finding, type FindingKind } from './findings.ts';

/** One task issue. */
export const TaskIssue = z.object({
  /** `<task id>#<n>`, n counting the task's issues from 1 in the order they were opened. */
  id: z.string().min(1),
  task_id: z.string().min(1),
  finding: z.enum(FINDING_KINDS),
  /** The finding's field (`change_plan.plan_id`, `evaluation_criteria.communicate_info[1]`, …), or null. */
  field: z.string().nullable(),
  detail: z.string(),
  status: z.enum(['open', 'resolved']),
  /** Why the issue was resolved (`round 1: the task is boundary (pass rate 0.5)`), or null while open. */
  resolution: z.string().nullable(),
  /** The first trajectory of the latest evidence, or null. */
  evidence_trajectory: z.string().nullable(),
  /** Every trajectory of the latest evidence. */
  evidence_trajectories: z.array(z.string()),
});
export type TaskIssue = z.infer<typeof TaskIssue>;

/** The issues file of a task bank. */
export const TaskIssuesFile = z.object({
  format: z.literal('switchboard.task-issues'),
  version: z.literal(1),
  domain: z.string().min(1),
  issues: z.array(TaskIssue),
});
export type TaskIssuesFile = z.infer<typeof TaskIssuesFile>;

/** The issues file of `domain`. */
export function taskIssuesFile(domain: string, issues: readonly TaskIssue[]): TaskIssuesFile {
  return { format: 'switchboard.task-issues', version: 1, domain, issues: [...issues] };
}

const keyOf = (task: string, kind: FindingKind, field: string | null | undefined) =>
  `${task}\u0000${kind}\u0000${field ?? ''}`;

function opened(id: string, taskId: string, f: Finding): TaskIssue {
  return {
    id,
    task_id: taskId,
    finding: f.kind,
    field: f.field ?? null,
    detail: f.detail,
    status: 'open',
    resolution: null,
    evidence_trajectory: f.trajectory_ids[0] ?? null,
    evidence_trajectories: [...f.trajectory_ids],
  };
}

/** One open issue per finding, numbered per task in finding order (a run without earlier issues). */
export function taskIssues(attributions: readonly Attribution[]): TaskIssue[] {
  return attributions.flatMap((a) => a.findings.map((f, i) => opened(`${a.task_id}#${i + 1}`, a.task_id, f)));
}

/**
 * Carry `previous` issues through one round: its labels and the attribution of its always-failed
 * tasks. Returns the previous issues in their order (updated), then the new ones.
 * - a finding that matches an issue (same task, kind and field): the issue is open with the
 *   finding's detail and evidence (reopened when it was resolved);
 * - an open issue of a task labelled this round with no matching finding: resolved —
 *   `round <r>: the task is <label> (pass rate <p>)` when the task no longer always fails,
 *   `round <r>: the check no longer finds it` when it still does;
 * - an issue of a task this round did not label: unchanged;
 * - a finding with no issue: a new open issue, numbered after the task's existing ones.
 */
export function updateIssues(
  previous: readonly TaskIssue[],
  round: number,
  labels: LabelReport,
  attribution: readonly Attribution[],
): TaskIssue[] {
  const found = new Map<string, { task: string; finding: Finding }>();
  for (const a of attribution)
    for (const f of a.findings) found.set(keyOf(a.task_id, f.kind, f.field), { task: a.task_id, finding: f });
  const labelOf = new Map(labels.tasks.map((t) => [t.task_id, t]));
  const used = new Set<string>();
  const out = previous.map((issue): TaskIssue => {
    const key = keyOf(issue.task_id, issue.finding, issue.field);
    const match = found.get(key);
    if (match) {
      used.add(key);
      return opened(issue.id, issue.task_id, match.finding);
    }
    const row = labelOf.get(issue.task_id);
    if (issue.status === 'resolved' || !row) return issue;
    const resolution =
      row.label === 'always_fail'
        ? `round ${round}: the check no longer finds it`
        : `round ${round}: the task is ${row.label} (pass rate ${row.pass_rate ?? 'none'})`;
    return { ...issue, status: 'resolved', resolution };
  });
  const count = new Map<string, number>();
  for (const i of out) count.set(i.task_id, (count.get(i.task_id) ?? 0) + 1);
  for (const [key, { task, finding }] of found) {
    if (used.has(key)) continue;
    const n = (count.get(task) ?? 0) + 1;
    count.set(task, n);
    out.push(opened(`${task}#${n}`, task, finding));
  }
  return out;
}
