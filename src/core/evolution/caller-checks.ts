/**
 * Attribution checks of a model caller (issue 16): did the simulated caller, not the agent, make
 * the rollout fail? Two checks over the failed rollouts of a task whose caller is a model
 * (the trajectory has `participants.user_card`; the scripted caller says only what its task card
 * holds and has none):
 *
 * - **invention** (`caller_invented`): a caller turn states
 *   - a *fact* — a value as {@link statedValues} finds them (ISO dates, ids such as `B10008`,
 *     numbers with a decimal point or three or more digits) — that is in none of its task card
 *     (the user scenario, the outbound opening), what it heard or saw earlier in the call (agent
 *     speech, its own tools' results, its own earlier turns: {@link checkCallerFacts}) and the
 *     task's initial database (every value of every row, as exported); or
 *   - a *goal* — an operation cue (`operationCues`) of a write tool of either side that the
 *     reference solution never calls, said by neither the task card nor an earlier agent turn
 *     (the caller asks for an operation its task does not have: "also change my plan").
 * - **early hang-up** (`caller_hung_up_early`): the caller ended the call (`user_stop`) while
 *   the agent was waiting on it: the agent's last utterance before the caller's last turn
 *   asks for one of the caller's facts (it contains a fact's `cues` and asks:
 *   {@link asksForConfirmation}) and the caller's last turn does not give the fact's value, or
 *   asks for confirmation while a write of the reference solution has not been made yet (naming
 *   one of that write tool's `operationCues` when it declares them) and the caller's last turn is
 *   not a yes ({@link isAgreement}). The goal was still reachable when the caller left.
 *
 * Each check gives at most one {@link Finding} per task, with every rollout that shows it as
 * evidence and the first one's turn and value in the detail.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { checkCallerFacts, statedValues } from '../participants/model-user.ts';
import { toolsFor, type ToolDefinition } from '../schema/domain.ts';
import { callerCardText, type Task } from '../schema/task.ts';
import type { Trajectory, Turn } from '../schema/trajectory.ts';
import { asksForConfirmation, isAgreement } from '../scoring/dialogue-acts.ts';
import { spokenText, utterances } from '../scoring/turns.ts';
import type { Finding } from './findings.ts';

/** True when a model (not the scripted caller) played the caller: the trajectory has a caller card. */
export function hasModelCaller(t: Trajectory): boolean {
  return t.participants.user_card !== undefined;
}

/** Every value {@link statedValues} finds in the task's initial database. */
export async function databaseValues(runtime: DomainRuntime, task: Task): Promise<Set<string>> {
  const env = await runtime.open(task);
  try {
    return new Set(statedValues(JSON.stringify(await env.exportState())));
  } finally {
    await env.close();
  }
}

/** Write tools of either side, by name. */
function writeTools(runtime: DomainRuntime): ToolDefinition[] {
  return [...toolsFor(runtime.domain, 'assistant'), ...toolsFor(runtime.domain, 'user')].filter(
    (t) => t.kind === 'write',
  );
}

interface Hit {
  trajectory: string;
  turn: number;
  what: string;
}

/** The first invention of one rollout: a fact or a goal, with its turn. */
function firstInvention(
  t: Trajectory,
  task: Task,
  dbValues: ReadonlySet<string>,
  goalCues: readonly { tool: string; cue: string }[],
): Hit | null {
  const card = callerCardText(task).toLowerCase();
  for (const [i, turn] of t.turns.entries()) {
    if (turn.role !== 'user') continue;
    const text = spokenText(turn.text);
    if (!text) continue;
    const facts = checkCallerFacts(text, task, t.turns.slice(0, i)).filter((v) => !dbValues.has(v));
    if (facts.length)
      return {
        trajectory: t.id,
        turn: i,
        what: `states ${facts.map((v) => JSON.stringify(v)).join(', ')}, in neither its task card, the call so far nor the database`,
      };
    const lower = text.toLowerCase();
    const agentSaid = t.turns
      .slice(0, i)
      .filter((x): x is Extract<Turn, { role: 'assistant' }> => x.role === 'assistant')
      .map((x) => x.text.toLowerCase())
      .join('\n');
    const goal = goalCues.find((g) => lower.includes(g.cue) && !card.includes(g.cue) && !agentSaid.includes(g.cue));
    if (goal)
      return {
        trajectory: t.id,
        turn: i,
        what: `asks for "${goal.cue}" (${goal.tool}), an operation its task does not have`,
      };
  }
  return null;
}

