import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startEnvServer, type EnvServer } from '../../src/adapters/node/env-server.ts';

let runtime: DomainRuntime;
let server: EnvServer | undefined;

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(extra: { maxEpisodes?: number; idleMs?: number; maxBodyBytes?: number } = {}) {
  server = await startEnvServer({ runtime, user: () => new ScriptedUser(), ...extra });
  return server;
}

async function post(path: string, body: unknown): Promise<{ status: number; doc: any }> {
  const res = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, doc: await res.json() };
}

describe('switchboard serve over HTTP', () => {
  it('plays a whole carrier episode driven by the trainer, with per-step and final rewards', async () => {
    await start();
    const task = runtime.domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const reset = await post('/reset', { task_id: task.id, seed: 7 });
    expect(reset.status).toBe(200);
    const id = reset.doc.episode_id as string;
    // The server greets for the agent; the first observation is the caller's opening request.
    expect(reset.doc.observation.turns.map((t: any) => t.role)).toEqual(['assistant', 'user']);
    expect(reset.doc.observation.turns[1].text).toBe(task.user_scenario.requests![0]);
    expect(reset.doc.observation).toMatchObject({ done: false, reward: 0 });

    const rewards: number[] = [];
    let last: any;
    // Drive it with the reference plan, tool calls in OpenAI form (arguments as JSON text).
    for (const step of referencePlan(runtime.domain, task).slice(1)) {
      const message =
        'say' in step
          ? { content: step.say }
          : {
              content: null,
              tool_calls: [
                {
                  id: step.call.id,
                  type: 'function',
                  function: { name: step.call.name, arguments: JSON.stringify(step.call.arguments) },
                },
              ],
            };
      const r = await post('/step', { episode_id: id, message });
      expect(r.status).toBe(200);
      rewards.push(r.doc.observation.reward);
      last = r.doc.observation;
      if (last.done) break;
    }
    expect(last.done).toBe(true);
    expect(last.termination).toBe('user_stop');
    expect(last.reward_info.reward).toBe(1);
    const calls = referencePlan(runtime.domain, task).filter((s) => 'call' in s).length;
    expect(rewards.filter((r) => Math.abs(r - 0.1) < 1e-12)).toHaveLength(calls);
    expect(rewards.reduce((a, b) => a + b, 0)).toBeCloseTo(1 + 0.1 * calls, 12);

    const state = await (await fetch(`${server!.url}/state?episode_id=${id}`)).json();
    expect(state).toMatchObject({ episode_id: id, task_id: task.id, seed: 7, done: true });
    expect((await post('/step', { episode_id: id, message: { content: 'hello?' } })).status).toBe(409);
    expect((await post('/close', { episode_id: id })).doc).toEqual({ closed: true });
    expect(server!.episodes()).toBe(0);
  });

  it('turns a malformed tool call into an error tool message and a −0.1 step', async () => {
    await start();
    const { doc } = await post('/reset', { task_id: 'carrier-pay-balance-1' });
    const r = await post('/step', {
      episode_id: doc.episode_id,
      message: {
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'find_customer_by_phone', arguments: '{"phone": 138' } },
        ],
      },
    });
    expect(r.doc.observation.turns.map((t: any) => t.role)).toEqual(['assistant', 'tool']);
    expect(r.doc.observation.turns[1]).toMatchObject({
      role: 'tool',
      error: true,
      content: 'Error: invalid arguments for find_customer_by_phone: not valid JSON: {"phone": 138',
    });
    expect(r.doc.observation.reward).toBeCloseTo(-0.1, 12);
    // JSON that is not an object is kept verbatim too (not rewritten to {}).
    const n = await post('/step', {
      episode_id: doc.episode_id,
      message: {
        tool_calls: [{ id: 'b', type: 'function', function: { name: 'find_customer_by_phone', arguments: '[1]' } }],
      },
    });
    expect(n.doc.observation.turns[0].tool_calls).toEqual([
      { id: 'b', name: 'find_customer_by_phone', arguments: {}, raw_arguments: '[1]' },
    ]);
    expect(n.doc.observation.turns[1].content).toBe(
      'Error: invalid arguments for find_customer_by_phone: expected an object, got an array: [1]',
    );
  });

  it('answers bad requests with clear 4xx errors', async () => {
    await start({ maxEpisodes: 1, maxBodyBytes: 2048 });
    expect(await post('/reset', '{not json')).toEqual({ status: 400, doc: { error: 'body is not valid JSON' } });
    expect(await post('/reset', { seed: 1 })).toEqual({ status: 400, doc: { error: 'task_id: Invalid input' } });
    expect(await post('/reset', { task_id: 'nope' })).toEqual({ status: 404, doc: { error: 'unknown task nope' } });
    expect(await post('/step', { episode_id: 'x', message: {} })).toEqual({
      status: 404,
      doc: { error: 'unknown episode x' },
    });
    expect((await post('/nowhere', {})).status).toBe(404);
    expect((await post('/reset', { task_id: 'carrier-pay-balance-1' })).status).toBe(200);
    expect(await post('/reset', { task_id: 'carrier-pay-balance-1' })).toEqual({
      status: 429,
      doc: { error: 'too many live episodes (1); close some first' },
    });
    expect((await post('/step', { episode_id: 'x', message: { content: 'x'.repeat(4096) } })).status).toBe(413);
  });

  it('frees an idle episode after the timeout', async () => {
    await start({ idleMs: 50 });
    await post('/reset', { task_id: 'carrier-change-plan-1' });
    expect(server!.episodes()).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(server!.episodes()).toBe(0);
  });

  it('speaks the same operations over WebSocket', async () => {
    await start();
    const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/ws`);
    await new Promise((ok) => ws.once('open', ok));
    const ask = (msg: unknown) =>
      new Promise<any>((ok) => {
        ws.once('message', (d) => ok(JSON.parse(String(d))));
        ws.send(JSON.stringify(msg));
      });
    const reset = await ask({ op: 'reset', task_id: 'carrier-change-plan-1', seed: 3 });
    expect(reset.op).toBe('reset');
    const state = await ask({ op: 'state', episode_id: reset.episode_id });
    expect(state).toMatchObject({ op: 'state', task_id: 'carrier-change-plan-1', seed: 3, done: false });
    expect(await ask({ op: 'jump' })).toEqual({
      op: 'jump',
      status: 400,
      error: 'unknown op "jump" (reset, step, state, close)',
    });
    expect(await ask({ op: 'close', episode_id: reset.episode_id })).toEqual({ op: 'close', closed: true });
    ws.close();
  });
  it('survives a malformed WebSocket frame, answers in order and echoes ids', async () => {
    await start({ maxBodyBytes: 1024 });
    const bad = new WebSocket(`${server!.url.replace('http', 'ws')}/ws`);
    await new Promise((ok) => bad.once('open', ok));
    const closed = new Promise<number>((ok) => bad.once('close', (code) => ok(code)));
    bad.send('z'.repeat(4096)); // over the payload limit: this socket is closed, not the server
    expect(await closed).toBe(1009);
    expect((await fetch(`${server!.url}/health`)).status).toBe(200);

    const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/ws`);
    await new Promise((ok) => ws.once('open', ok));
    const answers: any[] = [];
    const done = new Promise<void>((ok) =>
      ws.on('message', (d) => {
        answers.push(JSON.parse(String(d)));
        if (answers.length === 3) ok();
      }),
    );
    ws.send(JSON.stringify({ op: 'reset', id: 1, task_id: 'carrier-change-plan-1' }));
    ws.send(JSON.stringify({ op: 'state', id: 2, episode_id: 'nope' }));
    ws.send(JSON.stringify({ op: 'close', id: 3, episode_id: 'nope' }));
    await done;
    expect(answers.map((a) => [a.id, a.op, a.status ?? 200])).toEqual([
      [1, 'reset', 200],
      [2, 'state', 404],
      [3, 'close', 404],
    ]);
    ws.close();
    const st = await fetch(`${server!.url}/state`);
    expect([st.status, await st.json()]).toEqual([400, { error: 'episode_id: required (GET /state?episode_id=…)' }]);
  });
});
