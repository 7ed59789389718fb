/**
 * The page's tau2-bench download (run in Node, which has the same fetch and WebCrypto): files
 * from a local server with GitHub's raw URL layout, checked against the pin, cached, and read
 * from the cache once the server is gone.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fetchTau2Folder,
  sha256Hex,
  tau2FileUrl,
  tau2FolderBytes,
  type Tau2Cache,
  type Tau2DataPin,
} from '../../../src/adapters/browser/tau2-download.ts';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const FILES: Record<string, string> = {
  'db.json': JSON.stringify({ flights: { F1: { seats: 3 } } }),
  'tasks.json': '[{"id":"0"}]',
  'policy.md': '# Policy\nBe kind. — ünïcode\n',
  'split_tasks.json': '{"base":["0"]}',
};
const pinOf = (files: Record<string, string>): Tau2DataPin => ({
  repo: 'sierra-research/tau2-bench',
  commit: COMMIT,
  domains: {
    airline: Object.fromEntries(
      Object.entries(files).map(([f, t]) => {
        const b = Buffer.from(t);
        return [f, { sha256: createHash('sha256').update(b).digest('hex'), bytes: b.length }];
      }),
    ),
  },
});

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
  return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
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

describe('tau2-bench download', () => {
  it('uses GitHub raw URLs at the pinned commit and hashes like sha256sum', async () => {
    const pin = pinOf(FILES);
    expect(tau2FileUrl(pin, 'airline', 'db.json')).toBe(
      `https://raw.githubusercontent.com/sierra-research/tau2-bench/${COMMIT}/data/tau2/domains/airline/db.json`,
    );
    expect(await sha256Hex(new TextEncoder().encode('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(tau2FolderBytes(pin, 'airline')).toBe(Object.values(FILES).reduce((n, t) => n + Buffer.byteLength(t), 0));
    expect(() => tau2FolderBytes(pin, 'telecom')).toThrow('no pinned tau2-bench data for "telecom" (known: airline)');
  });

  it('downloads, checks and caches the files, then reads them from the cache with no server', async () => {
    const pin = pinOf(FILES);
    const base = await github(FILES);
    const cache = memoryCache();
    const progress: [number, number][] = [];
    const got = await fetchTau2Folder(pin, 'airline', { base, cache, onProgress: (d, t) => progress.push([d, t]) });
    expect(got).toEqual(FILES);
    expect(requests.sort()).toEqual(
      Object.keys(FILES)
        .map((f) => `/sierra-research/tau2-bench/${COMMIT}/data/tau2/domains/airline/${f}`)
        .sort(),
    );
    const total = tau2FolderBytes(pin, 'airline');
    expect(progress.at(-1)).toEqual([total, total]);
    expect([...cache.map.keys()].sort()).toEqual(
      Object.keys(FILES)
        .map((f) => `${COMMIT}/airline/${f}`)
        .sort(),
    );
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    expect(await fetchTau2Folder(pin, 'airline', { base, cache })).toEqual(FILES);
  });

  it('refuses a file whose hash differs (naming it, both hashes and the URL) and caches nothing of it', async () => {
    const pin = pinOf(FILES);
    const base = await github({ ...FILES, 'tasks.json': '[{"id":"1"}]' });
    const cache = memoryCache();
    const want = pin.domains.airline!['tasks.json']!.sha256;
    const bad = createHash('sha256').update('[{"id":"1"}]').digest('hex');
    await expect(fetchTau2Folder(pin, 'airline', { base, cache })).rejects.toThrow(
      `tau2-bench airline/tasks.json from ${base}/sierra-research/tau2-bench/${COMMIT}/data/tau2/domains/airline/tasks.json: sha256 ${bad} (12 bytes), expected ${want} (12 bytes) at commit ${COMMIT}`,
    );
    expect(cache.map.has(`${COMMIT}/airline/tasks.json`)).toBe(false);
  });

  it('downloads again over a damaged cached copy, and names the URL on an HTTP error', async () => {
    const pin = pinOf(FILES);
    const base = await github(FILES);
    const cache = memoryCache();
    cache.map.set(`${COMMIT}/airline/policy.md`, new TextEncoder().encode('# Policy\nBe kind. — ünïcodE\n'));
    expect((await fetchTau2Folder(pin, 'airline', { base, cache }))['policy.md']).toBe(FILES['policy.md']);
    expect(requests).toHaveLength(4);
    const missing = {
      ...pin,
      domains: { airline: { ...pin.domains.airline, 'extra.json': { sha256: '0', bytes: 1 } } },
    };
    await expect(fetchTau2Folder(missing, 'airline', { base, cache })).rejects.toThrow(
      `tau2-bench airline/extra.json: HTTP 404 from ${base}/sierra-research/tau2-bench/${COMMIT}/data/tau2/domains/airline/extra.json`,
    );
  });
});
