/**
 * Issue 17: the full-duplex timeline in the trainer paths — `rollout --duplex`, `POST /rollout`
 * and episodes of `serve --duplex` (OpenEnv and the original protocol). Every sample and the last
 * observation carry the call's interaction metrics as a separate field; the task reward is the
 * same as without the timeline. The metrics of a served episode equal those of the same call run
 * by the episode loop with the reference agent (same seed, same channel).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { EpisodeChannel } from '../../src/core/rollout/channel-step.ts';
import { subsetChannel, subsetSettings } from '../../src/core/duplex/turn-taking.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startOpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { startEnvServer } from '../../src/adapters/node/env-server.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { capture } from '../fixtures/cli-io.ts';
import { startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { fakePolicy, type Listen } from '../fixtures/fake-policy.ts';
import { postRollout, referenceActions } from '../fixtures/trainer-client.ts';

const TASK = 'carrier-pay-balance-1';
/** Â for rewards [1, 0]: ±0.5 / (sample std √(1/2) + 1e-6). */
const A = 0.5 / (Math.sqrt(0.5) + 1e-6);
const NONE = { yield_total: 0, backchannel_total: 0, vocal_tic_total: 0, non_directed_total: 0 };
const NULLS = {
  yield_latency_mean: null,
  yield_rate: null,
  selectivity_backchannel: null,
  selectivity_vocal_tic: null,
  selectivity_non_directed: null,
};
/**
 * Sample 0 plays the reference solution: three answered caller turns, the first after the agent's
 * 0.6 s wait, the second after one tool call (0.6 s + 0.4 s), the third after two (0.6 s + 2 × 0.4 s)
 * → L_R = (0.6 + 1.0 + 1.4) / 3 = 1.0 s. Sample 1 greets, answers once after 0.6 s and hangs up.
 */
const METRICS = [
  { response_latency_mean: 1, response_rate: 1, agent_interruption_rate: 0, response_total: 3 },
  { response_latency_mean: 0.6, response_rate: 1, agent_interruption_rate: 0, response_total: 1 },
];

let runtime: DomainRuntime;
let policy: TestServer;
const listen: Listen = { task: TASK, heard: [] };

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
  policy = await startOpenAiServer(fakePolicy(runtime.domain, 'carrier-lora', listen));
});
afterAll(async () => {
  await policy.close();
});

/* eslint-disable @typescript-eslint/no-explicit-any */
function checkMetrics(m: any, want: (typeof METRICS)[number]) {
  const { response_total, response_latency_mean, ...rest } = want;
  expect(m.response_latency_mean).toBeCloseTo(response_latency_mean, 12);
  expect({ ...m, response_latency_mean: 0 }).toEqual({
    ...NULLS,
    ...rest,
    response_latency_mean: 0,
    counts: { n_simulations: 1, response_total, agent_interrupts_count: 0, ...NONE },
  });
}

function checkGroup(g: any) {
  expect([g.task_id, g.k, g.informative, g.mean_reward]).toEqual([TASK, 2, true, 0.5]);
  expect(g.samples.map((s: any) => [s.sample_index, s.final_reward, s.outcome])).toEqual([
    [0, 1, 1],
    [1, 0, 0],
  ]);
  expect(g.samples[0].advantage).toBeCloseTo(A, 12);
  expect(g.samples[1].advantage).toBeCloseTo(-A, 12);
  g.samples.forEach((s: any, i: number) => checkMetrics(s.interaction_metrics, METRICS[i]!));
}

const clean = (): EpisodeChannel => ({
  tts: espeakTts(),
  renderer: nodeGraphRenderer,
  preset: 'clean',
  dropout: 0,
  bargeIn: 0,
});

