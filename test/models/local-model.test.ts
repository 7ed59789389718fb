import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env } from '@huggingface/transformers';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import {
  nodeLocalModel,
  readManifest,
  REPO_MODELS_DIR,
  type NodeLocalModel,
} from '../../src/adapters/node/local-model.ts';
import { nodeSileroVad } from '../../src/adapters/node/audio/silero-files.ts';
import { generationOptions } from '../../src/adapters/shared/local-model-engine.ts';
import { createLocalModelService, pickDevice } from '../../src/adapters/shared/local-model-service.ts';
import { LocalModelError, parseManifest, resolveLocalAgent } from '../../src/adapters/shared/local-model-manifest.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { agentFactory, UsageError } from '../../src/cli/participants.ts';
import { decodeWav, resample } from '../../src/core/audio/wav.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent } from '../../src/core/participants/model-agent.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { DEFAULT_SAMPLING } from '../../src/core/ports/model-client.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import { fetchModels, FetchError } from '../../scripts/models-fetch.ts';
import { writeTinyModel } from './tiny-model.ts';

const GREEDY = { ...DEFAULT_SAMPLING, temperature: 0, max_tokens: 32 };
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

let dir: string;
let local: NodeLocalModel;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-models-'));
  const files = writeTinyModel(dir, 'tiny-llama');
  const manifest = {
    version: 1,
    models: [
      {
        id: 'tiny-llama',
        repo: 'switchboard/tiny-llama',
        revision: 'test',
        task: 'text-generation',
        dtype: 'fp32',
        license: 'Apache-2.0',
        files: files.map((f) => ({ path: f, sha256: sha(readFileSync(join(dir, 'tiny-llama', f))) })),
      },
    ],
    agents: [],
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  local = nodeLocalModel('tiny-llama', dir);
});
afterAll(async () => {
  await local?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('on-device models (transformers.js, local files only)', () => {
  it('loads a tiny ONNX causal LM from the models folder and decodes greedily to exact tokens', async () => {
    const res = await local.client.complete({
      messages: [
        { role: 'system', content: 'policy' },
        { role: 'user', content: 'hello' },
      ],
      sampling: GREEDY,
    });
    // Prompt "<|im_start|> system policy <|im_end|> <|im_start|> user hello <|im_end|> <|im_start|> assistant":
    // unknown words are [UNK] (0).
    expect(res.prompt_token_ids).toEqual([1, 5, 0, 2, 1, 4, 0, 2, 1, 3]);
    expect(res.token_ids).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 2]);
    expect(res.text).toBe('Let me check.');
    expect(res.tool_calls).toEqual([{ id: 'call_0', name: 'get_bills', arguments: '{"customer_id":"C1002"}' }]);
    expect(res.tool_call_source).toBe('text');
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.usage).toEqual({ prompt_tokens: 10, completion_tokens: 11 });
    expect(local.client).toMatchObject({
      id: 'local:tiny-llama',
      kind: 'on-device',
      endpoint: null,
      model: 'tiny-llama',
    });
    // Local files only: the hub stays switched off.
    expect(env.allowRemoteModels).toBe(false);
    expect(env.localModelPath).toBe(`${dir}/`);
  });

  it('stops at max_tokens with finish_reason length and keeps a cut tool call', async () => {
    const res = await local.client.complete({
      messages: [{ role: 'user', content: 'hi' }],
      sampling: { ...GREEDY, max_tokens: 4 },
    });
    expect(res.token_ids).toEqual([7, 8, 9, 10]);
    expect(res.finish_reason).toBe('length');
    expect(res.text).toBe('Let me check.');
    expect(res.tool_calls).toEqual([{ id: 'call_0', name: '', arguments: '' }]);
  });

  it('runs as the agent of a carrier episode: its tool call really runs, then it reports and ends', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const t = await runEpisode({
      runtime,
      task,
      agent: new ModelAgent(local.client, { sampling: { temperature: 0, max_tokens: 32 } }),
      user: new ScriptedUser(),
      seed: 5,
      clock: steppingClock(0, 1),
    });
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('agent_stop');
    const shape = t.turns.map((x) =>
      x.role === 'tool'
        ? `tool:${x.name}:${x.error}`
        : x.role === 'assistant'
          ? `assistant:${x.text}|${(x.tool_calls ?? []).map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join(',')}`
          : `${x.role}`,
    );
    expect(shape).toEqual([
      'assistant:Let me check.|get_bills({"customer_id":"C1002"})',
      'tool:get_bills:false',
      'assistant:Your bill is paid.|',
    ]);
    const tool = t.turns[1]!;
    expect(tool.role === 'tool' && JSON.parse(tool.content).bills.length).toBe(4);
    expect(t.participants.agent_card).toMatchObject({ kind: 'on-device', model: 'tiny-llama', flavor: 'local' });
  });

  it('the model worker service loads the same files through the same code (WebGPU when navigator.gpu exists)', async () => {
    expect(pickDevice({ gpu: {} })).toBe('webgpu');
    expect(pickDevice({})).toBe('wasm');
    expect(pickDevice(undefined)).toBe('wasm');
    const service = createLocalModelService(() => 'cpu');
    await expect(service.generate({ messages: [], sampling: GREEDY })).rejects.toThrow(
      'no on-device model loaded: call load() first',
    );
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(await service.load(manifest, 'tiny-llama', dir)).toEqual({ device: 'cpu' });
    const g = await service.generate({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', name: 'get_bills', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'a', content: '{}' },
      ],
      sampling: GREEDY,
    });
    expect(g).toEqual({
      text: 'Your bill is paid. ###STOP###',
      token_ids: [17, 18, 19, 20, 21, 2],
      prompt_token_ids: [1, 4, 0, 2, 1, 3, 2, 1, 6, 0, 2, 1, 6],
      finish_reason: 'stop',
      transcripts: [],
    });
    await expect(service.load(manifest, 'nope', dir)).rejects.toThrow('unknown on-device agent "nope"');
    await service.dispose();
  });

  it('maps sampling: temperature 0 is greedy, above 0 samples with top_p / top_k', () => {
    expect(generationOptions(GREEDY)).toEqual({ max_new_tokens: 32, do_sample: false });
    expect(generationOptions({ temperature: 0.7, top_p: 0.9, top_k: 20, max_tokens: 8, seed: 1 })).toEqual({
      max_new_tokens: 8,
      do_sample: true,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
    });
  });

  it('refuses unknown ids and missing files with a message naming models:fetch', () => {
    expect(() => nodeLocalModel('nope', dir)).toThrow(
      new LocalModelError('unknown on-device agent "nope" (manifest has: tiny-llama)'),
    );
    const empty = mkdtempSync(join(tmpdir(), 'sb-models-empty-'));
    writeFileSync(join(empty, 'manifest.json'), readFileSync(join(dir, 'manifest.json')));
    expect(() => nodeLocalModel('tiny-llama', empty)).toThrow(
      `on-device agent "tiny-llama" needs files that are not in ${empty}: tiny-llama/config.json, tiny-llama/generation_config.json, tiny-llama/tokenizer.json, tiny-llama/tokenizer_config.json, tiny-llama/onnx/model.onnx. On a machine with internet run: npm run models:fetch -- tiny-llama`,
    );
    rmSync(empty, { recursive: true });
    // The repository's manifest is unpinned: the hint says to pin while fetching.
    expect(() => nodeLocalModel('qwen3-0.6b', REPO_MODELS_DIR)).toThrow(
      'On a machine with internet run: npm run models:fetch -- --pin qwen3-0.6b (the manifest does not pin them yet: --pin records their commit and sha256)',
    );
  });

  it('the CLI resolves --agent local:<id> through the manifest', async () => {
    const make = agentFactory('local:tiny-llama', { env: { SWITCHBOARD_MODELS: dir } });
    const agent = make();
    expect(agent.id).toBe('local:tiny-llama');
    expect(() => agentFactory('local:qwen3-0.6b', { env: { SWITCHBOARD_MODELS: dir } })).toThrow(UsageError);
    expect(() => agentFactory('local:qwen3-0.6b', { env: { SWITCHBOARD_MODELS: dir } })).toThrow(
      'unknown on-device agent "qwen3-0.6b" (manifest has: tiny-llama)',
    );
  });
});

