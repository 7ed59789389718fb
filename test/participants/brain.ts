/**
 * A "model brain" for the test server: answers chat requests the way a well-behaved model would,
 * driven by our scripted participants, so that a run with model-backed agent, caller and judge
 * has a known outcome.
 * - `agent-model`: the reference agent's plan; step k is answered to a request with k assistant
 *   messages. Tool calls come back as server `tool_calls`, or as hermes `<tool_call>` text when
 *   `toolFormat` is `text`.
 * - `caller-model`: the scripted caller, fed the conversation rebuilt from the caller's messages;
 *   the task is found by the persona in the system prompt.
 * - `judge-model`: one verdict per listed item, met unless `unmet` names it, evidence turn 0.
 */
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { STOP_TOKENS } from '../../src/core/participants/types.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';
import { completion, wireToolCall, type Handler } from '../fixtures/openai-server.ts';

export interface BrainOptions {
  toolFormat?: 'server' | 'text';
  /** Judge item ids judged not met. */
  unmet?: readonly string[];
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export function modelBrain(domain: Domain, opts: BrainOptions = {}): Handler {
  return async (body: any) => {
    const msgs: any[] = body.messages;
    if (body.model === 'agent-model') {
      const k = msgs.filter((m) => m.role === 'assistant').length;
      const first = msgs.find((m) => m.role === 'user');
      if (!first) return { json: completion({ model: body.model, content: domain.greeting, token_ids: [k] }) };
      const firstText = String(first.content).split('\n')[0];
      const task = domain.tasks.find((t) => t.user_scenario.requests?.[0] === firstText);
      if (!task) throw new Error(`brain: no task opens with ${firstText}`);
      const step = referencePlan(domain, task)[k];
      if (!step)
        return { json: completion({ model: body.model, content: `再见。${STOP_TOKENS.stop}`, token_ids: [k] }) };
      if ('say' in step)
        return { json: completion({ model: body.model, content: step.say, token_ids: [k], logprobs: [-0.5] }) };
      const { call } = step;
      if (opts.toolFormat === 'text') {
        return {
          json: completion({
            model: body.model,
            content: `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`,
            token_ids: [k],
          }),
        };
      }
      return {
        json: completion({
          model: body.model,
          content: null,
          tool_calls: [wireToolCall(call.id, call.name, call.arguments)],
          token_ids: [k],
        }),
      };
    }
    if (body.model === 'caller-model') {
      const system = String(msgs[0].content);
      const task = domain.tasks.find((t) => t.user_scenario.persona && system.includes(t.user_scenario.persona));
      if (!task) throw new Error('brain: no task persona in the caller prompt');
      const turns: Turn[] = [];
      const names = new Map<string, string>();
      for (const m of msgs.slice(1)) {
        if (m.role === 'user') turns.push({ role: 'assistant', text: String(m.content), tool_calls: [], t_ms: 0 });
        else if (m.role === 'assistant') {
          const calls = (m.tool_calls ?? []).map((c: any) => ({
            id: c.id,
            name: c.function.name,
            arguments: JSON.parse(c.function.arguments),
          }));
          calls.forEach((c: { id: string; name: string }) => names.set(c.id, c.name));
          turns.push({ role: 'user', text: m.content ?? '', tool_calls: calls, t_ms: 0 });
        } else if (m.role === 'tool') {
          turns.push({
            role: 'tool',
            requestor: 'user',
            tool_call_id: m.tool_call_id,
            name: names.get(m.tool_call_id) ?? '',
            arguments: {},
            content: m.content,
            error: false,
            writes: [],
            t_ms: 0,
          });
        }
      }
      const reply = await new ScriptedUser().respond({ domain, task, turns, tools: [], rng: seededRng(0) });
      const calls = (reply.tool_calls ?? []).map((c) => wireToolCall(c.id, c.name, c.arguments));
      return {
        json: completion({
          model: body.model,
          content: reply.text || null,
          ...(calls.length ? { tool_calls: calls } : {}),
        }),
      };
    }
    if (body.model === 'judge-model') {
      const prompt = String(msgs[1].content);
      const ids = [...prompt.matchAll(/^- ("[^"]*"): /gm)].map((m) => JSON.parse(m[1]!) as string);
      const verdicts = ids.map((id) => ({
        id,
        met: !opts.unmet?.includes(id),
        turn: 0,
        reason: opts.unmet?.includes(id) ? `${id} missing` : `${id} ok`,
      }));
      return { json: completion({ model: body.model, content: JSON.stringify({ verdicts }) }) };
    }
    throw new Error(`brain: unknown model ${body.model}`);
  };
}
