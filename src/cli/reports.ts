/** Text renderings of gate reports and batch summaries. */
import { violationLine, type GateReport } from '../core/gate/gate.ts';
import type { BatchSummary } from '../core/rollout/batch.ts';
import { num, table } from './format.ts';

/** The gate's per-task verdict table, refusal reasons and information lines. */
export function renderGate(report: GateReport): string {
  const rows = report.tasks.map((t) => [
    t.task_id,
    t.accepted ? (t.known_issues?.length ? 'accepted*' : 'accepted') : 'REFUSED',
    `${num(t.reference_reward)}${t.reference_partial ? ' (partial)' : ''}`,
    num(t.noop_reward),
  ]);
  const out = [
    `Gate: ${report.domain}`,
    table(['task', 'verdict', 'reference', 'do-nothing'], rows, new Set(['reference', 'do-nothing'])),
  ];
  for (const p of report.domain_problems) out.push(`domain: ${p}`);
  for (const t of report.tasks) {
    for (const r of t.reasons) out.push(`refused ${t.task_id}: ${r}`);
  }
  const infos = report.tasks.flatMap((t) => t.info.map((i) => `info ${t.task_id}: ${i}`));
  if (infos.length) out.push(...infos);
  out.push(...renderPolicy(report));
  const known = report.tasks.filter((t) => t.known_issues?.length);
  for (const t of known) for (const k of t.known_issues ?? []) out.push(`known issue ${t.task_id}: ${k}`);
  if (known.length)
    out.push(
      `${known.length} of ${report.tasks.length} tasks have known issues of the benchmark (reported, not refused)`,
    );
  const refused = report.tasks.filter((t) => !t.accepted).length;
  const n = report.tasks.length;
  const problems = report.domain_problems.length ? `; ${report.domain_problems.length} domain problem(s)` : '';
  out.push(
    refused === 0 && !problems ? `ACCEPTED: all ${n} tasks` : `REFUSED: ${refused} of ${n} tasks refused${problems}`,
  );
  return out.join('\n');
}

/**
 * The executable policy's findings on the reference solutions: for an imported domain (whose
 * violations are not refusals) one line per violation with the policy text it breaks, one per
 * task whose replay could not be checked, and a count; nothing for a domain without rule checks.
 */
function renderPolicy(report: GateReport): string[] {
  const checked = report.tasks.filter((t) => t.policy.status !== 'none');
  if (checked.length === 0) return [];
  const out: string[] = [];
  if (report.task_origin === 'imported') {
    for (const t of checked) {
      for (const v of t.policy.violations)
        out.push(`policy ${t.task_id}: ${violationLine(v)}${v.policy ? ` — policy: "${v.policy}"` : ''}`);
    }
  }
  for (const t of checked) for (const u of t.policy.unchecked) out.push(`policy ${t.task_id}: not checked: ${u}`);
  const broken = checked.filter((t) => t.policy.violations.length > 0).length;
  const unchecked = checked.filter((t) => t.policy.status === 'unchecked').length;
  const kept = report.task_origin === 'imported' ? ' (findings; tasks kept as imported)' : '';
  out.push(`policy: ${broken} of ${checked.length} reference solutions break a rule${kept}; ${unchecked} not checked`);
  return out;
}

/** Most pass^k columns of the score table ({@link renderSummary}): a 2,000-trial run printed 2,000. */
export const TABLE_MAX_K = 8;
/** Most rewards a task's row of the score table lists, then `… (n)` for n in all. */
export const TABLE_MAX_REWARDS = 20;

/**
 * The score table of a batch: per task its rewards (the first {@link TABLE_MAX_REWARDS}), mean
 * and pass^1 … pass^k for k up to the trials, at most {@link TABLE_MAX_K}; then totals.
 */
export function renderSummary(
  s: BatchSummary & {
    settings?: {
      teacher_guidance?: boolean;
      channel?: { preset: string; dropout: number; barge_in: number } | null;
      max_invalid_share?: number;
    };
  },
): string {
  // pass^1 … pass^8 at most (summary.json has every k), and the first 20 rewards of a task.
  const ks = Array.from({ length: Math.min(s.trials, TABLE_MAX_K) }, (_, i) => String(i + 1));
  // Outbound negotiations: the objection-handled score per trial, a column beside the reward.
  const obj = s.totals.objections;
  const headers = ['task', 'rewards', 'mean', ...ks.map((k) => `pass^${k}`), 'invalid', ...(obj ? ['objections'] : [])];
  const rows = s.tasks.map((t) => [
    t.task_id,
    t.rewards
      .slice(0, TABLE_MAX_REWARDS)
      .map((r) => r.toFixed(2))
      .join(' ') +
      (t.rewards.length > TABLE_MAX_REWARDS ? ` … (${t.rewards.length})` : '') +
      (t.partial ? ' (partial)' : ''),
    num(t.mean),
    ...ks.map((k) => num(t.pass_hat[k])),
    String(t.invalid),
    ...(obj ? [(t.objections ?? []).map((o) => (o === null ? '-' : o.toFixed(2))).join(' ')] : []),
  ]);
  rows.push([
    'ALL',
    '',
    num(s.totals.mean_reward),
    ...ks.map((k) => num(s.totals.pass_hat[k])),
    String(s.totals.invalid),
    ...(obj ? [`${obj.handled}/${obj.raised}`] : []),
  ]);
  const numeric = new Set(['mean', 'invalid', ...ks.map((k) => `pass^${k}`)]);
  const ch = s.settings?.channel;
  const channel = ch
    ? ` · channel ${ch.preset}${ch.dropout ? ` dropout ${ch.dropout}` : ''}${ch.barge_in ? ` barge-in ${ch.barge_in}` : ''}`
    : '';
  const guided = s.settings?.teacher_guidance ? ' · TEACHER-GUIDED: demonstrations, not an evaluation' : '';
  const out = [
    `Run: ${s.domain} · agent ${s.agent} · user ${s.user} · ${s.trials} trial${s.trials === 1 ? '' : 's'} · seed ${s.seed}${channel}${guided}`,
    table(headers, rows, numeric),
  ];
  // The run's guard (src/core/rollout/run-guards.ts): trials lost to invalid rollouts after resampling.
  const share = s.totals.invalid_share;
  const limit = s.settings?.max_invalid_share;
  out.push(
    `invalid share: ${share === null ? '-' : share.toFixed(3)} (${s.totals.invalid} of ${s.totals.valid + s.totals.invalid} trials without a valid rollout after resampling${limit === undefined ? '' : `; limit ${limit}`})`,
  );
  if (s.stopped)
    out.push(
      `stopped: ${s.stopped.rollouts} rollouts in a row invalid for the same reason; ${s.stopped.trials_not_started} trials not started`,
    );
  // The executable policy on the agent's writes, beside the reward (see TaskSummary.rule_breaks).
  const breaking = s.tasks.filter((t) => t.rule_breaks.some((n) => n > 0));
  if (breaking.length) {
    const per = breaking.map((t) => `${t.task_id} (${t.rule_breaks.join(' ')})`).join(', ');
    out.push(
      `policy: ${s.totals.rule_breaking} episode(s) broke a rule check, ${s.totals.rule_breaking_passes} of them passed; rule breaks per trial: ${per}`,
    );
  }
  return out.join('\n');
}