describe('models/manifest.json', () => {
  it('parses, and every agent and usable model resolves', () => {
    const m = readManifest(REPO_MODELS_DIR);
    expect(m.models.map((x) => [x.id, x.task])).toEqual([
      ['qwen3-0.6b', 'text-generation'],
      ['whisper-base', 'automatic-speech-recognition'],
      ['moonshine-base', 'automatic-speech-recognition'],
      ['wav2vec2-base-960h', 'automatic-speech-recognition'],
      ['ultravox-v0.5-llama-3.2-1b', 'audio-text-to-text'],
      ['mms-tts-eng', 'text-to-speech'],
    ]);
    const r = (id: string) => {
      const a = resolveLocalAgent(m, id);
      return [a.asr?.id ?? null, a.llm?.id ?? null, a.audio?.id ?? null];
    };
    expect(r('whisper-base+qwen3-0.6b')).toEqual(['whisper-base', 'qwen3-0.6b', null]);
    expect(r('moonshine-base+qwen3-0.6b')).toEqual(['moonshine-base', 'qwen3-0.6b', null]);
    expect(r('wav2vec2-base-960h+qwen3-0.6b')).toEqual(['wav2vec2-base-960h', 'qwen3-0.6b', null]);
    expect(r('qwen3-0.6b')).toEqual([null, 'qwen3-0.6b', null]);
    expect(r('ultravox-v0.5-llama-3.2-1b')).toEqual([null, null, 'ultravox-v0.5-llama-3.2-1b']);
    expect(() => r('whisper-base')).toThrow('unknown on-device agent "whisper-base"');
    // A TTS model is a voice (--tts local:<id>), not an agent.
    expect(() => r('mms-tts-eng')).toThrow('unknown on-device agent "mms-tts-eng"');
  });

  it('rejects an agent that points at a model of the wrong task, and paths leaving the model folder', () => {
    const model = {
      id: 'a',
      repo: 'o/a',
      revision: 'main',
      task: 'automatic-speech-recognition',
      license: 'MIT',
      files: [{ path: 'x', sha256: null }],
    };
    expect(() => parseManifest({ version: 1, models: [model], agents: [{ id: 'b', llm: 'a' }] })).toThrow(
      'agent b: llm "a" is not a text-generation model of the manifest',
    );
    expect(() =>
      parseManifest({ version: 1, models: [{ ...model, files: [{ path: '../x', sha256: null }] }] }),
    ).toThrow('a relative path inside the model folder');
  });
});

