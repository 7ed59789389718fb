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
import {
  ranToolTurn,
  type TerminationReason,
  type ToolTurn,
  type Trajectory,
  type Turn,
} from '../schema/trajectory.ts';

/**
 * Why an episode's end left calls unrun, in the words of {@link unrunCallTurns}'s `why`: the
 * sandbox fault's `invalidReason` when there is one; `<failed> of the agent's tool calls failed`
 * for `too_many_errors`; else the stop token of the reply that made the calls.
 */
export function unrunWhy(termination: TerminationReason, invalidReason: string | null, failed: number): string {
  if (invalidReason !== null) return invalidReason;
  return termination === 'too_many_errors'
    ? `${failed} of the agent's tool calls failed`
    : 'the reply that made it ended the call';
}

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

/** One entry of a conversation for {@link unansweredCalls}: its role and how many tool calls it makes. */
export interface CallStep {
  role: string;
  calls: number;
}

/**
 * The first entry of `steps` (turns or chat messages) whose calls are not all answered by the
 * `tool` entries right after it: `{at, role, calls, answered}`, or null. With `atEnd` false a
 * last entry short of answers is not reported (a trajectory may end among a reply's calls:
 * {@link withUnrunAnswered} answers them).
 */
export function unansweredCalls(
  steps: readonly CallStep[],
  atEnd: boolean,
): { at: number; role: string; calls: number; answered: number } | null {
  for (let at = 0; at < steps.length; at++) {
    const { role, calls } = steps[at]!;
    if (role === 'tool') continue;
    let answered = 0;
    while (steps[at + 1 + answered]?.role === 'tool') answered++;
    if (answered < calls && (atEnd || at + 1 + answered < steps.length)) return { at, role, calls, answered };
  }
  return null;
}

/**
 * Where calls of `turns` are left without a tool turn before the episode went on (an assistant or
 * user turn with more calls than tool turns right after it, followed by another such turn), as
 * `turn <i> (<role>): <n> of its <m> tool calls …`; null when only the last reply may lack answers.
 * No version of ours records that; a file that does was edited or comes from elsewhere.
 */
export function unansweredMidway(turns: readonly Turn[]): string | null {
  const u = unansweredCalls(
    turns.map((t) => ({ role: t.role, calls: t.role === 'tool' ? 0 : (t.tool_calls?.length ?? 0) })),
    false,
  );
  return u
    ? `turn ${u.at} (${u.role}): ${u.calls - u.answered} of its ${u.calls} tool calls have no tool turn, and the episode went on after them`
    : null;
}

/**
 * A recorded trajectory with every call of its last reply answered: one written before unrun
 * calls were answered (before commit 8a2af74, session 9) can end among the calls of a reply with
 * no tool turn for the rest; they get the `not_run` answers an episode gives them now
 * ({@link unrunCallTurns}, {@link unrunWhy}: the `why` is the same text, the agent's failed calls
 * counted from the turns). The trajectory itself when nothing is missing. Check
 * {@link unansweredMidway} first: calls left unanswered before the end are not repaired here.
 */
export function withUnrunAnswered(t: Trajectory): Trajectory {
  const failed = t.turns.filter((x) => ranToolTurn(x) && x.requestor === 'assistant' && x.error).length;
  const unrun = unrunCallTurns(t.turns, t.termination, unrunWhy(t.termination, t.invalid_reason, failed));
  return unrun.length ? { ...t, turns: [...t.turns, ...unrun] } : t;
}
