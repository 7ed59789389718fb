/**
 * tau2-bench simulation results, as its `run` command saves them (`Results` in
 * tau2/data_model/simulation.py): `{timestamp, info, tasks, simulations: [SimulationRun]}`.
 * Only the fields replay needs are declared; unknown fields are ignored, so files of older and
 * newer tau2-bench versions parse.
 *
 * Field names are tau2-bench's (tau2/data_model/message.py):
 * - `SimulationRun`: `id`, `task_id`, `trial`, `termination_reason`, `reward_info.reward`,
 *   `reward_info.reward_breakdown` (component → score), `messages` (half duplex) or `ticks`
 *   (full duplex, where `messages` is left out).
 * - `AssistantMessage` / `UserMessage`: `role`, `content`, `tool_calls: [ToolCall]`.
 * - `ToolCall`: `id`, `name`, `arguments`, `requestor` (`assistant` | `user`).
 * - `ToolMessage`: `role: "tool"`, `id` (the id of the call it answers), `content` (the text the
 *   caller saw; `Error: …` on failure), `requestor`, `error`.
 * - `MultiToolMessage`: `role: "tool"`, `tool_messages: [ToolMessage]` (saved files normally hold
 *   the tool messages one by one after the message that made the calls).
 * - `Tick`: `agent_chunk`, `user_chunk`, `agent_tool_calls`, `user_tool_calls`,
 *   `agent_tool_results`, `user_tool_results`.
 */
import { z } from 'zod';
import type { Requestor } from '../schema/task.ts';
import type { TerminationReason, Turn } from '../schema/trajectory.ts';
import { ReplayInputError, fieldAt, type RecordedCall, type RecordedEpisode } from './episode.ts';

const Tau2Requestor = z.enum(['assistant', 'user']);

/** tau2 `ToolCall`. `requestor` is left unset when absent: the message's role decides then. */
export const Tau2ToolCall = z.object({
  id: z.string().default(''),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).default({}),
  requestor: Tau2Requestor.optional(),
});
export type Tau2ToolCall = z.infer<typeof Tau2ToolCall>;

/** tau2 `ToolMessage`. */
export const Tau2ToolMessage = z.object({
  role: z.literal('tool'),
  id: z.string(),
  content: z.string().nullish(),
  requestor: Tau2Requestor.default('assistant'),
  error: z.boolean().default(false),
});
export type Tau2ToolMessage = z.infer<typeof Tau2ToolMessage>;

const ParticipantFields = {
  content: z.string().nullish(),
  tool_calls: z.array(Tau2ToolCall).nullish(),
};
const Tau2AssistantMessage = z.object({ role: z.literal('assistant'), ...ParticipantFields });
const Tau2UserMessage = z.object({ role: z.literal('user'), ...ParticipantFields });
const Tau2SystemMessage = z.object({ role: z.literal('system'), content: z.string().nullish() });
/** A `ToolMessage` or a `MultiToolMessage` (both have role `tool`). */
const Tau2ToolLike = z
  .object({
    role: z.literal('tool'),
    id: z.string().optional(),
    content: z.string().nullish(),
    requestor: Tau2Requestor.default('assistant'),
    error: z.boolean().default(false),
    tool_messages: z.array(Tau2ToolMessage).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.tool_messages === undefined && m.id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'a tool message needs the id of the call it answers' });
    }
  });

/** One tau2 message (`Message` union), told apart by `role`. */
export const Tau2Message = z.discriminatedUnion('role', [
  Tau2SystemMessage,
  Tau2AssistantMessage,
  Tau2UserMessage,
  Tau2ToolLike,
]);
export type Tau2Message = z.infer<typeof Tau2Message>;

const Chunk = z.object({ content: z.string().nullish() }).nullish();

/** tau2 `Tick` (full duplex): what each side said and called during one tick. */
export const Tau2Tick = z.object({
  agent_chunk: Chunk,
  user_chunk: Chunk,
  agent_tool_calls: z.array(Tau2ToolCall).default([]),
  user_tool_calls: z.array(Tau2ToolCall).default([]),
  agent_tool_results: z.array(Tau2ToolMessage).default([]),
  user_tool_results: z.array(Tau2ToolMessage).default([]),
});
export type Tau2Tick = z.infer<typeof Tau2Tick>;

