/**
 * A noisy reference policy: an agent of adjustable skill for the self-evolving task bank's tests
 * and demos. It follows the reference plan ({@link referencePlan}) like {@link ReferenceAgent},
 * but at each write step of the plan it errs with the task's error probability p_task: with
 * equal chance it skips the write (says the domain language's `noop` phrase instead of calling the
 * tool) or calls it
 * with a wrong amount (the first numeric argument plus 1). A write with no numeric argument is
 * skipped. Draws come from a fork of the episode's seeded agent generator per (task, plan step), so a seeded rollout replays
 * bit-for-bit, and the same seed gives the same mistakes. With `tell` > 0 it also leaves out
 * each item it must tell (communicate_info) with that probability.
 */
import { toolsFor } from '../schema/domain.ts';
import type { ToolCall } from '../schema/trajectory.ts';
import { phrasesFor } from './phrases.ts';
import { closingSay, planCall, PlanMemo } from './reference-plan.ts';
import { STOP_TOKENS, type Agent, type EpisodeView, type ParticipantReply } from './types.ts';

/** The per-task error profile of a {@link NoisyAgent}. */
export interface ErrorProfile {
  /** Error probability of a write step for tasks not in `tasks`, in [0, 1]. */
  p: number;
  /** Error probability per task id, in [0, 1]. */
  tasks?: Readonly<Record<string, number>>;
  /**
   * Probability, in [0, 1], of leaving out each `communicate_info` item of the closing step (what
   * the agent must tell). Default 0: only writes err.
   */
  tell?: number;
  /**
   * Error probability by channel preset name (`clean`, `control`, `regular`, `harsh`, `custom`):
   * the preset of the caller's last turn heard through the phone channel (`audio.preset`); used for
   * tasks not in `tasks`, in place of `p`, when the preset is listed. Without a channel it is not used.
   */
  channel?: Readonly<Record<string, number>>;
}

/**
 * The agent. `id` is `noisy:<p>` (plus `+<n>tasks` when a per-task profile is given).
 * @throws RangeError when a probability is outside [0, 1]
 */
export class NoisyAgent implements Agent {
  readonly id: string;
  private readonly plans = new PlanMemo();
  constructor(private readonly profile: ErrorProfile) {
    const all = [
      profile.p,
      profile.tell ?? 0,
      ...Object.values(profile.tasks ?? {}),
      ...Object.values(profile.channel ?? {}),
    ];
    if (all.some((p) => !(p >= 0 && p <= 1))) throw new RangeError(`NoisyAgent: error probabilities must be in [0, 1]`);
    const n = Object.keys(profile.tasks ?? {}).length;
    const ch = Object.entries(profile.channel ?? {}).map(([k, v]) => `,${k}=${v}`);
    this.id = `noisy:${profile.p}${profile.tell ? `,tell=${profile.tell}` : ''}${ch.join('')}${n > 0 ? `+${n}tasks` : ''}`;
  }

  /** p_task of `taskId`, heard through channel preset `preset` (see {@link ErrorProfile.channel}). */
  errorRate(taskId: string, preset?: string): number {
    const t = this.profile.tasks;
    if (t && Object.hasOwn(t, taskId)) return t[taskId]!;
    const c = this.profile.channel;
    return preset !== undefined && c && Object.hasOwn(c, preset) ? c[preset]! : this.profile.p;
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const plan = this.plans.plan(view.domain, view.task);
    const done = view.turns.filter((t) => t.role === 'assistant' && !t.interrupted).length;
    const step = plan[done];
    if (!step) return { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    const tell = this.profile.tell ?? 0;
    if ('say' in step) return { text: done === plan.length - 1 && tell > 0 ? closingText(view, done, tell) : step.say };
    const kind = toolsFor(view.domain, 'assistant').find((t) => t.name === step.call.name)?.kind;
    // A generator per (task, plan step): mistakes of different tasks and steps are independent.
    const rng = view.rng.fork(`noisy:${view.task.id}:${done}`);
    const heard = view.turns.findLast((t) => t.role === 'user' && t.audio !== undefined);
    const preset = heard?.role === 'user' ? heard.audio?.preset : undefined;
    if (kind !== 'write' || rng.next() >= this.errorRate(view.task.id, preset))
      return { text: '', tool_calls: [planCall(step.call)] };
    const wrong = rng.next() < 0.5 ? wrongAmount(step.call) : null;
    return wrong ? { text: '', tool_calls: [wrong] } : { text: phrasesFor(view.domain.language).noop };
  }
}

/**
 * The closing step (every communicate_info item, then "anything else?") with each item left out
 * with probability `tell`, drawn per item from the step's own generator.
 */
function closingText(view: EpisodeView, step: number, tell: number): string {
  const rng = view.rng.fork(`noisy-tell:${view.task.id}:${step}`);
  const kept = (view.task.evaluation_criteria?.communicate_info ?? []).filter(() => rng.next() >= tell);
  return closingSay(phrasesFor(view.domain.language), kept);
}

/** The call with its first numeric argument (top level) plus 1, or null when it has none. */
function wrongAmount(call: ToolCall): ToolCall | null {
  const key = Object.keys(call.arguments).find((k) => typeof call.arguments[k] === 'number');
  if (key === undefined) return null;
  return { ...call, arguments: { ...structuredClone(call.arguments), [key]: (call.arguments[key] as number) + 1 } };
}
