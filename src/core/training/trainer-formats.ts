/**
 * Exports in the shapes trainers read as they are (issue 14), from our SFT records and GRPO rows:
 *
 * - TRL SFT (`SFTTrainer`, conversational): `messages` (+ `tools`).
 * - TRL GRPO (`GRPOTrainer`, conversational prompt–completion): `prompt` (the group's shared
 *   prefix) and `completion` (what the sample's agent said and did after it), + `tools`.
 * - verl (`RLHFDataset` Parquet): `data_source`, `prompt`, `ability`, `reward_model`
 *   (`{style, ground_truth}`), `extra_info`; one row per group (verl samples the K responses).
 *
 * One content shape per column: in a TRL file, every message `content` is a string when no
 * message of the file carries caller audio, and a list of parts (`{type, text, audio}`, the unused
 * one null) in every message when any does; an assistant turn with only tool calls has content
 * `""`. Tool-call `arguments` stay JSON text (OpenAI's shape): argument objects differ per tool, and
 * one typed column cannot hold them without inventing nulls. verl's `prompt` content is always a
 * string (verl renders it with the chat template); rows with caller audio are refused.
 */
import type { ChatMessage, ChatTool } from '../schema/chat.ts';
import type { GrpoRow, SftRecord } from './export.ts';

/** A content part in a parts-shaped TRL file: `text` or `audio` (a WAV path) set, the other null. */
export interface TrlPart {
  type: 'text' | 'audio';
  text: string | null;
  audio: string | null;
}

/** A message of a TRL file: `content` is a string, or parts (see the module note). */
export interface TrlMessage {
  role: ChatMessage['role'];
  content: string | TrlPart[];
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A TRL SFT row. */
export interface TrlSftRow {
  messages: TrlMessage[];
  tools: ChatTool[];
  task_id: string;
  reward: number;
}

/** A TRL GRPO row (one per sample). */
export interface TrlGrpoRow {
  prompt: TrlMessage[];
  completion: TrlMessage[];
  tools: ChatTool[];
  group_id: string;
  sample_index: number;
  task_id: string;
  final_reward: number;
  advantage: number;
}

/** A verl row (one per group). */
export interface VerlRow {
  data_source: string;
  prompt: { role: string; content: string }[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  extra_info: {
    index: number;
    split: string;
    group_id: string;
    task_id: string;
    prefix_ref: string;
    group_size: number;
    mean_reward: number;
  };
}

/** Thrown when rows cannot be written in a trainer's format (names the row and the reason). */
export class TrainerFormatError extends Error {
  override name = 'TrainerFormatError';
}

const hasParts = (messages: readonly ChatMessage[]) =>
  messages.some((m) => m.role === 'user' && typeof m.content !== 'string');

function trlMessage(m: ChatMessage, parts: boolean): TrlMessage {
  const raw = m.role === 'user' ? m.content : (m.content ?? '');
  let content: string | TrlPart[];
  if (!parts) {
    if (typeof raw !== 'string') throw new TrainerFormatError('internal: parts in a string-shaped file');
    content = raw;
  } else {
    content =
      typeof raw === 'string'
        ? [{ type: 'text', text: raw, audio: null }]
        : raw.map((p) =>
            p.type === 'text'
              ? { type: 'text', text: p.text, audio: null }
              : { type: 'audio', text: null, audio: p.audio },
          );
  }
  return {
    role: m.role,
    content,
    ...(m.role === 'assistant' && m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
    ...(m.role === 'tool' ? { tool_call_id: m.tool_call_id } : {}),
  };
}

/** TRL SFT rows from SFT records. */
export function trlSftRows(records: readonly SftRecord[]): TrlSftRow[] {
  const parts = records.some((r) => hasParts(r.messages));
  return records.map((r) => ({
    messages: r.messages.map((m) => trlMessage(m, parts)),
    tools: r.tools,
    task_id: r.task_id,
    reward: r.reward,
  }));
}

/** TRL GRPO rows (prompt = shared prefix, completion = the rest) from GRPO rows. */
export function trlGrpoRows(rows: readonly GrpoRow[]): TrlGrpoRow[] {
  const parts = rows.some((r) => hasParts(r.messages));
  return rows.map((r) => ({
    prompt: r.messages.slice(0, r.prefix_messages).map((m) => trlMessage(m, parts)),
    completion: r.messages.slice(r.prefix_messages).map((m) => trlMessage(m, parts)),
    tools: r.tools,
    group_id: r.group_id,
    sample_index: r.sample_index,
    task_id: r.task_id,
    final_reward: r.final_reward,
    advantage: r.advantage,
  }));
}

/**
 * verl rows: one per group (its shared prompt), `reward_model.ground_truth` = the task id (a
 * reward function scores a response by playing it in Switchboard), `extra_info` typed.
 * @throws TrainerFormatError for a prompt with caller audio or with non-text turns verl cannot render.
 */
export function verlRows(rows: readonly GrpoRow[], opts: { split?: string } = {}): VerlRow[] {
  const byGroup = new Map<string, GrpoRow[]>();
  for (const r of rows) byGroup.set(r.group_id, [...(byGroup.get(r.group_id) ?? []), r]);
  return [...byGroup.values()].map((group, index) => {
    const first = group[0]!;
    const prompt = first.messages.slice(0, first.prefix_messages).map((m, i) => {
      if (m.role === 'user' && typeof m.content !== 'string')
        throw new TrainerFormatError(
          `group ${first.group_id}: message ${i} carries caller audio; the verl export is text-only (use the TRL export)`,
        );
      if ((m.role === 'assistant' && m.tool_calls?.length) || m.role === 'tool')
        throw new TrainerFormatError(
          `group ${first.group_id}: message ${i} is a tool call or result; verl prompts here are conversation starts (use --granularity conversation)`,
        );
      return { role: m.role, content: (m.content as string | null) ?? '' };
    });
    return {
      data_source: `switchboard/${first.domain}`,
      prompt,
      ability: 'voice-agent-tool-use',
      reward_model: { style: 'rule', ground_truth: first.task_id },
      extra_info: {
        index,
        split: opts.split ?? 'train',
        group_id: first.group_id,
        task_id: first.task_id,
        prefix_ref: first.prefix_ref,
        group_size: group.length,
        mean_reward: group.reduce((s, r) => s + r.final_reward, 0) / group.length,
      },
    };
  });
}
