/**
 * Exports in the shapes trainers read as they are (issue 14), from our SFT records and GRPO rows:
 *
 * - TRL SFT (`SFTTrainer`, conversational): `messages` (+ `tools`).
 * - TRL GRPO (`GRPOTrainer`, conversational prompt–completion): `prompt` (the group's shared
 *   prefix) and `completion` (what the sample's agent said and did after it, with the caller's
 *   and tool messages between its turns), `completion_mask` (1 for the policy's own messages),
 *   + `tools`, + `interaction_metrics` when the rows are duplex calls'.
 * - verl (`RLHFDataset` Parquet): `data_source`, `prompt`, `ability`, `reward_model`
 *   (`{style, ground_truth}`), `extra_info`; one row per group (verl samples the K responses).
 *
 * One content shape per column: in a TRL file, every message `content` is a string when no
 * message of the file carries caller audio, and a list of parts (`{type, text, audio}`, the unused
 * one null) in every message when any does; an assistant turn with only tool calls has content
 * `""`. Tool-call `arguments` stay JSON text (OpenAI's shape): argument objects differ per tool, and
 * one typed column cannot hold them without inventing nulls. Every `arguments` is the JSON text of
 * an object, as a trainer's chat template needs it (`json.loads`, then the object's items): argument
 * text a model wrote that is not a JSON object (`{not json`, `"x"`, `[1]`, cut text) is carried as
 * `{"_raw": <the text as sent>}` ({@link RAW_ARGUMENTS_KEY}; the call's tool message still says
 * why it failed), and counted ({@link TrainerFormatTally}) so the CLI can say how many.
 *
 * verl's `prompt` content is always a string, as its `RLHFDataset` reads it: caller audio is a
 * `<audio>` placeholder in the text and the clip's path goes, in placeholder order, into the row's
 * `audios` list (verl's media-column convention, as `images` / `<image>`: the n-th placeholder
 * takes the n-th item). When a prompt of the file holds tool calls or results, every message has
 * `tool_calls` (a list, or null) and `tool_call_id` (a string, or null); when one holds audio,
 * every row has `audios` (maybe empty). Files without either keep the plain `{role, content}` shape.
 */
import type { ChatMessage, ChatTool, ChatToolCall } from '../schema/chat.ts';
import { isPlainObject } from '../rollout/normalize.ts';
import type { GrpoRow, SftRecord } from './export.ts';

/**
 * The key under which a TRL or verl file carries argument text a model wrote that is not a JSON
 * object: `arguments` is then `{"_raw": "<text as sent>"}` (JSON text). Our own formats keep the
 * text as sent. A leading underscore, as no tool of ours has such a parameter.
 */
export const RAW_ARGUMENTS_KEY = '_raw';

/** What a conversion to a trainer's format changed: tool calls whose arguments were wrapped ({@link RAW_ARGUMENTS_KEY}). */
export interface TrainerFormatTally {
  wrappedArguments: number;
}

