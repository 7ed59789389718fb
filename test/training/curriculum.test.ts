/**
 * `GET /curriculum` on `serve` (both protocols): the sampling weights an evolve run wrote, read
 * afresh on every request, so a trainer can ask what to sample next.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startEnvServer } from '../../src/adapters/node/env-server.ts';
import { startOpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { evolve, type SamplingWeights } from '../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { capture } from '../fixtures/cli-io.ts';

let runtime: DomainRuntime;
let dir: string;
let rounds: SamplingWeights[];

beforeAll(async () => {
  const domain = await loadBuiltinDomain('carrier');
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  dir = await mkdtemp(join(tmpdir(), 'sb-curriculum-'));
  const ids = ['carrier-pay-balance-1', 'carrier-wallet-pay-1', 'carrier-bill-inquiry-1', 'carrier-pay-split-limit-1'];
  const { report } = await evolve({
    runtime,
    tasks: domain.tasks.filter((t) => ids.includes(t.id)),
    agent: () => new NoisyAgent({ p: 0.5 }),
    user: () => new ScriptedUser(),
    k: 4,
    rounds: 2,
    seed: 0,
    concurrency: 2,
    clock: () => steppingClock(domain.now, 1000),
  });
  rounds = report.rounds.map((r) => r.weights);
  await writeFile(join(dir, 'weights.json'), JSON.stringify(rounds[0]));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('GET /curriculum', () => {
  it('OpenEnv protocol: the file as written, its first tasks with ?top, the next round once rewritten, errors', async () => {
    const server = await startOpenEnvServer({
      runtime,
      user: () => new ScriptedUser(),
      weights: join(dir, 'weights.json'),
    });
    try {
      const first = await get(`${server.url}/curriculum`);
      expect(first).toEqual({ status: 200, body: rounds[0] });
      // Boundary tasks first (those with σ > 0), every weight a probability, the sum 1.
      const tasks = rounds[0]!.tasks;
      expect(tasks.map((t) => t.label)).toEqual(
        [...tasks.map((t) => t.label)].sort((a, b) => Number(b === 'boundary') - Number(a === 'boundary')),
      );
      expect(tasks.reduce((a, t) => a + t.weight, 0)).toBeCloseTo(1, 12);
      const top = await get(`${server.url}/curriculum?top=2`);
      expect(top.body).toEqual({ ...rounds[0], tasks: tasks.slice(0, 2) });
      // evolve writes the next round's weights: the next request serves them.
      await writeFile(join(dir, 'weights.json'), JSON.stringify(rounds[1]));
      expect((await get(`${server.url}/curriculum`)).body).toEqual(rounds[1]);
      expect(rounds[1]!.round).toBe(1);
      expect(await get(`${server.url}/curriculum?top=x`)).toEqual({
        status: 400,
        body: { detail: 'top: a whole number, got "x"' },
      });
      await writeFile(join(dir, 'weights.json'), JSON.stringify({ ...rounds[1], bins: [{ id: 'p=0' }] }));
      const broken = await get(`${server.url}/curriculum`);
      expect(broken.status).toBe(503);
      expect(broken.body.detail).toBe(
        `${join(dir, 'weights.json')}: bins[0].lo: Invalid input: expected number, received undefined`,
      );
    } finally {
      await server.close();
      await writeFile(join(dir, 'weights.json'), JSON.stringify(rounds[0]));
    }
    const none = await startOpenEnvServer({ runtime, user: () => new ScriptedUser() });
    try {
      expect(await get(`${none.url}/curriculum`)).toEqual({
        status: 404,
        body: { detail: 'no curriculum: start serve with --weights <weights.json or evolve --out folder>' },
      });
    } finally {
      await none.close();
    }
  });

  it('switchboard protocol: the same document; serve refuses a bad --weights before listening (exit 2)', async () => {
    const server = await startEnvServer({
      runtime,
      user: () => new ScriptedUser(),
      weights: join(dir, 'weights.json'),
    });
    try {
      expect(await get(`${server.url}/curriculum?top=1`)).toEqual({
        status: 200,
        body: { ...rounds[0], tasks: rounds[0]!.tasks.slice(0, 1) },
      });
    } finally {
      await server.close();
    }
    await writeFile(join(dir, 'bad.json'), '{"format": "switchboard.sampling-weights", "version": 2}');
    const io = capture();
    expect(await main(['serve', '--domain', 'carrier', '--port', '0', '--weights', join(dir, 'bad.json')], io)).toBe(2);
    expect(io.stderr).toBe(`switchboard: ${join(dir, 'bad.json')}: version: Invalid input: expected 1\n`);
  });
});
