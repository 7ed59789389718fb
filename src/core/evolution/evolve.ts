/**
 * The evolve loop as a library call: each round runs K rollouts of every task
 * ({@link runBatch}: bounded concurrency, invalid rollouts resampled), labels the tasks
 * ({@link labelTasks}) and updates the curriculum bandit and sampling weights
 * ({@link samplingWeights}), then attributes every `always_fail` task ({@link attributeTasks}:
 * broken with evidence, or hard). Round r uses base seed `seed + r·K` (trial t: `seed + r·K + t`), so
 * rounds never reuse a seed and a run replays bit-for-bit with scripted participants.
 *
 * With `harden`, each round's always-passed tasks are hardened with the hard-pattern library
 * between rounds; every variant enters only through the gate. With `repair`, each task the round's
 * attribution calls broken goes to the code-agent role ({@link proposeTaskChange}: a JSON patch
 * from a model, checked by the schema and the gate); an admitted repair (same id, version + 1)
 * runs in its place from the next round on. With `harden.channel` (and a channel), a task may
 * instead move up the channel ladder: from then on it runs under its own channel level (one
 * batch per level, each with the round's seed).
 */
import type { Agent } from '../participants/types.ts';
import type { ModelClient, SamplingParams } from '../ports/model-client.ts';
import { runBatch, type BatchOptions } from '../rollout/batch.ts';
import type { Task } from '../schema/task.ts';
import type { Trajectory } from '../schema/trajectory.ts';
import { attributeTasks } from './attribution.ts';
import { baseLevel, channelAt, levelText } from './channel-axis.ts';
import { harsherChannel, type ChannelLevel } from './patterns.ts';
import { crossPolicyRollouts, optionalBatchSettings } from './cross-policy.ts';
import type { Attribution } from './findings.ts';
import { updateIssues, type TaskIssue } from './issues.ts';
import { summarizeEvolve, type EvolveSummary } from './report-summary.ts';
import type { HardenReport } from './harden.ts';
import { hardenRound, type HardenSettings } from './harden-round.ts';
import { proposeTaskChange, type ProposalOutcome } from './proposals.ts';
import { defaultThresholds, labelTasks, type LabelReport, type LabelThresholds } from './labels.ts';
import { DEFAULT_BANDIT, samplingWeights, type BanditSettings, type SamplingWeights } from './weights.ts';

/** Options of {@link evolve}: the batch's (participants, seed, concurrency, clock, channel) plus the loop's. */
export interface EvolveOptions
  extends Pick<
    BatchOptions,
    | 'runtime'
    | 'tasks'
    | 'agent'
    | 'user'
    | 'judge'
    | 'seed'
    | 'concurrency'
    | 'clock'
    | 'maxSteps'
    | 'channel'
    | 'signal'
  > {
  /** Rollouts per task per round (K ≥ 1). */
  k: number;
  /** Rounds (≥ 1). Default 1. */
  rounds?: number;
  /** Label thresholds; default {@link defaultThresholds}(k). */
  thresholds?: LabelThresholds;
  bandit?: BanditSettings;
  /** Sampling weights of an earlier run to continue the bandit from. */
  previous?: SamplingWeights;
  /** Task issues of an earlier run (its `bank/issues.json`), carried on by {@link updateIssues}. */
  issues?: readonly TaskIssue[];
  /**
   * Harden each round's `always_pass` tasks with the hard-pattern library ({@link hardenRound});
   * the next round runs each admitted variant in place of its parent. Off when absent.
   */
  harden?: HardenSettings;
  /**
   * Other policies for attribution: each runs K rollouts of every always-failed task of a round
   * ({@link crossPolicyRollouts}), so that `cross_policy_agreement` can compare them with the
   * main policy. Their rollouts are in the round's trajectories (ids end `@<agent id>`) but not
   * in the labels.
   */
  crossPolicies?: readonly (() => Agent)[];
  /**
   * Model repairs in the loop: each task the round's attribution calls broken is sent, with its
   * findings, to this code agent ({@link proposeTaskChange}); an admitted repair replaces the
   * task from the next round on. Off when absent.
   */
  repair?: { client: ModelClient; sampling?: Partial<SamplingParams> };
  /**
   * A monotonic clock in ms (e.g. `performance.now`): with it each round reports where its time
   * went ({@link EvolveRound.timing_ms}). Absent: no timings (a report then replays bit-for-bit).
   */
  now?: () => number;
  /** Every finished trajectory, with its round. */
  onTrajectory?: (t: Trajectory, round: number) => void;
  signal?: AbortSignal;
}