/** tau2 `SimulationRun` (the fields replay reads). */
export const Tau2Simulation = z.object({
  id: z.string(),
  task_id: z.union([z.string(), z.number()]).transform(String),
  trial: z.number().int().nullish(),
  termination_reason: z.string(),
  reward_info: z
    .object({
      reward: z.number(),
      reward_breakdown: z.record(z.string(), z.number().nullable()).nullish(),
    })
    .nullish(),
  messages: z.array(Tau2Message).nullish(),
  ticks: z.array(Tau2Tick).nullish(),
});
export type Tau2Simulation = z.infer<typeof Tau2Simulation>;

/** tau2 `Results` (the fields replay reads): `info.environment_info.domain_name` and `simulations`. */
export const Tau2Results = z.object({
  info: z
    .object({
      environment_info: z.object({ domain_name: z.string().nullish() }).nullish(),
    })
    .nullish(),
  simulations: z.array(Tau2Simulation),
});
export type Tau2Results = z.infer<typeof Tau2Results>;

/**
 * tau2 `TerminationReason` → ours. Ours has `user_stop`, `agent_stop`, `max_steps`,
 * `too_many_errors` and `infrastructure_error` too; tau2's `timeout` becomes `max_steps`, and
 * `agent_error`, `user_error`, `context_window_exceeded`, `unexpected_error` or any other value
 * become `infrastructure_error`. Every one of these except the two stops scores 0 in tau2-bench's
 * evaluator and in ours, so the mapping keeps the reward.
 */
export function tau2Termination(reason: string): TerminationReason {
  switch (reason) {
    case 'user_stop':
    case 'agent_stop':
    case 'max_steps':
    case 'too_many_errors':
    case 'infrastructure_error':
      return reason;
    case 'timeout':
      return 'max_steps';
    default:
      return 'infrastructure_error';
  }
}

/** A participant message or a tool result, with its path in the file. */
type Flat =
  | { kind: 'say'; role: Requestor; text: string; calls: Tau2ToolCall[]; path: string }
  | { kind: 'result'; message: Tau2ToolMessage; path: string };

function fromMessages(messages: readonly Tau2Message[], where: string): Flat[] {
  const out: Flat[] = [];
  messages.forEach((m, i) => {
    const path = fieldAt(where, `messages[${i}]`);
    if (m.role === 'system') return;
    if (m.role === 'assistant' || m.role === 'user') {
      out.push({ kind: 'say', role: m.role, text: m.content ?? '', calls: m.tool_calls ?? [], path });
      return;
    }
    if (m.tool_messages !== undefined) {
      m.tool_messages.forEach((tm, k) =>
        out.push({ kind: 'result', message: tm, path: `${path}.tool_messages[${k}]` }),
      );
      return;
    }
    const { tool_messages: _, ...single } = m;
    out.push({ kind: 'result', message: { ...single, id: single.id ?? '' }, path });
  });
  return out;
}

function fromTicks(ticks: readonly Tau2Tick[], where: string): Flat[] {
  const out: Flat[] = [];
  ticks.forEach((t, i) => {
    const path = fieldAt(where, `ticks[${i}]`);
    const sides = [
      {
        role: 'assistant',
        chunk: t.agent_chunk,
        calls: t.agent_tool_calls,
        results: t.agent_tool_results,
        key: 'agent',
      },
      { role: 'user', chunk: t.user_chunk, calls: t.user_tool_calls, results: t.user_tool_results, key: 'user' },
    ] as const;
    for (const side of sides) {
      const text = side.chunk?.content ?? '';
      if (text || side.calls.length) out.push({ kind: 'say', role: side.role, text, calls: side.calls, path });
      side.results.forEach((tm, k) =>
        out.push({ kind: 'result', message: tm, path: `${path}.${side.key}_tool_results[${k}]` }),
      );
    }
  });
  return out;
}

interface Pending {
  call: Tau2ToolCall;
  requestor: Requestor;
}

