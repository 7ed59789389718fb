/**
 * Training-data exports: SFT records (one per trajectory, OpenAI chat format) and GRPO rows (one
 * per sample of a group). Both have zod schemas; every builder validates what it returns.
 * Writing files (JSONL, Parquet) is the adapters' job; this module only builds plain data.
 */
import { z } from 'zod';
import { toolSchema, toolsFor, type Domain } from '../schema/domain.ts';
import { RewardComponent } from '../schema/task.ts';
import { RewardInfo, type Trajectory, type Turn } from '../schema/trajectory.ts';
import type { GroupBatch } from './groups.ts';
import type { TurnSample } from './turn-level.ts';
import { isTeacherGuided, refuseTeacherGuidance } from './rollouts.ts';

/** A function tool call in an OpenAI chat message (arguments as a JSON string). */
export const ChatToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** A content part of a user message: text, or the caller's audio by reference. */
export const ChatContentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  /** 16 kHz WAV of the caller's turn; `url` is a relative file path or a `file://` / `data:` URL. */
  z.object({ type: z.literal('audio_url'), audio_url: z.object({ url: z.string() }) }),
]);

/** One message in OpenAI chat-completions format. */
export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(ChatContentPart).min(1)]) }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(ChatToolCall).optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A tool in OpenAI `tools` format. */
export const ChatTool = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
});

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
  /** Which reward the advantage was computed on. */
  reward_choice: z.enum(['final', 'shaped']),
  advantage: z.number(),
  policy: z.string(),
  sampling_seed: z.number().int(),
  /** Token ids per generated assistant turn (after the prefix), when the endpoint returned them; else null. */
  token_ids: z.array(z.array(z.number().int())).nullable(),
  /** Log-probabilities per assistant turn, when the endpoint returned them; else null. */
  logprobs: z.array(z.array(z.number())).nullable(),
});
export type GrpoRow = z.infer<typeof GrpoRow>;

/** Options of {@link chatMessages}. */
export interface ChatOptions {
  /**
   * Audio of the caller's turn at `index`, by reference. Default: the degraded WAV the turn
   * recorded (`audio.degraded`, relative to the run's output folder) — what the agent heard.
   */
  audioRef?: (index: number) => string | undefined;
}

/**
 * The agent's view of `turns` as OpenAI chat messages: the policy as the system message, caller
 * text as user messages (with an `audio_url` part before the transcript when the turn has audio), assistant text and tool calls, and the results of the agent's tool calls. The caller's
 * own tool calls and results are not part of the agent's view and are left out, as are caller
 * turns without text.
 */
export function chatMessages(domain: Domain, turns: readonly Turn[], opts: ChatOptions = {}): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'system', content: domain.policy }];
  turns.forEach((t, index) => {
    if (t.role === 'user') {
      if (!t.text) return;
      const ref = opts.audioRef ? opts.audioRef(index) : t.audio?.degraded;
      out.push({
        role: 'user',
        content: ref
          ? [
              { type: 'audio_url', audio_url: { url: ref } },
              { type: 'text', text: t.text },
            ]
          : t.text,
      });
    } else if (t.role === 'assistant') {
      const calls = t.tool_calls.map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      }));
      out.push({
        role: 'assistant',
        content: t.text === '' && calls.length ? null : t.text,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
    } else if (t.requestor === 'assistant') {
      out.push({ role: 'tool', tool_call_id: t.tool_call_id, content: t.content });
    }
  });
  return out;
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
  return SftRecord.parse({
    id: t.id,
    domain: t.domain,
    task_id: t.task_id,
    seed: t.seed,
    agent: t.participants.agent,
    messages: chatMessages(domain, t.turns, opts),
    tools: chatTools(domain),
    reward: info.reward,
    components,
    reward_info: info,
    teacher_guidance: isTeacherGuided(t),
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

/** Messages of the shared prefix of a sample, and of the whole sample. */
function sampleMessages(
  domain: Domain,
  granularity: string,
  item: unknown,
  prefixRef: string,
  milestoneTurns: ReadonlyMap<string, number>,
): { messages: ChatMessage[]; prefix: number; policy: string; turns: readonly Turn[] } {
  if (granularity === 'turn') {
    const s = item as TurnSample;
    return {
      messages: chatMessages(domain, s.score.turns),
      prefix: chatMessages(domain, s.score.turns.slice(0, s.turn)).length,
      policy: s.candidate.agent,
      turns: s.score.turns.slice(s.turn),
    };
  }
  const t = item as Trajectory;
  const messages = chatMessages(domain, t.turns);
  if (granularity === 'conversation') return { messages, prefix: 1, policy: t.participants.agent, turns: t.turns };
  // Milestone: the prefix is the checkpoint's turns, the first turns of the continuation.
  const at = milestoneTurns.get(prefixRef);
  return {
    messages,
    prefix: at === undefined ? 1 : chatMessages(domain, t.turns.slice(0, at)).length,
    policy: t.participants.agent,
    turns: t.turns.slice(at ?? 0),
  };
}

/**
 * Token ids and logprobs of the sample's own assistant turns (after the prefix), one array per
 * turn (empty for a turn the model did not report), or null when no turn has them.
 */
function generated(turns: readonly Turn[]): { token_ids: number[][] | null; logprobs: number[][] | null } {
  const gens = turns.flatMap((t) => (t.role === 'assistant' ? [t.generation] : []));
  const ids = gens.some((g) => g?.token_ids) ? gens.map((g) => g?.token_ids ?? []) : null;
  const lps = gens.some((g) => g?.logprobs) ? gens.map((g) => g?.logprobs ?? []) : null;
  return { token_ids: ids, logprobs: lps };
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
    g.samples.forEach((s, i) => {
      const { messages, prefix, policy, turns } = sampleMessages(
        domain,
        g.granularity,
        s.item,
        g.prefix,
        milestoneTurns,
      );
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
          reward_choice: g.reward,
          advantage: g.advantages[i]!,
          policy: opts.policy ?? policy,
          sampling_seed: s.seed,
          ...generated(turns),
        }),
      );
    });
  }
  return rows;
}
