/**
 * `switchboard serve` (default protocol `openenv`): a domain as an OpenEnv environment server, so
 * that trainers speaking OpenEnv (TRL, SkyRL, verl, NeMo Gym adapters, OpenEnv's own
 * `GenericEnvClient`) drive phone calls with no glue. Every episode is an
 * {@link EpisodeSession} (the ordinary episode loop and scoring); this file only speaks the
 * protocol. Routes and shapes follow OpenEnv's env server:
 *
 * - `GET /health` → `{status: "healthy", active_sessions, max_sessions}`
 * - `GET /metadata` → `{name, description, readme_content, version, author, documentation_url}`
 * - `GET /schema` → `{action, observation, state}` (JSON Schemas)
 * - `GET /curriculum[?top=n]` → the sampling weights of `serve --weights` (./curriculum.ts): which
 *   tasks to sample next
 * - `POST /reset {seed?, episode_id?, task_id?}` → `{observation, reward, done}`
 * - `POST /step {action, episode_id}` → `{observation, reward, done}`
 * - `GET /state?episode_id=…` → state (`episode_id`, `step_count`, …)
 * - `POST /mcp` JSON-RPC 2.0: `initialize`, `tools/list`, `tools/call` (`params.session_id`:
 *   an episode id from `/reset`)
 * - `POST /rollout` a rollout request (../shared/rollout-service.ts) → NDJSON groups as they
 *   finish (token-faithful GRPO samples against the trainer's policy endpoints); only loopback
 *   endpoints and those of `allowEndpoints` are called (422 naming `base_urls[i]` otherwise),
 *   and a redirect out of them is not followed (the sample is invalid and resampled);
 *   with the phone channel on, each group line carries `audio` (path → base64 WAV) for the
 *   caller audio its requests reference by path
 * - WebSocket `/ws`: one session per connection; send `{type: "reset", data}`,
 *   `{type: "step", data: action}`, `{type: "state"}`, `{type: "mcp", data: rpc}`,
 *   `{type: "close"}`; answers `{type: "observation" | "state" | "mcp", data}` or
 *   `{type: "error", data: {message, code, …}}` with OpenEnv's codes (`INVALID_JSON`,
 *   `UNKNOWN_TYPE`, `VALIDATION_ERROR`, `EXECUTION_ERROR`, `CAPACITY_REACHED`, `SESSION_ERROR`).
 *
 * OpenEnv's HTTP `/reset` and `/step` are stateless (a fresh environment per request); a phone
 * call needs state, so here `/reset` opens an episode whose id is `observation.metadata.episode_id`
 * and `/step` names it in `episode_id` (an extra field OpenEnv's step request allows).
 *
 * HTTP errors are FastAPI's `{detail}`: 422 with a list of `{type, loc, msg, input}` for a
 * malformed request or action, 404 unknown route or session, 409 step after `done` or while a
 * step runs, 413 body too large, 503 at capacity, and the server guard's 400/401/403/429.
 * Concurrency: at most `maxSessions` live sessions (HTTP episodes and WebSocket connections
 * together); a session idle for `sessionTimeoutS` is closed (a WebSocket gets a `SESSION_ERROR`
 * first). Sockets bind 127.0.0.1 unless told otherwise.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { BodyError, listen, readJsonBody, sendJson } from './http-json.ts';
import { WebSocketServer, type WebSocket } from 'ws';
import type { z } from 'zod';
import type { DomainRuntime } from '../../core/env/environment.ts';
import { steppingClock } from '../../core/ports/clock.ts';
import type { Judge, ParticipantReply, UserSimulator } from '../../core/participants/types.ts';
import { replyToolCalls } from '../../core/participants/model-tool-calls.ts';
import type { EpisodeChannel } from '../../core/rollout/channel-step.ts';
import type { DuplexSettings } from '../../core/duplex/turn-taking.ts';
import { degradedAudioHook, MemoryAudioStore, toBase64 } from '../../core/channel/audio-store.ts';
import type { RolloutGroup } from '../../core/training/policy-rollout.ts';
import type { Task } from '../../core/schema/task.ts';
import { EpisodeSession, SessionStateError, type Observation } from '../../core/training/session.ts';
import {
  agentSystemPrompt,
  agentTools,
  agentVisibleMessages,
  rewardSummary,
  type AgentMessage,
  type CallerAudio,
} from '../../core/training/agent-view.ts';
import {
  Action,
  openEnvSchemas,
  ResetParams,
  validationItems,
  type ValidationItem,
} from '../../core/training/openenv-types.ts';
import { RolloutRequest, requestTasks, runRolloutRequest } from '../shared/rollout-service.ts';
import {
  createServerGuard,
  endpointRefusal,
  routeUpgrades,
  type GuardRefusal,
  type ServerGuardOptions,
} from './server-guard.ts';
import { curriculumRoute } from './curriculum.ts';

/** Settings of {@link startOpenEnvServer}. */
export interface OpenEnvServerOptions {
  runtime: DomainRuntime;
  /** A fresh simulated caller per episode. */
  user: () => UserSimulator;
  judge?: Judge;
  /** Live sessions at most, HTTP episodes and WebSocket connections together (default 64). */
  maxSessions?: number;
  /** A session untouched this long is closed, s (default 300; OpenEnv's `session_timeout`). */
  sessionTimeoutS?: number;
  /** Largest request body or WebSocket message, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  maxSteps?: number;
  /**
   * The phone channel, without a store: each session gets its own in-memory audio store, and
   * caller turns carry their degraded WAV (base64) in observations. Absent: text only.
   */
  channel?: EpisodeChannel;
  /**
   * Issue 17: sessions and `POST /rollout` run on the full-duplex timeline (needs `channel`);
   * the last observation's metadata and every rollout sample carry `interaction_metrics`.
   */
  duplex?: DuplexSettings;
  /**
   * Admission (./server-guard.ts: Host and Origin checks, bearer tokens, per-client session
   * quotas). Default: the guard's safe defaults, no token.
   */
  guard?: ServerGuardOptions;
  /** `version` of `/metadata` (default null). */
  version?: string;
  /** API key for the policy endpoints of `POST /rollout` (default none). */
  apiKey?: string;
  /**
   * Policy endpoints `POST /rollout` may call besides loopback ones: base URLs, or `*` for any
   * (see {@link endpointRefusal}). Default none: loopback only.
   */
  allowEndpoints?: readonly string[];
  /** `readme_content` of `/metadata` (default null). */
  readme?: string;
  /** A sampling-weights file for `GET /curriculum` (./curriculum.ts); absent: the route answers 404. */
  weights?: string;
}