/** True when `text` is the JSON text of an object (what a chat template can take the items of). */
function isObjectText(text: string): boolean {
  try {
    return isPlainObject(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * Tool calls as a trainer reads them: each `arguments` the JSON text of an object; text that is
 * not one becomes `{"_raw": text}` (counted in `tally`). Calls whose arguments are fine are kept
 * as they are (same objects).
 */
function trainerCalls(calls: readonly ChatToolCall[], tally: TrainerFormatTally): ChatToolCall[] {
  return calls.map((c) => {
    if (isObjectText(c.function.arguments)) return c;
    tally.wrappedArguments++;
    return {
      ...c,
      function: { name: c.function.name, arguments: JSON.stringify({ [RAW_ARGUMENTS_KEY]: c.function.arguments }) },
    };
  });
}

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
  /** Everything after the prompt: the agent's turns, and the caller's and tool messages between them. */
  completion: TrlMessage[];
  /**
   * One entry per `completion` message: 1 when the policy generated it (an assistant message),
   * 0 for a caller (`user`) or `tool` message it did not write. A trainer that computes the loss
   * over `completion` masks the 0 messages' tokens out.
   */
  completion_mask: (0 | 1)[];
  tools: ChatTool[];
  group_id: string;
  sample_index: number;
  task_id: string;
  final_reward: number;
  advantage: number;
  /**
   * The sample's interaction metrics (a duplex call's, {@link GrpoRow.interaction_metrics}), beside
   * the reward and never part of it: in every row of a file when any of its rows has them (null
   * where a row has none), absent from files without any.
   */
  interaction_metrics?: Record<string, unknown> | null;
}

/** A tool call in a verl prompt message (OpenAI's shape, `arguments` as the JSON text of an object). */
export interface VerlToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message of a verl prompt (see the module note for when the tool fields are there). */
export interface VerlMessage {
  role: string;
  content: string;
  tool_calls?: VerlToolCall[] | null;
  tool_call_id?: string | null;
}

/** The `<audio>` placeholder of a caller clip in a verl prompt's text. */
export const VERL_AUDIO_PLACEHOLDER = '<audio>';

/** A verl row (one per group). */
export interface VerlRow {
  data_source: string;
  prompt: VerlMessage[];
  /** Caller clips (WAV paths), one per `<audio>` placeholder of `prompt` in order; only in files with audio. */
  audios?: string[];
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

function trlMessage(m: ChatMessage, parts: boolean, tally: TrainerFormatTally): TrlMessage {
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
    ...(m.role === 'assistant' && m.tool_calls?.length ? { tool_calls: trainerCalls(m.tool_calls, tally) } : {}),
    ...(m.role === 'tool' ? { tool_call_id: m.tool_call_id } : {}),
  };
}

/** A fresh tally (nothing changed yet). */
const noTally = (): TrainerFormatTally => ({ wrappedArguments: 0 });

/** TRL SFT rows from SFT records; `tally` counts the tool calls whose arguments were wrapped. */
export function trlSftRows(records: readonly SftRecord[], tally: TrainerFormatTally = noTally()): TrlSftRow[] {
  const parts = records.some((r) => hasParts(r.messages));
  return records.map((r) => ({
    messages: r.messages.map((m) => trlMessage(m, parts, tally)),
    tools: r.tools,
    task_id: r.task_id,
    reward: r.reward,
  }));
}

/**
 * TRL GRPO rows (prompt = shared prefix, completion = the rest) from GRPO rows; `tally` counts the
 * tool calls whose arguments were wrapped.
 */
export function trlGrpoRows(rows: readonly GrpoRow[], tally: TrainerFormatTally = noTally()): TrlGrpoRow[] {
  const parts = rows.some((r) => hasParts(r.messages));
  const metrics = rows.some((r) => r.interaction_metrics);
  return rows.map((r) => ({
    prompt: r.messages.slice(0, r.prefix_messages).map((m) => trlMessage(m, parts, tally)),
    completion: r.messages.slice(r.prefix_messages).map((m) => trlMessage(m, parts, tally)),
    completion_mask: r.messages.slice(r.prefix_messages).map((m) => (m.role === 'assistant' ? 1 : 0)),
    tools: r.tools,
    group_id: r.group_id,
    sample_index: r.sample_index,
    task_id: r.task_id,
    final_reward: r.final_reward,
    advantage: r.advantage,
    ...(metrics ? { interaction_metrics: r.interaction_metrics ?? null } : {}),
  }));
}

/**
 * verl rows: one per group (its shared prompt), `reward_model.ground_truth` = the task id (a
 * reward function scores a response by playing it in Switchboard), `extra_info` typed. Caller
 * audio becomes `<audio>` placeholders and `audios` paths; tool calls and results are kept (see
 * the module note). Rows are uniform over the file. `tally` counts the tool calls whose arguments
 * were wrapped.
 * @throws TrainerFormatError for a prompt whose text already holds a `<audio>` placeholder of its own.
 */
export function verlRows(
  rows: readonly GrpoRow[],
  opts: { split?: string } = {},
  tally: TrainerFormatTally = noTally(),
): VerlRow[] {
  const byGroup = new Map<string, GrpoRow[]>();
  for (const r of rows) byGroup.set(r.group_id, [...(byGroup.get(r.group_id) ?? []), r]);
  const groups = [...byGroup.values()];
  const prompts = groups.map((g) => g[0]!.messages.slice(0, g[0]!.prefix_messages));
  const tools = prompts.some((p) =>
    p.some((m) => (m.role === 'assistant' && m.tool_calls?.length) || m.role === 'tool'),
  );
  const audio = prompts.some(hasParts);
  return groups.map((group, index) => {
    const first = group[0]!;
    const audios: string[] = [];
    const prompt = prompts[index]!.map((m, i): VerlMessage => {
      const said = (text: string) => {
        if (text.includes(VERL_AUDIO_PLACEHOLDER))
          throw new TrainerFormatError(
            `group ${first.group_id}: message ${i} says "${VERL_AUDIO_PLACEHOLDER}" in its text, which verl would read as a caller clip`,
          );
        return text;
      };
      const content =
        m.role === 'user' && typeof m.content !== 'string'
          ? m.content
              .map((p) => {
                if (p.type === 'text') return said(p.text);
                audios.push(p.audio);
                return VERL_AUDIO_PLACEHOLDER;
              })
              .join('')
          : said((m.content as string | null) ?? '');
      return {
        role: m.role,
        content,
        ...(tools
          ? {
              tool_calls: m.role === 'assistant' && m.tool_calls?.length ? trainerCalls(m.tool_calls, tally) : null,
              tool_call_id: m.role === 'tool' ? m.tool_call_id : null,
            }
          : {}),
      };
    });
    return {
      data_source: `switchboard/${first.domain}`,
      prompt,
      ...(audio ? { audios } : {}),
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
