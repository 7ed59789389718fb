/**
 * Environment overhead per agent turn through the OpenEnv server (issue 14): a local no-op
 * policy (it always says the same sentence, no model) drives carrier episodes with the scripted
 * caller; each step is one agent turn and the caller's answer. Prints p50 / p99 of the step round
 * trip over HTTP (`POST /step`, keep-alive) and over the WebSocket, against the target p50 ≤ 2 ms,
 * then 64 sessions stepping at once on the WebSocket: errors (must be 0) and latency.
 */
import WebSocket from 'ws';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { ScriptedUser } from '../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../src/adapters/node/load-domain.ts';
import { startOpenEnvServer } from '../src/adapters/node/openenv-server.ts';

const TARGET_P50_MS = 2;
const ACTION = { content: '不好意思，能再说一遍吗？' };
const MAX_STEPS = 400;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** A WebSocket session that answers messages in order. */
async function wsSession(url: string) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/ws`);
  await new Promise<void>((ok, ko) => {
    ws.once('open', () => ok());
    ws.once('error', ko);
  });
  const waiting: ((m: { type: string; data: { done?: boolean } }) => void)[] = [];
  ws.on('message', (d) => waiting.shift()?.(JSON.parse(String(d))));
  return {
    ask: (msg: unknown) =>
      new Promise<{ type: string; data: { done?: boolean; message?: string } }>((ok) => {
        waiting.push(ok);
        ws.send(JSON.stringify(msg));
      }),
    close: () => ws.close(),
  };
}

/** Lines of the OpenEnv benchmark. */
export async function openEnvLines(steps = 2000, sessions = 64, stepsPerSession = 30): Promise<string[]> {
  const runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
  const server = await startOpenEnvServer({
    runtime,
    user: () => new ScriptedUser(),
    maxSteps: MAX_STEPS,
    maxSessions: sessions + 2,
  });
  const lines: string[] = [];
  const line = (name: string, ms: number[]) => {
    const p50 = pct(ms, 50);
    lines.push(
      `  ${name.padEnd(44)} p50 ${p50.toFixed(3)} ms  p99 ${pct(ms, 99).toFixed(3)} ms  (${ms.length} steps)  ·  target p50 ≤ ${TARGET_P50_MS} ms  ratio ${(p50 / TARGET_P50_MS).toFixed(2)}`,
    );
  };
  try {
    // HTTP: POST /step on one episode, reset when it ends.
    const post = async (path: string, body: unknown) =>
      (await (await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as {
        done: boolean;
        observation: { metadata: { episode_id: string } };
      };
    let id = (await post('/reset', { seed: 0 })).observation.metadata.episode_id;
    const http: number[] = [];
    for (let i = 0; i < steps + 50; i++) {
      const t0 = performance.now();
      const r = await post('/step', { episode_id: id, action: ACTION });
      if (i >= 50) http.push(performance.now() - t0); // first 50: warm-up
      if (r.done) id = (await post('/reset', { seed: i, episode_id: id })).observation.metadata.episode_id;
    }
    line('HTTP POST /step (no-op policy, one session)', http);

    // WebSocket: the same on one session.
    const s = await wsSession(server.url);
    await s.ask({ type: 'reset', data: { seed: 0 } });
    const ws: number[] = [];
    for (let i = 0; i < steps + 50; i++) {
      const t0 = performance.now();
      const r = await s.ask({ type: 'step', data: ACTION });
      if (i >= 50) ws.push(performance.now() - t0);
      if (r.data.done) await s.ask({ type: 'reset', data: { seed: i } });
    }
    s.close();
    line('WebSocket step (no-op policy, one session)', ws);

    // 64 sessions at once.
    const all: number[] = [];
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: sessions }, async (_, k) => {
        const c = await wsSession(server.url);
        const first = await c.ask({ type: 'reset', data: { seed: k } });
        if (first.type !== 'observation') errors++;
        for (let i = 0; i < stepsPerSession; i++) {
          const a = performance.now();
          const r = await c.ask({ type: 'step', data: ACTION });
          all.push(performance.now() - a);
          if (r.type !== 'observation') errors++;
          else if (r.data.done) await c.ask({ type: 'reset', data: { seed: k + 1000 } });
        }
        c.close();
      }),
    );
    const wall = performance.now() - t0;
    lines.push(
      `  ${`${sessions} WebSocket sessions at once`.padEnd(44)} p50 ${pct(all, 50).toFixed(3)} ms  p99 ${pct(all, 99).toFixed(3)} ms  (${all.length} steps, ${Math.round((all.length / wall) * 1000)} steps/s)  ·  errors ${errors}`,
    );
  } finally {
    await server.close();
  }
  return lines;
}
