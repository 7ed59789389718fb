/**
 * The duplex record of a trajectory (`trajectory.duplex`): what happened on the call's time axis
 * as spans of whole ticks, the turn-taking parameters, the stored stereo WAV and label file, and
 * the call's interaction metrics. {@link spanTicks} turns the spans back into the per-tick view
 * the metrics read, so a stored call is re-measured by the same code (`switchboard metrics`).
 */
import { z } from 'zod';
import { ReplyCap } from '../schema/reply-cap.ts';
import type { MetricEffect, MetricTick } from './segments.ts';

/**
 * What a span is. Caller side: `turn` (a caller turn), `barge_in` (a caller turn that starts
 * while the agent speaks), `backchannel` ("mm-hmm" over the agent), `vocal_tic` (a cough or
 * sniffle), `aside` (the caller speaking to someone else), `background` (another person's speech
 * near the caller's phone, not the caller). Agent side: `speech`.
 */
export const SpanKind = z.enum(['turn', 'barge_in', 'backchannel', 'vocal_tic', 'aside', 'background', 'speech']);
export type SpanKind = z.infer<typeof SpanKind>;

/** One span on the time axis, `[start_tick, end_tick)`. */
export const DuplexSpan = z.object({
  who: z.enum(['caller', 'agent']),
  kind: SpanKind,
  start_tick: z.number().int().nonnegative(),
  /** Exclusive. */
  end_tick: z.number().int().nonnegative(),
  /** The words (a tic's kind in brackets, e.g. `[cough]`). */
  text: z.string(),
  /** Index of the trajectory turn it belongs to, or null (overlaps that are no turn). */
  turn: z.number().int().nullable(),
  /** Agent speech only: the agent stopped before the end of its reply (it yielded to a barge-in). */
  yielded: z.boolean().optional(),
  /**
   * Agent speech of a reply that carried its own audio only: `used` when that audio was placed,
   * else `refused: <why>` (not a WAV, a rate outside 8–48 kHz, too long for its text …): the
   * reply was then synthesized from its text, and the call went on as usual.
   */
  own_audio: z.string().optional(),
  /**
   * Agent speech only: characters of the reply left unspoken because the reply was over
   * `MAX_SPOKEN_AGENT_CHARS` (the span's `text` is the spoken part; the turn's text is the whole reply).
   */
  unspoken_chars: z.number().int().positive().optional(),
  /**
   * Agent speech only: the reply was stopped at a response limit (the turn's `capped`: a realtime
   * agent's runaway reply; `QUALITY` fails the turn); the label says so.
   */
  capped: ReplyCap.optional(),
});
export type DuplexSpan = z.infer<typeof DuplexSpan>;

/** Turn-taking parameters (documented in docs/duplex.md; defaults in `turn-taking.ts`). */
export const TurnTakingRecord = z.object({
  tick_ms: z.number().positive(),
  agent_wait_ms: z.number().nonnegative(),
  caller_wait_ms: z.number().nonnegative(),
  yield_after_ms: z.number().nonnegative(),
  tool_call_ms: z.number().nonnegative(),
});
export type TurnTakingRecord = z.infer<typeof TurnTakingRecord>;

/** `trajectory.duplex`. */
export const DuplexRecord = z.object({
  /** The subset preset the call ran with, or null (`--subset`). */
  subset: z.string().nullable(),
  turn_taking: TurnTakingRecord,
  /** Length of the call in ticks. */
  total_ticks: z.number().int().nonnegative(),
  /** Spans in start order (caller before agent at the same tick). */
  spans: z.array(DuplexSpan),
  /** Stored files: stereo 16 kHz WAV (caller left, agent right) and the label track (Audacity format). */
  audio: z.object({ stereo: z.string(), labels: z.string() }).nullable(),
  /** The call's interaction metrics (the panel of this call alone; `null` values without events). */
  metrics: z.record(z.string(), z.unknown()).nullable(),
});
export type DuplexRecord = z.infer<typeof DuplexRecord>;

const CALLER_EFFECT: Partial<Record<SpanKind, MetricEffect['type']>> = {
  vocal_tic: 'vocal_tic',
  aside: 'non_directed_speech',
  background: 'non_directed_speech',
};

/**
 * The per-tick view of a duplex record. Caller spans are caller speech except `background`
 * (another person: an effect on the caller's line while the caller is silent); a `backchannel`
 * span's ticks carry the `backchannel` action, turns and barge-ins `keep_talking`; tics, asides
 * and background speech carry their effect (vocal tic; speech not meant for the agent).
 */
export function spanTicks(record: Pick<DuplexRecord, 'spans' | 'total_ticks'>): MetricTick[] {
  const ticks: MetricTick[] = Array.from({ length: record.total_ticks }, () => ({ user: null, agentSpeech: false }));
  for (const s of record.spans) {
    for (let i = s.start_tick; i < Math.min(s.end_tick, ticks.length); i++) {
      const t = ticks[i]!;
      if (s.who === 'agent') {
        t.agentSpeech = true;
        continue;
      }
      const user = t.user ?? { speech: false, action: null, effects: [] };
      const effect = CALLER_EFFECT[s.kind];
      t.user = {
        speech: user.speech || s.kind !== 'background',
        action:
          user.action ??
          (s.kind === 'backchannel'
            ? 'backchannel'
            : s.kind === 'turn' || s.kind === 'barge_in'
              ? 'keep_talking'
              : null),
        effects: effect ? [...user.effects, { type: effect, text: s.text, file: null }] : user.effects,
      };
    }
  }
  return ticks;
}

/** Seconds with 6 decimals (label files). */
const sec = (tick: number, tickMs: number) => ((tick * tickMs) / 1000).toFixed(6);

const LABEL: Record<SpanKind, string> = {
  turn: 'caller',
  barge_in: 'caller barge-in',
  backchannel: 'caller backchannel',
  vocal_tic: 'caller vocal tic',
  aside: 'caller aside (not to the agent)',
  background: 'background speech',
  speech: 'agent',
};

/**
 * The label track of a call in Audacity's label-file format: one `start\tend\tlabel` line per
 * span (seconds, 6 decimals), in span order; an agent span that yielded is labelled so, and one
 * of a capped reply `agent (capped: <limit> limit of <max>, ended <ended>): …`.
 */
export function labelTrack(record: Pick<DuplexRecord, 'spans' | 'turn_taking'>): string {
  const tickMs = record.turn_taking.tick_ms;
  return record.spans
    .map((s) => {
      const cut = s.unspoken_chars ? ` [${s.unspoken_chars} more characters not spoken]` : '';
      const capped = s.capped ? ` (capped: ${s.capped.limit} limit of ${s.capped.max}, ended ${s.capped.ended})` : '';
      const what = `${LABEL[s.kind]}${s.yielded ? ' (yielded)' : ''}${capped}: ${s.text.replace(/\s+/g, ' ').trim()}${cut}`;
      return `${sec(s.start_tick, tickMs)}\t${sec(s.end_tick, tickMs)}\t${what}\n`;
    })
    .join('');
}
