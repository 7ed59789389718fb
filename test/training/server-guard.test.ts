import { request } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startEnvServer, type EnvServer } from '../../src/adapters/node/env-server.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { createServerGuard, isLoopbackName, type ServerGuardOptions } from '../../src/adapters/node/server-guard.ts';

let runtime: DomainRuntime;
let server: EnvServer | undefined;
const TASK = 'carrier-change-plan-1';

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(guard: ServerGuardOptions = {}) {
  server = await startEnvServer({ runtime, user: () => new ScriptedUser(), guard });
  return server;
}
const port = () => new URL(server!.url).port;

/** A raw HTTP request with full control of Host, Origin and Authorization. */
function call(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; doc: any; headers: Record<string, unknown> }> {
  return new Promise((ok, fail) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: port(),
        method,
        path,
        headers: { ...(text ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode!, doc: JSON.parse(Buffer.concat(chunks).toString()), headers: res.headers }),
        );
      },
    );
    req.on('error', fail);
    req.end(text);
  });
}

/** Open a WebSocket; resolves with the socket, or with the refused upgrade's status and JSON body. */
function openWs(headers: Record<string, string> = {}): Promise<{ ws?: WebSocket; status?: number; doc?: any }> {
  return new Promise((ok, fail) => {
    const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/ws`, { headers });
    ws.once('open', () => ok({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, doc: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    ws.once('error', fail);
  });
}

function ask(ws: WebSocket, msg: unknown): Promise<any> {
  return new Promise((ok) => {
    ws.once('message', (d) => ok(JSON.parse(String(d))));
    ws.send(JSON.stringify(msg));
  });
}

describe('server guard: names', () => {
  it('knows loopback names and nothing else', () => {
    for (const h of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'])
      expect([h, isLoopbackName(h)]).toEqual([h, true]);
    for (const h of ['localhost.evil.example', 'evil.example', '10.0.0.1', '128.0.0.1', '::2', '0.0.0.0'])
      expect([h, isLoopbackName(h)]).toEqual([h, false]);
  });
  it('rejects settings that are not origins or empty tokens', () => {
    expect(() => createServerGuard({ allowOrigins: ['lab.example'] })).toThrow(
      'allowed origin "lab.example" is not an origin (scheme://host[:port])',
    );
    expect(() => createServerGuard({ tokens: ['ok', ''] })).toThrow('token 2 is empty');
  });
});

describe('server guard on switchboard serve: Host and Origin', () => {
  it('admits trainers (no Origin) and loopback pages, refuses other origins on HTTP', async () => {
    await start();
    expect((await call('GET', '/health')).status).toBe(200);
    for (const origin of [
      'http://localhost:5173',
      'http://127.0.0.1:8080',
      'https://[::1]',
      `http://127.0.0.1:${port()}`,
    ])
      expect([origin, (await call('GET', '/health', { origin })).status]).toEqual([origin, 200]);
    expect(await call('POST', '/reset', { origin: 'https://evil.example' }, { task_id: TASK })).toMatchObject({
      status: 403,
      doc: { error: 'origin "https://evil.example" is not allowed (allow it with --allow-origin)' },
    });
    expect(await call('GET', '/tasks', { origin: 'null' })).toMatchObject({
      status: 403,
      doc: { error: 'origin "null" is not allowed (allow it with --allow-origin)' },
    });
    // A look-alike of localhost is not loopback.
    expect((await call('GET', '/health', { origin: 'http://localhost.evil.example' })).status).toBe(403);
    expect(server!.episodes()).toBe(0);
  });

  it('refuses a DNS-rebinding Host and unreadable Host headers, admits IP literals and allowed names', async () => {
    await start({ allowHosts: ['trainer.lab'] });
    const rebound = `rebind.evil.example:${port()}`;
    // A rebound page is same-origin with itself: Origin equals Host, and only the Host check stops it.
    expect(
      await call('POST', '/reset', { host: rebound, origin: `http://${rebound}` }, { task_id: TASK }),
    ).toMatchObject({
      status: 403,
      doc: { error: `host "${rebound}" is not allowed (allow it with --allow-host)` },
    });
    expect(await call('GET', '/health', { host: 'user@127.0.0.1' })).toMatchObject({
      status: 400,
      doc: { error: 'missing or unreadable Host header' },
    });
    for (const host of [`localhost:${port()}`, `10.1.2.3:${port()}`, `[::1]:${port()}`, 'trainer.lab', 'TRAINER.lab:1'])
      expect([host, (await call('GET', '/health', { host })).status]).toEqual([host, 200]);
    expect(server!.episodes()).toBe(0);
  });

  it('refuses WebSocket upgrades from other origins and bad hosts, with the same JSON errors', async () => {
    await start({ allowOrigins: ['https://lab.example:8443'] });
    expect(await openWs({ origin: 'https://evil.example' })).toEqual({
      status: 403,
      doc: { error: 'origin "https://evil.example" is not allowed (allow it with --allow-origin)' },
    });
    expect(await openWs({ host: 'rebind.evil.example' })).toEqual({
      status: 403,
      doc: { error: 'host "rebind.evil.example" is not allowed (allow it with --allow-host)' },
    });
    const allowed = await openWs({ origin: 'https://lab.example:8443' });
    expect(allowed.ws).toBeDefined();
    const reset = await ask(allowed.ws!, { op: 'reset', task_id: TASK, seed: 1 });
    expect(reset).toMatchObject({ op: 'reset', observation: { done: false } });
    allowed.ws!.close();
    // An unknown path is a 404 upgrade refusal, not a hang.
    const other = await new Promise<number>((ok) => {
      const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/elsewhere`);
      ws.once('unexpected-response', (_q, res) => ok(res.statusCode!));
    });
    expect(other).toBe(404);
  });
});

describe('server guard on switchboard serve: bearer token', () => {
  it('needs the token on HTTP and on the WebSocket upgrade', async () => {
    await start({ tokens: ['tok-A'] });
    const missing = await call('GET', '/tasks');
    expect([missing.status, missing.doc, missing.headers['www-authenticate']]).toEqual([
      401,
      { error: 'missing bearer token (Authorization: Bearer <token>)' },
      'Bearer',
    ]);
    expect(await call('GET', '/tasks', { authorization: 'Bearer tok-B' })).toMatchObject({
      status: 401,
      doc: { error: 'wrong bearer token' },
    });
    expect(await call('GET', '/tasks', { authorization: 'Basic dG9rLUE=' })).toMatchObject({ status: 401 });
    expect((await call('GET', '/tasks', { authorization: 'Bearer tok-A' })).doc.domain).toBe('carrier');
    expect(await openWs()).toEqual({
      status: 401,
      doc: { error: 'missing bearer token (Authorization: Bearer <token>)' },
    });
    expect(await openWs({ authorization: 'Bearer nope' })).toEqual({
      status: 401,
      doc: { error: 'wrong bearer token' },
    });
    const ok = await openWs({ authorization: 'Bearer tok-A' });
    expect(ok.ws).toBeDefined();
    ok.ws!.close();
    // Origin is still checked with a valid token.
    expect(
      (await call('GET', '/tasks', { authorization: 'Bearer tok-A', origin: 'https://evil.example' })).status,
    ).toBe(403);
  });
});

describe('server guard on switchboard serve: per-client quotas', () => {
  it('caps live episodes per remote address over HTTP and WebSocket alike, and frees them on close', async () => {
    await start({ maxSessionsPerClient: 2 });
    const a = await call('POST', '/reset', {}, { task_id: TASK });
    const { ws } = await openWs();
    const b = await ask(ws!, { op: 'reset', task_id: TASK });
    expect([a.status, typeof b.episode_id]).toEqual([200, 'string']);
    expect(await call('POST', '/reset', {}, { task_id: TASK })).toMatchObject({
      status: 429,
      doc: { error: 'this client holds 2 live episodes, its limit; close some first' },
    });
    expect(await ask(ws!, { op: 'reset', task_id: TASK })).toEqual({
      op: 'reset',
      status: 429,
      error: 'this client holds 2 live episodes, its limit; close some first',
    });
    expect(server!.episodes()).toBe(2);
    expect((await call('POST', '/close', {}, { episode_id: a.doc.episode_id })).doc).toEqual({ closed: true });
    expect((await call('POST', '/reset', {}, { task_id: TASK })).status).toBe(200);
    ws!.close();
  });

  it('counts each token as its own client', async () => {
    await start({ tokens: ['tok-A', 'tok-B'], maxSessionsPerClient: 1 });
    const as = (t: string) => ({ authorization: `Bearer ${t}` });
    expect((await call('POST', '/reset', as('tok-A'), { task_id: TASK })).status).toBe(200);
    expect((await call('POST', '/reset', as('tok-A'), { task_id: TASK })).status).toBe(429);
    expect((await call('POST', '/reset', as('tok-B'), { task_id: TASK })).status).toBe(200);
    expect(server!.episodes()).toBe(2);
  });
});

describe('switchboard serve guard options', () => {
  it('refuses an --allow-origin that is not an origin, naming it, before loading the domain', async () => {
    const io = capture();
    expect(await main(['serve', '--domain', 'no-such-domain', '--allow-origin', 'lab.example'], io)).toBe(2);
    expect(io.stderr).toContain('serve: allowed origin "lab.example" is not an origin (scheme://host[:port])');
  });
});
