/**
 * The page's tau2-bench download (run in Node, which has the same fetch and WebCrypto): files
 * from a local server with GitHub's raw URL layout, checked against the pin, cached, and read
 * from the cache once the server is gone.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  loadTau2Part,
  tau2CacheKey,
  tau2PartBytes,
  type Tau2Cache,
} from '../../../src/adapters/browser/tau2-download.ts';
import { type Tau2DataManifest, gitBlobId, sha256Hex } from '../../../src/core/tau2/data-manifest.ts';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const FILES: Record<string, string> = {
  'db.json': JSON.stringify({ flights: { F1: { seats: 3 } } }),
  'tasks.json': '[{"id":"0"}]',
  'policy.md': '# Policy\nBe kind. — ünïcode\n',
  'split_tasks.json': '{"base":["0"]}',
};
/** A manifest of `files` as airline's (db.json pinned by git blob id only, like the real one). */
async function manifestOf(files: Record<string, string>): Promise<Tau2DataManifest> {
  return {
    repo: 'sierra-research/tau2-bench',
    commit: COMMIT,
    license: 'MIT',
    files: await Promise.all(
      Object.entries(files).map(async ([f, t]) => {
        const b = new TextEncoder().encode(t);
        return {
          path: `airline/${f}`,
          source: `data/tau2/domains/airline/${f}`,
          gitBlob: await gitBlobId(b),
          ...(f === 'db.json' ? {} : { bytes: b.length, sha256: await sha256Hex(b) }),
        };
      }),
    ),
  };
}

let server: Server | undefined;
const requests: string[] = [];

/** A server answering `/<repo>/<commit>/data/tau2/domains/airline/<file>` with `files`. */
async function github(files: Record<string, string>): Promise<string> {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const m = /^\/sierra-research\/tau2-bench\/([0-9a-f]{40})\/data\/tau2\/domains\/airline\/(.+)$/.exec(req.url ?? '');
    const body = m && m[1] === COMMIT ? files[m[2]!] : undefined;
    if (body === undefined) res.writeHead(404).end('404: Not Found');
    else res.writeHead(200).end(body);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const a = server.address();
  return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/sierra-research/tau2-bench`;
}

afterEach(async () => {
  requests.length = 0;
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

function memoryCache(): Tau2Cache & { map: Map<string, Uint8Array> } {
  const map = new Map<string, Uint8Array>();
  return {
    map,
    get: async (k) => map.get(k),
    put: async (k, b) => void map.set(k, b),
  };
}

const url = (base: string, f: string) => `${base}/${COMMIT}/data/tau2/domains/airline/${f}`;

describe('tau2-bench data in the page', () => {
  it('counts only pinned sizes, and says when one is missing', async () => {
    const manifest = await manifestOf(FILES);
    const pinned = Object.entries(FILES).reduce((n, [f, t]) => n + (f === 'db.json' ? 0 : Buffer.byteLength(t)), 0);
    expect(tau2PartBytes('airline', manifest)).toEqual({ bytes: pinned, exact: false });
    expect(() => tau2PartBytes('telecom', manifest)).toThrow('unknown tau2 data part "telecom" (known: airline)');
  });

  it('downloads, verifies and caches the files, then reads them from the cache with no server', async () => {
    const manifest = await manifestOf(FILES);
    const baseUrl = await github(FILES);
    const cache = memoryCache();
    const progress: [number, number][] = [];
    const got = await loadTau2Part('airline', {
      manifest,
      baseUrl,
      cache,
      onProgress: (d, t) => progress.push([d, t]),
    });
    expect(got).toEqual(FILES);
    expect(requests.map((r) => `${baseUrl.replace(/\/sierra.*$/, '')}${r}`).sort()).toEqual(
      Object.keys(FILES)
        .map((f) => url(baseUrl, f))
        .sort(),
    );
    const all = Object.values(FILES).reduce((n, t) => n + Buffer.byteLength(t), 0);
    // db.json's size is not pinned: no total, but every byte is counted.
    expect(progress.at(-1)).toEqual([all, 0]);
    expect([...cache.map.keys()].sort()).toEqual(
      Object.keys(FILES)
        .map((f) => `${COMMIT}/airline/${f}`)
        .sort(),
    );
    expect(tau2CacheKey(manifest, 'airline/db.json')).toBe(`${COMMIT}/airline/db.json`);
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    expect(await loadTau2Part('airline', { manifest, baseUrl, cache })).toEqual(FILES);
  });

  it('refuses a file that does not verify, naming it, and caches nothing of it', async () => {
    const manifest = await manifestOf(FILES);
    const baseUrl = await github({ ...FILES, 'tasks.json': '[{"id":"1"}]' });
    const cache = memoryCache();
    const want = createHash('sha256').update(FILES['tasks.json']!).digest('hex');
    const bad = createHash('sha256').update('[{"id":"1"}]').digest('hex');
    await expect(loadTau2Part('airline', { manifest, baseUrl, cache })).rejects.toThrow(
      `tau2 data airline/tasks.json (sierra-research/tau2-bench commit 0123456789ab): sha256 ${bad} does not match the manifest's ${want}`,
    );
    expect(cache.map.has(`${COMMIT}/airline/tasks.json`)).toBe(false);
  });

  it('downloads again over a damaged cached copy, and names the URL on an HTTP error', async () => {
    const manifest = await manifestOf(FILES);
    const baseUrl = await github(FILES);
    const cache = memoryCache();
    cache.map.set(`${COMMIT}/airline/policy.md`, new TextEncoder().encode('# Policy\nBe kind. — ünïcodE\n'));
    expect((await loadTau2Part('airline', { manifest, baseUrl, cache }))['policy.md']).toBe(FILES['policy.md']);
    expect(requests).toHaveLength(4);
    const extra = {
      ...manifest,
      files: [
        ...manifest.files,
        { path: 'airline/extra.json', source: 'data/tau2/domains/airline/extra.json', gitBlob: '0' },
      ],
    };
    await expect(loadTau2Part('airline', { manifest: extra, baseUrl, cache })).rejects.toThrow(
      `tau2 data airline/extra.json: ${url(baseUrl, 'extra.json')} answered HTTP 404`,
    );
  });
});