describe('npm run models:fetch (against a local stand-in hub)', () => {
  let server: Server;
  let hub: string;
  const served: Record<string, string> = {
    '/o/m/resolve/main/config.json': '{"model_type":"llama"}',
    '/o/m/resolve/main/onnx/model.onnx': 'ONNX-BYTES',
  };
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/api/models/o/m/revision/main') return void res.end(JSON.stringify({ sha: 'a'.repeat(40) }));
      const body = served[req.url!.replace(`/${'a'.repeat(40)}/`, '/main/')];
      res.statusCode = body === undefined ? 404 : 200;
      res.end(body ?? 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hub = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function folder(files: { path: string; sha256: string | null }[]): string {
    const d = mkdtempSync(join(tmpdir(), 'sb-fetch-'));
    writeFileSync(
      join(d, 'manifest.json'),
      JSON.stringify({
        version: 1,
        models: [{ id: 'm', repo: 'o/m', revision: 'main', task: 'text-generation', license: 'MIT', files }],
      }),
    );
    return d;
  }
  const log: string[] = [];
  const opts = (d: string, pin = false) => ({ dir: d, ids: [], pin, endpoint: hub, log: (l: string) => log.push(l) });

  it('downloads, verifies sha256, and keeps verified files on a second run', async () => {
    const d = folder([
      { path: 'config.json', sha256: sha(served['/o/m/resolve/main/config.json']!) },
      { path: 'onnx/model.onnx', sha256: sha('ONNX-BYTES') },
    ]);
    expect(await fetchModels(opts(d))).toBe(2);
    expect(readFileSync(join(d, 'm/onnx/model.onnx'), 'utf8')).toBe('ONNX-BYTES');
    expect(await fetchModels(opts(d))).toBe(0);
  });

  it('deletes a file whose sha256 does not match and fails', async () => {
    const d = folder([{ path: 'config.json', sha256: '0'.repeat(64) }]);
    await expect(fetchModels(opts(d))).rejects.toThrow(
      `m/config.json: sha256 ${sha(served['/o/m/resolve/main/config.json']!)} does not match the manifest's ${'0'.repeat(64)}; file deleted`,
    );
    expect(existsSync(join(d, 'm/config.json'))).toBe(false);
  });

  it('refuses unpinned files unless --pin, which records commit, sizes and sha256', async () => {
    const d = folder([{ path: 'onnx/model.onnx', sha256: null }]);
    await expect(fetchModels(opts(d))).rejects.toThrow(
      'm: 1 file(s) have no sha256 in the manifest (onnx/model.onnx…); run with --pin to record them',
    );
    expect(await fetchModels(opts(d, true))).toBe(1);
    const m = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'));
    expect(m.models[0].revision).toBe('a'.repeat(40));
    expect(m.models[0].files).toEqual([{ path: 'onnx/model.onnx', sha256: sha('ONNX-BYTES'), size: 10 }]);
  });

  it('fails clearly when the hub cannot be reached (offline)', async () => {
    const d = folder([{ path: 'config.json', sha256: '0'.repeat(64) }]);
    // A port on this machine with nothing listening: what an offline machine sees.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await fetchModels({ ...opts(d), endpoint: `http://127.0.0.1:${port}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect((err as Error).message).toBe(
      `cannot reach http://127.0.0.1:${port} (ECONNREFUSED): models:fetch needs internet access; on an offline machine copy the models folder from one that has it`,
    );
  });
});