/** A running server. */
export interface OpenEnvServer {
  /** `http://<host>:<port>`. */
  url: string;
  /** Live sessions. */
  sessions(): number;
  close(): Promise<void>;
}

/** An error answered in OpenEnv's shape: HTTP `{detail}` or WebSocket `{type: "error", data}`. */
class ProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail: string | ValidationItem[] = message,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const invalid = (items: ValidationItem[]) =>
  new ProtocolError(422, 'VALIDATION_ERROR', 'Invalid message', items, { errors: items });

function check<T>(schema: z.ZodType<T>, value: unknown, at: (string | number)[]): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(validationItems(r.error, at, value));
  return r.data;
}

interface Slot {
  id: string;
  client: string;
  session: EpisodeSession | null;
  task: Task | null;
  seed: number | null;
  stepCount: number;
  history: AgentMessage[];
  audio: CallerAudio | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Called when the idle timeout closes the slot (a WebSocket says so and closes). */
  onTimeout?: () => void;
}

/** The agent's reply for an action; tool-call argument text that is not JSON is passed on as text. */
function replyOf(action: Action): ParticipantReply {
  if (action.type === 'call_tool')
    return { text: '', tool_calls: [{ id: 'call_0', name: action.tool_name, arguments: action.arguments }] };
  if (action.type === 'list_tools') throw new Error('list_tools is not a turn');
  const calls = (action.tool_calls ?? []).map((c, i) => {
    const id = c.id ?? `call_${i}`;
    const raw = c.function.arguments ?? '';
    // Text that is not a JSON object is kept verbatim: the episode answers it with an `Error: …` tool message.
    const args =
      typeof raw === 'string' ? replyToolCalls([{ id, name: c.function.name, arguments: raw }])[0]!.arguments : raw;
    return { id, name: c.function.name, arguments: args as Record<string, unknown> };
  });
  return { text: action.content ?? '', ...(calls.length ? { tool_calls: calls } : {}) };
}

/**
 * The caller audio a rollout group's requests reference, for a trainer that cannot read the
 * server's store: path → base64 of the degraded 16 kHz WAV, each clip once. The clips are then
 * dropped from the (in-memory, per request) store, so a long request does not accumulate them.
 */
