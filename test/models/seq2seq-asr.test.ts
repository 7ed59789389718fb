/**
 * The encoder–decoder speech recognizers (Whisper and Moonshine classes of transformers.js) loaded
 * the way the page loads a recognizer: the model service's `loadRecognizer` from a local server
 * with the Hugging Face Hub's URL layout, the manifest pinning a revision and every file's size
 * and sha256. The models are the tiny generated ones of tiny-seq2seq.ts; they must decode the
 * synthetic speech to its exact words through transformers.js' own generation.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { env, MoonshineForConditionalGeneration, WhisperForConditionalGeneration } from '@huggingface/transformers';
import { createLocalModelService } from '../../src/adapters/shared/local-model-service.ts';
import type { DownloadProgress } from '../../src/adapters/shared/local-model-engine.ts';
import { LocalModelClient } from '../../src/adapters/shared/local-model-client.ts';
import type { LocalGenerateRequest } from '../../src/adapters/shared/local-model-engine.ts';
import { DEFAULT_SAMPLING } from '../../src/core/ports/model-client.ts';
import { TINY_WHISPER_IDS, tinySeq2SeqSpeech, writeTinyMoonshine, writeTinyWhisper } from './tiny-seq2seq.ts';

const REVISION = 'c0ffee0000000000000000000000000000000001';
let dir = '';
let host = '';
let server: Server;
const requests: string[] = [];
const written: Record<string, string[]> = {};
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A manifest entry as `models:fetch --pin` writes it: the commit, each file's size and sha256. */
function pinned(id: string, revision = REVISION) {
  return {
    id,
    repo: `switchboard/${id}`,
    revision,
    task: 'automatic-speech-recognition',
    dtype: 'fp32',
    license: 'MIT',
    files: written[id]!.map((path) => {
      const bytes = readFileSync(join(dir, id, path));
      return { path, sha256: sha(bytes), size: bytes.length };
    }),
  };
}
const manifest = (...models: ReturnType<typeof pinned>[]) => ({ version: 1, models, agents: [] });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-s2s-'));
  env.cacheDir = join(dir, 'cache');
  written['tiny-whisper'] = writeTinyWhisper(dir, 'tiny-whisper');
  written['tiny-moonshine'] = writeTinyMoonshine(dir, 'tiny-moonshine');
  server = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    requests.push(path);
    // The pinned commit, and `main` for transformers.js' tokenizer_config.json probe (as the Hub
    // answers it). Revision `bad0…` serves a decoder with one byte changed.
    const m = /^\/switchboard\/(tiny-whisper|tiny-moonshine)\/resolve\/([0-9a-f]{40}|main)\/(.+)$/.exec(path);
    const ok = m && written[m[1]!]!.includes(m[3]!) && (m[2] !== 'main' || m[3] === 'tokenizer_config.json');
    if (!ok) return void res.writeHead(404).end('Entry not found');
    const file = readFileSync(join(dir, m[1]!, m[3]!));
    if (m[2]!.startsWith('bad0') && m[3] === 'onnx/decoder_model_merged.onnx') file[100]! ^= 1;
    res.writeHead(200, { 'content-length': file.length }).end(file);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('Whisper and Moonshine recognizers from a Hub-layout host', () => {
  for (const id of ['tiny-whisper', 'tiny-moonshine']) {
    it(`${id}: downloads the pinned commit's checked files and decodes the words exactly`, async () => {
      const service = createLocalModelService(() => 'cpu');
      const progress: DownloadProgress[] = [];
      requests.length = 0;
      expect(await service.loadRecognizer(manifest(pinned(id)), id, '', host, (p) => progress.push(p))).toEqual({
        device: 'cpu',
      });
      // Both graphs, from the pinned commit only (the one probe at main aside).
      const probe = `/switchboard/${id}/resolve/main/tokenizer_config.json`;
      expect(
        requests.filter((r) => r !== probe).every((r) => r.startsWith(`/switchboard/${id}/resolve/${REVISION}/`)),
      ).toBe(true);
      for (const f of ['onnx/encoder_model.onnx', 'onnx/decoder_model_merged.onnx']) {
        const size = readFileSync(join(dir, id, f)).length;
        expect(progress.filter((p) => p.file === `switchboard/${id}/${f}`).at(-1)).toEqual({
          file: `switchboard/${id}/${f}`,
          loaded: size,
          total: size,
        });
      }
      expect(await service.transcribe(tinySeq2SeqSpeech('pay my balance'))).toBe('pay my balance');
      expect(await service.transcribe(tinySeq2SeqSpeech('please pay my bill'))).toBe('please pay my bill');
      // Silence: the first frame is end-of-text, nothing is heard.
      expect(await service.transcribe(new Float32Array(32_000))).toBe('');
      await service.dispose();
    }, 60_000);
  }

  it('refuses a decoder whose bytes are not the pinned ones, naming the file and both sha256', async () => {
    const service = createLocalModelService(() => 'cpu');
    const bad = `bad0${REVISION.slice(4)}`;
    const entry = pinned('tiny-whisper', bad);
    const decoder = readFileSync(join(dir, 'tiny-whisper', 'onnx/decoder_model_merged.onnx'));
    const changed = Uint8Array.from(decoder);
    changed[100]! ^= 1;
    await expect(service.loadRecognizer(manifest(entry), 'tiny-whisper', '', host)).rejects.toThrow(
      `switchboard/tiny-whisper@${bad}/onnx/decoder_model_merged.onnx: sha256 ${sha(changed)} does not match the manifest's ${sha(decoder)}; file not loaded`,
    );
    await expect(service.transcribe(new Float32Array(16_000))).rejects.toThrow('no speech recognizer loaded');
  }, 60_000);

  it('names the recognizers the manifest has for a wrong id', async () => {
    const service = createLocalModelService(() => 'cpu');
    await expect(
      service.loadRecognizer(manifest(pinned('tiny-whisper'), pinned('tiny-moonshine')), 'whisper-large', '', host),
    ).rejects.toThrow(
      'unknown on-device speech recognizer "whisper-large" (manifest has: tiny-whisper, tiny-moonshine)',
    );
  });

  it("Whisper decodes in the domain's language: forced prefix <|startoftranscript|> <|zh|>/<|en|> <|transcribe|> <|notimestamps|>", async () => {
    const service = createLocalModelService(() => 'cpu');
    await service.loadRecognizer(manifest(pinned('tiny-whisper')), 'tiny-whisper', '', host);
    const prefix = vi.spyOn(WhisperForConditionalGeneration.prototype, '_retrieve_init_tokens');
    const generate = vi.spyOn(WhisperForConditionalGeneration.prototype, 'generate');
    try {
      const { sot, zh, en, transcribe, notimestamps } = TINY_WHISPER_IDS;
      const heard = (language?: string) => service.transcribe(tinySeq2SeqSpeech('pay my bill'), language);
      expect(await heard('zh-CN')).toBe('pay my bill');
      expect(await heard('en-US')).toBe('pay my bill');
      expect(await heard('cmn')).toBe('pay my bill');
      // No language (a caller of transcribe that has none): transformers.js' default, English.
      expect(await heard()).toBe('pay my bill');
      expect(prefix.mock.results.map((r) => r.value)).toEqual([
        [sot, zh, transcribe, notimestamps],
        [sot, en, transcribe, notimestamps],
        [sot, zh, transcribe, notimestamps],
        [sot, en, transcribe, notimestamps],
      ]);
      const options = generate.mock.calls.map(([o]) => {
        const { language, task } = o as { language?: string; task?: string };
        return { language, task };
      });
      expect(options).toEqual([
        { language: 'zh', task: 'transcribe' },
        { language: 'en', task: 'transcribe' },
        { language: 'zh', task: 'transcribe' },
        { language: undefined, task: undefined },
      ]);
    } finally {
      prefix.mockRestore();
      generate.mockRestore();
      await service.dispose();
    }
  }, 60_000);

  it('Moonshine takes no language: the same generation whatever the domain speaks', async () => {
    const service = createLocalModelService(() => 'cpu');
    await service.loadRecognizer(manifest(pinned('tiny-moonshine')), 'tiny-moonshine', '', host);
    const generate = vi.spyOn(MoonshineForConditionalGeneration.prototype, 'generate');
    try {
      expect(await service.transcribe(tinySeq2SeqSpeech('pay my bill'), 'zh-CN')).toBe('pay my bill');
      const o = generate.mock.calls[0]![0] as { language?: string; task?: string };
      expect([o.language, o.task]).toEqual([undefined, undefined]);
    } finally {
      generate.mockRestore();
      await service.dispose();
    }
  }, 60_000);

  it("the on-device client hands the request's language to the engine (ASR + LLM agents)", async () => {
    const seen: LocalGenerateRequest[] = [];
    const client = new LocalModelClient('tiny', {
      async generate(r) {
        seen.push(r);
        return { text: 'ok', token_ids: [1], prompt_token_ids: [2], finish_reason: 'stop', transcripts: [] };
      },
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await client.complete({ messages, sampling: DEFAULT_SAMPLING, language: 'zh-CN' });
    await client.complete({ messages, sampling: DEFAULT_SAMPLING });
    expect(seen.map((r) => r.language)).toEqual(['zh-CN', undefined]);
  });
});
