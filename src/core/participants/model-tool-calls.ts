/**
 * Tool calls from model output. Servers that parse tool calls return them in `tool_calls`;
 * others (and on-device models) leave them in the text in the hermes / Qwen format:
 *
 *     <tool_call>
 *     {"name": "get_bills", "arguments": {"customer_id": "C1002"}}
 *     </tool_call>
 *
 * {@link parseTextToolCalls} takes those blocks out of the text. {@link replyToolCalls} turns
 * calls with JSON-text arguments into reply entries for the episode loop, which validates them
 * (`normalizeReply`, then the environment's argument schema) and turns every malformed call into
 * an `Error: …` tool message. Nothing here throws on bad model output.
 */
import type { ModelToolCall } from '../ports/model-client.ts';
import { argumentsProblem, boundedJson, MAX_ARGUMENT_CHARS } from '../rollout/limits.ts';

const BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/**
 * Split hermes-format `<tool_call>{…}</tool_call>` blocks out of `text`. An unterminated last
 * block runs to the end of the text (a reply cut by `max_tokens`). Each block becomes one call
 * with id `<idPrefix>_<i>`; its `arguments` are the JSON text of the block's `arguments` value
 * (a string value is taken as already-encoded JSON), or the whole block when it is not valid JSON
 * (the call then fails in the episode loop with a clear message).
 *
 * @returns the text without the blocks (trimmed) and the calls in order.
 */
export function parseTextToolCalls(text: string, idPrefix = 'call'): { text: string; calls: ModelToolCall[] } {
  if (!text.includes('<tool_call>')) return { text, calls: [] };
  const calls: ModelToolCall[] = [];
  let i = 0;
  const rest = text.replace(BLOCK, (_m, body: string) => {
    const raw = body.trim();
    const id = `${idPrefix}_${i++}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      const name = /"name"\s*:\s*"([^"]*)"/.exec(raw)?.[1] ?? '';
      calls.push({ id, name, arguments: raw });
      return '';
    }
    const obj =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    const name = typeof obj.name === 'string' ? obj.name : '';
    calls.push({ id, name, arguments: argumentsText(obj.arguments ?? obj.parameters) });
    return '';
  });
  return { text: rest.replace(/\n{3,}/g, '\n\n').trim(), calls };
}

/**
 * Tool-call arguments as the JSON text a {@link ModelToolCall} carries: a string as it is, any
 * other value as JSON (`{}` for null or undefined). A value over the argument limits
 * (`argumentsProblem`, src/core/rollout/limits.ts) is written without recursion
 * ({@link boundedJson}: `JSON.stringify` throws past a few thousand levels), so the episode loop
 * refuses a too-deep value with the depth reason and keeps its text; a value over
 * {@link MAX_ARGUMENT_CHARS} characters is not written in full: the text is then the reason.
 */
export function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  const problem = argumentsProblem(args ?? {});
  if (!problem) return JSON.stringify(args ?? {});
  const { text, cut } = boundedJson(args, MAX_ARGUMENT_CHARS);
  return cut ? problem : text;
}

/**
 * Reply entries for the episode loop: `arguments` decoded from JSON text when it holds a JSON
 * object. Text that is not JSON, or JSON of another type (`null`, `[1]`, `3`), stays a string, so
 * the call keeps it verbatim (`raw_arguments`); either way the
 * episode loop's `normalizeReply` refuses the call with `Error: invalid arguments for <tool>:
 * not valid JSON: …` or `…: expected an object, got …` as its tool message; text over the
 * argument limits stays text too. Unknown tools and wrong argument types are refused by the
 * environment the same way.
 */
export function replyToolCalls(calls: readonly ModelToolCall[]): { id: string; name: string; arguments: unknown }[] {
  return calls.map((c) => {
    let args: unknown = c.arguments;
    if (c.arguments.length > MAX_ARGUMENT_CHARS)
      args = c.arguments; // refused as too large, not parsed
    else if (c.arguments.trim() === '') args = {};
    else {
      try {
        args = JSON.parse(c.arguments);
        // Too deep, or JSON that is not an object (`null`, `[1]`, `3`): kept as text, so the
        // record (`raw_arguments`) and every later request keep what the model wrote.
        if (argumentsProblem(args) || typeof args !== 'object' || args === null || Array.isArray(args))
          args = c.arguments;
      } catch {
        args = c.arguments;
      }
    }
    return { id: c.id, name: c.name, arguments: args };
  });
}
