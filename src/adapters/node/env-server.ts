/**
 * `switchboard serve`: an environment server a Python trainer drives over HTTP or WebSocket, in
 * the spirit of OpenEnv's reset / step / state / close. Each episode is an isolated
 * {@link EpisodeSession} with its own database; the number of live episodes is bounded and an
 * idle episode is closed and freed after a timeout.
 *
 * HTTP (JSON bodies, JSON answers):
 * - `POST /reset {task_id, seed?}` → `{episode_id, observation}`
 * - `POST /step {episode_id, message: {content?, tool_calls?}}` → `{observation}`; tool calls in
 *   OpenAI form `{id, type: "function", function: {name, arguments: "<JSON text>"}}` or ours
 *   `{id, name, arguments: {…}}`
 * - `GET /state?episode_id=…` → `{episode_id, task_id, seed, done, turns}`
 * - `POST /close {episode_id}` → `{closed: true}`
 * - `GET /tasks` → `{domain, tasks: [id…], tools}`; `GET /health` → `{ok: true, episodes}`
 * - `GET /curriculum[?top=n]` → the sampling weights of `serve --weights` (./curriculum.ts)
 * WebSocket at `/ws`: send `{op: "reset"|"step"|"state"|"close", id?, …same fields}`, receive the
 * same answers (plus `op` and the `id` sent), or `{op, id?, error, status}`; messages of one
 * socket are answered in order. A malformed frame closes that socket only.
 *
 * Errors: 400 bad JSON or fields, 404 unknown route or episode, 409 step on a finished or busy
 * episode, 413 body over the limit, 429 too many live episodes (in all, or for this client).
 *
 * Every HTTP request and WebSocket upgrade first passes the {@link ServerGuard} of
 * ./server-guard.ts (Host and Origin checks, optional bearer token: 400 / 401 / 403), and each
 * client may hold `guard.maxSessionsPerClient` live episodes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { BodyError, listen, readJsonBody, sendJson } from './http-json.ts';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import type { DomainRuntime } from '../../core/env/environment.ts';
import { toolSchema } from '../../core/schema/domain.ts';
import { steppingClock } from '../../core/ports/clock.ts';
import type { Judge, ParticipantReply, UserSimulator } from '../../core/participants/types.ts';
import { replyToolCalls } from '../../core/participants/model-tool-calls.ts';
import { EpisodeSession, SessionStateError } from '../../core/training/session.ts';
import type { DuplexSettings } from '../../core/duplex/turn-taking.ts';
import type { EpisodeChannel } from '../../core/rollout/channel-step.ts';
import { createServerGuard, routeUpgrades, sendRefusal, type ServerGuardOptions } from './server-guard.ts';
import { curriculumRoute } from './curriculum.ts';

/** Settings of the server. */
export interface EnvServerOptions {
  runtime: DomainRuntime;
  /** A fresh simulated caller per episode. */
  user: () => UserSimulator;
  judge?: Judge;
  /** Live episodes at most (default 64). */
  maxEpisodes?: number;
  /** An episode untouched this long is closed and freed, ms (default 300,000). */
  idleMs?: number;
  /** Largest request body, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  maxSteps?: number;
  /** Who may connect and how many episodes each client may hold (default: loopback origins, no token, no per-client limit). */
  guard?: ServerGuardOptions;
  /** A sampling-weights file for `GET /curriculum` (./curriculum.ts); absent: the route answers 404. */
  weights?: string;
  /**
   * Issue 17: episodes on the full-duplex timeline over this channel (caller audio is rendered
   * but not sent: observations stay text); the last observation carries `interaction_metrics`.
   */
  duplex?: { settings: DuplexSettings; channel: EpisodeChannel };
}

