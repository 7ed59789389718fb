/**
 * Speech segments of a full-duplex tick timeline, the first stage of the interaction metrics
 * (tau2-bench's τ-voice definitions, docs/interaction-metrics.md at commit a2c024725189). A tick
 * says whether each side produced speech, the caller's turn-taking action and the audio effects
 * active on the caller's line; runs of speech ticks become segments; effects heard while the
 * caller is silent become out-of-turn effect segments. Our own timelines and tau2-bench's
 * simulation files are both read into {@link MetricTick} and measured by the same code.
 */

/** Kinds of caller-side audio effect that the metrics distinguish (tau2-bench's names). */
export type MetricEffectType = 'burst_noise' | 'vocal_tic' | 'non_directed_speech' | 'muffling';

/** One audio effect active during a tick. Two are "the same" when type, text and file agree. */
export interface MetricEffect {
  type: MetricEffectType;
  /** The words of a vocal tic or a phrase not meant for the agent; null otherwise. */
  text: string | null;
  /** The burst-noise recording; null otherwise. */
  file: string | null;
}

/** The caller's side of one tick. */
export interface MetricUserChunk {
  /** The caller produced speech during this tick. */
  speech: boolean;
  /** The caller's turn-taking action (`keep_talking`, `backchannel`, `wait`, …) or null. */
  action: string | null;
  /** Effects active on the caller's line during this tick, in tau2-bench's order (source first). */
  effects: readonly MetricEffect[];
}

/** One tick of the timeline (its length is the run's tick duration, 200 ms by default). */
export interface MetricTick {
  /** Null: no caller chunk this tick (silent, no effects). */
  user: MetricUserChunk | null;
  /** The agent produced speech during this tick. */
  agentSpeech: boolean;
}

/** A run of caller speech ticks, `[start, end)` in ticks. */
export interface UserSegment {
  start: number;
  /** Exclusive: the first tick after the segment. */
  end: number;
  /** Seconds: `start × tick`. */
  startSec: number;
  /** Seconds: `startSec + (end − start) × tick`. */
  endSec: number;
  /** Turn-taking action of the segment's first tick ('' when none). */
  action: string;
  backchannel: boolean;
  /** The agent was speaking at the segment's first tick. */
  agentAtStart: boolean;
  /** The agent was speaking at the first tick after the segment (false when it ran to the end). */
  agentAtEnd: boolean;
  /** `agentAtStart` and not a backchannel. */
  interruption: boolean;
  /** A vocal tic was active during some tick of the segment. */
  vocalTic: boolean;
  /** Speech not meant for the agent was active during some tick of the segment. */
  nonDirected: boolean;
}

/** A run of agent speech ticks, `[start, end)` in ticks. */
export interface AgentSegment {
  start: number;
  end: number;
  startSec: number;
  endSec: number;
  /** The caller was speaking at the segment's first tick (an agent-interrupts-user event). */
  userAtStart: boolean;
}

/** A contiguous run of one effect during caller silence, `[start, end)` in ticks. */
export interface EffectSegment extends MetricEffect {
  start: number;
  end: number;
  startSec: number;
}

const userSpeaks = (t: MetricTick | undefined) => t?.user?.speech === true;

/**
 * Drop the last tick when it holds a one-tick caller segment (the stop signal's artefact in
 * tau2-bench: the caller's final "###STOP###" chunk), so that it counts as no interruption.
 */
export function dropStopArtefact(ticks: readonly MetricTick[]): readonly MetricTick[] {
  if (ticks.length < 2) return ticks;
  return userSpeaks(ticks.at(-1)) && !userSpeaks(ticks.at(-2)) ? ticks.slice(0, -1) : ticks;
}

/** Index ranges `[start, end)` of the runs where `on(tick)` holds. */
function runs(ticks: readonly MetricTick[], on: (t: MetricTick) => boolean): [number, number][] {
  const out: [number, number][] = [];
  let open = -1;
  ticks.forEach((t, i) => {
    if (on(t)) {
      if (open < 0) open = i;
    } else if (open >= 0) {
      out.push([open, i]);
      open = -1;
    }
  });
  if (open >= 0) out.push([open, ticks.length]);
  return out;
}

/** Seconds of a segment's ends, computed in tau2-bench's order (start, then start + duration). */
function times(start: number, end: number, tickSec: number): { startSec: number; endSec: number } {
  const startSec = start * tickSec;
  return { startSec, endSec: startSec + (end - start) * tickSec };
}

/** Caller speech segments of `ticks` (already without the stop artefact). */
export function userSegments(ticks: readonly MetricTick[], tickSec: number): UserSegment[] {
  return runs(ticks, (t) => t.user?.speech === true).map(([start, end]) => {
    const first = ticks[start]!;
    const action = first.user?.action ?? '';
    const backchannel = action === 'backchannel';
    const inside = ticks.slice(start, end).flatMap((t) => t.user?.effects ?? []);
    return {
      start,
      end,
      ...times(start, end, tickSec),
      action,
      backchannel,
      agentAtStart: first.agentSpeech,
      agentAtEnd: end < ticks.length && ticks[end]!.agentSpeech,
      interruption: first.agentSpeech && !backchannel,
      vocalTic: inside.some((e) => e.type === 'vocal_tic'),
      nonDirected: inside.some((e) => e.type === 'non_directed_speech'),
    };
  });
}

/** Agent speech segments of `ticks` (already without the stop artefact). */
export function agentSegments(ticks: readonly MetricTick[], tickSec: number): AgentSegment[] {
  return runs(ticks, (t) => t.agentSpeech).map(([start, end]) => ({
    start,
    end,
    ...times(start, end, tickSec),
    userAtStart: ticks[start]!.user?.speech === true,
  }));
}

const sameEffect = (a: MetricEffect, b: MetricEffect) => a.type === b.type && a.text === b.text && a.file === b.file;

/**
 * Effects on the caller's line while the caller is not speaking, merged over consecutive ticks:
 * an effect still active on the next silent tick extends its open segment; a new one opens a
 * segment; caller speech or an effect-free tick closes everything.
 */
export function outOfTurnEffects(ticks: readonly MetricTick[], tickSec: number): EffectSegment[] {
  const segments: EffectSegment[] = [];
  let previous: readonly MetricEffect[] = [];
  ticks.forEach((tick, i) => {
    const current = tick.user && !tick.user.speech ? tick.user.effects : [];
    if (userSpeaks(tick) || current.length === 0) {
      previous = [];
      return;
    }
    const continued = current.map(() => false);
    for (const before of previous) {
      const j = current.findIndex((c, k) => !continued[k] && sameEffect(before, c));
      if (j < 0) continue;
      continued[j] = true;
      const open = segments.findLast((s) => s.end === i && sameEffect(s, before));
      if (open) open.end = i + 1;
    }
    current.forEach((c, k) => {
      if (!continued[k]) segments.push({ ...c, start: i, end: i + 1, startSec: i * tickSec });
    });
    previous = current;
  });
  return segments;
}
