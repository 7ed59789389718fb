/**
 * Settings of the full-duplex timeline (`run --duplex`): the turn-taking parameters, what the
 * caller does over the agent's speech, and the Full-Duplex-Bench-style subsets as presets.
 */
import type { InterruptionType } from '../schema/trajectory.ts';
import type { EpisodeChannel } from '../rollout/channel-step.ts';

/**
 * Turn-taking parameters, in ms (rounded to whole ticks on the axis). Ours, chosen to sit near
 * tau2-bench's voice defaults: its caller waits 1.0 s of the agent's silence before speaking
 * (`wait_to_respond_threshold_other_seconds`) and yields after 1.0 s of being talked over.
 */
export interface TurnTaking {
  /** Tick length (200 ms, tau2-bench's `tick_duration_seconds`). */
  tickMs: number;
  /** Wait-to-respond of the agent: silence after a caller turn before the agent speaks (600 ms). */
  agentWaitMs: number;
  /** Wait-to-respond of the caller: silence after the agent stops before the caller speaks (1,000 ms). */
  callerWaitMs: number;
  /**
   * Yield-when-interrupted of the agent: it stops this long after a real barge-in starts
   * (400 ms). Backchannels, vocal tics, asides and background speech never make it stop.
   */
  yieldAfterMs: number;
  /** Time one tool call takes on the axis (400 ms). */
  toolCallMs: number;
}

/** The defaults of {@link TurnTaking}. */
export const DEFAULT_TURN_TAKING: Readonly<TurnTaking> = {
  tickMs: 200,
  agentWaitMs: 600,
  callerWaitMs: 1000,
  yieldAfterMs: 400,
  toolCallMs: 400,
};

/**
 * What happens over and between the agent's replies. Each is a probability per agent reply,
 * drawn from (seed, task, turn) alone. Barge-ins come from the channel's `--barge-in` and
 * `--barge-in-mix` (a sampled backchannel overlaps; the other types interrupt).
 */
export interface Overlaps {
  /** A cough or sniffle of the caller during the reply (0). */
  vocalTic: number;
  /** The caller speaking to someone else during the reply ("Just a moment, honey.") (0). */
  aside: number;
  /** Another person's speech near the caller's phone, in the pause after the reply (0). */
  background: number;
}

/** No overlaps besides the channel's barge-ins. */
export const NO_OVERLAPS: Readonly<Overlaps> = { vocalTic: 0, aside: 0, background: 0 };

/** Settings of the timeline for a run. */
export interface DuplexSettings {
  turnTaking?: Partial<TurnTaking>;
  overlaps?: Partial<Overlaps>;
  /** Name of the subset preset in use (recorded), or absent. */
  subset?: SubsetName;
  /**
   * The caller lets the agent's answer to a barge-in finish: the agent reply that follows a
   * caller's interrupting turn is never barged into (default false; the `user-interruption`
   * subset sets it, as Full-Duplex-Bench's user-interruption samples interrupt once and then
   * score the model's answer to the interruption).
   */
  letAnswerAfterBargeIn?: boolean;
}

/** Full-Duplex-Bench-style subsets (v1/v1.5's backchannel, user interruption, talking to others, background speech). */
export const SUBSET_NAMES = ['backchannel', 'user-interruption', 'talking-to-others', 'background-speech'] as const;
export type SubsetName = (typeof SUBSET_NAMES)[number];

/** A subset: the channel's barge-in settings and the timeline's overlaps. */
export interface SubsetPreset {
  bargeIn: number;
  mix: Partial<Record<InterruptionType, number>> | null;
  overlaps: Overlaps;
  /** The panel fields this subset is about (its metric table). */
  fields: readonly string[];
  /** See {@link DuplexSettings.letAnswerAfterBargeIn}. */
  letAnswerAfterBargeIn: boolean;
}

/**
 * The subsets. `backchannel`: a backchannel over every agent reply long enough for one (S_BC);
 * `user-interruption`: a real barge-in (urge, correction, question or stop) on half the replies
 * (every reply would never let the call move on; R_Y, L_Y, and R_R/L_R of the turns after it); `talking-to-others`: the caller speaks to
 * someone else during every reply (S_ND, caller speech); `background-speech`: another person
 * speaks near the phone after every reply (S_ND, not the caller's speech).
 */
export const SUBSETS: Readonly<Record<SubsetName, SubsetPreset>> = {
  backchannel: {
    bargeIn: 1,
    mix: { backchannel: 1 },
    overlaps: { ...NO_OVERLAPS },
    fields: ['selectivity_backchannel', 'response_rate', 'response_latency_mean'],
    letAnswerAfterBargeIn: false,
  },
  'user-interruption': {
    bargeIn: 0.5,
    mix: { urge: 0.25, correction: 0.25, question: 0.25, stop: 0.25 },
    overlaps: { ...NO_OVERLAPS },
    fields: ['yield_rate', 'yield_latency_mean', 'response_rate', 'response_latency_mean', 'agent_interruption_rate'],
    letAnswerAfterBargeIn: true,
  },
  'talking-to-others': {
    bargeIn: 0,
    mix: null,
    overlaps: { ...NO_OVERLAPS, aside: 1 },
    fields: ['selectivity_non_directed', 'response_rate', 'response_latency_mean'],
    letAnswerAfterBargeIn: false,
  },
  'background-speech': {
    bargeIn: 0,
    mix: null,
    overlaps: { ...NO_OVERLAPS, background: 1 },
    fields: ['selectivity_non_directed', 'response_rate', 'response_latency_mean'],
    letAnswerAfterBargeIn: false,
  },
};

/**
 * A channel set up for a subset: its barge-in rate and mix replace the channel's (`--barge-in`,
 * `--barge-in-mix`); everything else (preset, TTS, store) is kept.
 */
export function subsetChannel(channel: EpisodeChannel, subset: SubsetName): EpisodeChannel {
  const s = SUBSETS[subset];
  const { mix: _mix, ...rest } = channel;
  return { ...rest, bargeIn: s.bargeIn, ...(s.mix ? { mix: s.mix } : {}) };
}

/** The timeline settings of a subset (its overlaps, its name recorded). */
export function subsetSettings(subset: SubsetName): DuplexSettings {
  const s = SUBSETS[subset];
  return {
    subset,
    overlaps: { ...s.overlaps },
    ...(s.letAnswerAfterBargeIn ? { letAnswerAfterBargeIn: true } : {}),
  };
}
