/** The effect timeline: every effect applied to one caller turn, with its span and parameters. */
import { z } from 'zod';

/**
 * Kinds of channel effects. `vocal_tic` (a cough or sniffle) and `aside` (speech not meant for
 * the agent) are inserted into the caller's speech before the channel; `note` is no effect but
 * a remark on how the turn was made (e.g. a barge-in picker that fell back to the heuristic).
 */
export const EffectType = z.enum([
  'background_noise',
  'burst',
  'wind',
  'muffle',
  'far_field',
  'packet_loss',
  'telephony',
  'vocal_tic',
  'aside',
  'note',
]);
export type EffectType = z.infer<typeof EffectType>;

/** One applied effect: type, span in ms from the start of the turn's audio, and its parameters. */
export const EffectEvent = z.object({
  type: EffectType,
  start_ms: z.number(),
  end_ms: z.number(),
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
export type EffectEvent = z.infer<typeof EffectEvent>;
