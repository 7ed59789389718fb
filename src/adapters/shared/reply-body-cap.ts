/**
 * A cap on the bytes read from a model endpoint's HTTP reply. The `openai` SDK reads a reply
 * whole before parsing it, so a server that answers with hundreds of megabytes (a broken proxy, a
 * runaway stream) was held in memory several times over: a 300 MB reply took one rollout to
 * 2.3 GB RSS and 47 s, and a few at `--concurrency 4` would exhaust the machine. A chat model
 * cannot send that much (its reply is bounded by `max_tokens`), so such a reply is the server's
 * fault: the attempt fails, not retried, and the rollout is invalid.
 */
import { AGENT_AUDIO_RATES_HZ, MAX_AGENT_AUDIO_S } from '../../core/rollout/limits.ts';

/**
 * Largest reply body read, bytes: 48 MiB. The largest legitimate reply carries the agent's own
 * audio at its limit — {@link MAX_AGENT_AUDIO_S} of 48 kHz ({@link AGENT_AUDIO_RATES_HZ}) 16-bit
 * stereo as base64, 30.7 MB (`agentOwnAudio` refuses more) — beside text, tool calls and
 * logprobs (1,024 tokens with 20 top logprobs each are about 2 MB of JSON); 48 MiB leaves room
 * for both and for a server's own fields.
 */
export const MAX_REPLY_BYTES = 48 * 1024 * 1024;

/** A reply body over the cap. Thrown from inside `fetch` or while its body is read. */
export class ReplyTooLargeError extends Error {
  override name = 'ReplyTooLargeError';
}

/**
 * `base` whose responses end with a {@link ReplyTooLargeError} once more than `maxBytes` of body
 * arrived (or at once when `Content-Length` announces more), so no more is read.
 */
export function bodyCappedFetch(base: typeof fetch, maxBytes = MAX_REPLY_BYTES): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw new ReplyTooLargeError(`reply of ${declared} bytes, over the ${maxBytes}-byte limit`);
    }
    if (!res.body) return res;
    let seen = 0;
    const capped = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          seen += chunk.byteLength;
          if (seen > maxBytes) ctl.error(new ReplyTooLargeError(`reply over the ${maxBytes}-byte limit`));
          else ctl.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The {@link ReplyTooLargeError} behind `e` (itself, or the cause the SDK wrapped it in), or null. */
export function replyTooLarge(e: unknown): ReplyTooLargeError | null {
  if (e instanceof ReplyTooLargeError) return e;
  const cause = (e as { cause?: unknown } | null)?.cause;
  return cause instanceof ReplyTooLargeError ? cause : null;
}
