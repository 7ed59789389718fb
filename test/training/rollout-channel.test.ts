/**
 * Issue 14: token-faithful rollouts with the phone channel on. The caller is spoken (espeak-ng),
 * degraded (preset `regular`) and the policy endpoint hears the degraded 16 kHz WAV: the fake
 * policy decodes what it receives and only plays the task when it hears audio, so the exact
 * rewards below also prove the audio reached it. Checked: the wire shape of the requests, the
 * recorded requests (audio by path), the bytes heard against the stored files (CLI) or the
 * group's `audio` map (HTTP), rewards, advantages and loss masks. Also `groups` with the same
 * channel flags (conversation level).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startOpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { capture } from '../fixtures/cli-io.ts';
import { startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { fakePolicy, type HeardPart, type Listen } from '../fixtures/fake-policy.ts';
import { postRollout } from '../fixtures/trainer-client.ts';

const TASK = 'carrier-pay-balance-1';
const PATH = new RegExp(`^audio/carrier/${TASK}/\\d+-\\d+/turn-\\d{3}\\.degraded\\.wav$`);
/** Â for rewards [1, 0]: ±0.5 / (sample std √(1/2) + 1e-6). */
const A = 0.5 / (Math.sqrt(0.5) + 1e-6);

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

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/**
 * Rewards, advantages and token fields of a K = 2 group (`tokens`: the endpoint returned ids, vLLM
 * flavor; else they are null and marked unavailable); returns every audio path its requests reference.
 */
function checkGroup(g: any, tokens: boolean): Set<string> {
  expect([g.task_id, g.k, g.informative, g.mean_reward]).toEqual([TASK, 2, true, 0.5]);
  expect(g.samples.map((s: any) => [s.sample_index, s.final_reward, s.outcome])).toEqual([
    [0, 1, 1],
    [1, 0, 0],
  ]);
  expect(g.samples[0].advantage).toBeCloseTo(A, 12);
  expect(g.samples[1].advantage).toBeCloseTo(-A, 12);
  const paths = new Set<string>();
  for (const s of g.samples) {
    s.turns.forEach((t: any, k: number) => {
      if (tokens) {
        expect(t.prompt_token_ids).toEqual(t.request.messages.map((_: unknown, i: number) => 1000 + i));
        expect(t.completion_token_ids).toEqual([500 + k, 600 + k]);
        expect(t.loss_mask).toEqual([...t.prompt_token_ids.map(() => 0), 1, 1]);
      } else
        expect([t.tokens, t.prompt_token_ids, t.completion_token_ids, t.loss_mask]).toEqual([
          'unavailable',
          null,
          null,
          null,
        ]);
      // The recorded request: every caller message is a list of audio parts by path, no transcript.
      for (const m of t.request.messages.filter((m: any) => m.role === 'user')) {
        expect(Array.isArray(m.content)).toBe(true);
        for (const p of m.content) {
          expect(Object.keys(p)).toEqual(['type', 'audio']);
          expect(p.type).toBe('audio');
          expect(p.audio).toMatch(PATH);
          paths.add(p.audio);
        }
      }
    });
    // Every caller turn the agent answered was heard as audio.
    expect(s.turns[1].request.messages.filter((m: any) => m.role === 'user').length).toBeGreaterThan(0);
  }
  return paths;
}

/** Audio parts the policy heard since request `from`; every user part was 16 kHz mono 16-bit audio on `wire`. */
function heardAudio(from: number, wire: 'audio_url' | 'input_audio'): Set<string> {
  const parts = listen.heard.slice(from).flat() as HeardPart[];
  expect(parts.length).toBeGreaterThan(0);
  const out = new Set<string>();
  for (const p of parts) {
    expect(p.kind).toBe('audio');
    if (p.kind !== 'audio') continue;
    expect([p.wire, p.rate, p.channels, p.bits]).toEqual([wire, 16_000, 1, 16]);
    out.add(b64(p.bytes));
  }
  return out;
}

