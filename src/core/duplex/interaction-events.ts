/**
 * Interaction events of one call's tick timeline, as tau2-bench's τ-voice panel defines them
 * (docs/interaction-metrics.md, sierra-research/tau2-bench at a2c024725189): response events
 * after caller turns, yield events after real barge-ins, selectivity events for backchannels,
 * vocal tics and speech not meant for the agent, and the agent-interrupts-caller count. The
 * detection windows are {@link InteractionWindows}; every window is a whole number of ticks
 * (`trunc(window / tick)`).
 */
import {
  agentSegments,
  dropStopArtefact,
  outOfTurnEffects,
  userSegments,
  type AgentSegment,
  type MetricTick,
  type UserSegment,
} from './segments.ts';

/** Tick length and detection windows, seconds (tau2-bench's defaults, identical to the τ-voice paper). */
export interface InteractionWindows {
  /** Tick length (0.2 s). */
  tick_duration_sec: number;
  /** Time the agent has to stop after a real barge-in before it is a no-yield (2.0 s). */
  no_yield_window_sec: number;
  /** Stopping within this time after a backchannel is an error (1.0 s). */
  backchannel_yield_window_sec: number;
  /** Stopping within this time after a vocal tic is an error (1.0 s). */
  vocal_tic_yield_window_sec: number;
  /** Stopping within this time after speech not meant for the agent is an error (1.0 s). */
  non_directed_yield_window_sec: number;
  /** Starting to speak within this time after a vocal tic in silence is an error (2.0 s). */
  vocal_tic_response_window_sec: number;
  /** Starting to speak within this time after speech not meant for the agent, in silence, is an error (2.0 s). */
  non_directed_response_window_sec: number;
}

/** tau2-bench's default windows (InteractionMetricsConfig). */
export const DEFAULT_WINDOWS: Readonly<InteractionWindows> = {
  tick_duration_sec: 0.2,
  no_yield_window_sec: 2.0,
  backchannel_yield_window_sec: 1.0,
  vocal_tic_yield_window_sec: 1.0,
  non_directed_yield_window_sec: 1.0,
  vocal_tic_response_window_sec: 2.0,
  non_directed_response_window_sec: 2.0,
};

/** Event categories (one per metric family). */
export type EventCategory = 'response' | 'yield' | 'backchannel' | 'vocal_tic' | 'non_directed';

/** Event types: the outcome within a category. */
export type EventType =
  | 'response'
  | 'no_response'
  | 'yield'
  | 'no_yield'
  | 'backchannel_correct'
  | 'backchannel_error'
  | 'vocal_tic_correct'
  | 'vocal_tic_error'
  | 'non_directed_correct'
  | 'non_directed_error';

/** One scored event of a call. */
export interface InteractionEvent {
  category: EventCategory;
  type: EventType;
  error: boolean;
  /** Response latency or yield latency in seconds; null for other events. */
  latency_sec: number | null;
  /** When it happened: the caller turn's end (response), else the triggering speech's start. */
  time_sec: number;
  /** The same as a tick index. */
  tick: number;
}

/** All events of one call and its agent-interrupts-caller count. */
export interface CallEvents {
  /** Sorted by time (stable). */
  events: InteractionEvent[];
  /** Agent speech segments that started while the caller was speaking (I_A's numerator). */
  agent_interrupts: number;
}

const ticksOf = (sec: number, tick: number) => Math.trunc(sec / tick);

function event(
  category: EventCategory,
  type: EventType,
  error: boolean,
  time_sec: number,
  tick: number,
  latency_sec: number | null = null,
): InteractionEvent {
  return { category, type, error, latency_sec, time_sec, tick };
}

/**
 * Response events: for every caller segment that is not a backchannel and after which the agent
 * is silent, `response` when the agent's next segment starts no later than the caller's next
 * such segment (latency = the gap), `no_response` when the caller speaks again first; a last
 * segment followed by nothing gives no event.
 */
function responseEvents(users: readonly UserSegment[], agents: readonly AgentSegment[]): InteractionEvent[] {
  const turns = users.filter((u) => !u.backchannel && !u.agentAtEnd);
  const out: InteractionEvent[] = [];
  turns.forEach((u, i) => {
    const agent = agents.find((a) => a.start >= u.end);
    const again = turns.slice(i + 1).find((v) => v.start >= u.end);
    if (agent && (!again || agent.start <= again.start)) {
      out.push(event('response', 'response', false, u.endSec, u.end, agent.startSec - u.endSec));
    } else if (again) {
      out.push(event('response', 'no_response', true, u.endSec, u.end));
    }
  });
  return out;
}

/** Category of a caller segment that starts while the agent speaks (priority: backchannel, tic, non-directed, barge-in). */
function overlapKind(u: UserSegment): 'backchannel' | 'vocal_tic' | 'non_directed' | 'yield' {
  if (u.backchannel) return 'backchannel';
  if (u.vocalTic) return 'vocal_tic';
  if (u.nonDirected) return 'non_directed';
  return 'yield';
}