/** One round of the loop. */
export interface EvolveRound {
  round: number;
  /** Base seed of the round. */
  seed: number;
  /** Rollouts run (resampled attempts included). */
  episodes: number;
  /** Attempts broken by infrastructure (resampled). */
  invalid_attempts: number;
  labels: LabelReport;
  weights: SamplingWeights;
  /** Verdict (broken or hard, with evidence) on each `always_fail` task, from this round's rollouts. */
  attribution: Attribution[];
  /**
   * The task issues after this round: the earlier issues carried on ({@link updateIssues}: still
   * found, resolved, or untouched) and one new open issue per new finding.
   */
  issues: TaskIssue[];
  /**
   * With {@link EvolveOptions.now}: wall time of the round's phases, ms — `environment` (the
   * rollouts, the other policies' included: episodes and their scoring), `labels` (labels and
   * weights), `attribution` (the gate and the checks on always-failed tasks), `hardening` (the
   * gate on hardened variants and model repairs).
   */
  timing_ms?: { environment: number; labels: number; attribution: number; hardening: number };
  /** With {@link EvolveOptions.harden}: the always-passed tasks hardened, variants admitted, rejected, skipped. */
  hardening?: HardenReport;
  /** With {@link EvolveOptions.repair}: one attempt per broken task, in attribution order. */
  repairs?: RepairAttempt[];
}

/**
 * One model repair of a broken task: the finding text sent, and how the proposal ended
 * (`admitted` with the new version and the model's reason; otherwise the outcome's status and
 * detail — unparseable, patch_failed, schema_invalid, gate_rejected with the gate's reasons,
 * model_error).
 */
export interface RepairAttempt {
  task_id: string;
  finding: string;
  status: ProposalOutcome['status'];
  /** The repaired task's version (admitted only). */
  version?: number;
  /** The model's reason (admitted), or why it was refused. */
  detail: string;
}

/** The report line of a proposal outcome. */
function repairAttempt(task_id: string, finding: string, o: ProposalOutcome): RepairAttempt {
  switch (o.status) {
    case 'admitted':
      return { task_id, finding, status: o.status, version: o.task.lineage?.version ?? 1, detail: o.reason };
    case 'gate_rejected':
      return { task_id, finding, status: o.status, detail: o.reasons.join('; ') };
    case 'schema_invalid':
      return { task_id, finding, status: o.status, detail: `${o.field}: ${o.detail}` };
    default:
      return { task_id, finding, status: o.status, detail: o.detail };
  }
}

/** The report of {@link evolve}. */
export interface EvolveReport {
  domain: string;
  agent: string;
  user: string;
  k: number;
  thresholds: LabelThresholds;
  bandit: BanditSettings;
  /** Ids of the other policies that ran on the always-failed tasks (empty when none). */
  cross_policies: string[];
  rounds: EvolveRound[];
  /** Labels before and after, each task's lineage, the tasks hardened, rejected and repaired ({@link summarizeEvolve}). */
  summary: EvolveSummary;
}

/**
 * Run the loop.
 * @throws RangeError when k or rounds is not a positive integer, or with `harden.channel` when there
 *   is no channel, its preset is inline, or its level is not on the `harsher_channel` ladder
 */
