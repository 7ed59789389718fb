/** {@link ReplyCap}: its own module, so the duplex record (which the trajectory holds) can use it too. */
import { z } from 'zod';

/**
 * Ours (issue 17): a streamed reply stopped at a response limit (a realtime agent's response,
 * src/core/participants/realtime-agent.ts, limits in docs/realtime-agent.md). The turn holds what
 * arrived up to the limit; `response.cancel` was sent once; `QUALITY` fails the turn.
 */
export const ReplyCap = z.object({
  /**
   * The limit reached: `audio_s` (seconds of agent audio), `events` (server events of the
   * response), `bytes` (characters of the response's frames, or one frame over the transport's
   * size limit), `text_chars` (characters of its transcript or text), `calls` (function calls
   * of the response; those past it are not run and get an error tool message), `wall_s` (seconds
   * of wall-clock time from `response.create`).
   */
  limit: z.enum(['audio_s', 'events', 'bytes', 'text_chars', 'calls', 'wall_s']),
  /** The limit's value, in its unit. */
  max: z.number().positive(),
  /**
   * How the response ended after the cancel: `done` (the server sent `response.done`; the
   * session goes on), `closed` (the connection ended), `ignored` (the server went on sending past
   * the same limits again; we closed the session), `error` (an `error` event; session closed).
   * After `closed`, `ignored` and `error` the next turn opens a fresh session with the
   * conversation replayed (no retry is spent: the reply is complete).
   */
  ended: z.enum(['done', 'closed', 'ignored', 'error']),
});
export type ReplyCap = z.infer<typeof ReplyCap>;
