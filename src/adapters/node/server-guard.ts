/**
 * Admission guards for Switchboard's local servers (`switchboard serve` and any other HTTP /
 * WebSocket server a trainer drives): who may talk to the server and how many sessions each
 * client may hold.
 *
 * The threat: a web page the user happens to have open on another origin can send requests to a
 * server on 127.0.0.1 (fetch, or a WebSocket, which browsers never block by CORS), and with DNS
 * rebinding it can even make them look same-origin. Trainers (Python `requests`, `websockets`,
 * `curl`) send no `Origin` header; browsers always do on WebSocket upgrades and cross-origin
 * requests. So a request is admitted when all of these hold:
 *
 * 1. **Host** (DNS-rebinding guard): the `Host` header names a loopback name (`localhost`,
 *    `*.localhost`), an IP literal (`127.0.0.1`, `[::1]`, a LAN address when bound to one), or a
 *    name in `allowHosts`. A rebinding attack needs a DNS name it controls, so it is refused.
 * 2. **Origin**: absent (not a browser), or a loopback origin (`http(s)://localhost:*`,
 *    `127.x.x.x`, `[::1]`, any port), or the server's own origin (`scheme://<Host header>`), or
 *    listed in `allowOrigins` (exact `scheme://host[:port]`; `*` admits every origin).
 * 3. **Token**: when `tokens` is non-empty, `Authorization: Bearer <token>` names one of them
 *    (compared in constant time).
 *
 * Refusals are JSON `{error}` bodies: 400 unreadable Host, 403 Host or Origin not allowed,
 * 401 missing or wrong token (with `WWW-Authenticate: Bearer`), 429 session quota reached.
 *
 * Sessions (episodes) are counted per client: the token's index when tokens are in use (each
 * token is one client), otherwise the remote address. {@link ServerGuard.claim} counts one,
 * {@link ServerGuard.release} frees it.
 *
 * Usage with `node:http` and `ws`:
 * ```ts
 * const guard = createServerGuard({ tokens: ['s3cret'], maxSessionsPerClient: 8 });
 * const server = createServer((req, res) => {
 *   const refused = guard.check(req);
 *   if (refused) return sendRefusal(res, refused);
 *   … const quota = guard.claim(guard.clientOf(req), sessionId); if (quota) return sendRefusal(res, quota);
 * });
 * const wss = new WebSocketServer({ noServer: true });
 * routeUpgrades(server, guard, { '/ws': wss }); // wss 'connection' gets (socket, req)
 * ```
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';

/** Settings of a {@link ServerGuard}; every field is optional and the defaults are the safe ones. */
export interface ServerGuardOptions {
  /**
   * Browser origins admitted besides loopback ones and the server's own, exact
   * `scheme://host[:port]` (normalised with `URL`; default port omitted). `'*'` admits any origin
   * (the Host check still applies). Default: none.
   */
  allowOrigins?: readonly string[];
  /** Host names admitted in the `Host` header besides loopback names and IP literals, without port. Default: none. */
  allowHosts?: readonly string[];
  /** Bearer tokens; when non-empty every request must carry one. Default: none (no token needed). */
  tokens?: readonly string[];
  /** Sessions one client may hold at once (default: no per-client limit). */
  maxSessionsPerClient?: number;
}

/** Why a request was refused: the HTTP status, the `{error}` text and extra response headers. */
export interface GuardRefusal {
  status: number;
  error: string;
  headers?: Record<string, string>;
}

/** The guard of one server. */
export interface ServerGuard {
  /** Admission of an HTTP request or a WebSocket upgrade request: `undefined` when admitted. */
  check(req: IncomingMessage): GuardRefusal | undefined;
  /** The client a request counts against: `token:<index>` with tokens, else `addr:<remote address>`. */
  clientOf(req: IncomingMessage): string;
  /** Count session `id` against `client`; a 429 refusal when the client already holds its quota. */
  claim(client: string, id: string): GuardRefusal | undefined;
  /** Free session `id` (no-op when it was never claimed). */
  release(id: string): void;
  /** Sessions `client` holds. */
  sessions(client: string): number;
}

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** A host name (no port, IPv6 without brackets) that always means this machine. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
}

