/**
 * `switchboard groups --domain … --granularity conversation|milestone|turn --k 4 --out rows.jsonl`:
 * sample GRPO groups, compute advantages, and write one validated GRPO row per sample (JSONL).
 * Prints the batch's gradient supply.
 */
import type { Command } from 'commander';
import { steppingClock } from '../../core/ports/clock.ts';
import type { Trajectory } from '../../core/schema/trajectory.ts';
import {
  conversationGroups,
  grpoRows,
  ReferenceContinuationAgent,
  type FlatFilter,
  milestoneGroups,
  scoreGroups,
  sourceEpisode,
  turnGroups,
  type Group,
  type Granularity,
  type GradientSupply,
  type TurnSample,
} from '../../core/training/index.ts';
import { openTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { agentFactory, judgeFromFlags, userFactory, withJudgeOptions } from '../participants.ts';
import { choiceOption, intOption, prepareOutFile, withDomainOptions } from '../options.ts';
import { appendFile, writeFile } from 'node:fs/promises';
import { AGENT_VOICE_HELP, addDuplexOptions, duplexChannel, duplexFromFlags, type DuplexFlags } from '../duplex.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from '../channel.ts';
import { degradedAudioHook } from '../../core/channel/audio-store.ts';
import { dirname } from 'node:path';
import { UsageError } from '../participants.ts';

/** Options of the command. */
export interface GroupsOpts extends DuplexFlags, ChannelFlags {
  domain: string;
  data?: string;
  split?: string;
  taskIds?: string;
  granularity: Granularity;
  k: number;
  seed: number;
  agent: string;
  /** Ask a model agent for spoken audio in this voice (`--agent-voice`). */
  agentVoice?: string;
  user: string;
  judge?: string;
  judgeN?: number;
  continuation: string;
  reward: 'final' | 'shaped';
  filter: FlatFilter;
  flat: 'zero' | 'drop';
  out: string;
  json?: boolean;
}

/** What the command reports. */
export interface GroupsReport {
  domain: string;
  granularity: Granularity;
  k: number;
  seed: number;
  reward: 'final' | 'shaped';
  filter: FlatFilter;
  /** Judge id, or null (rewards that needed one are then partial, counted in `supply.partial_rows`). */
  judge: string | null;
  groups: number;
  rows: number;
  dropped: string[];
  /**
   * What gave no group after resampling: a prefix left without K valid samples (task id,
   * milestone id or `<trajectory id>@<turn>`), or the id of a task whose source episode broke on
   * every attempt (milestone and turn levels).
   */
  incomplete: string[];
  /** Attempts broken by infrastructure (samples and source episodes), each resampled. */
  invalid_attempts: number;
  /** Why attempts broke: reason → attempts, most frequent first. */
  invalid_reasons: Record<string, number>;
  /** Gradient supply over every group (σ > 0 on outcome, final, shaped; `kept` under `filter`). */
  supply: GradientSupply;
  out: string;
}

/** Sum gradient supplies of disjoint batches of groups. */
function addSupply(a: GradientSupply, b: GradientSupply): GradientSupply {
  const n = a.groups + b.groups;
  const mix = (x: number, y: number) => (n === 0 ? 0 : (x * a.groups + y * b.groups) / n);
  return {
    groups: n,
    outcome: mix(a.outcome, b.outcome),
    final: mix(a.final, b.final),
    shaped: mix(a.shaped, b.shaped),
    kept: mix(a.kept, b.kept),
    partial_rows: a.partial_rows + b.partial_rows,
  };
}

/**
 * Sample, score and write. Rows are appended to `out` task by task as each task's groups are
 * complete (advantages are per group), so a run stopped midway keeps what it wrote.
 */
export async function runGroups(opts: GroupsOpts): Promise<GroupsReport> {
  const out = await prepareOutFile(opts.out);
  await writeFile(out, '');
  // The phone channel (conversation level, as --duplex): a model agent hears each caller turn's
  // degraded WAV, stored under audio/ beside the rows (their messages reference it by path).
  const flagged = await channelFromFlags(opts, dirname(out));
  const duplex = duplexFromFlags(opts);
  // Turn level: the continuations go on on the source call's timeline, which needs --duplex.
  if (flagged && !duplex && opts.granularity === 'turn')
    throw new UsageError('channel flags (--preset, --dropout, …) at --granularity turn need --duplex');
  const channel = duplex ? duplexChannel(flagged, duplex, undefined) : flagged;
  const agent = agentFactory(opts.agent, {
    ...(channel?.store ? { userAudio: degradedAudioHook(channel.store) } : {}),
    ...(opts.agentVoice ? { agentVoice: opts.agentVoice } : {}),
  });
  const user = userFactory(opts.user);
  const judge = judgeFromFlags(opts);
  const continuationAgent =
    opts.continuation === 'reference' ? () => new ReferenceContinuationAgent() : agentFactory(opts.continuation);
  const { domain, runtime, tasks } = await openTasks(
    { domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) },
    opts,
  );
  const clock = (_seed: number, fromMs?: number) => steppingClock(fromMs ?? domain.now, 1000);
  // Issue 17: samples may run on the full-duplex timeline; each row then carries the call's
  // interaction metrics. Milestone forks and turn-level continuations go on on the source
  // call's timeline from their fork point.
  const base = {
    runtime,
    agent,
    user,
    clock,
    ...(judge ? { judge } : {}),
    ...(duplex ? { duplex } : {}),
    ...(channel ? { channel } : {}),
  };
  const scoring = { reward: opts.reward, filter: opts.filter, flat: opts.flat };
  let supply: GradientSupply = { groups: 0, outcome: 0, final: 0, shaped: 0, kept: 0, partial_rows: 0 };
  const dropped: string[] = [];
  const incomplete: string[] = [];
  let invalidAttempts = 0;
  const reasons = new Map<string, number>();
  const invalid = (reason: string) => {
    invalidAttempts++;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  const invalidTrajectory = (t: Trajectory) => invalid(t.invalid_reason ?? t.termination);
  let kept = 0;
  let rowCount = 0;
  const emit = async (groups: Group<Trajectory | TurnSample>[], milestoneTurns = new Map<string, number>()) => {
    if (groups.length === 0) return;
    const batch = scoreGroups(groups, scoring);
    supply = addSupply(supply, batch.supply);
    dropped.push(...batch.dropped);
    kept += batch.groups.length;
    const rows = grpoRows(domain, batch, { milestoneTurns });
    rowCount += rows.length;
    await appendFile(out, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  };
  for (const task of tasks) {
    if (opts.granularity === 'conversation') {
      const got = await conversationGroups({ ...base, tasks: [task], k: opts.k, seed: opts.seed });
      incomplete.push(...got.incomplete);
      for (const t of got.trajectories) if (!t.valid) invalidTrajectory(t);
      await emit(got.groups);
    } else if (opts.granularity === 'milestone') {
      const got = await milestoneGroups({
        ...base,
        tasks: [task],
        k: opts.k,
        seed: opts.seed,
        onInvalid: invalidTrajectory,
      });
      incomplete.push(...got.incomplete);
      await emit(got.groups, new Map(got.milestones.map((m) => [m.id, m.turns])));
    } else {
      const source = await sourceEpisode({
        ...base,
        task,
        seed: opts.seed,
        onInvalid: invalidTrajectory,
        decisionStates: duplex !== undefined,
      });
      if (!source) {
        incomplete.push(task.id);
        continue;
      }
      const { trajectory } = source;
      const got = await turnGroups({
        runtime,
        task,
        trajectory,
        agent,
        k: opts.k,
        seed: opts.seed + 1,
        ...(judge ? { judge } : {}),
        continuation: { agent: continuationAgent, user, clock, ...(judge ? { judge } : {}) },
        onInvalid: invalid,
        ...(duplex && channel && source.timeline_states
          ? { duplex: { channel, settings: duplex, states: source.timeline_states } }
          : {}),
      });
      incomplete.push(...got.incomplete);
      await emit(got.groups);
    }
  }
  return {
    domain: domain.name,
    granularity: opts.granularity,
    k: opts.k,
    seed: opts.seed,
    reward: opts.reward,
    filter: opts.filter,
    judge: judge?.id ?? null,
    groups: kept,
    rows: rowCount,
    dropped,
    incomplete,
    invalid_attempts: invalidAttempts,
    invalid_reasons: Object.fromEntries([...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))),
    supply,
    out,
  };
}

/** Why a report has no rows, in words. */
export function noRowsReason(r: GroupsReport): string {
  const reasons = Object.entries(r.invalid_reasons).map(([why, n]) => `${n} × ${why}`);
  if (r.incomplete.length)
    return `${r.incomplete.length} of ${r.incomplete.length + r.groups + r.dropped.length} prefixes got no group of K valid samples (${r.incomplete.join(', ')}); broken attempts: ${reasons.join('; ') || 'none'}`;
  if (r.dropped.length) return `all ${r.dropped.length} groups were flat and dropped (--flat drop)`;
  return `nothing to sample (${r.granularity === 'milestone' ? 'no source episode reached a milestone' : 'no prefix'})`;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/** Add the `groups` command. */
export function registerGroups(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  return withDomainOptions(
    withJudgeOptions(
      addDuplexOptions(addChannelOptions(program.command('groups'))),
      'NL and unchecked assertions and the turn rubric (without one such rewards are partial)',
    ),
  )
    .option(
      '--granularity <g>',
      'conversation | milestone | turn',
      choiceOption('--granularity', ['conversation', 'milestone', 'turn'] as const),
      'conversation',
    )
    .option('--k <n>', 'samples per group', intOption('--k', 2), 4)
    .option('--seed <n>', 'base seed; sample i uses seed + i', intOption('--seed', 0), 0)
    .option('--agent <spec>', 'agent: reference | noop | <flavor>:<model>@<base-url>', 'reference')
    .option('--agent-voice <voice>', AGENT_VOICE_HELP)
    .option('--user <spec>', 'simulated caller: scripted | <flavor>:<model>@<base-url>', 'scripted')
    .option(
      '--continuation <spec>',
      'turn level: who finishes the call after each candidate for the outcome term: reference | <flavor>:<model>@<base-url>',
      'reference',
    )
    .option(
      '--reward <r>',
      'advantage on final | shaped (final + process returns)',
      choiceOption('--reward', ['final', 'shaped'] as const),
      'final',
    )
    .option(
      '--filter <f>',
      'flat groups: reward (σ = 0 on the advantage reward) | outcome (σ = 0 on success, DAPO style) | none',
      choiceOption('--filter', ['reward', 'outcome', 'none'] as const),
      'reward',
    )
    .option(
      '--flat <p>',
      'flat groups (see --filter): zero advantages | drop',
      choiceOption('--flat', ['zero', 'drop'] as const),
      'zero',
    )
    .requiredOption('--out <file>', 'GRPO rows, JSONL')
    .option('--json', 'print the report as one JSON document')
    .action(async (opts: GroupsOpts) => {
      const report = await runGroups(opts);
      if (opts.json) io.out(JSON.stringify(report, null, 2));
      else {
        io.out(
          [
            `${report.granularity} groups on ${report.domain}: ${report.groups} kept, ${report.dropped.length} dropped, ${report.incomplete.length} incomplete, ${report.rows} rows → ${report.out}`,
            `gradient supply (σ > 0): outcome ${pct(report.supply.outcome)} · final ${pct(report.supply.final)} · shaped ${pct(report.supply.shaped)} · non-zero under --filter ${report.filter} ${pct(report.supply.kept)} of ${report.supply.groups} groups`,
            `partial rows (a judge was needed, none set): ${report.supply.partial_rows}; invalid attempts resampled: ${report.invalid_attempts}`,
            ...Object.entries(report.invalid_reasons).map(([why, n]) => `  ${n} × ${why}`),
          ].join('\n'),
        );
      }
      if (report.rows === 0) io.err(`switchboard: no GRPO rows: ${noRowsReason(report)}`);
      setCode(report.rows > 0 ? 0 : 1);
    });
}