const OUTCOME: Record<'backchannel' | 'vocal_tic' | 'non_directed', [EventType, EventType]> = {
  backchannel: ['backchannel_correct', 'backchannel_error'],
  vocal_tic: ['vocal_tic_correct', 'vocal_tic_error'],
  non_directed: ['non_directed_correct', 'non_directed_error'],
};

/** Events keyed to the triggering speech's start tick, before the final sort by time. */
interface Keyed {
  key: number;
  event: InteractionEvent;
}

/**
 * Yield and selectivity events, each keyed by the tick of the speech that triggered it (sorted
 * by that key afterwards, as tau2-bench orders its interruption events).
 */
function overlapEvents(
  users: readonly UserSegment[],
  agents: readonly AgentSegment[],
  ticks: readonly MetricTick[],
  w: InteractionWindows,
): Keyed[] {
  const dt = w.tick_duration_sec;
  const out: Keyed[] = [];
  // Caller speech that starts while the agent speaks: did the agent stop within the window?
  for (const u of users) {
    if (!u.agentAtStart) continue;
    const kind = overlapKind(u);
    const windowSec =
      kind === 'backchannel'
        ? w.backchannel_yield_window_sec
        : kind === 'vocal_tic'
          ? w.vocal_tic_yield_window_sec
          : kind === 'non_directed'
            ? w.non_directed_yield_window_sec
            : w.no_yield_window_sec;
    const last = Math.min(u.start + ticksOf(windowSec, dt), ticks.length);
    let stopped = -1;
    for (let i = u.start; i < last; i++) {
      if (!ticks[i]!.agentSpeech) {
        stopped = i;
        break;
      }
    }
    const yielded = stopped >= 0;
    const latency = stopped > 0 ? (stopped - u.start) * dt : 0;
    const e =
      kind === 'yield'
        ? yielded
          ? event('yield', 'yield', false, u.startSec, u.start, latency)
          : event('yield', 'no_yield', true, u.startSec, u.start)
        : event(kind, OUTCOME[kind][yielded ? 1 : 0], yielded, u.startSec, u.start);
    out.push({ key: u.start, event: e });
  }
  // Caller segments in the agent's silence that hold a tic or speech not meant for the agent:
  // did the agent start speaking within the response window after it?
  for (const u of users) {
    if (u.agentAtStart || !(u.vocalTic || u.nonDirected)) continue;
    const kind = u.vocalTic ? 'vocal_tic' : 'non_directed';
    const window = ticksOf(u.vocalTic ? w.vocal_tic_response_window_sec : w.non_directed_response_window_sec, dt);
    const agent = agents.find((a) => a.start >= u.start && a.start <= u.end + window);
    out.push(
      agent
        ? { key: agent.start, event: event(kind, OUTCOME[kind][1], true, agent.startSec, agent.start) }
        : { key: u.start, event: event(kind, OUTCOME[kind][0], false, u.startSec, u.start) },
    );
  }
  // The same effects heard while the caller itself is silent.
  for (const fx of outOfTurnEffects(ticks, dt)) {
    if (fx.type !== 'vocal_tic' && fx.type !== 'non_directed_speech') continue;
    const kind = fx.type === 'vocal_tic' ? 'vocal_tic' : 'non_directed';
    const during = agents.find((a) => a.start <= fx.start && fx.start < a.end);
    if (during) {
      // Only a stop within the yield window is scored (an error); talking through it is not counted.
      const after = (during.end - fx.start) * dt;
      const windowSec = kind === 'vocal_tic' ? w.vocal_tic_yield_window_sec : w.non_directed_yield_window_sec;
      if (after <= windowSec)
        out.push({ key: fx.start, event: event(kind, OUTCOME[kind][1], true, fx.startSec, fx.start) });
      continue;
    }
    const window = ticksOf(
      kind === 'vocal_tic' ? w.vocal_tic_response_window_sec : w.non_directed_response_window_sec,
      dt,
    );
    const agent = agents.find((a) => a.start >= fx.start && a.start <= fx.end + window);
    out.push(
      agent
        ? { key: agent.start, event: event(kind, OUTCOME[kind][1], true, agent.startSec, agent.start) }
        : { key: fx.start, event: event(kind, OUTCOME[kind][0], false, fx.startSec, fx.start) },
    );
  }
  return out;
}

/**
 * Every interaction event of one call, from its ticks (the stop artefact is dropped first,
 * {@link dropStopArtefact}). Pure; windows default to tau2-bench's.
 */
export function callEvents(ticks: readonly MetricTick[], windows: InteractionWindows = DEFAULT_WINDOWS): CallEvents {
  const dt = windows.tick_duration_sec;
  const kept = dropStopArtefact(ticks);
  const users = userSegments(kept, dt);
  const agents = agentSegments(kept, dt);
  const overlaps = overlapEvents(users, agents, kept, windows)
    .map((k, i) => ({ ...k, i }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map((k) => k.event);
  const events = [...responseEvents(users, agents), ...overlaps]
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.time_sec - b.e.time_sec || a.i - b.i)
    .map((x) => x.e);
  return { events, agent_interrupts: agents.filter((a) => a.userAtStart).length };
}
