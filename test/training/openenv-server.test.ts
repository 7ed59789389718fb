import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { referenceActions as trainerActions } from '../fixtures/trainer-client.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startOpenEnvServer, type OpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { toolsFor } from '../../src/core/schema/domain.ts';

const run = promisify(execFile);
let runtime: DomainRuntime;
let server: OpenEnvServer | undefined;

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(extra: Partial<Parameters<typeof startOpenEnvServer>[0]> = {}) {
  server = await startOpenEnvServer({ runtime, user: () => new ScriptedUser(), ...extra });
  return server;
}

/** The task's reference solution as OpenEnv actions (OpenAI assistant messages), greeting left out. */
function referenceActions(taskId: string) {
  return trainerActions(runtime.domain, runtime.domain.tasks.find((t) => t.id === taskId)!);
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, doc: (await res.json()) as any };
}

function socket(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/ws`, { headers });
  const inbox: any[] = [];
  const waiters: ((m: any) => void)[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const next = () => new Promise<any>((ok) => (inbox.length ? ok(inbox.shift()) : waiters.push(ok)));
  return {
    ws,
    opened: new Promise<void>((ok, ko) => {
      ws.once('open', () => ok());
      ws.once('error', ko);
    }),
    closed: new Promise<void>((ok) => ws.once('close', () => ok())),
    next,
    ask: (msg: unknown) => {
      ws.send(JSON.stringify(msg));
      return next();
    },
  };
}

describe('switchboard serve --protocol openenv', () => {
  it('is driven unchanged by a stdlib client written from the OpenEnv protocol alone', async () => {
    await start();
    const dir = mkdtempSync(join(tmpdir(), 'sb-openenv-'));
    const plan = join(dir, 'plan.json');
    const actions = referenceActions('carrier-pay-balance-1');
    writeFileSync(plan, JSON.stringify({ reset: { task_id: 'carrier-pay-balance-1', seed: 5 }, actions }));
    const { stdout } = await run('python3', ['test/fixtures/openenv_drive.py', server!.url, plan], { timeout: 60_000 });
    const out = JSON.parse(stdout);
    const agentTools = runtime.domain.tools.map((t) => t.name);
    expect(out.health).toEqual({ status: 'healthy', active_sessions: 0, max_sessions: 64 });
    expect(out.metadata_keys).toEqual([
      'author',
      'description',
      'documentation_url',
      'name',
      'readme_content',
      'version',
    ]);
    expect(out.schema_keys).toEqual(['action', 'observation', 'state']);
    expect(out.mcp_tools).toEqual(agentTools);
    expect(out.list_tools).toEqual(agentTools);
    // The greeting said for the agent, then the caller's opening request.
    expect(out.reset).toEqual({ reward: null, done: false, roles: ['assistant', 'user'], has_system_prompt: true });
    const calls = actions.filter((a) => 'tool_calls' in a).length;
    const rewards = out.rewards as number[];
    expect(rewards.filter((r) => Math.abs(r - 0.1) < 1e-12)).toHaveLength(calls);
    expect(rewards.at(-1)).toBe(1); // the caller's stop ends the step: task reward 1, no tool call in it
    expect(out.done).toBe(true);
    expect(out.final_metadata).toMatchObject({
      task_id: 'carrier-pay-balance-1',
      seed: 5,
      step_count: rewards.length,
      process_reward: 0,
      termination: 'user_stop',
      valid: true,
      invalid_reason: null,
      reward: { task_reward: 1, partial: false },
    });
    expect(Object.values(out.final_metadata.reward.components).every((s) => s === 1)).toBe(true);
    expect(out.final_metadata.reward.components).toHaveProperty('DB', 1);
    expect(out.state).toMatchObject({ step_count: rewards.length, task_id: 'carrier-pay-balance-1', done: true });
    expect(out.step_after_done).toMatchObject({ code: 'EXECUTION_ERROR' });
    expect(out.step_after_done.message).toContain('episode is over');
    expect(out.malformed).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(out.unknown_type).toMatchObject({
      code: 'UNKNOWN_TYPE',
      message: 'Server error: Unknown message type: dance (code: UNKNOWN_TYPE)',
    });
    // Unparseable tool arguments: kept verbatim, answered with an error tool message, −0.1.
    expect(out.bad_args).toEqual({
      reward: -0.1,
      messages: [
        {
          role: 'tool',
          tool_call_id: 'b1',
          name: agentTools[0],
          content: `Error: invalid arguments for ${agentTools[0]}: not valid JSON: {"x": `,
          error: true,
        },
      ],
    });
    expect(out.unknown_session).toMatchObject({ status: 404 });
    expect(out.malformed_http).toEqual({
      status: 422,
      code: null,
      message: expect.stringContaining('HTTP 422'),
    });
  }, 90_000);

  it('shows the agent only what it may see: no caller tool turns, no writes, no gold', async () => {
    await start();
    const r = await post('/reset', { task_id: 'carrier-wallet-pay-1', seed: 1 });
    const id = r.doc.observation.metadata.episode_id;
    const seen: any[] = [...r.doc.observation.messages];
    for (const action of referenceActions('carrier-wallet-pay-1')) {
      const s = await post('/step', { episode_id: id, action });
      expect(s.status).toBe(200);
      seen.push(...s.doc.observation.messages);
      if (s.doc.done) break;
    }
    const userTools = toolsFor(runtime.domain, 'user').map((t) => t.name);
    const text = JSON.stringify(seen);
    expect(userTools.length).toBeGreaterThan(0);
    for (const name of userTools) expect(text).not.toContain(name);
    expect(text).not.toContain('writes');
    expect(text).not.toContain('reference');
    expect(new Set(seen.map((m) => m.role))).toEqual(new Set(['assistant', 'user', 'tool']));
    for (const m of seen) {
      if (m.role === 'user') expect(Object.keys(m).sort()).toEqual(['audio', 'content', 'role']);
      if (m.role === 'tool')
        expect(Object.keys(m).sort()).toEqual(['content', 'error', 'name', 'role', 'tool_call_id']);
    }
  });

  it('puts the degraded caller audio in observations as base64 WAV when the channel is on', async () => {
    await start({
      channel: { tts: espeakTts(), renderer: nodeGraphRenderer, preset: 'control', dropout: 0, bargeIn: 0 },
    });
    const r = await post('/reset', { task_id: 'carrier-pay-balance-1', seed: 2 });
    const user = r.doc.observation.messages.find((m: any) => m.role === 'user');
    expect(user.audio).toMatchObject({ format: 'wav', sample_rate_hz: 16000 });
    const wav = Buffer.from(user.audio.data, 'base64');
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(wav.readUInt32LE(24)).toBe(16000);
    // 16-bit mono: data bytes / 32 = ms (44-byte canonical header).
    expect(Math.abs((wav.length - 44) / 32 - user.audio.duration_ms)).toBeLessThan(1);
    expect(user.audio.duration_ms).toBeGreaterThan(500);
  }, 60_000);

  it('reports capacity and idle timeouts the way OpenEnv does', async () => {
    await start({ maxSessions: 1, sessionTimeoutS: 0.2 });
    const a = socket(server!.url);
    await a.opened;
    const b = socket(server!.url);
    expect(await b.next()).toEqual({
      type: 'error',
      data: {
        message: 'Server at capacity: 1/1 sessions active. Cannot accept new connections.',
        code: 'CAPACITY_REACHED',
        active_sessions: 1,
        max_sessions: 1,
      },
    });
    await b.closed;
    expect(await post('/reset', {})).toEqual({
      status: 503,
      doc: { detail: 'Server at capacity: 1/1 sessions active. Cannot accept new connections.' },
    });
    const reset = await a.ask({ type: 'reset', data: { seed: 0 } });
    expect(reset.type).toBe('observation');
    expect(reset.data.observation.metadata.task_id).toBe(runtime.domain.tasks[0]!.id);
    expect(await a.next()).toEqual({
      type: 'error',
      data: { message: 'session closed after 0.2 s idle', code: 'SESSION_ERROR' },
    });
    await a.closed;
    expect(server!.sessions()).toBe(0);
  });

  it('answers malformed requests with OpenEnv error shapes', async () => {
    await start();
    expect(await post('/reset', '{nope')).toMatchObject({ status: 422, doc: { detail: [{ type: 'json_invalid' }] } });
    expect(await post('/reset', { task_id: 'nope' })).toEqual({
      status: 422,
      doc: { detail: [{ type: 'value_error', loc: ['body', 'task_id'], msg: 'unknown task nope', input: 'nope' }] },
    });
    expect(await post('/step', { action: { content: 'hi' } })).toMatchObject({
      status: 422,
      doc: { detail: [{ type: 'missing', loc: ['body', 'episode_id'] }] },
    });
    expect(await post('/step', { episode_id: 'x' })).toMatchObject({
      status: 422,
      doc: { detail: [{ type: 'missing', loc: ['body', 'action'], msg: 'Field required' }] },
    });
    const id = (await post('/reset', {})).doc.observation.metadata.episode_id;
    expect(await post('/step', { episode_id: id, action: {} })).toMatchObject({
      status: 422,
      doc: { detail: [{ msg: 'an action needs content or tool_calls' }] },
    });
    expect((await post('/nowhere', {})).status).toBe(404);
    const st = await fetch(`${server!.url}/state?episode_id=${id}`);
    expect(await st.json()).toMatchObject({ episode_id: id, step_count: 0, done: false });
    // MCP tools/call on the HTTP episode: one agent tool call as the whole turn.
    const call = await post('/mcp', {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'find_customer_by_phone', arguments: { phone: '0' }, session_id: id },
    });
    expect(call.doc).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: true, _meta: { reward: -0.1 } } });
    expect((await post('/mcp', { jsonrpc: '2.0', id: 8, method: 'nope' })).doc).toEqual({
      jsonrpc: '2.0',
      id: 8,
      error: { code: -32601, message: 'Method not found: nope', data: null },
    });
  });

  it('lists and calls the agent tools over MCP on the WebSocket session', async () => {
    await start();
    const c = socket(server!.url);
    await c.opened;
    const list = await c.ask({ type: 'mcp', data: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(list.type).toBe('mcp');
    expect(list.data.result.tools.map((t: any) => t.name)).toEqual(runtime.domain.tools.map((t) => t.name));
    expect(list.data.result.tools[0].inputSchema).toMatchObject({ type: 'object', required: ['phone'] });
    await c.ask({ type: 'reset', data: { task_id: 'carrier-pay-balance-1' } });
    const call = await c.ask({
      type: 'mcp',
      data: {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'find_customer_by_phone', arguments: { phone: '13812345678' } },
      },
    });
    expect(call.data).toMatchObject({ jsonrpc: '2.0', id: 2, result: { isError: false, _meta: { reward: 0.1 } } });
    expect(call.data.result.content[0].type).toBe('text');
    expect((await c.ask({ type: 'state' })).data).toMatchObject({ step_count: 1, task_id: 'carrier-pay-balance-1' });
    c.ws.close();
  });

  it('requires the bearer token when one is set, on HTTP and on the WebSocket', async () => {
    await start({ guard: { tokens: ['s3cret'] } });
    const res = await fetch(`${server!.url}/health`);
    expect([res.status, await res.json()]).toEqual([
      401,
      { detail: 'missing bearer token (Authorization: Bearer <token>)' },
    ]);
    const ok = await fetch(`${server!.url}/health`, { headers: { authorization: 'Bearer s3cret' } });
    expect(ok.status).toBe(200);
    const refused = socket(server!.url);
    await expect(refused.opened).rejects.toThrow(/401/);
    const admitted = socket(server!.url, { authorization: 'Bearer s3cret' });
    await admitted.opened;
    expect((await admitted.ask({ type: 'state' })).data).toMatchObject({ episode_id: null, step_count: 0 });
    admitted.ws.close();
  });
});

describe('switchboard serve (CLI)', () => {
  it('serves OpenEnv by default, on 127.0.0.1, with the token from the environment', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn('node', ['bin/switchboard.mjs', 'serve', '--domain', 'carrier', '--port', '0'], {
      env: { ...process.env, SWITCHBOARD_SERVE_TOKEN: 'tok' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const url = await new Promise<string>((ok, ko) => {
        let err = '';
        child.stderr!.on('data', (d) => {
          err += String(d);
          const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
          if (m) ok(m[1]!);
        });
        child.once('exit', () => ko(new Error(`serve exited: ${err}`)));
      });
      expect((await fetch(`${url}/health`)).status).toBe(401);
      const res = await fetch(`${url}/reset`, {
        method: 'POST',
        headers: { authorization: 'Bearer tok' },
        body: JSON.stringify({ task_id: 'carrier-bill-inquiry-1' }),
      });
      const doc = (await res.json()) as any;
      expect(doc.observation.metadata.task_id).toBe('carrier-bill-inquiry-1');
      expect(doc.done).toBe(false);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