/** The host name of a `Host` header value (`name[:port]`, `[v6][:port]`), lower case, IPv6 without brackets; undefined if unreadable. */
function hostnameOf(host: string): string | undefined {
  if (!/^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

function normalOrigin(origin: string): string | undefined {
  try {
    const o = new URL(origin).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/**
 * Build the guard of one server.
 * @throws Error when an `allowOrigins` entry is not an origin or a token is empty.
 */
export function createServerGuard(opts: ServerGuardOptions = {}): ServerGuard {
  const anyOrigin = (opts.allowOrigins ?? []).includes('*');
  const origins = new Set<string>();
  for (const o of opts.allowOrigins ?? []) {
    if (o === '*') continue;
    const n = normalOrigin(o);
    if (!n) throw new Error(`allowed origin "${o}" is not an origin (scheme://host[:port])`);
    origins.add(n);
  }
  const hosts = new Set((opts.allowHosts ?? []).map((h) => h.toLowerCase().replace(/^\[|\]$/g, '')));
  const tokens = (opts.tokens ?? []).map((t, i) => {
    if (!t) throw new Error(`token ${i + 1} is empty`);
    return sha(t);
  });
  const limit = opts.maxSessionsPerClient ?? Number.POSITIVE_INFINITY;
  const owner = new Map<string, string>(); // session id → client
  const counts = new Map<string, number>();

  /** Index of the presented token, -1 when none matches or none is presented. */
  const tokenIndex = (req: IncomingMessage): number => {
    const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!m) return -1;
    const given = sha(m[1]!);
    let found = -1;
    tokens.forEach((t, i) => {
      if (timingSafeEqual(t, given) && found < 0) found = i;
    });
    return found;
  };

  return {
    check(req) {
      const host = req.headers.host;
      const hostname = host === undefined ? undefined : hostnameOf(host);
      if (hostname === undefined) return { status: 400, error: 'missing or unreadable Host header' };
      if (!isLoopbackName(hostname) && !isIP(hostname) && !hosts.has(hostname))
        return { status: 403, error: `host "${host}" is not allowed (allow it with --allow-host)` };
      const origin = req.headers.origin;
      if (origin !== undefined && !anyOrigin) {
        const n = normalOrigin(origin);
        const own = n !== undefined && (n === normalOrigin(`http://${host}`) || n === normalOrigin(`https://${host}`));
        if (!n || !(isLoopbackName(new URL(n).hostname) || own || origins.has(n)))
          return { status: 403, error: `origin "${origin}" is not allowed (allow it with --allow-origin)` };
      }
      if (tokens.length && tokenIndex(req) < 0) {
        const given = req.headers.authorization !== undefined;
        return {
          status: 401,
          error: given ? 'wrong bearer token' : 'missing bearer token (Authorization: Bearer <token>)',
          headers: { 'www-authenticate': 'Bearer' },
        };
      }
      return undefined;
    },
    clientOf(req) {
      if (tokens.length) return `token:${tokenIndex(req)}`;
      return `addr:${req.socket.remoteAddress ?? 'unknown'}`;
    },
    claim(client, id) {
      if (owner.has(id)) return undefined;
      const n = counts.get(client) ?? 0;
      if (n >= limit)
        return { status: 429, error: `this client holds ${n} live episodes, its limit; close some first` };
      owner.set(id, client);
      counts.set(client, n + 1);
      return undefined;
    },
    release(id) {
      const client = owner.get(id);
      if (client === undefined) return;
      owner.delete(id);
      const n = (counts.get(client) ?? 1) - 1;
      if (n > 0) counts.set(client, n);
      else counts.delete(client);
    },
    sessions: (client) => counts.get(client) ?? 0,
  };
}

/** Answer `res` with a refusal as JSON `{error}`. */
export function sendRefusal(res: ServerResponse, r: GuardRefusal): void {
  const text = JSON.stringify({ error: r.error });
  res.writeHead(r.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...r.headers,
  });
  res.end(text);
}

/** Refuse a WebSocket upgrade on its raw socket with a plain HTTP answer (JSON `{error}`), then close it. */
export function refuseUpgrade(socket: Duplex, r: GuardRefusal): void {
  const text = JSON.stringify({ error: r.error });
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[r.status] ?? 'Refused';
  const extra = Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.end(
    `HTTP/1.1 ${r.status} ${reason}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\n${extra.join('')}\r\n${text}`,
  );
}

/**
 * Route the server's WebSocket upgrades: the path picks a `WebSocketServer` created with
 * `{noServer: true}` (404 otherwise), the guard must admit the request (else its refusal), then
 * the socket is handed over and the `WebSocketServer` emits `'connection'` with `(socket, req)`.
 */
export function routeUpgrades(server: Server, guard: ServerGuard, routes: Record<string, WebSocketServer>): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const wss = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (!wss) return refuseUpgrade(socket, { status: 404, error: `no WebSocket at ${path}` });
    const refused = guard.check(req);
    if (refused) return refuseUpgrade(socket, refused);
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
}

/**
 * Which policy endpoints `POST /rollout` may call (a request names base URLs, and the server
 * then sends them requests: without a list, anyone who may use the server could make it call any
 * address it can reach). Loopback endpoints (`localhost`, `127.*`, `[::1]`, any port) are always
 * allowed; another base URL is allowed when an entry of `allowed` has its scheme, host and port
 * and a path that is a prefix of its path, segment by segment (`http://gpu1:8000/v1` admits
 * `http://gpu1:8000/v1` and `http://gpu1:8000/v1/`, not `http://gpu1:8000/v2`). The entry `*`
 * allows any endpoint.
 *
 * @returns null when allowed, else why not (a sentence for the error answer).
 */
export function endpointRefusal(baseUrl: string, allowed: readonly string[]): string | null {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return `${baseUrl} is not a URL`;
  }
  if (isLoopbackName(u.hostname) || allowed.includes('*')) return null;
  const segments = (p: string) => p.split('/').filter(Boolean);
  const ok = allowed.some((entry) => {
    const a = new URL(entry);
    const [want, got] = [segments(a.pathname), segments(u.pathname)];
    return a.protocol === u.protocol && a.host === u.host && want.every((s, i) => got[i] === s);
  });
  return ok
    ? null
    : `endpoint ${u.origin}${u.pathname} is not allowed: this server calls loopback endpoints and those given when it started (serve --allow-endpoint <base-url>, or the endpoints of its --user, --judge, --tts, --barge-in-model)`;
}

/**
 * Check an allow-list entry for {@link endpointRefusal}: `*` or an http(s) URL.
 * @throws Error naming the entry.
 */
export function checkAllowedEndpoint(entry: string): string {
  if (entry === '*') return entry;
  let u: URL | undefined;
  try {
    u = new URL(entry);
  } catch {
    u = undefined;
  }
  if (!u || !/^https?:$/.test(u.protocol))
    throw new Error(`--allow-endpoint ${entry}: expected an http(s) base URL such as http://gpu1:8000/v1, or *`);
  return entry;
}
