/**
 * Re-execute recorded episodes: each episode's tool calls run again, in order and by the side
 * that made them, on a fresh environment for its task (the task's initial state), and each output
 * is compared with the recorded one; then the replayed episode is scored with {@link evaluate}
 * (no judge) and the reward compared with the recorded reward. This is how we check that our
 * re-implementation of a domain (e.g. tau2-bench's airline) behaves like the original, call by
 * call, and that our scorer agrees with the recorded one.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { ruleBreaks } from '../scoring/behaviour-checks.ts';
import { evaluate } from '../scoring/evaluate.ts';
import { isSuccessfulReward } from '../scoring/pass-hat-k.ts';
import { replayGold, type GoldResult } from '../scoring/replay.ts';
import type { Requestor, Task } from '../schema/task.ts';
import type { RewardInfo, Turn } from '../schema/trajectory.ts';
import { outputsEqual } from './compare.ts';
import type { RecordedEpisode } from './episode.ts';

/** Rewards closer than this are equal. */
export const REWARD_TOLERANCE = 1e-6;

/** One replayed tool call next to its recording. */
export interface CallComparison {
  simulation_id: string;
  /** Position of the call among its episode's replayed calls, from 0. */
  index: number;
  /** The side that made the call; `user` calls ran as user tools. */
  requestor: Requestor;
  name: string;
  arguments: Record<string, unknown>;
  /** Recorded output text; `null` when the file holds none. */
  recorded: string | null;
  /** Our output: exactly what the caller of the tool sees (`Environment.call` content). */
  ours: string;
  recorded_error: boolean;
  ours_error: boolean;
  /** See {@link outputsEqual}. */
  equal: boolean;
}

/** One episode's recorded reward next to ours. */
export interface RewardComparison {
  simulation_id: string;
  task_id: string;
  trial: number | null;
  /** How the episode ended, as recorded. */
  termination: string | null;
  /** Recorded reward; `null` when none was recorded (then not compared). */
  recorded: number | null;
  /** Our reward for the replayed episode. */
  ours: number;
  /** |ours − recorded| ≤ {@link REWARD_TOLERANCE}; `null` when nothing was recorded. */
  equal: boolean | null;
  /** Ours is partial: a basis component needed a judge (e.g. `NL_ASSERTION`) and was skipped. */
  partial: boolean;
  /** Recorded component scores (tau2 `reward_breakdown`), or `null`. */
  recorded_components: Record<string, number | null> | null;
  /** Our score of each basis component (`null`: not judged). */
  ours_components: Record<string, number | null>;
  /** Why our reward is below 1 or partial: `COMPONENT: detail` lines, then the reward notes. */
  ours_notes: string[];
  /** Replayed calls of the episode and how many gave the recorded result. */
  calls: number;
  calls_equal: number;
  /** Recorded calls that no tool message answered (not replayed). */
  unanswered: number;
  /**
   * The domain's rule checks the replayed agent writes broke (`<rule>: <why> (<tool> at turn <n>)`),
   * reported beside the reward: for imported domains they never change it.
   */
  rule_breaks: string[];
}

/** Totals of a replay. Percentages are rounded to 2 decimals; `null` when there is nothing to count. */
export interface ReplaySummary {
  domain: string;
  simulations: number;
  calls: { total: number; equal: number; different: number; percent_equal: number | null; unanswered: number };
  rewards: {
    /** Episodes with a recorded reward. */
    compared: number;
    equal: number;
    different: number;
    /** Episodes without a recorded reward. */
    not_recorded: number;
    /** Compared episodes whose reward (ours) is partial. */
    partial: number;
    percent_equal: number | null;
  };
  /** Episodes whose agent broke a rule check, and how many of them still scored 1 (ours). */
  policy: { breaking: number; breaking_passes: number };
  /** Every call and every compared reward is equal. */
  all_equal: boolean;
}

/** The result of {@link replayEpisodes}. */
export interface ReplayReport {
  calls: CallComparison[];
  rewards: RewardComparison[];
  summary: ReplaySummary;
}

/** Options of {@link replayEpisodes}. */
export interface ReplayOptions {
  /** Called after each episode with the number done and the total (progress). */
  onEpisode?: (done: number, total: number) => void;
  /**
   * The task to score an episode against (e.g. the version it recorded, from a task bank);
   * default: the domain's task of that id (the current version).
   */
  taskFor?: (episode: RecordedEpisode) => Task | undefined;
}

/** Detail lines kept per failing component in `ours_notes`. */
const MAX_DETAILS = 5;

function percent(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((10000 * part) / whole) / 100;
}

function notesOf(info: RewardInfo): string[] {
  const out: string[] = [];
  for (const name of info.basis) {
    const c = info.components[name];
    if (!c) continue;
    if (!c.judged) out.push(`${name}: not judged (no judge)`);
    else if (c.score !== null && c.score < 1) {
      const shown = c.details.slice(0, MAX_DETAILS);
      const more = c.details.length > MAX_DETAILS ? [`… ${c.details.length - MAX_DETAILS} more`] : [];
      out.push(`${name}: ${[...shown, ...more].join('; ') || `score ${c.score}`}`);
    }
  }
  return [...out, ...info.notes];
}

