/**
 * Attribution of always-failed tasks: is the task broken, or genuinely hard? Each check that
 * fires is a {@link Finding} with evidence (trajectory ids, the failing component, the rule or
 * field); a task with no finding is `hard`, any finding makes it `broken`. The checks:
 * - `gold_breaks_rule` / `gold_replay_fails` / `gate_refuses`: the admission gate
 *   ({@link gateDomain}, without episodes) refuses the task; the reference replay
 *   ({@link replayGold}) names the rule broken or the action that failed;
 * - `noop_passes`: a do-nothing agent ({@link NoopAgent}) with the scripted caller passes;
 * - `unsuppliable_value`: a reference argument the caller cannot supply — it is in none of the
 *   caller's texts (instructions other than `unknown_info`, requests, facts) nor in the results of
 *   the reference's read calls that did not already take it as an argument (what the agent's
 *   read tools can find in the database), nor offered by the tool's own parameter schema (an
 *   enum option is the agent's choice);
 * - `ambiguous_communicate`: a numeric communicate item that two readings of the task text (the
 *   number when the call starts, or after the reference's writes) give differently, with no cue
 *   in the caller's text saying which ({@link ambiguousCommunicateItems}, the gate's lint);
 * - `caller_invented` / `caller_hung_up_early`: a model caller stated facts or goals that are not
 *   in its task card nor the database, or ended the call while the agent waited on it
 *   (./caller-checks.ts);
 * - `db_brittle`: the `DB` verdict of a failed rollout flips with the order-insensitive
 *   comparison, one more read or one read less (./db-brittleness.ts);
 * - `cross_policy_agreement`: two or more policies fail every rollout on the same components
 *   with the same details (the same way). A policy whose every rollout of the task is invalid
 *   (infrastructure) takes no part: it is listed in the verdict's `invalid_policies` instead.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { ambiguousCommunicateItems, type AmbiguousCommunicateItem } from '../gate/communicate-readings.ts';
import { gateDomain } from '../gate/gate.ts';
import { NoopAgent, ScriptedUser } from '../participants/scripted.ts';
import type { Clock } from '../ports/clock.ts';
import { runEpisode } from '../rollout/episode.ts';
import { toolSchema, toolsFor } from '../schema/domain.ts';
import { callerCardText, type Task } from '../schema/task.ts';
import type { Trajectory } from '../schema/trajectory.ts';
import { evaluate, isSuccess, replayGold, type GoldResult } from '../scoring/index.ts';
import { callerFindings, databaseValues } from './caller-checks.ts';
import { dbBrittlenessFindings } from './db-brittleness.ts';
import type { Attribution, Finding } from './findings.ts';

/** The rollouts of one policy. */
export interface PolicyRollouts {
  agent: string;
  trajectories: readonly Trajectory[];
}

/** Options of {@link attributeTasks}. */
export interface AttributionOptions {
  runtime: DomainRuntime;
  /** The always-failed tasks. */
  tasks: readonly Task[];
  /** Rollouts of each policy that was run (one or more); two or more enable cross-policy agreement. */
  policies: readonly PolicyRollouts[];
  /** Clock of the do-nothing rollout. */
  clock: (seed: number) => Clock;
}

/**
 * Attribute every task; findings in check order ({@link FINDING_KINDS}: gate, do-nothing, values,
 * communicate readings, caller, DB brittleness, cross-policy).
 */