export async function evolve(
  opts: EvolveOptions,
): Promise<{ report: EvolveReport; trajectories: Trajectory[][]; variants: Task[] }> {
  // `variants`: every task admitted in the loop, hardened variants and repaired versions.
  const rounds = opts.rounds ?? 1;
  if (!Number.isInteger(opts.k) || opts.k < 1) throw new RangeError(`evolve needs a positive integer k, got ${opts.k}`);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new RangeError(`evolve needs a positive integer rounds, got ${rounds}`);
  const thresholds = opts.thresholds ?? defaultThresholds(opts.k);
  const bandit = opts.bandit ?? DEFAULT_BANDIT;
  const out: EvolveRound[] = [];
  const all: Trajectory[][] = [];
  let previous = opts.previous;
  let issues: readonly TaskIssue[] = opts.issues ?? [];
  let agentId = '';
  let userId = '';
  let tasks: readonly Task[] = opts.tasks;
  const variants: Task[] = [];
  if (opts.harden?.channel && !opts.channel)
    throw new RangeError('evolve: hardening on the channel axis needs a channel (a named preset)');
  const start = opts.harden?.channel && opts.channel ? baseLevel(opts.channel) : null;
  if (start) harsherChannel(start, opts.harden?.library); // throws when the level is not on the ladder
  const levels = start ? new Map<string, ChannelLevel>(tasks.map((t) => [t.id, start])) : undefined;
  for (let round = 0; round < rounds && !opts.signal?.aborted; round++) {
    const seed = opts.seed + round * opts.k;
    const t0 = opts.now?.() ?? 0;
    const { trajectories, ...summary } = await runByLevel(opts, tasks, levels, seed, round);
    agentId = summary.agent;
    userId = summary.user;
    const t1 = opts.now?.() ?? 0;
    const labels = labelTasks(
      tasks.map((t) => t.id),
      trajectories,
      opts.k,
      thresholds,
    );
    const weights = samplingWeights(labels, round, previous, bandit);
    const failed = new Set(labels.tasks.filter((t) => t.label === 'always_fail').map((t) => t.task_id));
    const failedTasks = tasks.filter((t) => failed.has(t.id));
    const t2 = opts.now?.() ?? 0;
    const others = await crossPolicyRollouts({
      ...opts,
      ...(levels && opts.channel ? { channel: channelAt(opts.channel, start!) } : {}),
      agents: opts.crossPolicies ?? [],
      tasks: failedTasks,
      seed,
      onTrajectory: (t) => opts.onTrajectory?.(t, round),
    });
    const t3 = opts.now?.() ?? 0;
    const attribution = await attributeTasks({
      runtime: opts.runtime,
      tasks: failedTasks,
      policies: [{ agent: summary.agent, trajectories }, ...others],
      clock: opts.clock,
    });
    previous = weights;
    issues = updateIssues(issues, round, labels, attribution);
    const t4 = opts.now?.() ?? 0;
    const hardened = opts.harden ? await hardenRound(opts.runtime, tasks, labels, seed, opts.harden, levels) : null;
    const repairs: RepairAttempt[] = [];
    const repaired = new Map<string, Task>();
    for (const a of opts.repair ? attribution.filter((x) => x.verdict === 'broken') : []) {
      const finding = a.findings.map((f) => `${f.kind}${f.field ? ` (${f.field})` : ''}: ${f.detail}`).join('\n');
      const outcome = await proposeTaskChange({
        client: opts.repair!.client,
        runtime: opts.runtime,
        task: tasks.find((t) => t.id === a.task_id)!,
        request: { kind: 'repair', finding },
        seed,
        ...(opts.repair!.sampling ? { sampling: opts.repair!.sampling } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      repairs.push(repairAttempt(a.task_id, finding, outcome));
      if (outcome.status === 'admitted') repaired.set(a.task_id, outcome.task);
    }
    const t5 = opts.now?.() ?? 0;
    out.push({
      round,
      seed,
      episodes: summary.episodes,
      invalid_attempts: summary.invalid_attempts,
      labels,
      weights,
      attribution,
      issues: [...issues],
      ...(opts.now
        ? { timing_ms: { environment: t1 - t0 + (t3 - t2), labels: t2 - t1, attribution: t4 - t3, hardening: t5 - t4 } }
        : {}),
      ...(hardened ? { hardening: hardened.report } : {}),
      ...(opts.repair ? { repairs } : {}),
    });
    all.push([...trajectories, ...others.flatMap((p) => p.trajectories)]);
    if (hardened) {
      variants.push(...hardened.variants);
      tasks = hardened.next;
    }
    if (repaired.size) {
      variants.push(...repaired.values());
      tasks = tasks.map((t) => repaired.get(t.id) ?? t);
    }
  }
  const report: Omit<EvolveReport, 'summary'> = {
    domain: opts.runtime.domain.name,
    agent: agentId,
    user: userId,
    k: opts.k,
    thresholds,
    bandit,
    cross_policies: (opts.crossPolicies ?? []).map((f) => f().id),
    rounds: out,
  };
  return {
    report: { ...report, summary: summarizeEvolve(report) },
    trajectories: all,
    variants,
  };
}

/**
 * One round's rollouts of the main policy: one batch over all tasks, or, with channel levels, one
 * batch per level (in order of first appearance, each with the round's seed): the trajectories in
 * batch order, the participants' ids and the episode and invalid-attempt counts summed.
 */
async function runByLevel(
  opts: EvolveOptions,
  tasks: readonly Task[],
  levels: Map<string, ChannelLevel> | undefined,
  seed: number,
  round: number,
): Promise<{ trajectories: Trajectory[]; agent: string; user: string; episodes: number; invalid_attempts: number }> {
  const groups = new Map<string, { level: ChannelLevel | null; tasks: Task[] }>();
  for (const t of tasks) {
    const level = levels?.get(t.id) ?? null;
    const key = level ? levelText(level) : '';
    const g = groups.get(key) ?? { level, tasks: [] };
    g.tasks.push(t);
    groups.set(key, g);
  }
  const runs = [];
  for (const g of groups.values())
    runs.push(
      await runBatch({
        runtime: opts.runtime,
        tasks: g.tasks,
        agent: opts.agent,
        user: opts.user,
        trials: opts.k,
        seed,
        concurrency: opts.concurrency,
        clock: opts.clock,
        ...optionalBatchSettings(opts),
        ...(g.level && opts.channel ? { channel: channelAt(opts.channel, g.level) } : {}),
        onTrajectory: (t) => opts.onTrajectory?.(t, round),
      }),
    );
  return {
    trajectories: runs.flatMap((r) => r.trajectories),
    agent: runs[0]?.summary.agent ?? '',
    user: runs[0]?.summary.user ?? '',
    episodes: runs.reduce((n, r) => n + r.summary.totals.episodes, 0),
    invalid_attempts: runs.reduce((n, r) => n + r.summary.totals.invalid_attempts, 0),
  };
}
