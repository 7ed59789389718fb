/**
 * Token-faithful GRPO rollouts against a policy endpoint (issue 14): K episodes per task with a
 * model agent, run by the batch runner ({@link runBatch}: the ordinary episode loop, invalid
 * rollouts resampled, never scored 0), grouped per task, advantages computed
 * ({@link scoreGroups}), and each agent turn reported with exactly what a trainer needs: the
 * request the policy was sent, the prompt and completion token ids and logprobs as the endpoint
 * returned them, a loss mask, its step reward and return. Groups are handed over one by one as
 * they finish, so a caller can stream them to a file or an HTTP answer.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import type { Agent, Judge, UserSimulator } from '../participants/types.ts';
import { runBatch } from '../rollout/batch.ts';
import type { EpisodeChannel } from '../rollout/channel-step.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import { z } from 'zod';
import { ChatMessage, ModelRequestRecord } from '../schema/chat.ts';
import type { Task } from '../schema/task.ts';
import type { Trajectory } from '../schema/trajectory.ts';
import { checkedTokenData } from '../participants/token-check.ts';
import { rewardSummary } from './agent-view.ts';
import { chatMessages, GrpoRow, perTurnTokens } from './export.ts';
import { episodeRewards, groupId, scoreGroups, type Group, type RewardChoice } from './groups.ts';

/** One agent turn of a sample, as a trainer consumes it. */
export interface RolloutTurn {
  /** Index of the turn in the trajectory. */
  turn_index: number;
  /** Ordinal among the agent's turns (0-based): the step of `step_reward` and `return`. */
  step: number;
  /** The exact request the policy was sent (messages, tools, sampling with seed); null for a non-model agent. */
  request: ModelRequestRecord | null;
  /** Prompt token ids as the endpoint returned them (vLLM `return_token_ids`), or null. */
  prompt_token_ids: number[] | null;
  /** Generated token ids as the endpoint returned them, or null. */
  completion_token_ids: number[] | null;
  /** Natural-log probability of each generated token, or null. */
  logprobs: number[] | null;
  /**
   * Over `prompt_token_ids ++ completion_token_ids`: 0 for every prompt token (system, caller,
   * tool results, earlier turns), 1 for every token the policy generated in this turn. Null
   * without token ids.
   */
  loss_mask: number[] | null;
  /**
   * `endpoint`: token ids came back and line up; `unavailable`: the endpoint gave none (not vLLM,
   * or ids not enabled) or gave arrays that do not line up (`token_warning` says how). When
   * unavailable, `prompt_token_ids`, `completion_token_ids`, `logprobs` and `loss_mask` are all null.
   */
  tokens: 'endpoint' | 'unavailable';
  /**
   * Why the endpoint's token data was dropped (e.g. `6 token_ids but 1 logprobs`), or null: a
   * turn whose arrays do not line up is never passed on as token data.
   */
  token_warning: string | null;
  finish_reason: string | null;
  /** Model name the endpoint reported (the LoRA adapter's served name when one was chosen). */
  model: string | null;
  /** What the agent said (the part the caller heard, when interrupted; the first `MAX_REPLY_CHARS` characters when `oversize`). */
  text: string;
  interrupted: boolean;
  /**
   * The reply's length in characters when it was over the reply cap (`MAX_REPLY_CHARS`,
   * src/core/rollout/limits.ts) and `text` was cut (`QUALITY` then fails the sample); else null.
   * The token ids are still all the policy generated.
   */
  oversize: number | null;
  step_reward: number;
  return: number;
  policy_version: string;
}

/** One sample (episode) of a group. */
export interface RolloutSample {
  /** Trial number in the group (0-based). */
  sample_index: number;
  /** Seed the episode ran with (a resampled trial has a different one). */
  seed: number;
  trajectory_id: string;
  final_reward: number;
  /** Binary outcome (1 success). */
  outcome: 0 | 1;
  partial: boolean;
  /** Reward components by name, scores in [0, 1] (null: not computed). */
  components: Record<string, number | null>;
  termination: string;
  step_rewards: number[];
  returns: number[];
  /** Â = (r − μ)/(σ + ε) within the group, on the chosen reward ({@link scoreGroups}). */
  advantage: number;
  /**
   * The whole call as the agent saw it, in OpenAI chat shape (caller audio by path): every
   * turn's `request.messages` is a prefix of it, and it holds every agent reply (then what the
   * caller said after the last one).
   */
  messages: ChatMessage[];
  turns: RolloutTurn[];
  /**
   * Issue 17, only in a duplex run: the call's interaction metrics (tau2-bench's panel,
   * `DuplexRecord.metrics`; null when the call had no speech). A separate field: rewards and
   * advantages are the task reward's, as without the timeline.
   */
  interaction_metrics?: Record<string, unknown> | null;
}

