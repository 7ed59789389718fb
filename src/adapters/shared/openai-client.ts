/**
 * {@link OpenAiModelClient}: the `ModelClient` port over any OpenAI-compatible endpoint through
 * the `openai` npm SDK (browser and Node). Wire shapes per flavor are in `openai-wire.ts`.
 *
 * Failure handling: each attempt has a timeout. Retried, like a connection reset: network errors,
 * timeouts, HTTP 408/409/429/5xx, a body cut off mid-transfer (the connection closed before the
 * announced length, or mid-stream), a body that is not parseable JSON (e.g. cut-off JSON), and a
 * stream that ends without any `finish_reason`. The wait before retry n is the exponential
 * backoff `backoffMs × 2^(n−1)` capped at `maxBackoffMs`, or, when the server sent
 * `Retry-After` (seconds or an HTTP date, RFC 9110 §10.2.3) or `retry-after-ms` (OpenAI's
 * header), that wait if longer, itself capped at `maxRetryAfterMs` (default 60 s). After
 * `maxRetries` retries, or at once for any other HTTP error or a parseable body that is not a
 * chat completion, a redirect the client may not follow (`redirectRefusal`), or a reply body
 * over `maxReplyBytes` (`reply-body-cap.ts`, 48 MiB: read no further), the call throws
 * {@link ModelEndpointError}, an `InfrastructureError`: the
 * episode is invalid and resampled, never scored 0. The SDK's own retries are off so that this
 * policy is the only one.
 */
import type OpenAI from 'openai';
import type { ModelClient, RemoteFlavor, ModelRequest, ModelResponse } from '../../core/ports/model-client.ts';
import { ModelEndpointError, isRetryableStatus } from '../../core/participants/model-errors.ts';
import { redactUrl } from './endpoint-secrets.ts';
import { redirectCheckedFetch, RedirectRefusedError } from './redirect-guard.ts';
import { bodyCappedFetch, MAX_REPLY_BYTES, replyTooLarge } from './reply-body-cap.ts';
import { StreamAssembler, bodyFromText, requestBody, responseFromBody, type WireOptions } from './openai-wire.ts';

/** Settings of one client. */
export interface OpenAiClientOptions extends Omit<WireOptions, 'model' | 'flavor'> {
  flavor: RemoteFlavor;
  /** e.g. `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  /** Served model name; with vLLM a LoRA adapter is chosen by its `--lora-modules` name. */
  model: string;
  /** API key, sent as `Authorization: Bearer <key>`. Never logged or recorded. Default none: no Authorization header. */
  apiKey?: string;
  /** Per-attempt timeout, ms (whole reply, stream included). Default 60,000. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /** First backoff, ms. Default 500. */
  backoffMs?: number;
  /** Longest backoff, ms. Default 8,000. */
  maxBackoffMs?: number;
  /** Longest wait a server's `Retry-After` can ask for, ms; a longer one waits this long. Default 60,000. */
  maxRetryAfterMs?: number;
  /** Wall clock for `Retry-After` HTTP dates, ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Waits between attempts (tests pass a recorder). Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** fetch implementation (default the global one). */
  fetch?: typeof fetch;
  /**
   * When given, a redirect is followed only to a URL for which this returns null; otherwise the
   * attempt fails at once (not retried) with the reason (`redirectCheckedFetch`). Default: redirects
   * are followed as fetch does.
   */
  redirectRefusal?: (url: string) => string | null;
  /** Largest reply body read, bytes; a longer one fails the attempt, not retried. Default {@link MAX_REPLY_BYTES}. */
  maxReplyBytes?: number;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Why one attempt failed, and whether to try again. */
interface AttemptFailure {
  message: string;
  status: number | null;
  retryable: boolean;
  retryAfterMs: number | null;
}

/** The `openai` package's exports. */
type Sdk = typeof import('openai');
let sdkModule: Promise<Sdk> | undefined;
/**
 * The `openai` package, imported at a client's first request, once per thread: importing it cost
 * ~40 ms of every CLI start (issue 15 item 6), and scripted runs never send a request.
 */
function loadSdk(): Promise<Sdk> {
  sdkModule ??= import('openai');
  return sdkModule;
}

/** A remote model. See the module comment for retries and errors. */
export class OpenAiModelClient implements ModelClient {
  readonly id: string;
  readonly kind = 'remote' as const;
  readonly flavor: RemoteFlavor;
  readonly model: string;
  readonly endpoint: string;
  /** The SDK's client and module, made at the first request ({@link loadSdk}). */
  private sdk: Promise<{ client: OpenAI; mod: Sdk }> | undefined;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: OpenAiClientOptions) {
    this.flavor = options.flavor;
    this.model = options.model;
    this.endpoint = redactUrl(options.baseURL);
    this.id = `${options.flavor}:${options.model}`;
    this.sleep = options.sleep ?? defaultSleep;
  }

  private connect(): Promise<{ client: OpenAI; mod: Sdk }> {
    this.sdk ??= loadSdk().then((mod) => ({ mod, client: this.newClient(mod) }));
    return this.sdk;
  }

