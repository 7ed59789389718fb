/**
 * The outcome-grounded term of the turn-level reward: continue an episode from a candidate turn
 * with a fixed continuation policy and score where it ends.
 *
 * The default policy is {@link ReferenceContinuationAgent} (the reference solution, resumed from
 * the progress the conversation has made) against the task's caller; a model agent can be given
 * instead. The same policy continues every candidate of a group, so the term compares the
 * candidates' consequences, not the continuation's luck: with scripted participants it is
 * deterministic.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import { seededRng } from '../ports/rng.ts';
import { planCall, PlanMemo } from '../participants/reference-plan.ts';
import { phrasesFor } from '../participants/phrases.ts';
import {
  STOP_TOKENS,
  type Agent,
  type EpisodeView,
  type Judge,
  type ParticipantReply,
  type UserSimulator,
} from '../participants/types.ts';
import { runEpisode } from '../rollout/episode.ts';
import { thrownReason } from '../rollout/normalize.ts';
import { evaluate } from '../scoring/evaluate.ts';
import { isSuccess } from '../scoring/pass-hat-k.ts';
import { PROCESS_DEFAULTS } from '../scoring/process-reward.ts';
import { successfulAgentCalls } from '../scoring/turns.ts';
import type { EnvSnapshot } from '../env/environment.ts';
import type { Task } from '../schema/task.ts';
import { ranToolTurn, type TerminationReason, type Turn } from '../schema/trajectory.ts';
import { failingReferenceActions, referencePrefix } from './rollouts.ts';
import { DuplexTimeline, type TimelineState } from '../duplex/timeline.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import type { EpisodeChannel } from '../rollout/channel-step.ts';

/**
 * The reference solution resumed from wherever the conversation is: it counts the reference
 * calls already made ({@link referencePrefix}), goes to the plan step after the last of them,
 * skips questions it already asked since then, and says or does the next step; with the plan
 * done, or when the conversation left the reference solution (a wrong or extra successful call,
 * which it cannot undo), it says goodbye and ends the call. Unlike `ReferenceAgent`, which
 * indexes its plan by its own turn count, a turn someone else took does not shift its plan.
 */
export class ReferenceContinuationAgent implements Agent {
  readonly id = 'reference-continuation';
  private readonly plans = new PlanMemo();

  /** @param failing Reference actions that fail on purpose (indices into the task's `actions`): skipped. */
  constructor(private readonly failing: ReadonlySet<number> = new Set()) {}

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const bye = { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    const matched = referencePrefix(view.task, view.turns, this.failing);
    if (matched === null) return bye;
    const plan = this.plans.plan(view.domain, view.task);
    // The plan's call steps are the task's agent actions in order; failing ones are skipped.
    const agentActions = (view.task.evaluation_criteria?.actions ?? []).flatMap((a, i) =>
      a.requestor === 'assistant' ? [i] : [],
    );
    const callSteps = plan.flatMap((s, i) => ('call' in s ? [i] : []));
    const skip = new Set(callSteps.filter((_, j) => this.failing.has(agentActions[j]!)));
    const live = callSteps.filter((i) => !skip.has(i));
    const calls = successfulAgentCalls(view.turns);
    const anchor = matched === 0 ? -1 : calls[matched - 1]!.index;
    const said = new Set(
      view.turns.flatMap((t, i) => (i > anchor && t.role === 'assistant' && !t.interrupted && t.text ? [t.text] : [])),
    );
    let at = matched === 0 ? 0 : live[matched - 1]! + 1;
    while (at < plan.length) {
      const step = plan[at]!;
      if (skip.has(at) || ('say' in step && said.has(step.say))) at++;
      else break;
    }
    const step = plan[at];
    if (!step) return bye;
    return 'say' in step ? { text: step.say } : { text: '', tool_calls: [planCall(step.call)] };
  }
}

/** A fixed continuation policy: who finishes the call after a candidate turn. */
export interface ContinuationPolicy {
  /** The agent that continues. Default {@link ReferenceContinuationAgent} (told the task's failing reference actions). */
  agent?: () => Agent;
  /** The task's caller. */
  user: () => UserSimulator;
  /** Judge for the continued episode's NL assertions (absent: they are not judged; the result is partial). */
  judge?: Judge;
  /** Participant turns before `max_steps`, counted from the episode's start (default 100). */
  maxSteps?: number;
  /** Clock of a continuation, starting at `fromMs` (the fork point's time). */
  clock: (seed: number, fromMs: number) => Clock;
}

/**
 * Issue 17: the full-duplex timeline of a continuation: the channel and turn-taking settings
 * of the source call and the timeline's state at the decision point (`point.timeline()` of the
 * episode loop, without audio). The candidate and its tool results are placed whole on it
 * (`DuplexTimeline.placeWhole`), then the continuation goes on on the timeline. No files are
 * stored for a continuation (its channel has no store; its record's `audio` is null).
 */
export interface ContinuationTimeline {
  channel: EpisodeChannel;
  settings: DuplexSettings;
  state: TimelineState;
}

