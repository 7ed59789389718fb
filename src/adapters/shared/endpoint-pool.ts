/**
 * Several model endpoints serving the same policy as one {@link ModelClient}: requests go
 * round-robin to endpoints with a free slot (at most `capPerEndpoint` requests in flight on each),
 * and wait when every endpoint is full. An endpoint that failed with a network error or a 5xx is
 * passed over for `downMs` while another one is up, so a dead server does not keep eating
 * samples; the failing request still throws its `ModelEndpointError` (the rollout is invalid and
 * resampled, never scored 0). SpeechGym-style spreading of K samples over several vLLM servers.
 */
import type { ModelClient, ModelRequest, ModelResponse } from '../../core/ports/model-client.ts';
import { ModelEndpointError } from '../../core/participants/model-errors.ts';

/** Options of {@link EndpointPool}. */
export interface EndpointPoolOptions {
  /** Requests in flight on one endpoint at most (default 8). */
  capPerEndpoint?: number;
  /** How long an endpoint that failed is passed over, ms (default 30,000). */
  downMs?: number;
  /** Wall clock, ms (default `Date.now`). */
  now?: () => number;
}

/** Requests served and failed per endpoint. */
export interface EndpointStats {
  endpoint: string;
  requests: number;
  failures: number;
  /** Completions that carried prompt and completion token ids. */
  with_token_ids: number;
}

interface Member {
  client: ModelClient;
  inFlight: number;
  downUntil: number;
  stats: EndpointStats;
}

/** A {@link ModelClient} over several endpoints of one model. */
export class EndpointPool implements ModelClient {
  readonly id: string;
  readonly flavor: ModelClient['flavor'];
  readonly kind = 'remote' as const;
  readonly endpoint: string;
  readonly model: string;
  private readonly members: Member[];
  private readonly cap: number;
  private readonly downMs: number;
  private readonly now: () => number;
  private cursor = 0;
  private readonly waiting: (() => void)[] = [];

  /** @throws Error when `clients` is empty or the clients name different models. */
  constructor(clients: readonly ModelClient[], opts: EndpointPoolOptions = {}) {
    const first = clients[0];
    if (!first) throw new Error('an endpoint pool needs at least one endpoint');
    if (clients.some((c) => c.model !== first.model))
      throw new Error('every endpoint of a pool must serve the same model');
    this.members = clients.map((client) => ({
      client,
      inFlight: 0,
      downUntil: 0,
      stats: { endpoint: client.endpoint ?? client.id, requests: 0, failures: 0, with_token_ids: 0 },
    }));
    this.cap = opts.capPerEndpoint ?? 8;
    this.downMs = opts.downMs ?? 30_000;
    this.now = opts.now ?? Date.now;
    this.id = first.id;
    this.flavor = first.flavor;
    this.model = first.model;
    this.endpoint = this.members.map((m) => m.stats.endpoint).join(',');
  }

  /** Per-endpoint counts so far. */
  stats(): EndpointStats[] {
    return this.members.map((m) => ({ ...m.stats }));
  }

  /** The next endpoint with a free slot, preferring ones not marked down; null when all are full. */
  private pick(): Member | null {
    const n = this.members.length;
    const t = this.now();
    for (const acceptDown of [false, true]) {
      for (let i = 0; i < n; i++) {
        const m = this.members[(this.cursor + i) % n]!;
        if (m.inFlight >= this.cap || (!acceptDown && m.downUntil > t)) continue;
        this.cursor = (this.cursor + i + 1) % n;
        return m;
      }
    }
    return null;
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    let m = this.pick();
    while (!m) {
      await new Promise<void>((ok) => this.waiting.push(ok));
      m = this.pick();
    }
    m.inFlight++;
    m.stats.requests++;
    try {
      const res = await m.client.complete(request, signal);
      if (res.token_ids && res.prompt_token_ids) m.stats.with_token_ids++;
      return res;
    } catch (e) {
      m.stats.failures++;
      if (e instanceof ModelEndpointError && (e.status === null || e.status >= 500))
        m.downUntil = this.now() + this.downMs;
      throw e;
    } finally {
      m.inFlight--;
      this.waiting.shift()?.();
    }
  }
}