describe('real-model check: Silero VAD v5 through onnxruntime-web (WASM) in Node', () => {
  it('finds the one espeak-ng word placed between two seconds of silence', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sb-vad-'));
    const wavPath = join(tmp, 'hello.wav');
    execFileSync('espeak-ng', ['-w', wavPath, 'hello']);
    const wav = decodeWav(new Uint8Array(readFileSync(wavPath)));
    rmSync(tmp, { recursive: true });
    const speech = resample(wav.samples, wav.sampleRate, 16_000);
    const audio = new Float32Array(speech.length + 2 * 16_000);
    audio.set(speech, 16_000);
    const vad = await nodeSileroVad();
    const segs = await vad.segments(audio, 16_000);
    expect(segs.length).toBe(1);
    const s = segs[0]!;
    const speechEndMs = 1000 + speech.length / 16;
    // Inside the placed clip (with the 30 ms padding and one 32 ms frame of slack).
    expect(s.startMs).toBeGreaterThanOrEqual(1000 - 62);
    expect(s.endMs).toBeLessThanOrEqual(speechEndMs + 62);
    expect(s.endMs - s.startMs).toBeGreaterThan(250);
    const probs = await vad.probabilities(audio);
    // The first second is silence: every frame well below the threshold.
    expect(Math.max(...probs.slice(0, 28))).toBeLessThan(0.1);
  });
});
