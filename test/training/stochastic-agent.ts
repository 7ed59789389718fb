/**
 * A seeded stochastic test agent: follows the reference plan, but before each write it skips the
 * confirmation question with probability `skip` (drawn from the episode's agent generator). Its
 * position in the plan is derived from the turns (no hidden state), so milestone forks replay.
 */
import { referencePlan, type PlanStep } from '../../src/core/participants/reference-plan.ts';
import { phrasesFor } from '../../src/core/participants/phrases.ts';
import { STOP_TOKENS, type Agent, type EpisodeView, type ParticipantReply } from '../../src/core/participants/types.ts';
import { toolsFor } from '../../src/core/schema/domain.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';

function sameStep(step: PlanStep, turn: Extract<Turn, { role: 'assistant' }>): boolean {
  return 'say' in step
    ? turn.tool_calls.length === 0 && turn.text === step.say
    : turn.tool_calls[0]?.name === step.call.name;
}

/** Index of the next plan step: each assistant turn consumes its step, skipped steps are passed over. */
export function planPosition(plan: readonly PlanStep[], turns: readonly Turn[]): number {
  let i = 0;
  for (const t of turns) {
    if (t.role !== 'assistant') continue;
    while (i < plan.length && !sameStep(plan[i]!, t)) i++;
    i++;
  }
  return i;
}

export class SkipConfirmAgent implements Agent {
  readonly id: string;
  constructor(private readonly skip: number) {
    this.id = `skip-confirm:${skip}`;
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const plan = referencePlan(view.domain, view.task);
    const at = planPosition(plan, view.turns);
    const step = plan[at];
    if (!step) return { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    const after = plan[at + 1];
    const beforeWrite =
      'say' in step &&
      after &&
      'call' in after &&
      toolsFor(view.domain, 'assistant').find((t) => t.name === after.call.name)?.kind === 'write';
    if (beforeWrite && view.rng.next() < this.skip) return { text: '', tool_calls: [structuredClone(after.call)] };
    return 'say' in step ? { text: step.say } : { text: '', tool_calls: [structuredClone(step.call)] };
  }
}