  private newClient(mod: Sdk): OpenAI {
    const options = this.options;
    return new mod.default({
      // Without a key no Authorization header is sent at all (the SDK needs some apiKey string;
      // a null default header removes it).
      apiKey: options.apiKey || 'EMPTY',
      ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
      baseURL: options.baseURL,
      maxRetries: 0,
      timeout: options.timeoutMs ?? 60_000,
      dangerouslyAllowBrowser: true,
      fetch: bodyCappedFetch(
        options.redirectRefusal
          ? redirectCheckedFetch(options.fetch ?? globalThis.fetch, options.redirectRefusal)
          : (options.fetch ?? globalThis.fetch),
        options.maxReplyBytes ?? MAX_REPLY_BYTES,
      ),
    });
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    const body = requestBody(request, { ...this.options, flavor: this.flavor, model: this.model });
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 1; ; attempt++) {
      const failure = await this.attempt(body, request.stream === true, attempt, signal);
      if ('text' in failure) return failure;
      if (!failure.retryable || attempt > maxRetries) {
        const tries = `${attempt} attempt${attempt === 1 ? '' : 's'}`;
        throw new ModelEndpointError(
          `${this.id} at ${this.endpoint}: ${failure.message} (${tries})`,
          failure.status,
          failure.retryable,
          attempt,
        );
      }
      const backoff = Math.min(
        this.options.maxBackoffMs ?? 8_000,
        (this.options.backoffMs ?? 500) * 2 ** (attempt - 1),
      );
      const asked =
        failure.retryAfterMs === null ? 0 : Math.min(failure.retryAfterMs, this.options.maxRetryAfterMs ?? 60_000);
      await this.sleep(Math.max(backoff, asked));
    }
  }

  /** One HTTP attempt: the response, or why it failed. Rethrows a caller's abort. */
  private async attempt(
    body: Record<string, unknown>,
    stream: boolean,
    attempt: number,
    signal?: AbortSignal,
  ): Promise<ModelResponse | AttemptFailure> {
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const { client, mod } = await this.connect();
    const { APIConnectionError, APIError, APIUserAbortError } = mod;
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs);
    const onAbort = () => ctl.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // The body carries non-OpenAI fields (top_k, speaker, return_token_ids): the SDK sends it as is.
      const params = body as unknown as OpenAI.Chat.ChatCompletionCreateParams;
      if (stream) {
        const s = await client.chat.completions.create(
          { ...params, stream: true } as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
          { signal: ctl.signal },
        );
        const asm = new StreamAssembler(this.flavor);
        for await (const chunk of s) asm.add(chunk);
        return asm.result(attempt);
      }
      const res = await client.chat.completions.create(params as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, {
        signal: ctl.signal,
      });
      // A string: the server's content type was not JSON (see bodyFromText).
      const parsed: unknown = res;
      return responseFromBody(typeof parsed === 'string' ? bodyFromText(parsed) : parsed, this.flavor, attempt);
    } catch (e) {
      if (signal?.aborted) throw e;
      if (e instanceof ModelEndpointError)
        return { message: e.message, status: null, retryable: e.retryable, retryAfterMs: null };
      const big = replyTooLarge(e);
      if (big) return { message: big.message, status: null, retryable: false, retryAfterMs: null };
      if (timedOut || e instanceof APIUserAbortError) {
        return {
          message: `no complete reply within ${timeoutMs} ms`,
          status: null,
          retryable: true,
          retryAfterMs: null,
        };
      }
      if (e instanceof APIConnectionError && e.cause instanceof RedirectRefusedError)
        return { message: e.cause.message, status: null, retryable: false, retryAfterMs: null };
      if (e instanceof APIConnectionError)
        return { message: `network error: ${e.message}`, status: null, retryable: true, retryAfterMs: null };
      if (e instanceof APIError && typeof e.status === 'number') {
        return {
          message: `HTTP ${e.status}: ${e.message}`,
          status: e.status,
          retryable: isRetryableStatus(e.status),
          retryAfterMs: retryAfterMs(e.headers, (this.options.now ?? Date.now)()),
        };
      }
      if (e instanceof APIError)
        return { message: `stream error: ${e.message}`, status: null, retryable: true, retryAfterMs: null };
      if (e instanceof SyntaxError)
        return { message: `malformed reply: ${e.message}`, status: null, retryable: true, retryAfterMs: null };
      if (isCutOff(e))
        return { message: `reply cut off: ${describeCut(e)}`, status: null, retryable: true, retryAfterMs: null };
      throw e;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * The wait a server asks for, ms, or null: `retry-after-ms` (OpenAI), else `Retry-After` as
 * delay-seconds or an HTTP date (RFC 9110 §10.2.3) measured from `nowMs`. A date in the past is 0.
 */
export function retryAfterMs(headers: Pick<Headers, 'get'> | undefined, nowMs: number): number | null {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const v = headers?.get('retry-after')?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * A reply body that stopped mid-transfer: fetch rejects reading it with a `TypeError` (undici:
 * "terminated" with a socket error as cause; browsers: "network error", "Failed to fetch",
 * "Error in body stream", "Load failed"), unlike our own bugs, which are not retried.
 */
function isCutOff(e: unknown): boolean {
  if (!(e instanceof TypeError)) return false;
  const cause = (e as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string' && cause.code.startsWith('UND_ERR')) return true;
  return /^(terminated|network ?error|failed to fetch|error in body stream|load failed)/i.test(e.message);
}

function describeCut(e: unknown): string {
  const cause = (e as { cause?: { message?: unknown } }).cause;
  const why = typeof cause?.message === 'string' ? ` (${cause.message})` : '';
  return `${(e as Error).message}${why}`;
}