/** The early hang-up of one rollout, if the caller left while the agent waited on it. */
function earlyHangUp(t: Trajectory, task: Task, writes: readonly ToolDefinition[]): Hit | null {
  if (t.termination !== 'user_stop') return null;
  const lastUser = t.turns.findLastIndex((x) => x.role === 'user');
  if (lastUser < 0) return null;
  const before = t.turns.slice(0, lastUser);
  const asked = utterances(before, 'assistant').at(-1);
  if (!asked || !asksForConfirmation(asked.text)) return null;
  const last = t.turns[lastUser]!;
  const answer = last.role === 'user' ? spokenText(last.text) : '';
  const text = asked.text.toLowerCase();
  const fact = (task.user_scenario.facts ?? []).find((f) => f.cues.some((c) => text.includes(c.toLowerCase())));
  if (fact)
    return answer.includes(fact.value)
      ? null
      : {
          trajectory: t.id,
          turn: lastUser,
          what: `hung up after the agent asked at turn ${asked.index} for its ${fact.key}`,
        };
  if (isAgreement(answer)) return null;
  const done = new Set(before.flatMap((x) => (x.role === 'tool' && !x.error ? [x.name] : [])));
  const byName = new Map(writes.map((w) => [w.name, w]));
  const pending = (task.evaluation_criteria?.actions ?? []).find((a) => {
    const tool = byName.get(a.name);
    if (!tool || done.has(a.name)) return false;
    const cues = tool.operationCues ?? [];
    return cues.length === 0 || cues.some((c) => text.includes(c.toLowerCase()));
  });
  if (!pending) return null;
  return {
    trajectory: t.id,
    turn: lastUser,
    what: `hung up after the agent asked at turn ${asked.index} to confirm ${pending.name}, which the reference still needs`,
  };
}

/**
 * The invention and early hang-up findings of one task over its failed rollouts (only those
 * with a model caller are looked at).
 *
 * @param failed the task's valid, failed rollouts
 * @param dbValues {@link databaseValues} of the task (asked for only when a model caller is present)
 */
export async function callerFindings(
  runtime: DomainRuntime,
  task: Task,
  failed: readonly Trajectory[],
  dbValues: () => Promise<ReadonlySet<string>>,
): Promise<Finding[]> {
  const mine = failed.filter(hasModelCaller);
  if (mine.length === 0) return [];
  const writes = writeTools(runtime);
  const used = new Set((task.evaluation_criteria?.actions ?? []).map((a) => a.name));
  const goalCues = writes
    .filter((w) => !used.has(w.name))
    .flatMap((w) => (w.operationCues ?? []).map((cue) => ({ tool: w.name, cue: cue.toLowerCase() })));
  const values = await dbValues();
  const checks = [
    ['caller_invented', (t: Trajectory) => firstInvention(t, task, values, goalCues)],
    ['caller_hung_up_early', (t: Trajectory) => earlyHangUp(t, task, writes)],
  ] as const;
  const out: Finding[] = [];
  for (const [kind, check] of checks) {
    const hits = mine.map(check).filter((h): h is Hit => !!h);
    const first = hits[0];
    if (first)
      out.push({
        kind,
        component: 'caller',
        field: 'user_scenario',
        detail: `the caller ${first.what} (turn ${first.turn} of ${first.trajectory}; ${hits.length} of ${mine.length} failed rollouts)`,
        trajectory_ids: hits.map((h) => h.trajectory),
      });
  }
  return out;
}