/** One group: the K samples of one task. */
export interface RolloutGroup {
  group_id: string;
  task_id: string;
  domain: string;
  policy_version: string;
  k: number;
  seed: number;
  /** Reward the advantages are computed on. */
  reward: RewardChoice;
  /** False when every sample had the same outcome: advantages are 0. */
  informative: boolean;
  mean_reward: number;
  /** Invalid attempts (infrastructure) that were resampled. */
  resampled: number;
  samples: RolloutSample[];
}

/** A group that could not be made (fewer than two valid samples after resampling). */
export interface FailedGroup {
  group_id: string;
  task_id: string;
  valid: number;
  reasons: string[];
}

/** Settings of {@link rolloutGroups}. */
export interface PolicyRolloutOptions {
  runtime: DomainRuntime;
  tasks: readonly Task[];
  k: number;
  seed: number;
  /** A fresh model agent per sample. */
  agent: () => Agent;
  user: () => UserSimulator;
  judge?: Judge;
  clock: (seed: number) => Clock;
  channel?: EpisodeChannel;
  /** Issue 17: run every sample on the full-duplex timeline (needs `channel`). */
  duplex?: DuplexSettings;
  maxSteps?: number;
  /** Label of the policy weights that produced the samples, recorded on every turn. */
  policyVersion: string;
  /** Advantage on `final` (default) or `shaped` reward. */
  reward?: RewardChoice;
  /** Groups run at once (each runs its K samples at once). Default 1. */
  groupsInFlight?: number;
  /** Extra attempts for an invalid sample (default 2). */
  resamples?: number;
  /** Group ids already done (resume): skipped. */
  skip?: ReadonlySet<string>;
  onGroup: (group: RolloutGroup) => void | Promise<void>;
  onFailed?: (failed: FailedGroup) => void | Promise<void>;
  /** Every finished episode, valid or not, in completion order. */
  onEpisode?: (t: Trajectory) => void;
}

/** The group id of a task (`conversation:<task id>`, as `switchboard groups`). */
export function rolloutGroupId(taskId: string): string {
  return groupId('conversation', taskId);
}

/** The agent turns of a trajectory as {@link RolloutTurn}s. */
export function rolloutTurns(t: Trajectory, policyVersion: string): RolloutTurn[] {
  const info = t.reward_info;
  const out: RolloutTurn[] = [];
  t.turns.forEach((turn, i) => {
    if (turn.role !== 'assistant') return;
    const step = out.length;
    const g = turn.generation;
    // Checked again here, with prompt and generated ids in pairs (the loss mask needs both).
    const { token_warning, ...d } = checkedTokenData(
      { token_ids: g?.token_ids ?? null, prompt_token_ids: g?.prompt_token_ids ?? null, logprobs: g?.logprobs ?? null },
      { pair: true },
    );
    const ok = d.prompt_token_ids !== null && d.token_ids !== null;
    out.push({
      turn_index: i,
      step,
      request: turn.request ?? null,
      prompt_token_ids: ok ? d.prompt_token_ids : null,
      completion_token_ids: ok ? d.token_ids : null,
      logprobs: ok ? d.logprobs : null,
      loss_mask: ok ? [...d.prompt_token_ids!.map(() => 0), ...d.token_ids!.map(() => 1)] : null,
      tokens: ok ? 'endpoint' : 'unavailable',
      token_warning: g?.token_warning ?? token_warning,
      finish_reason: g?.finish_reason ?? null,
      model: g?.model ?? null,
      text: turn.text,
      interrupted: turn.interrupted !== undefined,
      oversize: turn.oversize ?? null,
      step_reward: info?.step_rewards[step] ?? 0,
      return: info?.returns[step] ?? 0,
      policy_version: policyVersion,
    });
  });
  return out;
}

/**
 * Run K samples of every task (not in `skip`) and hand each finished group to `onGroup`.
 * Returns the groups made and the ones that failed.
 */
