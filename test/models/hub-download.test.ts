/**
 * On-device models downloaded from a host with the Hugging Face Hub's URL layout
 * (`<host><repo>/resolve/<revision>/<file>`, transformers.js' `env.remoteHost`), in Node: the
 * generated tiny model (tiny-model.ts) served by a local server, loaded through the model service
 * the page's worker runs, with per-file progress, then generating exactly as from local files.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env } from '@huggingface/transformers';
import type { DownloadProgress } from '../../src/adapters/shared/local-model-engine.ts';
import { createLocalModelService } from '../../src/adapters/shared/local-model-service.ts';
import { DEFAULT_SAMPLING } from '../../src/core/ports/model-client.ts';
import { writeTinyModel } from './tiny-model.ts';

let dir = '';
let host = '';
let server: Server;
let files: string[] = [];
const requests: string[] = [];
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const bytesOf = (f: string) => readFileSync(join(dir, 'tiny-llama', f));
/** The manifest with every file's size and sha256 pinned, as `models:fetch --pin` writes them. */
const pinned = (revision: string) => {
  const m = manifest(revision);
  m.models[0]!.files = files.map((f) => ({ path: f, sha256: sha(bytesOf(f)), size: bytesOf(f).length }));
  return m;
};
const manifest = (revision: string) => ({
  version: 1,
  models: [
    {
      id: 'tiny-llama',
      repo: 'switchboard/tiny-llama',
      revision,
      task: 'text-generation',
      dtype: 'fp32',
      license: 'Apache-2.0',
      files: files.map((f): { path: string; sha256: string | null; size?: number } => ({ path: f, sha256: null })),
    },
  ],
  agents: [],
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-hub-'));
  // Node keeps downloads in transformers.js' file cache: a fresh one per run.
  env.cacheDir = join(dir, 'cache');
  files = writeTinyModel(dir, 'tiny-llama');
  server = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    requests.push(path);
    // transformers.js 4.3.2 probes tokenizer_config.json at `main` whatever the revision asked
    // for (get_tokenizer_files); the Hub has `main`, so this host answers that probe too.
    // v3 serves a model.onnx with one byte changed, v5 one cut short; v1 and v4 the real files.
    const m = /^\/switchboard\/tiny-llama\/resolve\/(v[1345]|main(?=\/tokenizer_config\.json$))\/(.+)$/.exec(path);
    let file = m && files.includes(m[2]!) ? readFileSync(join(dir, 'tiny-llama', m[2]!)) : null;
    if (file && m![2] === 'onnx/model.onnx' && m![1] === 'v3') file[file.length - 1]! ^= 1;
    if (file && m![2] === 'onnx/model.onnx' && m![1] === 'v5') file = file.subarray(0, file.length - 7);
    if (!file) res.writeHead(404).end('Entry not found');
    else res.writeHead(200, { 'content-length': file.length }).end(file);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('on-device models from a Hub-layout host', () => {
  it('downloads the pinned revision with progress and generates exactly as from local files', async () => {
    const service = createLocalModelService(() => 'cpu');
    const progress: DownloadProgress[] = [];
    expect(await service.load(manifest('v1'), 'tiny-llama', '', host, (p) => progress.push(p))).toEqual({
      device: 'cpu',
    });
    expect(requests).toContain('/switchboard/tiny-llama/resolve/v1/onnx/model.onnx');
    const PROBE = '/switchboard/tiny-llama/resolve/main/tokenizer_config.json';
    expect(requests.filter((r) => r !== PROBE).every((r) => r.startsWith('/switchboard/tiny-llama/resolve/v1/'))).toBe(
      true,
    );
    const onnx = progress.filter((p) => p.file.endsWith('onnx/model.onnx'));
    const size = readFileSync(join(dir, 'tiny-llama', 'onnx/model.onnx')).length;
    expect(onnx.at(-1)).toEqual({ file: 'switchboard/tiny-llama/onnx/model.onnx', loaded: size, total: size });
    const g = await service.generate({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', name: 'get_bills', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'a', content: '{}' },
      ],
      sampling: { ...DEFAULT_SAMPLING, temperature: 0, max_tokens: 32 },
    });
    expect(g.text).toBe('Your bill is paid. ###STOP###');
    expect(g.token_ids).toEqual([17, 18, 19, 20, 21, 2]);
    await service.dispose();
  });

  it('fails to load a revision the host does not have', async () => {
    const service = createLocalModelService(() => 'cpu');
    await expect(service.load(manifest('v2'), 'tiny-llama', '', host)).rejects.toThrow();
    expect(requests.some((r) => r.startsWith('/switchboard/tiny-llama/resolve/v2/'))).toBe(true);
  });

  it('checks pinned files as they download: the right bytes load, a changed byte or a short file is refused by name', async () => {
    const service = createLocalModelService(() => 'cpu');
    await service.load(pinned('v4'), 'tiny-llama', '', host);
    await service.dispose();
    const onnx = bytesOf('onnx/model.onnx');
    const changed = Uint8Array.from(onnx);
    changed[changed.length - 1]! ^= 1;
    await expect(service.load(pinned('v3'), 'tiny-llama', '', host)).rejects.toThrow(
      `switchboard/tiny-llama@v3/onnx/model.onnx: sha256 ${sha(changed)} does not match the manifest's ${sha(onnx)}; file not loaded`,
    );
    await expect(service.load(pinned('v5'), 'tiny-llama', '', host)).rejects.toThrow(
      `switchboard/tiny-llama@v5/onnx/model.onnx: ${onnx.length - 7} bytes where the manifest pins ${onnx.length}; file not loaded`,
    );
    // Nothing refused entered the file cache (transformers.js keeps files under <repo>/<revision>/).
    const cached = (rev: string) => join(env.cacheDir!, 'switchboard/tiny-llama', rev, 'onnx/model.onnx');
    expect(existsSync(cached('v4'))).toBe(true);
    expect(existsSync(cached('v3'))).toBe(false);
    expect(existsSync(cached('v5'))).toBe(false);
  });
});