/** A running server. */
export interface EnvServer {
  server: Server;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Live episodes. */
  episodes(): number;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ToolCallIn = z.union([
  z.object({
    id: z.string().optional(),
    type: z.literal('function').optional(),
    function: z.object({ name: z.string(), arguments: z.string() }),
  }),
  z.object({ id: z.string().optional(), name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
]);
const ResetIn = z.object({
  task_id: z.union([z.string(), z.number()]).transform(String),
  seed: z.number().int().min(0).optional(),
});
const StepIn = z.object({
  episode_id: z.string(),
  message: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallIn).nullish() }),
});
const IdIn = z.object({ episode_id: z.string() });

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new HttpError(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return r.data;
}

/** An OpenAI-style assistant message as our participant reply. */
function toReply(message: z.infer<typeof StepIn>['message']): ParticipantReply {
  const calls = (message.tool_calls ?? []).map((c, i) => {
    const id = c.id ?? `call_${i}`;
    if ('function' in c) {
      // Text that is not a JSON object is kept verbatim: the episode turns it into an error tool message.
      const [call] = replyToolCalls([{ id, name: c.function.name, arguments: c.function.arguments ?? '' }]);
      return { id, name: c.function.name, arguments: call!.arguments as Record<string, unknown> };
    }
    return { id, name: c.name, arguments: c.arguments ?? {} };
  });
  return { text: message.content ?? '', ...(calls.length ? { tool_calls: calls } : {}) };
}

interface Live {
  session: EpisodeSession;
  seed: number;
  timer: NodeJS.Timeout;
}

/**
 * Start the server on 127.0.0.1 (`port` 0 picks a free one).
 * @throws the listen error (e.g. `EADDRINUSE`) when the port cannot be bound.
 */
