/**
 * Our turns as OpenAI chat messages, from each side's point of view.
 * - The agent sees caller speech as `user` messages, its own turns as `assistant` messages with
 *   `tool_calls`, and its tool results as `tool` messages; the caller's tool use is hidden.
 * - The caller sees the agent's speech as `user` messages and its own turns as `assistant`
 *   messages; the agent's tool use is hidden, its own user-tool results are `tool` messages.
 * Consecutive `user` messages are merged into one (a model expects alternation).
 */
import type {
  ModelClient,
  ModelContentPart,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  SamplingParams,
} from '../ports/model-client.ts';
import type { ChatMessage, ModelRequestRecord } from '../schema/chat.ts';
import type { Generation, ParticipantCard, ToolCall, Turn, UserTurn } from '../schema/trajectory.ts';

/** Audio for a caller turn (base64 WAV), or null to send its text. */
export type TurnAudio = (turn: UserTurn, index: number) => string | null;

/** Tool calls in wire shape; argument text a model wrote that was not a JSON object goes back verbatim. */
function wireCalls(calls: readonly ToolCall[]) {
  return calls.map((c) => ({ id: c.id, name: c.name, arguments: c.raw_arguments ?? JSON.stringify(c.arguments) }));
}

function pushUser(out: ModelMessage[], content: string | ModelContentPart[], parts = false): void {
  const last = out[out.length - 1];
  if (last?.role === 'user') {
    const a = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
    const b = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
    if (!parts && a.every((p) => p.type === 'text') && b.every((p) => p.type === 'text')) {
      last.content = [...a, ...b].map((p) => (p as { text: string }).text).join('\n');
    } else last.content = [...a, ...b];
    return;
  }
  out.push({ role: 'user', content });
}

/**
 * The conversation as the agent sees it, after `system`. `audio` replaces caller text by audio
 * (the caller's words are then not sent as text beside it); with `audio` given, every user
 * message is a list of parts (one content shape throughout), merged turns keep their parts in
 * order. Audio parts carry the turn's `audio.degraded` path as `ref`.
 */
export function agentMessages(system: string, turns: readonly Turn[], audio?: TurnAudio): ModelMessage[] {
  const out: ModelMessage[] = [{ role: 'system', content: system }];
  const parts = audio !== undefined;
  turns.forEach((t, i) => {
    if (t.role === 'user') {
      const wav = audio?.(t, i) ?? null;
      if (wav !== null) {
        const ref = t.audio?.degraded;
        pushUser(out, [{ type: 'audio', base64: wav, format: 'wav', ...(ref ? { ref } : {}) }], parts);
      } else if (t.text) pushUser(out, parts ? [{ type: 'text', text: t.text }] : t.text, parts);
    } else if (t.role === 'assistant') {
      if (!t.text && t.tool_calls.length === 0) return;
      out.push({
        role: 'assistant',
        content: t.text || null,
        ...(t.tool_calls.length ? { tool_calls: wireCalls(t.tool_calls) } : {}),
      });
    } else if (t.requestor === 'assistant') {
      out.push({ role: 'tool', tool_call_id: t.tool_call_id, content: t.content });
    }
  });
  return out;
}

/** The conversation as the simulated caller sees it, after `system`. */
export function callerMessages(system: string, turns: readonly Turn[]): ModelMessage[] {
  const out: ModelMessage[] = [{ role: 'system', content: system }];
  for (const t of turns) {
    if (t.role === 'assistant') {
      if (t.text) pushUser(out, t.text);
    } else if (t.role === 'user') {
      if (!t.text && t.tool_calls.length === 0) continue;
      out.push({
        role: 'assistant',
        content: t.text || null,
        ...(t.tool_calls.length ? { tool_calls: wireCalls(t.tool_calls) } : {}),
      });
    } else if (t.requestor === 'user') {
      out.push({ role: 'tool', tool_call_id: t.tool_call_id, content: t.content });
    }
  }
  return out;
}

/**
 * Port messages in OpenAI chat shape ({@link ChatMessage}): tool calls as `{id, type, function}`,
 * audio parts by reference (`ref`, else `(not stored)`). Key order as the wire encoder writes.
 */
export function chatFromModel(messages: readonly ModelMessage[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    if (m.role === 'assistant')
      return {
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls?.length
          ? {
              tool_calls: m.tool_calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
    if (m.role === 'user' && typeof m.content !== 'string')
      return {
        role: 'user',
        content: m.content.map((p) =>
          p.type === 'text'
            ? { type: 'text' as const, text: p.text }
            : { type: 'audio' as const, audio: p.ref ?? '(not stored)' },
        ),
      };
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
    return { role: m.role, content: m.content } as ChatMessage;
  });
}

/**
 * The record of a request ({@link ModelRequestRecord}): its messages in OpenAI chat shape with
 * audio by reference (`ref`, else `(not stored)` when the part had none), its tools and sampling.
 */
export function recordRequest(req: ModelRequest): ModelRequestRecord {
  const messages = chatFromModel(req.messages);
  const { temperature, top_p, top_k, max_tokens, seed } = req.sampling;
  return {
    messages,
    tools: (req.tools ?? []).map((t) => structuredClone(t)),
    sampling: { temperature, top_p, top_k, max_tokens, seed },
    voice: req.audio?.voice ?? null,
    stream: req.stream === true,
  };
}

/** What a response adds to the turn record: model name, token ids, logprobs, finish reason. */
export function generationOf(res: ModelResponse): Generation {
  return {
    model: res.model,
    token_ids: res.token_ids,
    prompt_token_ids: res.prompt_token_ids,
    logprobs: res.logprobs,
    ...(res.token_warning ? { token_warning: res.token_warning } : {}),
    finish_reason: res.finish_reason,
    tool_call_source: res.tool_call_source,
    ...(res.reasoning ? { reasoning: res.reasoning } : {}),
  };
}

/**
 * Give calls we parsed out of text ids unique in the episode (`call_<turn>_<i>`): servers' ids
 * are kept as they are.
 */
export function episodeCallIds(res: ModelResponse, turn: number): ModelResponse['tool_calls'] {
  if (res.tool_call_source !== 'text') return res.tool_calls;
  return res.tool_calls.map((c, i) => ({ ...c, id: `call_${turn}_${i}` }));
}

/**
 * The setup of a model participant as recorded in the trajectory: which client and model, the
 * sampling it sends on every request, its prompt version and teacher guidance (agents only).
 */
export function participantCard(
  client: ModelClient,
  sampling: SamplingParams,
  promptVersion: string,
  teacherGuidance: string | null,
): ParticipantCard {
  const { temperature, top_p, top_k, max_tokens } = sampling;
  return {
    kind: client.kind,
    flavor: client.flavor,
    model: client.model,
    base_url: client.endpoint,
    sampling: { temperature, top_p, top_k, max_tokens },
    prompt_version: promptVersion,
    teacher_guidance: teacherGuidance,
  };
}