export async function attributeTasks(opts: AttributionOptions): Promise<Attribution[]> {
  const out: Attribution[] = [];
  for (const task of opts.tasks) {
    const failed = opts.policies.flatMap((p) =>
      p.trajectories.filter((t) => t.task_id === task.id && t.valid && t.reward_info && !isSuccess(t.reward_info)),
    );
    const evidence = failed.map((t) => t.id);
    const invalid = invalidPolicies(task, opts.policies);
    const ambiguous = await ambiguousCommunicateItems(opts.runtime, task);
    const gold = await replayGold(opts.runtime, task);
    const findings = [
      ...(await goldFindings(opts.runtime, task, gold, evidence, new Set(ambiguous.map((a) => a.message)))),
      ...(await noopFinding(opts, task)),
      ...(await valueFindings(opts.runtime, task, evidence)),
      ...ambiguous.map((a) => communicateFinding(a, failed)),
      ...(await callerFindings(opts.runtime, task, failed, () => databaseValues(opts.runtime, task))),
      ...(await dbBrittlenessFindings(opts.runtime, task, failed, gold)),
      ...crossPolicy(
        task,
        opts.policies.filter((p) => !invalid.includes(p.agent)),
      ),
    ];
    out.push({
      task_id: task.id,
      verdict: findings.length ? 'broken' : 'hard',
      findings,
      ...(invalid.length ? { invalid_policies: invalid } : {}),
    });
  }
  return out;
}

async function goldFindings(
  runtime: DomainRuntime,
  task: Task,
  gold: GoldResult,
  evidence: string[],
  ambiguous: ReadonlySet<string>,
): Promise<Finding[]> {
  const gate = await gateDomain(runtime, { taskIds: [task.id], episodes: false });
  const verdict = gate.tasks[0];
  if (!verdict || verdict.accepted) return [];
  const out: Finding[] = [];
  for (const v of gold.violations)
    out.push({
      kind: 'gold_breaks_rule',
      component: 'reference',
      rule: v.rule,
      field: `actions[${v.index}]`,
      detail: `reference action #${v.index} ${v.action.name} breaks ${v.rule}: ${v.message}`,
      trajectory_ids: evidence,
    });
  const writeTools = new Set(
    toolsFor(runtime.domain, 'assistant')
      .filter((t) => t.kind === 'write')
      .map((t) => t.name),
  );
  for (const e of gold.errors.filter((x) => writeTools.has(x.action.name)))
    out.push({
      kind: 'gold_replay_fails',
      component: 'reference',
      field: `actions[${e.index}]`,
      detail: `reference action #${e.index} ${e.action.name} fails: ${e.content}`,
      trajectory_ids: evidence,
    });
  // Other refusals of the gate (lint, whitelist, …); its `reference action #…` lines are the
  // replay's, named above, and its ambiguous communicate items are findings of their own.
  const rest = verdict.reasons.filter((r) => !r.startsWith('reference action #') && !ambiguous.has(r));
  for (const r of rest) out.push({ kind: 'gate_refuses', component: 'gate', detail: r, trajectory_ids: evidence });
  return out;
}

async function noopFinding(opts: AttributionOptions, task: Task): Promise<Finding[]> {
  const t = await runEpisode({
    runtime: opts.runtime,
    task,
    agent: new NoopAgent(),
    user: new ScriptedUser(),
    seed: 0,
    clock: opts.clock(0),
  });
  if (!t.valid) return [];
  const info = await evaluate(opts.runtime, task, t.turns, { termination: t.termination });
  if (!isSuccess(info)) return [];
  return [
    {
      kind: 'noop_passes',
      component: 'task',
      detail: `a do-nothing agent scores ${info.reward}`,
      trajectory_ids: [t.id],
    },
  ];
}

/** Every scalar inside a value, as strings (booleans and null left out: they are choices, not facts). */
function scalars(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => scalars(v, out));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => scalars(v, out));
  else if (typeof value === 'string' || typeof value === 'number') out.push(String(value));
  return out;
}

