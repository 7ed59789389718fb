/**
 * The reference agent's plan for a task: what to say and which tool to call, step by step,
 * derived from the task's reference solution (`evaluation_criteria.actions`).
 */
import { toolsFor, type Domain } from '../schema/domain.ts';
import type { Action, Fact, Task } from '../schema/task.ts';
import type { ToolCall } from '../schema/trajectory.ts';
import { phrasesFor, type Phrases } from './phrases.ts';
import { spokenArguments } from './spoken.ts';

/** One step: say something (then the caller speaks) or call a tool (then the agent goes on). */
export type PlanStep = { say: string } | { call: ToolCall };

/** Every scalar inside an argument value, as strings. */
function scalars(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (value === null || value === undefined) return out;
  if (Array.isArray(value)) value.forEach((v) => scalars(v, out));
  else if (typeof value === 'object') Object.values(value).forEach((v) => scalars(v, out));
  else out.add(String(value));
  return out;
}

/** Facts the agent must ask for: those whose value some agent action uses as an argument. */
export function neededFacts(task: Task): Fact[] {
  const used = new Set<string>();
  for (const a of task.evaluation_criteria?.actions ?? []) {
    if (a.requestor === 'assistant') scalars(a.arguments, used);
  }
  return (task.user_scenario.facts ?? []).filter((f) => used.has(f.value));
}

/**
 * Build the plan: greeting (or the outbound opening), one question per needed fact, then the
 * actions intent by intent — each action's own `say` line first when it has one, reads called
 * directly, each write preceded by a confirmation question (unless it has a `say`; for the write
 * a caller changes its mind about, first one with the arguments it asked for at the start), each
 * caller-side action requested aloud — with "anything else?" between intents,
 * and finally every `communicate_info` item followed by "anything else?".
 */
export function referencePlan(domain: Domain, task: Task): PlanStep[] {
  const p = phrasesFor(domain.language);
  const steps: PlanStep[] = [];
  steps.push({ say: task.role === 'outbound' && task.opening ? task.opening : domain.greeting });
  for (const f of neededFacts(task)) steps.push({ say: f.ask ?? p.askFact(f.cues[0]!) });
  const actions = task.evaluation_criteria?.actions ?? [];
  const intents = Math.max(1, ...actions.map((a) => (a.intent ?? 0) + 1), task.user_scenario.requests?.length ?? 1);
  let callNo = 0;
  for (let intent = 0; intent < intents; intent++) {
    if (intent > 0) steps.push({ say: p.anythingElse });
    for (const a of actions.filter((x) => (x.intent ?? 0) === intent)) {
      const tool = toolsFor(domain, a.requestor).find((t) => t.name === a.name);
      const spoken = tool?.spokenAs ?? a.name.replace(/_/g, ' ');
      // An offer or other line of the task's own (`say`) is said first; before a write it is
      // the proposal itself, so no confirmation question follows.
      if (a.say) steps.push({ say: a.say });
      if (a.requestor === 'user') {
        steps.push({ say: p.askUserAction(spoken) });
        continue;
      }
      // A caller who changes its mind is first asked to confirm what it asked for at the start.
      const change = task.user_scenario.change_of_mind;
      if (tool?.kind === 'write' && !a.say && change && change.action_id === a.action_id)
        steps.push({
          say: p.confirmWrite(
            spoken,
            spokenArguments({ ...a.arguments, ...change.first }, domain.language, tool?.spokenValues),
          ),
        });
      if (tool?.kind === 'write' && !a.say)
        steps.push({ say: p.confirmWrite(spoken, spokenArguments(a.arguments, domain.language, tool?.spokenValues)) });
      steps.push({ call: toCall(a, `ref-${++callNo}`) });
    }
  }
  const info = task.evaluation_criteria?.communicate_info ?? [];
  steps.push({ say: closingSay(p, info) });
  return steps;
}

/**
 * {@link referencePlan}, built once per participant (one per rollout) rather than at every turn:
 * the plan is a function of the domain and the task alone, so it is kept for the task and domain
 * last asked for (a new task or domain builds it again; nothing else is kept, so a participant
 * still acts from the turns alone). The steps are shared between turns: a call handed out goes
 * through {@link planCall}, so no turn holds an object another turn holds.
 */
export class PlanMemo {
  private last: { domain: Domain; task: Task; plan: PlanStep[] } | undefined;

  /** The plan of `task` in `domain` (see {@link referencePlan}). */
  plan(domain: Domain, task: Task): readonly PlanStep[] {
    if (this.last?.domain !== domain || this.last.task !== task)
      this.last = { domain, task, plan: referencePlan(domain, task) };
    return this.last.plan;
  }
}

/** A fresh copy of a plan step's call (its arguments deep-copied), for a reply. */
export function planCall(call: ToolCall): ToolCall {
  return toCall(call, call.id);
}

/** The closing step: every item to tell (none: nothing), then "anything else?". */
export function closingSay(p: Phrases, info: readonly string[]): string {
  return info.length > 0 ? `${p.tell(info)}${p.sentenceSep}${p.anythingElse}` : p.anythingElse;
}

function toCall(a: Pick<Action, 'name' | 'arguments'>, id: string): ToolCall {
  return { id, name: a.name, arguments: structuredClone(a.arguments) };
}