/**
 * Replay one episode of `task`: its calls on a fresh environment, then {@link evaluate} on the
 * conversation with our outputs in place of the recorded ones.
 *
 * @param gold the task's gold replay (shared by the episodes of one task).
 */
export async function replayEpisode(
  runtime: DomainRuntime,
  task: Task,
  episode: RecordedEpisode,
  gold?: GoldResult,
): Promise<{ calls: CallComparison[]; reward: RewardComparison }> {
  const turns: Turn[] = episode.turns.slice();
  const calls: CallComparison[] = [];
  const env = await runtime.open(task);
  try {
    for (const [index, call] of episode.calls.entries()) {
      const outcome = await env.call(
        { id: call.id, name: call.name, arguments: call.arguments },
        call.requestor,
        call.turn,
      );
      const recorded = turns[call.turn];
      if (recorded?.role === 'tool') {
        turns[call.turn] = { ...recorded, content: outcome.content, error: outcome.error, writes: outcome.writes };
      }
      calls.push({
        simulation_id: episode.simulation_id,
        index,
        requestor: call.requestor,
        name: call.name,
        arguments: call.arguments,
        recorded: call.output,
        ours: outcome.content,
        recorded_error: call.error,
        ours_error: outcome.error,
        equal: outputsEqual({ content: call.output, error: call.error }, outcome),
      });
    }
  } finally {
    await env.close();
  }
  const info = await evaluate(runtime, task, turns, {
    ...(gold ? { gold } : {}),
    ...(episode.termination ? { termination: episode.termination } : {}),
  });
  const reward: RewardComparison = {
    simulation_id: episode.simulation_id,
    task_id: episode.task_id,
    trial: episode.trial,
    termination: episode.recorded_termination,
    recorded: episode.reward,
    ours: info.reward,
    equal: episode.reward === null ? null : Math.abs(info.reward - episode.reward) <= REWARD_TOLERANCE,
    partial: info.partial,
    recorded_components: episode.reward_components,
    ours_components: Object.fromEntries(info.basis.map((c) => [c, info.components[c]?.score ?? null])),
    ours_notes: notesOf(info),
    calls: calls.length,
    calls_equal: calls.filter((c) => c.equal).length,
    unanswered: episode.unanswered.length,
    rule_breaks: ruleBreaks(info).map((v) => `${v.rule}: ${v.reason}`),
  };
  return { calls, reward };
}

/**
 * Replay every episode, in order, each on its own fresh environment, and total the comparisons.
 * The reference solution of each task is replayed once and shared by its episodes.
 *
 * @throws Error when an episode names a task the domain lacks (check first with
 *   `checkEpisodes`), and whatever a tool throws besides `ToolError` (a bug in the domain).
 */
export async function replayEpisodes(
  runtime: DomainRuntime,
  episodes: readonly RecordedEpisode[],
  options: ReplayOptions = {},
): Promise<ReplayReport> {
  const tasks = new Map(runtime.domain.tasks.map((t) => [t.id, t]));
  const golds = new Map<string, GoldResult>();
  const calls: CallComparison[] = [];
  const rewards: RewardComparison[] = [];
  for (const [i, episode] of episodes.entries()) {
    const task = options.taskFor ? options.taskFor(episode) : tasks.get(episode.task_id);
    if (!task) throw new Error(`replay: episode ${episode.simulation_id} names unknown task "${episode.task_id}"`);
    // One gold replay per task version.
    const key = `${task.id}@${task.lineage?.version ?? 1}`;
    let gold = golds.get(key);
    if (!gold) {
      gold = await replayGold(runtime, task, { writes: false });
      golds.set(key, gold);
    }
    const one = await replayEpisode(runtime, task, episode, gold);
    calls.push(...one.calls);
    rewards.push(one.reward);
    options.onEpisode?.(i + 1, episodes.length);
  }
  return { calls, rewards, summary: summarize(runtime.domain.name, calls, rewards) };
}

/** Totals of call and reward comparisons. */
export function summarize(
  domain: string,
  calls: readonly CallComparison[],
  rewards: readonly RewardComparison[],
): ReplaySummary {
  const callsEqual = calls.filter((c) => c.equal).length;
  const compared = rewards.filter((r) => r.equal !== null);
  const rewardsEqual = compared.filter((r) => r.equal === true).length;
  return {
    domain,
    simulations: rewards.length,
    calls: {
      total: calls.length,
      equal: callsEqual,
      different: calls.length - callsEqual,
      percent_equal: percent(callsEqual, calls.length),
      unanswered: rewards.reduce((n, r) => n + r.unanswered, 0),
    },
    rewards: {
      compared: compared.length,
      equal: rewardsEqual,
      different: compared.length - rewardsEqual,
      not_recorded: rewards.length - compared.length,
      partial: compared.filter((r) => r.partial).length,
      percent_equal: percent(rewardsEqual, compared.length),
    },
    policy: {
      breaking: rewards.filter((r) => r.rule_breaks.length > 0).length,
      breaking_passes: rewards.filter((r) => r.rule_breaks.length > 0 && isSuccessfulReward(r.ours) && !r.partial)
        .length,
    },
    all_equal: callsEqual === calls.length && rewardsEqual === compared.length,
  };
}
