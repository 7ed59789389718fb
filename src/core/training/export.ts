/**
 * Training-data exports: SFT records (one per trajectory, OpenAI chat format) and GRPO rows (one
 * per sample of a group). Both have zod schemas; every builder validates what it returns.
 * Writing files (JSONL, Parquet) is the adapters' job; this module only builds plain data.
 */
import { z } from 'zod';
import { toolSchema, toolsFor, type Domain } from '../schema/domain.ts';
import { RewardComponent } from '../schema/task.ts';
import { RewardInfo, type Trajectory, type Turn, type UserTurn } from '../schema/trajectory.ts';
import { ChatMessage, ChatTool, type ModelRequestRecord, SentSampling } from '../schema/chat.ts';
import type { Task } from '../schema/task.ts';
import { agentMessages, chatFromModel } from '../participants/model-messages.ts';
import { renderAgentPrompt } from '../prompts/agent.ts';
import type { GroupBatch } from './groups.ts';
import type { TurnSample } from './turn-level.ts';
import { isTeacherGuided, refuseTeacherGuidance } from './rollouts.ts';

export { ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from '../schema/chat.ts';

/** One SFT line: a whole trajectory as a chat, its tools and its reward breakdown. */
export const SftRecord = z.object({
  id: z.string(),
  domain: z.string(),
  task_id: z.string(),
  seed: z.number().int(),
  agent: z.string(),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(ChatTool),
  reward: z.number(),
  /** Component name → score (null when it could not be computed). */
  components: z.partialRecord(RewardComponent, z.number().nullable()),
  reward_info: RewardInfo,
  /** True when produced with teacher-only guidance. */
  teacher_guidance: z.boolean(),
  /**
   * Supervision only, never part of the agent's view: for each user message that carries caller
   * audio, what the caller said in it (the heard text of its turns, joined by a newline).
   * `message` indexes `messages`.
   */
  caller_transcripts: z.array(z.object({ message: z.number().int().min(0), text: z.string() })),
});
export type SftRecord = z.infer<typeof SftRecord>;

/** One GRPO row: one sample of one group. */
export const GrpoRow = z.object({
  group_id: z.string(),
  sample_index: z.number().int().min(0),
  group_size: z.number().int().min(1),
  granularity: z.enum(['conversation', 'milestone', 'turn']),
  /** What the group shares: task id, milestone id, or `<trajectory id>@<turn>`. */
  prefix_ref: z.string(),
  /** Messages of the shared prefix (the prompt): the first `prefix_messages` of `messages`. */
  prefix_messages: z.number().int().min(0),
  domain: z.string(),
  task_id: z.string(),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(ChatTool),
  step_rewards: z.array(z.number()),
  returns: z.array(z.number()),
  final_reward: z.number(),
  outcome: z.union([z.literal(0), z.literal(1)]),
  /**
   * True when the reward was computed without a judge it needed (NL assertions without
   * `--judge`): `final_reward` and `outcome` cover the judged components only.
   */
  partial: z.boolean(),
  /** Which reward the advantage was computed on. */
  reward_choice: z.enum(['final', 'shaped']),
  advantage: z.number(),
  policy: z.string(),
  /** The seed sent with the sample's first generated request (the sample's seed when no model was asked). */
  sampling_seed: z.number().int(),
  /** Sampling sent with the sample's first generated request, or null when no model was asked (scripted agent). */
  sampling: SentSampling.nullable(),
  /**
   * Token ids per generated assistant turn (after the prefix): the turn's ids when the endpoint
   * returned them, null for a turn without (never `[]`, which would read as an empty
   * generation); the whole field is null when no turn has any.
   */
  token_ids: z.array(z.array(z.number().int()).nullable()).nullable(),
  /** Log-probabilities per assistant turn, as `token_ids`: null for a turn without token ids. */
  logprobs: z.array(z.array(z.number()).nullable()).nullable(),
  /**
   * Ours (issue 14): how many of the row's generated turns have token ids: `all`, `partial` (some
   * turns are null in `token_ids`) or `none` (`token_ids` is null). See {@link tokenCoverage}.
   */
  tokens: z.enum(['all', 'partial', 'none']),
  /**
   * Ours (issue 17): the sample's interaction metrics (L_R, L_Y, R_R, R_Y, I_A, S_BC, S_VT,
   * S_ND with their counts; docs/duplex.md) when its call ran on the full-duplex timeline; null
   * otherwise. Beside the reward, never part of it.
   */
  interaction_metrics: z.record(z.string(), z.unknown()).nullable().default(null),
});
export type GrpoRow = z.infer<typeof GrpoRow>;

/** Options of {@link chatMessages}. */
export interface ChatOptions {
  /**
   * The path written for a caller-audio part, from the path recorded in the trajectory (relative
   * to the run's output folder). Default: unchanged.
   */
  audioPath?: (ref: string) => string;
}

/** True when a request sent caller audio (then every user message is a list of parts). */
function sentAudio(r: ModelRequestRecord): boolean {
  return r.messages.some((m) => m.role === 'user' && typeof m.content !== 'string');
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** `messages` with each caller-audio part's path mapped by `audioPath` (unchanged without one). */
export function withAudioPaths(messages: ChatMessage[], audioPath?: (ref: string) => string): ChatMessage[] {
  if (!audioPath) return messages;
  return messages.map((m) =>
    m.role === 'user' && typeof m.content !== 'string'
      ? {
          role: 'user',
          content: m.content.map((p) => (p.type === 'audio' ? { type: 'audio', audio: audioPath(p.audio) } : p)),
        }
      : m,
  );
}

/**
 * The agent's view of `turns` as chat messages, exactly as a model agent is sent it
 * ({@link ChatMessage}; caller audio by reference):
 * - when the turns record the requests a model agent sent ({@link ModelRequestRecord} on
 *   assistant turns): the system prompt of those requests and the conversation rendered the same
 *   way (`agentMessages`), caller audio instead of caller text when the requests sent audio;
 *   every recorded request's messages are then a prefix of the result, byte for byte. Should a
 *   request not be (an agent whose prompt changed within the episode), the result is the last
 *   request's messages followed by what came after it.
 * - otherwise (a scripted agent): what a model agent would have been sent: the rendered agent
 *   prompt ({@link renderAgentPrompt} without guidance) and the conversation, with the degraded
 *   caller audio instead of the caller's text when the turns have channel audio.
 * The caller's own tool calls and results are not in the agent's view.
 */
export function chatMessages(
  domain: Domain,
  task: Task,
  turns: readonly Turn[],
  opts: ChatOptions = {},
): ChatMessage[] {
  const requests = turns.flatMap((t, i) => (t.role === 'assistant' && t.request ? [{ at: i, r: t.request }] : []));
  const audio = requests.length
    ? requests.some((q) => sentAudio(q.r))
    : turns.some((t) => t.role === 'user' && t.audio !== undefined);
  const hook = audio ? (t: UserTurn) => (t.audio ? '' : null) : undefined;
  const first = requests[0]?.r.messages[0];
  const system =
    first?.role === 'system'
      ? first.content
      : renderAgentPrompt({ domain, task, tools: chatTools(domain), guidance: null });
  let out = chatFromModel(agentMessages(system, turns, hook));
  if (!requests.every((q) => same(q.r.messages, out.slice(0, q.r.messages.length)))) {
    const last = requests[requests.length - 1]!;
    out = [...last.r.messages, ...chatFromModel(agentMessages(system, turns.slice(last.at), hook)).slice(1)];
  }
  return withAudioPaths(out, opts.audioPath);
}

/**
 * For each user message of `messages` that carries audio, the heard text of the caller turns
 * whose degraded WAV it references (supervision beside the agent's view, never in it).
 */
function callerTranscripts(turns: readonly Turn[], messages: readonly ChatMessage[], opts: ChatOptions) {
  const byRef = new Map<string, string>();
  for (const t of turns)
    if (t.role === 'user' && t.audio)
      byRef.set(opts.audioPath ? opts.audioPath(t.audio.degraded) : t.audio.degraded, t.text);
  return messages.flatMap((m, message) => {
    if (m.role !== 'user' || typeof m.content === 'string') return [];
    const said = m.content.flatMap((p) => (p.type === 'audio' && byRef.has(p.audio) ? [byRef.get(p.audio)!] : []));
    return said.length ? [{ message, text: said.join('\n') }] : [];
  });
}

/** The task `id` of `domain`. @throws Error naming the task when the domain has none of that id. */
function taskOf(domain: Domain, id: string): Task {
  const task = domain.tasks.find((t) => t.id === id);
  if (!task) throw new Error(`domain ${domain.name} has no task ${id}`);
  return task;
}

/** The agent's tools in OpenAI format. */
export function chatTools(domain: Domain) {
  return toolsFor(domain, 'assistant').map(toolSchema);
}

/** Which trajectories an SFT export keeps. */
export interface SftFilter {
  /** Keep rewards ≥ this. Default: no bound. */
  minReward?: number;
  /** Keep only trajectories whose listed components all scored 1. */
  requireComponents?: readonly RewardComponent[];
  /** Keep teacher-guided trajectories (marked in the record). Default true: SFT is their use. */
  allowTeacher?: boolean;
  /** Keep partial rewards (computed without a judge they needed). Default false. */
  allowPartial?: boolean;
}

/** Why a trajectory was left out of an SFT export, or null when it is kept. */
export function sftRejection(t: Trajectory, filter: SftFilter = {}): string | null {
  if (!t.valid) return 'invalid rollout';
  const info = t.reward_info;
  if (!info) return 'not scored';
  if (info.partial && !filter.allowPartial) return 'partial reward';
  if (isTeacherGuided(t) && filter.allowTeacher === false) return 'teacher-guided';
  if (filter.minReward !== undefined && info.reward < filter.minReward)
    return `reward ${info.reward} < ${filter.minReward}`;
  for (const c of filter.requireComponents ?? []) {
    if (info.components[c]?.score !== 1) return `component ${c} not 1`;
  }
  return null;
}

/** One SFT record for a scored trajectory. */
export function sftRecord(domain: Domain, t: Trajectory, opts: ChatOptions = {}): SftRecord {
  const info = t.reward_info;
  if (!info) throw new Error(`trajectory ${t.id} is not scored`);
  const components: Partial<Record<RewardComponent, number | null>> = {};
  for (const [k, v] of Object.entries(info.components)) if (v) components[k as RewardComponent] = v.score;
  const messages = chatMessages(domain, taskOf(domain, t.task_id), t.turns, opts);
  return SftRecord.parse({
    id: t.id,
    domain: t.domain,
    task_id: t.task_id,
    seed: t.seed,
    agent: t.participants.agent,
    messages,
    tools: chatTools(domain),
    reward: info.reward,
    components,
    reward_info: info,
    teacher_guidance: isTeacherGuided(t),
    caller_transcripts: callerTranscripts(t.turns, messages, opts),
  });
}

/** SFT records of the trajectories `filter` keeps, in input order, plus the rejected ids and why. */
export function sftRecords(
  domain: Domain,
  trajectories: readonly Trajectory[],
  filter: SftFilter = {},
  opts: ChatOptions = {},
): { records: SftRecord[]; rejected: { id: string; reason: string }[] } {
  const records: SftRecord[] = [];
  const rejected: { id: string; reason: string }[] = [];
  for (const t of trajectories) {
    const why = sftRejection(t, filter);
    if (why) rejected.push({ id: t.id, reason: why });
    else records.push(sftRecord(domain, t, opts));
  }
  return { records, rejected };
}

/**
 * Messages of the prompt: the messages of the first request recorded at or after turn `from`
 * (the prompt the sample's first generated turn was sampled from), else the agent's view of the
 * turns before `from`.
 */
function promptLength(domain: Domain, task: Task, turns: readonly Turn[], from: number): number {
  const sent = turns.slice(from).find((t) => t.role === 'assistant' && t.request);
  if (sent?.role === 'assistant' && sent.request) return sent.request.messages.length;
  return chatMessages(domain, task, turns.slice(0, from)).length;
}

/** Messages of the shared prefix of a sample, and of the whole sample. */
function sampleMessages(
  domain: Domain,
  task: Task,
  granularity: string,
  item: unknown,
  prefixRef: string,
  milestoneTurns: ReadonlyMap<string, number>,
): { messages: ChatMessage[]; prefix: number; policy: string; turns: readonly Turn[] } {
  if (granularity === 'turn') {
    const s = item as TurnSample;
    return {
      messages: chatMessages(domain, task, s.score.turns),
      prefix: promptLength(domain, task, s.score.turns, s.turn),
      policy: s.candidate.agent,
      turns: s.score.turns.slice(s.turn),
    };
  }
  const t = item as Trajectory;
  const messages = chatMessages(domain, task, t.turns);
  // Conversation: the prompt of the first agent turn. Milestone: the checkpoint's turns come first.
  const at = granularity === 'conversation' ? 0 : (milestoneTurns.get(prefixRef) ?? 0);
  return {
    messages,
    prefix: promptLength(domain, task, t.turns, at),
    policy: t.participants.agent,
    turns: t.turns.slice(at),
  };
}

/** The request of the first generated agent turn of `turns`, or null. */
function firstRequest(turns: readonly Turn[]): ModelRequestRecord | null {
  for (const t of turns) if (t.role === 'assistant' && t.request) return t.request;
  return null;
}

/** How many of a row's turns have token ids (`token_ids` as {@link GrpoRow} holds it). */
export function tokenCoverage(tokenIds: readonly (readonly number[] | null)[] | null): GrpoRow['tokens'] {
  if (!tokenIds?.some((t) => t !== null)) return 'none';
  return tokenIds.every((t) => t !== null) ? 'all' : 'partial';
}

/**
 * Per-turn token ids and logprobs as a {@link GrpoRow} holds them, from each generated turn's
 * ids and logprobs: null for a turn without ids (and then no logprobs either), both fields null
 * when no turn has ids, and the `tokens` coverage.
 */
export function perTurnTokens(
  turns: readonly { token_ids: number[] | null; logprobs: number[] | null }[],
): Pick<GrpoRow, 'token_ids' | 'logprobs' | 'tokens'> {
  const any = turns.some((t) => t.token_ids);
  const ids = any ? turns.map((t) => t.token_ids) : null;
  const lps =
    any && turns.some((t) => t.token_ids && t.logprobs) ? turns.map((t) => (t.token_ids ? t.logprobs : null)) : null;
  return { token_ids: ids, logprobs: lps, tokens: tokenCoverage(ids) };
}

/** Token ids and logprobs of the sample's own assistant turns (after the prefix), see {@link perTurnTokens}. */
function generated(turns: readonly Turn[]): Pick<GrpoRow, 'token_ids' | 'logprobs' | 'tokens'> {
  return perTurnTokens(
    turns.flatMap((t) =>
      t.role === 'assistant'
        ? [{ token_ids: t.generation?.token_ids ?? null, logprobs: t.generation?.logprobs ?? null }]
        : [],
    ),
  );
}

/**
 * The first sample that two GRPO rows both claim (same `group_id` and `sample_index`) as
 * `"<group_id> sample <i>"`, or null. Rows of one group share one advantage baseline, so a group
 * read twice (two `rollout` or `groups` runs of the same task joined into one file) would
 * otherwise be merged into a group its advantages were not computed over.
 */
export function repeatedSample(rows: readonly Pick<GrpoRow, 'group_id' | 'sample_index'>[]): string | null {
  const seen = new Set<string>();
  for (const r of rows) {
    const key = `${r.group_id} sample ${r.sample_index}`;
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return null;
}

/** Options of {@link grpoRows}. */
export interface GrpoRowOptions {
  /** Policy or adapter name written on every row (default: the trajectory's agent id). */
  policy?: string;
  /** Turns in each milestone's checkpoint, by milestone id (for `prefix_messages`). */
  milestoneTurns?: ReadonlyMap<string, number>;
}

/**
 * One GRPO row per sample of every kept group of `batch`, validated against {@link GrpoRow}.
 *
 * @throws TeacherGuidanceError when a sample's trajectory is teacher-guided.
 */
export function grpoRows(
  domain: Domain,
  batch: GroupBatch<Trajectory | TurnSample>,
  opts: GrpoRowOptions = {},
): GrpoRow[] {
  const milestoneTurns = opts.milestoneTurns ?? new Map<string, number>();
  const rows: GrpoRow[] = [];
  for (const g of batch.groups) {
    if (g.granularity !== 'turn') refuseTeacherGuidance(g.samples.map((s) => s.item as Trajectory));
    const task = taskOf(domain, g.task_id);
    g.samples.forEach((s, i) => {
      const { messages, prefix, policy, turns } = sampleMessages(
        domain,
        task,
        g.granularity,
        s.item,
        g.prefix,
        milestoneTurns,
      );
      const sent = firstRequest(turns);
      rows.push(
        GrpoRow.parse({
          group_id: g.id,
          sample_index: i,
          group_size: g.samples.length,
          granularity: g.granularity,
          prefix_ref: g.prefix,
          prefix_messages: prefix,
          domain: domain.name,
          task_id: g.task_id,
          messages,
          tools: chatTools(domain),
          step_rewards: s.rewards.step_rewards,
          returns: s.rewards.returns,
          final_reward: s.rewards.final,
          outcome: s.rewards.outcome,
          partial: s.rewards.partial === true,
          reward_choice: g.reward,
          advantage: g.advantages[i]!,
          policy: opts.policy ?? policy,
          sampling_seed: sent?.sampling.seed ?? s.seed,
          sampling: sent?.sampling ?? null,
          ...generated(turns),
          interaction_metrics:
            g.granularity === 'turn'
              ? ((s.item as TurnSample).score.continuation?.interaction_metrics ?? null)
              : ((s.item as Trajectory).duplex?.metrics ?? null),
        }),
      );
    });
  }
  return rows;
}