async function valueFindings(runtime: DomainRuntime, task: Task, evidence: string[]): Promise<Finding[]> {
  const actions = task.evaluation_criteria?.actions ?? [];
  const kinds = new Map(toolsFor(runtime.domain, 'assistant').map((t) => [t.name, t.kind]));
  // The reference's agent reads, replayed in order on a fresh database: what the agent can find.
  const reads: { args: string[]; content: string }[] = [];
  const env = await runtime.open(task);
  try {
    for (const [i, a] of actions.entries()) {
      const outcome = await env.call(
        { id: `attr-${i}`, name: a.name, arguments: structuredClone(a.arguments) },
        a.requestor,
        i,
      );
      if (a.requestor === 'assistant' && kinds.get(a.name) === 'read' && !outcome.error)
        reads.push({ args: scalars(a.arguments), content: outcome.content });
    }
  } finally {
    await env.close();
  }
  const said = callerCardText(task);
  const tools = new Map(toolsFor(runtime.domain, 'assistant').map((t) => [t.name, t]));
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const a of actions) {
    if (a.requestor !== 'assistant') continue;
    // Values the tool's own schema offers (enum options, examples) are the agent's choice, not a fact.
    const tool = tools.get(a.name);
    const offered = tool ? JSON.stringify(toolSchema(tool).function.parameters) : '';
    for (const [key, value] of Object.entries(a.arguments)) {
      for (const v of scalars(value)) {
        if (seen.has(v) || said.includes(v) || offered.includes(JSON.stringify(v))) continue;
        if (reads.some((r) => !r.args.includes(v) && r.content.includes(v))) continue;
        seen.add(v);
        out.push({
          kind: 'unsuppliable_value',
          component: 'user_scenario',
          field: `${a.name}.${key}`,
          detail: `the reference needs ${a.name}.${key} = ${v}, which the caller does not know and no read call finds`,
          trajectory_ids: evidence,
        });
      }
    }
  }
  return out;
}

/**
 * The finding of an ambiguous communicate item; evidence: the failed rollouts that did not say
 * the item (`COMMUNICATE` lists it as not communicated), or every failed rollout when none did.
 */
function communicateFinding(a: AmbiguousCommunicateItem, failed: readonly Trajectory[]): Finding {
  const missing = `not communicated: ${JSON.stringify(a.item)}`;
  const silent = failed.filter((t) => t.reward_info?.components.COMMUNICATE?.details.includes(missing));
  return {
    kind: 'ambiguous_communicate',
    component: 'COMMUNICATE',
    field: a.field,
    detail: a.message,
    trajectory_ids: (silent.length ? silent : failed).map((t) => t.id),
  };
}

/** How a rollout failed: the components below 1 with their details. */
function failureSignature(t: Trajectory): string {
  const c = t.reward_info?.components ?? {};
  const failing = Object.entries(c)
    .filter(([, r]) => r && r.score !== null && r.score < 1)
    .map(([name, r]) => [name, r!.details])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  return JSON.stringify(failing);
}

/** Ids of the policies that rolled the task out and never validly (every attempt broken by infrastructure). */
function invalidPolicies(task: Task, policies: readonly PolicyRollouts[]): string[] {
  return policies
    .filter((p) => {
      const mine = p.trajectories.filter((t) => t.task_id === task.id);
      return mine.length > 0 && mine.every((t) => !t.valid);
    })
    .map((p) => p.agent);
}

function crossPolicy(task: Task, policies: readonly PolicyRollouts[]): Finding[] {
  if (policies.length < 2) return [];
  const mine = policies.map((p) => p.trajectories.filter((t) => t.task_id === task.id && t.valid && t.reward_info));
  if (mine.some((ts) => ts.length === 0 || ts.some((t) => isSuccess(t.reward_info!)))) return [];
  const signatures = new Set(mine.flat().map(failureSignature));
  if (signatures.size !== 1) return [];
  const failing = JSON.parse([...signatures][0]!) as [string, string[]][];
  return [
    {
      kind: 'cross_policy_agreement',
      component: failing.map(([name]) => name).join('+'),
      detail: `${policies.length} policies (${policies.map((p) => p.agent).join(', ')}) fail every rollout the same way: ${failing.map(([n, d]) => `${n}: ${d.join('; ')}`).join(' | ')}`,
      trajectory_ids: mine.flat().map((t) => t.id),
    },
  ];
}