/** Where a continued episode ended. */
export interface ContinuationResult {
  /** Episode reward R of the continued episode, in [0, 1]. */
  reward: number;
  /** True when R was computed without a judge it needed. */
  partial: boolean;
  /** R ≈ 1 (within 1e-6), partial or not. */
  success: boolean;
  termination: TerminationReason;
  /** Agent turns the continuation took after the candidate (n of γⁿ). */
  agent_turns: number;
  /** γⁿ · R, γ = 0.99 (the process reward's discount, `PROCESS_DEFAULTS.gamma`). */
  discounted: number;
  /** True when the continuation broke on infrastructure (the sample is resampled, never scored). */
  invalid: boolean;
  invalid_reason: string | null;
  /**
   * Issue 17, with a {@link ContinuationTimeline} only: the interaction metrics of the whole
   * call (context, candidate, continuation; docs/duplex.md), beside the reward, never in it.
   */
  interaction_metrics?: Record<string, unknown> | null;
}

/** A continuation broken by infrastructure (resampled, never scored). */
function invalidContinuation(termination: TerminationReason, reason: string | null): ContinuationResult {
  return {
    reward: 0,
    partial: false,
    success: false,
    termination,
    agent_turns: 0,
    discounted: 0,
    invalid: true,
    invalid_reason: reason,
  };
}

/** `channel` without its store: a continuation keeps no files. */
function withoutStore(channel: EpisodeChannel): EpisodeChannel {
  const { store: _store, ...rest } = channel;
  return rest;
}

/** Who speaks after `turns` (the next participant), and how many participant turns they hold. */
function nextAndSteps(turns: readonly Turn[]): { next: 'assistant' | 'user'; step: number } {
  let step = 0;
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i]!;
    if (t.role !== 'tool') step++;
  }
  const last = turns[turns.length - 1];
  // After a participant's tool results, the same participant goes on; after speech, the other side.
  if (!last) return { next: 'assistant', step };
  if (last.role === 'tool') return { next: last.requestor, step };
  return { next: last.role === 'assistant' ? 'user' : 'assistant', step };
}

/**
 * Continue the episode after `turns` (a context, the candidate's assistant turn and its
 * replayed tool results) with `policy`, from the database `env` (a snapshot of the state after
 * those turns), and score the result with `evaluate`. A candidate that ended the call (`stop`
 * token) is scored as it stands, with no continuation. Generators are seeded from `seed`.
 */
export async function continueAndScore(opts: {
  runtime: DomainRuntime;
  task: Task;
  turns: readonly Turn[];
  env: EnvSnapshot;
  seed: number;
  policy: ContinuationPolicy;
  /** How the candidate ended the call, when it did. */
  ended?: TerminationReason;
  /** Issue 17: go on on the source call's full-duplex timeline. */
  duplex?: ContinuationTimeline;
}): Promise<ContinuationResult> {
  const { runtime, task, policy } = opts;
  const gamma = PROCESS_DEFAULTS.gamma;
  const agent =
    policy.agent ?? (async () => new ReferenceContinuationAgent(await failingReferenceActions(runtime, task)));
  const fromMs = opts.turns.reduce((m, t) => Math.max(m, t.t_ms), 0);
  let turns: readonly Turn[] = opts.turns;
  let termination: TerminationReason = opts.ended ?? 'agent_stop';
  let metrics: Record<string, unknown> | null = null;
  const duplex = opts.duplex ? { channel: withoutStore(opts.duplex.channel), settings: opts.duplex.settings } : null;
  if (opts.ended && opts.duplex && duplex) {
    // The candidate ended the call: the timeline is the context's plus the candidate.
    const key = { domain: runtime.domain.name, language: runtime.domain.language, task, trial: 0, seed: opts.seed };
    try {
      const timeline = new DuplexTimeline(duplex.channel, key, duplex.settings, opts.duplex.state);
      await timeline.placeWhole(turns, opts.duplex.state.turns);
      metrics = (await timeline.finish()).metrics;
    } catch (e) {
      return invalidContinuation(termination, `duplex timeline: ${thrownReason(e)}`);
    }
  }
  if (!opts.ended) {
    const rng = seededRng(opts.seed);
    const errors = turns.filter((t) => ranToolTurn(t) && t.requestor === 'assistant' && t.error).length;
    const t = await runEpisode({
      runtime,
      task,
      agent: await agent(),
      user: policy.user(),
      seed: opts.seed,
      clock: policy.clock(opts.seed, fromMs + 1),
      ...(policy.maxSteps ? { maxSteps: policy.maxSteps } : {}),
      ...(duplex ? { channel: duplex.channel, duplex: duplex.settings } : {}),
      resume: {
        turns: structuredClone(opts.turns) as Turn[],
        env: opts.env,
        rng: { assistant: rng.fork('agent').state(), user: rng.fork('user').state() },
        ...nextAndSteps(opts.turns),
        errors,
        ...(opts.duplex ? { duplex: opts.duplex.state } : {}),
      },
    });
    if (!t.valid) return invalidContinuation(t.termination, t.invalid_reason);
    turns = t.turns;
    termination = t.termination;
    metrics = t.duplex?.metrics ?? null;
  }
  const info = await evaluate(runtime, task, turns, {
    termination,
    ...(policy.judge ? { judge: policy.judge } : {}),
  });
  const agentTurns = turns.slice(opts.turns.length).filter((t) => t.role === 'assistant').length;
  return {
    reward: info.reward,
    partial: info.partial,
    success: isSuccess({ ...info, partial: false }),
    termination,
    agent_turns: agentTurns,
    discounted: gamma ** agentTurns * info.reward,
    invalid: false,
    invalid_reason: null,
    ...(opts.duplex ? { interaction_metrics: metrics } : {}),
  };
}