function groupAudio(g: RolloutGroup, store: MemoryAudioStore): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of g.samples)
    for (const m of s.messages)
      if (m.role === 'user' && typeof m.content !== 'string')
        for (const p of m.content)
          if (p.type === 'audio' && !(p.audio in out)) {
            const bytes = store.getSync(p.audio);
            if (bytes) out[p.audio] = toBase64(bytes);
          }
  for (const path of Object.keys(out)) {
    store.files.delete(path);
    store.files.delete(path.replace(/\.degraded\.wav$/, '.clean.wav'));
  }
  return out;
}

/**
 * Start the server. `port` 0 picks a free one; `host` defaults to 127.0.0.1.
 * @throws the listen error (e.g. `EADDRINUSE`) when the port cannot be bound.
 */
export async function startOpenEnvServer(
  opts: OpenEnvServerOptions,
  port = 0,
  host = '127.0.0.1',
): Promise<OpenEnvServer> {
  const maxSessions = opts.maxSessions ?? 64;
  const timeoutS = opts.sessionTimeoutS ?? 300;
  const maxBody = opts.maxBodyBytes ?? 1 << 20;
  const guard = createServerGuard(opts.guard);
  const domain = opts.runtime.domain;
  const tools = agentTools(opts.runtime);
  const slots = new Map<string, Slot>();
  let seedCounter = 0;

  const touch = (slot: Slot) => {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      slot.onTimeout?.();
      void free(slot.id);
    }, timeoutS * 1000);
    slot.timer.unref();
  };
  const free = async (id: string) => {
    const slot = slots.get(id);
    if (!slot) return;
    slots.delete(id);
    guard.release(id);
    clearTimeout(slot.timer);
    await slot.session?.close();
  };
  const open = (client: string, id: string): Slot => {
    if (slots.has(id)) throw new ProtocolError(409, 'SESSION_ERROR', `Session '${id}' already exists.`);
    if (slots.size >= maxSessions) {
      const message = `Server at capacity: ${slots.size}/${maxSessions} sessions active. Cannot accept new connections.`;
      throw new ProtocolError(503, 'CAPACITY_REACHED', message, message, {
        active_sessions: slots.size,
        max_sessions: maxSessions,
      });
    }
    const quota = guard.claim(client, id);
    if (quota) throw new ProtocolError(quota.status, 'CAPACITY_REACHED', quota.error);
    const slot: Slot = {
      id,
      client,
      session: null,
      task: null,
      seed: null,
      stepCount: 0,
      history: [],
      audio: undefined,
      timer: undefined,
    };
    slots.set(id, slot);
    touch(slot);
    return slot;
  };
  const known = (id: string): Slot => {
    const slot = slots.get(id);
    if (!slot)
      throw new ProtocolError(
        404,
        'SESSION_ERROR',
        `Session '${id}' not found (never opened, closed, or idle too long).`,
      );
    touch(slot);
    return slot;
  };

  /** The `{observation, reward, done}` answer for a session observation. */
  const answer = (slot: Slot, obs: Observation, ownTurns: number, first: boolean) => {
    const messages = agentVisibleMessages(obs.turns, 0, ownTurns, slot.audio);
    slot.history.push(...messages.map((m) => (m.role === 'user' && m.audio ? { ...m, audio: null } : m)));
    const final = obs.reward_info?.reward ?? 0;
    const process = obs.reward - final;
    const reward = !obs.valid ? null : obs.done || !first ? obs.reward : null;
    return {
      observation: {
        messages,
        ...(first ? { system_prompt: agentSystemPrompt(opts.runtime, slot.task!), tools } : {}),
        metadata: {
          episode_id: slot.id,
          task_id: slot.task!.id,
          seed: slot.seed!,
          step_count: slot.stepCount,
          process_reward: Math.round(process * 1e12) / 1e12,
          termination: obs.termination,
          valid: obs.valid,
          invalid_reason: obs.invalid_reason,
          reward: obs.reward_info ? rewardSummary(obs.reward_info) : null,
          ...(obs.interaction_metrics !== undefined ? { interaction_metrics: obs.interaction_metrics } : {}),
        },
      },
      reward,
      done: obs.done,
    };
  };

  const reset = async (slot: Slot, data: unknown) => {
    const params = check(ResetParams, data ?? {}, ['body']);
    const seed = params.seed ?? seedCounter++;
    const task =
      params.task_id !== null && params.task_id !== undefined
        ? domain.tasks.find((t) => t.id === params.task_id)
        : domain.tasks[seed % domain.tasks.length];
    if (!task)
      throw invalid([
        { type: 'value_error', loc: ['body', 'task_id'], msg: `unknown task ${params.task_id}`, input: params.task_id },
      ]);
    await slot.session?.close();
    const channel = opts.channel ? { ...opts.channel, store: new MemoryAudioStore() } : undefined;
    slot.audio = channel ? degradedAudioHook(channel.store) : undefined;
    slot.session = new EpisodeSession({
      runtime: opts.runtime,
      task,
      user: opts.user(),
      seed,
      clock: steppingClock(domain.now, 1000),
      ...(opts.judge ? { judge: opts.judge } : {}),
      ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
      ...(channel ? { channel } : {}),
      ...(opts.duplex ? { duplex: opts.duplex } : {}),
    });
    slot.task = task;
    slot.seed = seed;
    slot.stepCount = 0;
    slot.history = [];
    return answer(slot, await slot.session.start(), 0, true);
  };

  const step = async (slot: Slot | null, data: unknown) => {
    const action = check(Action, data, ['body', 'action']);
    if (action.type === 'list_tools') {
      return {
        observation: {
          tools: tools.map((t) => ({
            name: t.function.name,
            description: t.function.description,
            input_schema: t.function.parameters,
          })),
        },
        reward: null,
        done: false,
      };
    }
    if (action.type !== 'call_tool' && !action.content && !action.tool_calls?.length)
      throw invalid([
        { type: 'value_error', loc: ['body', 'action'], msg: 'an action needs content or tool_calls', input: data },
      ]);
    if (!slot?.session) throw new ProtocolError(409, 'EXECUTION_ERROR', 'call reset before step');
    if (slot.session.done)
      throw new ProtocolError(409, 'EXECUTION_ERROR', 'episode is over (done); call reset to start another');
    try {
      const obs = await slot.session.step(replyOf(action));
      slot.stepCount++;
      return answer(slot, obs, 1, false);
    } catch (e) {
      if (e instanceof SessionStateError) throw new ProtocolError(409, 'EXECUTION_ERROR', e.message);
      throw e;
    }
  };

  const state = (slot: Slot | null) => {
    const snap = slot?.session?.snapshot();
    const t = snap?.trajectory;
    return {
      episode_id: slot?.session ? slot.id : null,
      step_count: slot?.stepCount ?? 0,
      task_id: slot?.task?.id ?? null,
      seed: slot?.seed ?? null,
      done: snap?.done ?? false,
      termination: t?.termination ?? null,
      messages: slot?.history ?? [],
    };
  };

  /** JSON-RPC 2.0 for MCP: `initialize`, `tools/list`, `tools/call`. */
  const mcp = async (body: unknown, wsSlot: Slot | null) => {
    const req = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const id = typeof req.id === 'string' || typeof req.id === 'number' ? req.id : null;
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message, data: null } });
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return fail(-32600, 'Invalid Request');
    const params = (req.params ?? {}) as Record<string, unknown>;
    if (typeof params !== 'object' || Array.isArray(params)) return fail(-32602, 'Params must be an object');
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    switch (req.method) {
      case 'initialize':
        return ok({
          protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-06-18',
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: `switchboard-${domain.name}`, version: opts.version ?? '0' },
        });
      case 'tools/list':
        return ok({
          tools: tools.map((t) => ({
            name: t.function.name,
            description: t.function.description,
            inputSchema: t.function.parameters,
          })),
        });
      case 'tools/call': {
        if (typeof params.name !== 'string' || !params.name) return fail(-32602, "Missing 'name' in params");
        const args = params.arguments ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args))
          return fail(-32602, "'arguments' must be an object");
        const sid = typeof params.session_id === 'string' ? params.session_id : null;
        const slot = wsSlot ?? (sid ? slots.get(sid) : undefined);
        if (!slot)
          return fail(
            -32602,
            sid
              ? `Unknown session_id: ${sid}`
              : 'tools/call needs session_id (an episode id from /reset) or a /ws session',
          );
        touch(slot);
        try {
          const r = (await step(slot, { type: 'call_tool', tool_name: params.name, arguments: args })) as ReturnType<
            typeof answer
          >;
          const result = r.observation.messages.find((m) => m.role === 'tool');
          return ok({
            content: [{ type: 'text', text: result?.content ?? '' }],
            isError: result?.role === 'tool' ? result.error : true,
            _meta: { observation: r.observation, reward: r.reward, done: r.done },
          });
        } catch (e) {
          return fail(-32000, (e as Error).message);
        }
      }
      default:
        return fail(-32601, `Method not found: ${req.method}`);
    }
  };

  const readBody = (req: IncomingMessage): Promise<unknown> =>
    readJsonBody(req, maxBody).catch((e: unknown) => {
      if (!(e instanceof BodyError)) throw e;
      if (e.status === 413) throw new ProtocolError(413, 'VALIDATION_ERROR', e.message);
      throw invalid([{ type: 'json_invalid', loc: ['body', 0], msg: e.message, input: {} }]);
    });
  const send = sendJson;
  const refuse = (res: ServerResponse, r: GuardRefusal) => send(res, r.status, { detail: r.error }, r.headers);

  const curriculum = curriculumRoute(opts.weights);
  const routes: Record<string, (req: IncomingMessage, url: URL) => Promise<[number, unknown]>> = {
    'GET /health': async () => [200, { status: 'healthy', active_sessions: slots.size, max_sessions: maxSessions }],
    'GET /metadata': async () => [
      200,
      {
        name: `switchboard-${domain.name}`,
        description: `Switchboard phone-call environment for the ${domain.name} domain: the agent answers simulated callers through a phone channel, calls the domain's tools over a real database, and is scored by the final database state and the policy's assertions.`,
        readme_content: opts.readme ?? null,
        version: opts.version ?? null,
        author: null,
        documentation_url: null,
      },
    ],
    'GET /schema': async () => [200, openEnvSchemas()],
    'GET /curriculum': async (_req, url) => {
      const a = await curriculum(url);
      return a.status === 200 ? [200, a.weights] : [a.status, { detail: a.error }];
    },
    'GET /state': async (_req, url) => {
      const id = url.searchParams.get('episode_id');
      if (!id) throw invalid([{ type: 'missing', loc: ['query', 'episode_id'], msg: 'Field required', input: null }]);
      return [200, state(known(id))];
    },
    'POST /reset': async (req) => {
      const body = await readBody(req);
      const params = check(ResetParams, body, ['body']);
      const id = params.episode_id ?? randomUUID();
      const slot = slots.get(id) ?? open(guard.clientOf(req), id);
      touch(slot);
      try {
        return [200, await reset(slot, body)];
      } catch (e) {
        if (!slot.session) await free(id);
        throw e;
      }
    },
    'POST /step': async (req) => {
      const body = (await readBody(req)) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalid([
          { type: 'model_attributes_type', loc: ['body'], msg: 'Input should be an object', input: body },
        ]);
      if (!('action' in body))
        throw invalid([{ type: 'missing', loc: ['body', 'action'], msg: 'Field required', input: body }]);
      const action = body.action as Record<string, unknown> | undefined;
      if (action?.type === 'list_tools') return [200, await step(null, action)];
      const id = body.episode_id;
      if (typeof id !== 'string')
        throw invalid([
          {
            type: 'missing',
            loc: ['body', 'episode_id'],
            msg: 'Field required: the episode id from /reset (observation.metadata.episode_id)',
            input: body,
          },
        ]);
      // Validate the action before looking the episode up, as OpenEnv does.
      check(Action, action, ['body', 'action']);
      return [200, await step(known(id), action)];
    },
    'POST /mcp': async (req) => {
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (e) {
        if (e instanceof ProtocolError && e.status === 422)
          return [200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data: null } }];
        throw e;
      }
      return [200, await mcp(body, null)];
    },
  };

  /**
   * `POST /rollout`: a {@link RolloutRequest} run against the trainer's policy endpoints; the
   * answer streams NDJSON as groups finish: `{"type": "group", …}` per group, `{"type": "failed",
   * …}` per group without two valid samples, then `{"type": "summary", …}`. A malformed request is
   * a 422 before anything runs.
   */
  const rollout = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const request = check(RolloutRequest, body, ['body']);
    const refused = request.base_urls.flatMap((url, i): ValidationItem[] => {
      const why = endpointRefusal(url, opts.allowEndpoints ?? []);
      return why ? [{ type: 'value_error', loc: ['body', 'base_urls', i], msg: why, input: url }] : [];
    });
    if (refused.length) throw invalid(refused);
    try {
      requestTasks(opts.runtime, request);
    } catch (e) {
      throw invalid([
        { type: 'value_error', loc: ['body', 'task_ids'], msg: (e as Error).message, input: request.task_ids },
      ]);
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const line = (doc: object) => res.write(`${JSON.stringify(doc)}\n`);
    const channel = opts.channel ? { ...opts.channel, store: new MemoryAudioStore() } : undefined;
    try {
      const summary = await runRolloutRequest(request, {
        runtime: opts.runtime,
        user: opts.user,
        ...(opts.judge ? { judge: opts.judge } : {}),
        ...(channel ? { channel, userAudio: degradedAudioHook(channel.store) } : {}),
        ...(opts.duplex ? { duplex: opts.duplex } : {}),
        ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
        // A policy endpoint may not redirect the server out of the allow-list either.
        redirectRefusal: (url) => endpointRefusal(url, opts.allowEndpoints ?? []),
        onGroup: (g) => void line({ type: 'group', ...g, ...(channel ? { audio: groupAudio(g, channel.store) } : {}) }),
        onFailed: (f) => void line({ type: 'failed', ...f }),
      });
      line({ type: 'summary', ...summary });
    } catch (e) {
      line({ type: 'error', message: (e as Error).message });
    }
    res.end();
  };

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const refused = guard.check(req);
        if (refused) return refuse(res, refused);
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (req.method === 'POST' && url.pathname === '/rollout') return await rollout(req, res);
        const route = routes[`${req.method} ${url.pathname}`];
        if (!route || !Object.hasOwn(routes, `${req.method} ${url.pathname}`))
          return send(res, 404, { detail: 'Not Found' });
        const [status, doc] = await route(req, url);
        send(res, status, doc);
      } catch (e) {
        if (e instanceof ProtocolError) send(res, e.status, { detail: e.detail });
        else send(res, 500, { detail: `internal error: ${(e as Error).message}` });
      }
    })();
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBody });
  routeUpgrades(server, guard, { '/ws': wss });
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    socket.on('error', () => socket.terminate());
    const sendMsg = (doc: unknown) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(doc));
    };
    const error = (message: string, code: string, extra: Record<string, unknown> = {}) =>
      sendMsg({ type: 'error', data: { message, code, ...extra } });
    let slot: Slot;
    try {
      slot = open(guard.clientOf(req), randomUUID());
    } catch (e) {
      const pe = e as ProtocolError;
      error(pe.message, pe.code, pe.extra);
      socket.close();
      return;
    }
    slot.onTimeout = () => {
      error(`session closed after ${timeoutS} s idle`, 'SESSION_ERROR');
      socket.close();
    };
    socket.on('close', () => void free(slot.id));
    let queue = Promise.resolve();
    socket.on('message', (data) => {
      queue = queue.then(async () => {
        if (!slots.has(slot.id)) return;
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(String(data)) as Record<string, unknown>;
          if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) throw new Error('not an object');
        } catch (e) {
          return error(`Invalid JSON: ${(e as Error).message}`, 'INVALID_JSON');
        }
        touch(slot);
        try {
          switch (msg.type) {
            case 'reset':
              return sendMsg({ type: 'observation', data: await reset(slot, msg.data ?? {}) });
            case 'step':
              if (!('data' in msg))
                throw invalid([{ type: 'missing', loc: ['data'], msg: 'Field required', input: msg }]);
              return sendMsg({ type: 'observation', data: await step(slot, msg.data) });
            case 'state':
              return sendMsg({ type: 'state', data: state(slot) });
            case 'mcp':
              return sendMsg({ type: 'mcp', data: await mcp(msg.data, slot) });
            case 'close':
              await free(slot.id);
              socket.close();
              return;
            default:
              return error(`Unknown message type: ${String(msg.type ?? '')}`, 'UNKNOWN_TYPE');
          }
        } catch (e) {
          if (e instanceof ProtocolError)
            return error(e.message, e.code === 'SESSION_ERROR' ? 'EXECUTION_ERROR' : e.code, e.extra);
          return error((e as Error).message, 'EXECUTION_ERROR');
        }
      });
    });
  });

  const url = await listen(server, port, host);
  return {
    url,
    sessions: () => slots.size,
    async close() {
      await Promise.all([...slots.keys()].map(free));
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((ok) => wss.close(() => ok()));
      server.closeAllConnections();
      await new Promise<void>((ok, ko) => server.close((e) => (e ? ko(e) : ok())));
    },
  };
}