/**
 * Build turns and calls from flat messages. A tool result answers the oldest unanswered call
 * with its id (an empty id answers the oldest unanswered call). `mergeText` joins consecutive
 * text-only utterances of one side (full-duplex chunks) into one turn.
 */
function buildTurns(
  flat: readonly Flat[],
  file: string,
  mergeText: boolean,
): Pick<RecordedEpisode, 'turns' | 'calls' | 'unanswered'> {
  const turns: Turn[] = [];
  const calls: RecordedCall[] = [];
  const pending: Pending[] = [];
  for (const item of flat) {
    const t_ms = turns.length;
    if (item.kind === 'say') {
      const last = turns[turns.length - 1];
      if (
        mergeText &&
        item.calls.length === 0 &&
        last &&
        last.role !== 'tool' &&
        last.role === item.role &&
        last.tool_calls.length === 0
      ) {
        last.text += item.text;
        continue;
      }
      turns.push({
        role: item.role,
        text: item.text,
        tool_calls: item.calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        t_ms,
      });
      for (const call of item.calls) pending.push({ call, requestor: call.requestor ?? item.role });
      continue;
    }
    const tm = item.message;
    let j = pending.findIndex((p) => p.call.id === tm.id);
    if (j < 0 && tm.id === '') j = pending.length ? 0 : -1;
    if (j < 0) {
      throw new ReplayInputError(
        file,
        `${item.path}.id`,
        pending.length
          ? `tool message "${tm.id}" answers no pending tool call (pending: ${pending.map((p) => `"${p.call.id}"`).join(', ')})`
          : `tool message "${tm.id}" answers no tool call`,
      );
    }
    const [{ call, requestor }] = pending.splice(j, 1) as [Pending];
    turns.push({
      role: 'tool',
      requestor,
      tool_call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      content: tm.content ?? '',
      error: tm.error,
      writes: [],
      t_ms,
    });
    calls.push({
      turn: turns.length - 1,
      requestor,
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      output: tm.content ?? null,
      error: tm.error,
    });
  }
  const unanswered = pending.map((p) => ({ name: p.call.name, arguments: p.call.arguments, requestor: p.requestor }));
  return { turns, calls, unanswered };
}

/**
 * One tau2 `SimulationRun` as a {@link RecordedEpisode}. Half-duplex runs are read from
 * `messages`, full-duplex runs (no `messages`) from `ticks`. System messages are dropped. Turn
 * times (`t_ms`) are positions, not tau2's wall-clock timestamps.
 *
 * @param file the file it was read from; `where` its path there (`simulations[3]`, `` for a
 *   file holding one run).
 * @param domain the domain the recording names (`info.environment_info.domain_name`), with the
 *   file and field that name it.
 * @throws ReplayInputError naming `file` and the field when a tool message answers no call.
 */
export function tau2SimulationEpisode(
  sim: Tau2Simulation,
  file: string,
  where: string,
  domain: RecordedEpisode['domain'] = null,
): RecordedEpisode {
  const fullDuplex = sim.messages == null && sim.ticks != null;
  const flat = fullDuplex ? fromTicks(sim.ticks ?? [], where) : fromMessages(sim.messages ?? [], where);
  const built = buildTurns(flat, file, fullDuplex);
  return {
    simulation_id: sim.id,
    task_id: sim.task_id,
    trial: sim.trial ?? null,
    file,
    domain,
    where,
    ...built,
    termination: tau2Termination(sim.termination_reason),
    recorded_termination: sim.termination_reason,
    reward: sim.reward_info?.reward ?? null,
    reward_components: sim.reward_info?.reward_breakdown ?? null,
  };
}

/** Every simulation of a tau2 results file, in file order, as {@link RecordedEpisode}s. */
export function tau2ResultsEpisodes(results: Tau2Results, file: string): RecordedEpisode[] {
  const named = results.info?.environment_info?.domain_name;
  const domain = named ? { name: named, file, field: 'info.environment_info.domain_name' } : null;
  return results.simulations.map((sim, i) => tau2SimulationEpisode(sim, file, `simulations[${i}]`, domain));
}