describe('duplex in the trainer paths', () => {
  it('rollout --duplex: rewards and advantages as without it; each sample carries its interaction metrics', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-rollout-duplex-'));
    const out = join(dir, 'groups.jsonl');
    const args = ['rollout', '--domain', 'carrier', '--endpoint', policy.url, '--model', 'carrier-lora', '--k', '2'];
    const io = capture();
    const code = await main([...args, '--task-ids', TASK, '--policy-version', 's1', '--duplex', '--out', out], io);
    expect(code, io.stderr).toBe(0);
    checkGroup(JSON.parse(readFileSync(out, 'utf8')));
    // Turn-based on the same clean channel: the same rewards, and no metrics field.
    const plain = join(dir, 'plain.jsonl');
    const flags = ['--task-ids', TASK, '--policy-version', 's1', '--preset', 'clean', '--out', plain];
    expect(await main([...args, ...flags], capture())).toBe(0);
    const g = JSON.parse(readFileSync(plain, 'utf8'));
    expect(g.samples.map((s: any) => [s.final_reward, 'interaction_metrics' in s])).toEqual([
      [1, false],
      [0, false],
    ]);
  }, 180_000);

  it('POST /rollout of serve --duplex: the same groups and metrics', async () => {
    const server = await startOpenEnvServer({
      runtime,
      user: () => new ScriptedUser(),
      channel: clean(),
      duplex: {},
    });
    try {
      const lines = await postRollout(server.url, {
        base_urls: [policy.url],
        model: 'carrier-lora',
        flavor: 'openai',
        k: 2,
        task_ids: [TASK],
        policy_version: 's1',
      });
      expect(lines.map((l) => l.type)).toEqual(['group', 'summary']);
      checkGroup(lines[0]);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('serve --subset backchannel, both protocols: the reference plan scores 1 and the last observation has the metrics of the same call in the episode loop', async () => {
    const settings = subsetSettings('backchannel');
    const channel = subsetChannel(clean(), 'backchannel');
    const task = runtime.domain.tasks.find((t) => t.id === TASK)!;
    const seed = 3;
    const local = await runEpisode({
      runtime,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed,
      clock: steppingClock(runtime.domain.now, 1000),
      channel,
      duplex: settings,
    });
    const want = local.duplex!.metrics as any;
    // Backchannels over the replies, all talked through; three answered caller turns (L_R as above).
    expect([want.counts.backchannel_total, want.selectivity_backchannel, want.agent_interruption_rate]).toEqual([
      4, 1, 0,
    ]);
    expect([want.counts.response_total, want.response_rate]).toEqual([3, 1]);
    expect(want.response_latency_mean).toBeCloseTo(1, 12);
    const steps = referenceActions(runtime.domain, task);
    const post = async (url: string, path: string, body: unknown) =>
      (await (await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as any;
    // OpenEnv: metadata.interaction_metrics on the last observation only.
    const oe = await startOpenEnvServer({ runtime, user: () => new ScriptedUser(), channel, duplex: settings });
    try {
      const r = await post(oe.url, '/reset', { task_id: TASK, seed });
      expect(r.observation.metadata.interaction_metrics).toBeNull();
      const id = r.observation.metadata.episode_id;
      let last: any = r;
      const sent = [...steps];
      while (!last.done && sent.length) last = await post(oe.url, '/step', { episode_id: id, action: sent.shift() });
      expect(last.done).toBe(true);
      expect(last.observation.metadata.reward.task_reward).toBe(1);
      expect(last.observation.metadata.interaction_metrics).toEqual(want);
    } finally {
      await oe.close();
    }
    // The original protocol: observation.interaction_metrics.
    const sb = await startEnvServer({ runtime, user: () => new ScriptedUser(), duplex: { settings, channel } });
    try {
      const r = await post(sb.url, '/reset', { task_id: TASK, seed });
      expect(r.observation.interaction_metrics).toBeNull();
      let obs: any = r.observation;
      const sent = [...steps];
      while (!obs.done && sent.length)
        obs = (await post(sb.url, '/step', { episode_id: r.episode_id, message: sent.shift() })).observation;
      expect([obs.done, obs.reward_info.reward]).toEqual([true, 1]);
      expect(obs.interaction_metrics).toEqual(want);
    } finally {
      await sb.close();
    }
  }, 180_000);
});