export async function startEnvServer(opts: EnvServerOptions, port = 0, host = '127.0.0.1'): Promise<EnvServer> {
  const live = new Map<string, Live>();
  const maxEpisodes = opts.maxEpisodes ?? 64;
  const idleMs = opts.idleMs ?? 300_000;
  const maxBody = opts.maxBodyBytes ?? 1 << 20;
  const domain = opts.runtime.domain;
  const guard = createServerGuard(opts.guard);
  let seedCounter = 0;

  const touch = (id: string, entry: Live) => {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void free(id), idleMs);
    entry.timer.unref();
  };
  const free = async (id: string) => {
    const entry = live.get(id);
    if (!entry) return;
    live.delete(id);
    guard.release(id);
    clearTimeout(entry.timer);
    await entry.session.close();
  };
  const get = (id: string): Live => {
    const entry = live.get(id);
    if (!entry) throw new HttpError(404, `unknown episode ${id}`);
    touch(id, entry);
    return entry;
  };

  const ops = {
    async reset(body: unknown, client: string) {
      const { task_id, seed } = parse(ResetIn, body);
      const task = domain.tasks.find((t) => t.id === task_id);
      if (!task) throw new HttpError(404, `unknown task ${task_id}`);
      if (live.size >= maxEpisodes)
        throw new HttpError(429, `too many live episodes (${maxEpisodes}); close some first`);
      const id = randomUUID();
      const s = seed ?? seedCounter++;
      const session = new EpisodeSession({
        runtime: opts.runtime,
        task,
        user: opts.user(),
        seed: s,
        clock: steppingClock(domain.now, 1000),
        ...(opts.judge ? { judge: opts.judge } : {}),
        ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
        ...(opts.duplex ? { channel: opts.duplex.channel, duplex: opts.duplex.settings } : {}),
      });
      const quota = guard.claim(client, id);
      if (quota) throw new HttpError(quota.status, quota.error);
      const entry: Live = { session, seed: s, timer: setTimeout(() => undefined, 0) };
      live.set(id, entry);
      touch(id, entry);
      return { episode_id: id, observation: await session.start() };
    },
    async step(body: unknown) {
      const { episode_id, message } = parse(StepIn, body);
      const { session } = get(episode_id);
      try {
        return { observation: await session.step(toReply(message)) };
      } catch (e) {
        if (e instanceof SessionStateError) throw new HttpError(409, e.message);
        throw e;
      }
    },
    async state(body: unknown) {
      const { episode_id } = parse(IdIn, body);
      const entry = get(episode_id);
      const snap = entry.session.snapshot();
      return { episode_id, task_id: entry.session.task.id, seed: entry.seed, done: snap.done, turns: snap.turns };
    },
    async close(body: unknown) {
      const { episode_id } = parse(IdIn, body);
      get(episode_id);
      await free(episode_id);
      return { closed: true };
    },
  };

  const readBody = (req: IncomingMessage): Promise<unknown> =>
    readJsonBody(req, maxBody).catch((e: unknown) => {
      if (e instanceof BodyError)
        throw new HttpError(e.status, e.status === 400 ? 'body is not valid JSON' : e.message);
      throw e;
    });
  const send = sendJson;

  const curriculum = curriculumRoute(opts.weights);
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const refused = guard.check(req);
        if (refused) return sendRefusal(res, refused);
        const url = new URL(req.url ?? '/', 'http://localhost');
        const route = `${req.method} ${url.pathname}`;
        if (route === 'GET /health') return send(res, 200, { ok: true, episodes: live.size });
        if (route === 'GET /tasks') {
          return send(res, 200, {
            domain: domain.name,
            tasks: domain.tasks.map((t) => t.id),
            tools: domain.tools.map(toolSchema),
          });
        }
        if (route === 'GET /curriculum') {
          const a = await curriculum(url);
          return a.status === 200 ? send(res, 200, a.weights) : send(res, a.status, { error: a.error });
        }
        if (route === 'GET /state') {
          const id = url.searchParams.get('episode_id');
          if (!id) throw new HttpError(400, 'episode_id: required (GET /state?episode_id=…)');
          return send(res, 200, await ops.state({ episode_id: id }));
        }
        const op = {
          'POST /reset': ops.reset,
          'POST /step': ops.step,
          'POST /close': ops.close,
          'POST /state': ops.state,
        }[route];
        if (!op) throw new HttpError(404, `no route ${route}`);
        send(res, 200, await op(await readBody(req), guard.clientOf(req)));
      } catch (e) {
        if (e instanceof HttpError) send(res, e.status, { error: e.message });
        else send(res, 500, { error: `internal error: ${(e as Error).message}` });
      }
    })();
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBody });
  routeUpgrades(server, guard, { '/ws': wss });
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    const client = guard.clientOf(req);
    // A protocol error (oversized or malformed frame) closes this socket only; `ws` emits it
    // as an 'error' event, which must be handled or it would end the whole process.
    socket.on('error', () => socket.terminate());
    // One message at a time per socket, so answers come back in request order; a client may
    // also send an `id`, which is echoed.
    let queue = Promise.resolve();
    socket.on('message', (data) => {
      queue = queue.then(async () => {
        let op = '';
        let id: unknown;
        try {
          let msg: unknown;
          try {
            msg = JSON.parse(String(data));
          } catch {
            throw new HttpError(400, 'message is not valid JSON');
          }
          op = String((msg as { op?: unknown })?.op ?? '');
          id = (msg as { id?: unknown })?.id;
          const handler = (ops as Record<string, (b: unknown, client: string) => Promise<unknown>>)[op];
          if (!handler || !Object.hasOwn(ops, op))
            throw new HttpError(400, `unknown op "${op}" (reset, step, state, close)`);
          const answer = (await handler(msg, client)) as object;
          socket.send(JSON.stringify({ op, ...(id !== undefined ? { id } : {}), ...answer }));
        } catch (e) {
          const status = e instanceof HttpError ? e.status : 500;
          socket.send(JSON.stringify({ op, ...(id !== undefined ? { id } : {}), status, error: (e as Error).message }));
        }
      });
    });
  });

  const url = await listen(server, port, host);
  return {
    server,
    url,
    episodes: () => live.size,
    async close() {
      await Promise.all([...live.keys()].map(free));
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((ok) => wss.close(() => ok()));
      await new Promise<void>((ok, ko) => server.close((e) => (e ? ko(e) : ok())));
    },
  };
}