export async function rolloutGroups(opts: PolicyRolloutOptions): Promise<{ done: number; failed: FailedGroup[] }> {
  const reward = opts.reward ?? 'final';
  const todo = opts.tasks.filter((t) => !opts.skip?.has(rolloutGroupId(t.id)));
  const failed: FailedGroup[] = [];
  let done = 0;
  let cursor = 0;
  const one = async (task: Task) => {
    const { trajectories } = await runBatch({
      runtime: opts.runtime,
      tasks: [task],
      agent: opts.agent,
      user: opts.user,
      ...(opts.judge ? { judge: opts.judge } : {}),
      trials: opts.k,
      seed: opts.seed,
      concurrency: opts.k,
      clock: opts.clock,
      ...(opts.resamples !== undefined ? { resamples: opts.resamples } : {}),
      ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
      ...(opts.channel ? { channel: opts.channel } : {}),
      ...(opts.duplex ? { duplex: opts.duplex } : {}),
      ...(opts.onEpisode ? { onTrajectory: opts.onEpisode } : {}),
    });
    const valid = trajectories.filter((t) => t.valid && t.reward_info).sort((a, b) => a.trial - b.trial);
    const id = rolloutGroupId(task.id);
    if (valid.length < 2) {
      const f: FailedGroup = {
        group_id: id,
        task_id: task.id,
        valid: valid.length,
        reasons: [...new Set(trajectories.filter((t) => !t.valid).map((t) => t.invalid_reason ?? 'invalid'))],
      };
      failed.push(f);
      await opts.onFailed?.(f);
      return;
    }
    const group: Group<Trajectory> = {
      id,
      granularity: 'conversation',
      prefix: task.id,
      task_id: task.id,
      samples: valid.map((t) => ({ rewards: episodeRewards(t.reward_info!), seed: t.seed, item: t })),
    };
    const [scored] = scoreGroups([group], { reward, flat: 'zero' }).groups;
    const samples: RolloutSample[] = scored!.samples.map((s, i) => {
      const t = s.item;
      const summary = rewardSummary(t.reward_info!);
      return {
        sample_index: t.trial,
        seed: t.seed,
        trajectory_id: t.id,
        final_reward: s.rewards.final,
        outcome: s.rewards.outcome,
        partial: summary.partial,
        components: summary.components,
        termination: t.termination,
        step_rewards: s.rewards.step_rewards,
        returns: s.rewards.returns,
        advantage: scored!.advantages[i]!,
        messages: chatMessages(opts.runtime.domain, task, t.turns),
        turns: rolloutTurns(t, opts.policyVersion),
        ...(opts.duplex ? { interaction_metrics: t.duplex?.metrics ?? null } : {}),
      };
    });
    done++;
    await opts.onGroup({
      group_id: id,
      task_id: task.id,
      domain: opts.runtime.domain.name,
      policy_version: opts.policyVersion,
      k: opts.k,
      seed: opts.seed,
      reward,
      informative: scored!.informative,
      mean_reward: scored!.final.mean,
      resampled: trajectories.filter((t) => !t.valid).length,
      samples,
    });
  };
  const worker = async () => {
    while (cursor < todo.length) await one(todo[cursor++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.groupsInFlight ?? 1) }, worker));
  return { done, failed };
}

/**
 * A rollout group line as read back from a file (`switchboard rollout --out`, `POST /rollout`
 * group lines): the fields {@link rolloutGrpoRows} needs, checked; other fields pass through.
 */
export const RolloutGroupLine = z.looseObject({
  group_id: z.string(),
  task_id: z.string(),
  domain: z.string(),
  policy_version: z.string(),
  reward: z.enum(['final', 'shaped']),
  samples: z
    .array(
      z.looseObject({
        sample_index: z.number().int().min(0),
        seed: z.number().int(),
        final_reward: z.number(),
        outcome: z.union([z.literal(0), z.literal(1)]),
        partial: z.boolean(),
        step_rewards: z.array(z.number()),
        returns: z.array(z.number()),
        advantage: z.number(),
        messages: z.array(ChatMessage).min(1),
        turns: z.array(
          z.looseObject({
            request: ModelRequestRecord.nullable(),
            completion_token_ids: z.array(z.number().int()).nullable(),
            logprobs: z.array(z.number()).nullable(),
            /** Absent in files from before issue 14's checks: then read from the ids. */
            tokens: z.enum(['endpoint', 'unavailable']).optional(),
          }),
        ),
      }),
    )
    .min(1),
});
export type RolloutGroupLine = z.infer<typeof RolloutGroupLine>;

/**
 * The GRPO rows ({@link GrpoRow}, as `switchboard groups --granularity conversation` writes them)
 * of one rollout group: one row per sample, `prefix_messages` the length of the first request
 * (the system prompt the first turn was sampled from), `tools` and `sampling` of that request,
 * `policy` the group's policy version, `token_ids` / `logprobs` per agent turn when the endpoint
 * returned them (null for a turn whose tokens are `unavailable`), and `tokens` their coverage.
 */
export function rolloutGrpoRows(group: RolloutGroupLine): GrpoRow[] {
  return group.samples.map((s) => {
    const first = s.turns.find((t) => t.request)?.request ?? null;
    return GrpoRow.parse({
      group_id: group.group_id,
      sample_index: s.sample_index,
      group_size: group.samples.length,
      granularity: 'conversation',
      prefix_ref: group.task_id,
      prefix_messages: first?.messages.length ?? 1,
      domain: group.domain,
      task_id: group.task_id,
      messages: s.messages,
      tools: first?.tools ?? [],
      step_rewards: s.step_rewards,
      returns: s.returns,
      final_reward: s.final_reward,
      outcome: s.outcome,
      partial: s.partial,
      reward_choice: group.reward,
      advantage: s.advantage,
      policy: group.policy_version,
      sampling_seed: first?.sampling.seed ?? s.seed,
      sampling: first?.sampling ?? null,
      ...perTurnTokens(
        s.turns.map((t) => ({
          token_ids: t.tokens === 'unavailable' ? null : t.completion_token_ids,
          logprobs: t.tokens === 'unavailable' ? null : t.logprobs,
        })),
      ),
    });
  });
}
