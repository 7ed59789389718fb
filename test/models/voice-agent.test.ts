/**
 * The on-device voice agent (ASR + chat LLM) run end to end with generated tiny models: caller
 * audio → the wav2vec2-style CTC recognizer (transformers.js `automatic-speech-recognition`
 * pipeline) → transcript in the chat template → the tiny llama → `<tool_call>` text parsed by us →
 * the tool runs in the domain's database.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env, pipeline } from '@huggingface/transformers';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { LocalModelClient } from '../../src/adapters/shared/local-model-client.ts';
import type { LocalGeneration } from '../../src/adapters/shared/local-model-engine.ts';
import { resolveLocalAgent, parseManifest } from '../../src/adapters/shared/local-model-manifest.ts';
import { createLocalModelService, type LocalModelService } from '../../src/adapters/shared/local-model-service.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { encodeWav, resample } from '../../src/core/audio/wav.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent } from '../../src/core/participants/model-agent.ts';
import { NoopAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Agent } from '../../src/core/participants/types.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { DEFAULT_SAMPLING } from '../../src/core/ports/model-client.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import {
  TINY_ASR_RATE,
  TINY_ASR_TEXT,
  TINY_VOCAB,
  tinyAsrSpeech,
  writeTinyAsrModel,
  writeTinyModel,
} from './tiny-model.ts';

const GREEDY = { ...DEFAULT_SAMPLING, temperature: 0, max_tokens: 32 };
const AGENT = 'tiny-ctc+tiny-llama';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const tok = (w: string) => (TINY_VOCAB as readonly string[]).indexOf(w);

let dir: string;
let manifest: unknown;
let service: LocalModelService;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-voice-'));
  const model = (id: string, task: string, files: string[]) => ({
    id,
    repo: `switchboard/${id}`,
    revision: 'test',
    task,
    dtype: 'fp32',
    license: 'Apache-2.0',
    files: files.map((f) => ({ path: f, sha256: sha(readFileSync(join(dir, id, f))) })),
  });
  manifest = {
    version: 1,
    models: [
      model('tiny-llama', 'text-generation', writeTinyModel(dir, 'tiny-llama')),
      model('tiny-ctc', 'automatic-speech-recognition', writeTinyAsrModel(dir, 'tiny-ctc')),
    ],
    agents: [{ id: AGENT, asr: 'tiny-ctc', llm: 'tiny-llama' }],
  };
  service = createLocalModelService(() => 'cpu');
  await service.load(manifest, AGENT, dir);
});
afterAll(async () => {
  await service?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('tiny CTC recognizer (wav2vec2 layout, transformers.js ASR pipeline)', () => {
  it('transcribes the synthetic speech exactly, from local files only', async () => {
    expect(resolveLocalAgent(parseManifest(manifest), AGENT)).toMatchObject({
      asr: { id: 'tiny-ctc' },
      llm: { id: 'tiny-llama' },
      audio: null,
    });
    const asr = await pipeline('automatic-speech-recognition', 'tiny-ctc', { device: 'cpu', dtype: 'fp32' });
    expect(asr.model.config.model_type).toBe('wav2vec2');
    expect(await asr(tinyAsrSpeech())).toEqual({ text: TINY_ASR_TEXT });
    expect(await asr(tinyAsrSpeech('balance'))).toEqual({ text: 'balance' });
    // Silence is all CTC blanks.
    expect(await asr(new Float32Array(3200))).toEqual({ text: '' });
    await asr.dispose();
    expect(env.allowRemoteModels).toBe(false);
  });
});

describe('on-device ASR + LLM agent', () => {
  it('caller WAV → transcript → prompt → <tool_call> parsed by us', async () => {
    const wav = b64(encodeWav(tinyAsrSpeech(), TINY_ASR_RATE));
    const g = await service.generate({
      messages: [
        { role: 'system', content: 'policy' },
        { role: 'user', content: [{ type: 'audio', base64: wav, format: 'wav' }] },
      ],
      sampling: GREEDY,
    });
    expect(g.transcripts).toEqual(['pay my balance']);
    // "<|im_start|> system policy <|im_end|> <|im_start|> user pay my balance <|im_end|> <|im_start|> assistant":
    // the transcript reaches the LLM as its own tokens.
    expect(g.prompt_token_ids).toEqual([1, 5, 0, 2, 1, 4, tok('pay'), tok('my'), tok('balance'), 2, 1, 3]);
    const client = new LocalModelClient(AGENT, service);
    const res = await client.complete({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'audio', base64: wav, format: 'wav' },
          ],
        },
      ],
      sampling: GREEDY,
    });
    expect(res.prompt_token_ids).toEqual([1, 4, 0, tok('pay'), tok('my'), tok('balance'), 2, 1, 3]);
    expect(res.text).toBe('Let me check.');
    expect(res.tool_calls).toEqual([{ id: 'call_0', name: 'get_bills', arguments: '{"customer_id":"C1002"}' }]);
    expect(res.tool_call_source).toBe('text');
    expect(client).toMatchObject({ id: `local:${AGENT}`, flavor: 'local', kind: 'on-device' });
  });

  it('hears phone-rate (8 kHz) caller audio after resampling to 16 kHz', async () => {
    const wav8k = b64(encodeWav(resample(tinyAsrSpeech(), TINY_ASR_RATE, 8_000), 8_000));
    const g = await service.generate({
      messages: [{ role: 'user', content: [{ type: 'audio', base64: wav8k, format: 'wav' }] }],
      sampling: GREEDY,
    });
    expect(g.transcripts).toEqual([TINY_ASR_TEXT]);
  });

  it('runs a carrier episode: the caller turn is heard as audio, the tool call really runs', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const generations: LocalGeneration[] = [];
    const heard: number[] = [];
    const client = new LocalModelClient(AGENT, {
      async generate(r) {
        const g = await service.generate(r);
        generations.push(g);
        return g;
      },
    });
    // Each caller turn reaches the model as 16 kHz WAV (standing in for the caller's speech).
    const wav = b64(encodeWav(tinyAsrSpeech(), TINY_ASR_RATE));
    const voice = new ModelAgent(client, {
      sampling: { temperature: 0, max_tokens: 32 },
      userAudio: (_turn, i) => {
        heard.push(i);
        return wav;
      },
    });
    // The tiny LLM cannot greet: a scripted greeting opens the call, the on-device agent takes every later turn.
    const greeter = new NoopAgent();
    const agent: Agent = {
      id: voice.id,
      get card() {
        return voice.card;
      },
      respond: (view) => (view.turns.some((t) => t.role === 'assistant') ? voice.respond(view) : greeter.respond(view)),
    };
    const t = await runEpisode({ runtime, task, agent, user: new ScriptedUser(), seed: 5, clock: steppingClock(0, 1) });
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('agent_stop');
    const shape = t.turns.map((x) =>
      x.role === 'tool'
        ? `tool:${x.name}:${x.error}`
        : x.role === 'assistant'
          ? `assistant|${(x.tool_calls ?? []).map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join(',')}`
          : x.role,
    );
    expect(shape).toEqual([
      'assistant|',
      'user',
      'assistant|get_bills({"customer_id":"C1002"})',
      'tool:get_bills:false',
      'assistant|',
    ]);
    expect(t.turns.filter((x) => x.role === 'assistant').map((x) => x.role === 'assistant' && x.text)).toEqual([
      domain.greeting,
      'Let me check.',
      'Your bill is paid.',
    ]);
    const tool = t.turns[3]!;
    expect(tool.role === 'tool' && JSON.parse(tool.content).bills.length).toBe(4);
    // Both model turns heard the caller turn (index 1) through the recognizer.
    expect(heard).toEqual([1, 1]);
    expect(generations.map((g) => g.transcripts)).toEqual([[TINY_ASR_TEXT], [TINY_ASR_TEXT]]);
    expect(t.participants.agent_card).toMatchObject({ kind: 'on-device', model: AGENT, flavor: 'local' });
    await runtime.close();
  });
});