describe('rollout with the phone channel', () => {
  it('CLI: the policy hears the degraded WAV files the requests reference; exact rewards and advantages', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-rollout-channel-'));
    const out = join(dir, 'groups.jsonl');
    const from = listen.heard.length;
    const io = capture();
    const code = await main(
      [
        'rollout',
        '--domain',
        'carrier',
        '--endpoint',
        policy.url,
        '--model',
        'carrier-lora',
        '--k',
        '2',
        '--task-ids',
        TASK,
        '--policy-version',
        'step-1',
        '--preset',
        'regular',
        '--out',
        out,
      ],
      io,
    );
    expect(code, io.stderr).toBe(0);
    const g = JSON.parse(readFileSync(out, 'utf8'));
    const paths = checkGroup(g, true);
    // The files beside --out are exactly what the policy heard (bytes), and not the clean speech.
    const files = new Set<string>();
    for (const p of paths) {
      expect(existsSync(join(dir, p))).toBe(true);
      const degraded = readFileSync(join(dir, p));
      const clean = readFileSync(join(dir, p.replace('.degraded.wav', '.clean.wav')));
      expect(degraded.equals(clean)).toBe(false);
      files.add(degraded.toString('base64'));
    }
    expect(heardAudio(from, 'audio_url')).toEqual(files);
  }, 180_000);

  it('POST /rollout: each group line carries the audio its requests reference; the policy heard exactly those bytes', async () => {
    const server = await startOpenEnvServer({
      runtime,
      user: () => new ScriptedUser(),
      channel: { tts: espeakTts(), renderer: nodeGraphRenderer, preset: 'regular', dropout: 0, bargeIn: 0 },
    });
    try {
      const from = listen.heard.length;
      const lines = await postRollout(server.url, {
        base_urls: [policy.url],
        model: 'carrier-lora',
        flavor: 'openai',
        k: 2,
        task_ids: [TASK],
        policy_version: 'step-1',
      });
      expect(lines.map((l) => l.type)).toEqual(['group', 'summary']);
      const g = lines[0];
      // The openai flavor asks for no token ids: the fields are null and say so.
      const paths = checkGroup(g, false);
      // The map holds every clip the samples' messages reference (the requests' and the caller's
      // last words after the agent's last reply), each once.
      const inMessages = new Set<string>(
        g.samples.flatMap((s: any) =>
          s.messages.flatMap((m: any) => (m.role === 'user' ? m.content.map((p: any) => p.audio) : [])),
        ),
      );
      expect(Object.keys(g.audio).sort()).toEqual([...inMessages].sort());
      for (const p of paths) expect(inMessages.has(p)).toBe(true);
      // openai flavor: audio goes as input_audio parts, the bytes of the map's clips.
      expect(heardAudio(from, 'input_audio')).toEqual(new Set([...paths].map((p) => g.audio[p])));
    } finally {
      await server.close();
    }
  }, 180_000);
});

describe('groups with channel flags', () => {
  it('a model agent hears the degraded caller audio; rows reference the stored WAVs by path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-groups-channel-'));
    const out = join(dir, 'rows.jsonl');
    const io = capture();
    const before = listen.heard.length;
    const code = await main(
      [
        'groups',
        '--domain',
        'carrier',
        '--task-ids',
        TASK,
        '--k',
        '2',
        '--agent',
        `vllm:carrier-lora@${policy.url}`,
        '--preset',
        'regular',
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(code).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Trial 0 plays the task only because it heard audio; trial 1 hangs up.
    expect(rows.map((r) => [r.sample_index, r.final_reward])).toEqual([
      [0, 1],
      [1, 0],
    ]);
    for (const r of rows) {
      const users = r.messages.filter((m: any) => m.role === 'user');
      expect(users.length).toBeGreaterThan(0);
      for (const m of users)
        for (const p of m.content) {
          expect(p.type).toBe('audio');
          expect(existsSync(join(dir, p.audio))).toBe(true);
        }
    }
    // Every request after the greeting carried audio parts, and only audio, for each caller message.
    const heard = listen.heard.slice(before).filter((h) => h.length);
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.every((h) => h.every((p) => p.kind === 'audio' && p.rate === 16_000))).toBe(true);
  }, 90_000);

  it('refuses channel flags at turn level without --duplex (the continuations need the timeline)', async () => {
    const io = capture();
    expect(
      await main(
        ['groups', '--domain', 'carrier', '--granularity', 'turn', '--preset', 'clean', '--out', '/tmp/x.jsonl'],
        io,
      ),
    ).toBe(2);
    expect(io.stderr).toBe('switchboard: channel flags (--preset, --dropout, …) at --granularity turn need --duplex\n');
  });
});
