/**
 * Answers for tool calls that never ran. An episode that ends among the calls of one reply (the
 * agent's 10th failed call of 200 sent at once: `too_many_errors`; a sandbox fault: an invalid
 * rollout; a page closed mid-call; a stop token in the reply, whose calls are never run) leaves the rest of that reply's calls without a tool message.
 * So does a caller's yes-and-stop (`stop_deferred`), whose calls are answered as soon as it is made.
 * The reply stays on record exactly as the model sent it; each call left is answered by a tool
 * turn marked `not_run`, so every export is a well-formed OpenAI message sequence (each
 * `tool_calls` id answered by a `tool` message, in order, before the next assistant or user
 * message). Such turns count for nothing (`ranToolTurn` in schema/trajectory.ts).
 */
import type { TerminationReason, ToolTurn, Turn } from '../schema/trajectory.ts';

/**
 * One `not_run` tool turn for each call of the last assistant or user turn of `turns` that has no
 * tool turn after it, in call order (the calls of a reply run in order, so the tool turns after
 * the reply answer its first calls). Each has `content` `Error: not run: the episode ended
 * (<termination>: <why>) before this call ran`, `error` true, no writes, the caller's arguments
 * and the `t_ms` of the last turn (no time passed for them). Empty when every call is answered.
 *
 * @param termination how the episode ended, stored as `not_run`.
 * @param why what ended it, in words (e.g. `10 of the agent's tool calls failed`).
 */
export function unrunCallTurns(turns: readonly Turn[], termination: TerminationReason, why: string): ToolTurn[] {
  let at = turns.length - 1;
  while (at >= 0 && turns[at]!.role === 'tool') at--;
  const reply = turns[at];
  if (!reply || reply.role === 'tool') return [];
  const answered = turns.length - 1 - at;
  const t_ms = turns[turns.length - 1]!.t_ms;
  // `?? []`: turns stored by a page before the field was defaulted may lack it.
  return (reply.tool_calls ?? []).slice(answered).map((call) => ({
    role: 'tool',
    requestor: reply.role,
    tool_call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    content: `Error: not run: the episode ended (${termination}: ${why}) before this call ran`,
    error: true,
    writes: [],
    t_ms,
    not_run: termination,
  }));
}
