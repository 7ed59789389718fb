/**
 * `switchboard data tau2`: download from a local server with GitHub's raw URL layout, digest
 * checks, refusal of a corrupt file, cache reuse, and no half-written part left as valid.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  TAU2_DATA_MANIFEST,
  fetchTau2Files,
  gitBlobId,
  sha256Hex,
  tau2FileUrl,
  tau2PartFiles,
  type Tau2DataFile,
  type Tau2DataManifest,
} from '../../src/core/tau2/data-manifest.ts';
import { downloadTau2Data, tau2CacheDir } from '../../src/adapters/node/tau2-data.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const gitBlob = (b: Uint8Array) =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]))
    .digest('hex');

const tmps: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'sb-tau2-data-'));
  tmps.push(d);
  return d;
}
afterAll(async () => {
  for (const d of tmps) await rm(d, { recursive: true, force: true });
});

describe('digests', () => {
  it('sha256 and git blob ids match the standard values', async () => {
    expect(await sha256Hex(enc('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    // `printf 'hello\n' | git hash-object --stdin`
    expect(await gitBlobId(enc('hello\n'))).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('URLs follow raw.githubusercontent.com: <base>/<commit>/<path in the repository>', () => {
    const [db] = tau2PartFiles('retail');
    expect(tau2FileUrl('https://raw.githubusercontent.com/sierra-research/tau2-bench/', 'c0ffee', db!)).toBe(
      'https://raw.githubusercontent.com/sierra-research/tau2-bench/c0ffee/data/tau2/domains/retail/db.json',
    );
    expect(tau2PartFiles('noise').map((f) => f.source)).toEqual([
      'data/voice/background_noise_audio_pcm_mono_verified/continuous/people_talking.wav',
      'data/voice/background_noise_audio_pcm_mono_verified/bursts/car_horn.wav',
      'data/voice/background_noise_audio_pcm_mono_verified/bursts/dog_bark.wav',
      'data/voice/background_noise_audio_pcm_mono_verified/bursts/engine_idling.wav',
      'data/voice/background_noise_audio_pcm_mono_verified/bursts/ringing_phone.wav',
      'data/voice/background_noise_audio_pcm_mono_verified/bursts/siren.wav',
    ]);
    expect(() => tau2PartFiles('banking')).toThrow(
      'unknown tau2 data part "banking" (known: airline, retail, telecom, noise)',
    );
  });

  it('fetchTau2Files works with an injected fetch and returns nothing unless every file passes', async () => {
    const good = enc('{"a": 1}\n');
    const file: Tau2DataFile = { path: 'x/a.json', source: 'a.json', sha256: sha256(good), gitBlob: gitBlob(good) };
    const manifest: Tau2DataManifest = { repo: 'o/r', commit: 'c'.repeat(40), license: 'MIT', files: [file] };
    const urls: string[] = [];
    const got = await fetchTau2Files([file], {
      manifest,
      baseUrl: 'https://raw.test/o/r',
      fetch: async (url) => {
        urls.push(url);
        return { ok: true, status: 200, arrayBuffer: async () => good.slice().buffer };
      },
    });
    expect(urls).toEqual([`https://raw.test/o/r/${'c'.repeat(40)}/a.json`]);
    expect([...got.get('x/a.json')!]).toEqual([...good]);
    await expect(
      fetchTau2Files([{ ...file, gitBlob: '0'.repeat(40) }], {
        manifest,
        baseUrl: 'https://raw.test/o/r',
        fetch: async () => ({ ok: true, status: 200, arrayBuffer: async () => good.slice().buffer }),
      }),
    ).rejects.toThrow(
      `tau2 data x/a.json (o/r commit cccccccccccc): git blob id ${gitBlob(good)} does not match the manifest's ${'0'.repeat(40)}; the file is corrupt or not the pinned one`,
    );
  });
});

describe('download into the cache (generated files)', () => {
  const commit = '0123456789abcdef0123456789abcdef01234567';
  const content: Record<string, Uint8Array> = {
    LICENSE: enc('MIT License\n'),
    'airline/db.json': enc('{"flights": {}}\n'),
    'airline/policy.md': enc('# Airline policy\n'),
    'retail/db.json': enc('{"products": {}}\n'),
  };
  const source = (path: string) => (path === 'LICENSE' ? path : `data/tau2/domains/${path}`);
  const manifest: Tau2DataManifest = {
    repo: 'test/tau2',
    commit,
    license: 'MIT',
    files: Object.entries(content).map(([path, b]) => ({
      path,
      source: source(path),
      bytes: b.length,
      sha256: sha256(b),
      gitBlob: gitBlob(b),
    })),
  };
  let served: Map<string, Uint8Array | (() => Uint8Array | number)>;
  let server: RawServer;
  let cacheDir: string;
  beforeEach(async () => {
    served = new Map(Object.entries(content).map(([p, b]) => [`/${commit}/${source(p)}`, b]));
    server = await startRawServer(served);
    cacheDir = join(await tmp(), 'tau2', commit);
  });
  afterEach(() => server.close());
  const download = (parts: string[], log?: (l: string) => void) =>
    downloadTau2Data({ parts, manifest, cacheDir, baseUrl: server.baseUrl, ...(log ? { log } : {}) });

  it('downloads, verifies and lays the files out by part; a second run reuses the cache', async () => {
    const first = await download(['airline', 'retail']);
    expect(first).toEqual([
      { part: 'airline', dir: join(cacheDir, 'airline'), status: 'downloaded', files: 2, bytes: 33 },
      { part: 'retail', dir: join(cacheDir, 'retail'), status: 'downloaded', files: 1, bytes: 17 },
    ]);
    expect(server.requests).toEqual([
      `/${commit}/LICENSE`,
      `/${commit}/data/tau2/domains/airline/db.json`,
      `/${commit}/data/tau2/domains/airline/policy.md`,
      `/${commit}/data/tau2/domains/retail/db.json`,
    ]);
    expect((await readdir(cacheDir)).sort()).toEqual(['LICENSE', 'airline', 'retail']);
    expect(await readFile(join(cacheDir, 'airline/policy.md'), 'utf8')).toBe('# Airline policy\n');
    expect(await readFile(join(cacheDir, 'LICENSE'), 'utf8')).toBe('MIT License\n');

    const lines: string[] = [];
    const second = await download(['airline', 'retail'], (l) => lines.push(l));
    expect(second.map((r) => r.status)).toEqual(['cached', 'cached']);
    expect(server.requests).toHaveLength(4);
    expect(lines).toEqual(['airline: in the cache, 2 files verified', 'retail: in the cache, 1 files verified']);
  });

  it('says which files are checked by git blob id alone (no sha256 pinned, as airline/db.json upstream)', async () => {
    const lines: string[] = [];
    const blobOnly: Tau2DataManifest = {
      ...manifest,
      files: manifest.files.map((f) => {
        if (f.path !== 'airline/db.json') return f;
        const { sha256: _, ...rest } = f;
        return rest;
      }),
    };
    await downloadTau2Data({
      parts: ['airline'],
      manifest: blobOnly,
      cacheDir,
      baseUrl: server.baseUrl,
      log: (l) => lines.push(l),
    });
    expect(lines.filter((l) => l.includes('verified'))).toEqual([
      'airline/db.json: 16 bytes, verified by its git blob id only (the manifest pins no sha256 for it)',
      'airline/policy.md: 17 bytes, verified',
    ]);
  });

  it('refuses a corrupt file with a clear error and leaves no part behind', async () => {
    const bad = content['airline/policy.md']!.slice();
    bad[2] = 'X'.charCodeAt(0);
    served.set(`/${commit}/data/tau2/domains/airline/policy.md`, bad);
    await expect(download(['airline'])).rejects.toThrow(
      `tau2 data airline/policy.md (test/tau2 commit 0123456789ab): sha256 ${sha256(bad)} does not match the manifest's ${sha256(content['airline/policy.md']!)}; the file is corrupt or not the pinned one`,
    );
    expect(await readdir(cacheDir)).toEqual(['LICENSE']);
  });

  it('an HTTP error or a truncated body mid-way leaves no valid part; the next run completes it', async () => {
    served.set(`/${commit}/data/tau2/domains/airline/policy.md`, () => 503);
    await expect(download(['airline'])).rejects.toThrow(
      `tau2 data airline/policy.md: ${server.baseUrl}/${commit}/data/tau2/domains/airline/policy.md answered HTTP 503`,
    );
    expect(await readdir(cacheDir)).toEqual(['LICENSE']);
    served.set(`/${commit}/data/tau2/domains/airline/policy.md`, content['airline/policy.md']!.slice(0, 5));
    await expect(download(['airline'])).rejects.toThrow(
      'tau2 data airline/policy.md (test/tau2 commit 0123456789ab): 5 bytes, the manifest expects 17; the file is incomplete or not the pinned one',
    );
    expect(await readdir(cacheDir)).toEqual(['LICENSE']);
    served.set(`/${commit}/data/tau2/domains/airline/policy.md`, content['airline/policy.md']!);
    expect((await download(['airline'])).map((r) => r.status)).toEqual(['downloaded']);
  });

  it('a cached part damaged on disk is downloaded again; stale partial folders are removed', async () => {
    await download(['airline']);
    await writeFile(join(cacheDir, 'airline/db.json'), '{}');
    await writeFile(join(cacheDir, '.airline.partial-999'), 'left over');
    const lines: string[] = [];
    const again = await download(['airline'], (l) => lines.push(l));
    expect(again.map((r) => r.status)).toEqual(['downloaded']);
    expect(lines[0]).toBe(
      'airline: cached copy fails its check (tau2 data airline/db.json (test/tau2 commit 0123456789ab): 2 bytes, the manifest expects 16; the file is incomplete or not the pinned one); downloading again',
    );
    expect(await readFile(join(cacheDir, 'airline/db.json'), 'utf8')).toBe('{"flights": {}}\n');
    expect((await readdir(cacheDir)).sort()).toEqual(['LICENSE', 'airline']);
  });

  it('an unreachable server is named', async () => {
    await server.close();
    await expect(download(['retail'])).rejects.toThrow(
      `tau2 data LICENSE: cannot reach ${server.baseUrl}/${commit}/LICENSE (ECONNREFUSED)`,
    );
    server = await startRawServer(new Map());
  });
});

describe('switchboard data tau2 offline', () => {
  it('names the host it cannot reach and exits 1; bad usage exits 2', async () => {
    const closed = await startRawServer(new Map());
    await closed.close();
    const before = process.env.SWITCHBOARD_DATA;
    process.env.SWITCHBOARD_DATA = await tmp();
    try {
      let io = capture();
      expect(await main(['data', 'tau2', '--only', 'retail', '--base-url', closed.baseUrl], io)).toBe(1);
      expect(io.stderr.split('\n').at(-2)).toBe(
        `switchboard: tau2 data LICENSE: cannot reach ${closed.baseUrl}/${TAU2_DATA_MANIFEST.commit}/LICENSE (ECONNREFUSED); downloading needs access to that host (or --base-url of a mirror with the same layout)`,
      );
      io = capture();
      expect(await main(['data', 'tau2', '--only', 'banking'], io)).toBe(2);
      expect(io.stderr).toContain('--only takes parts from airline, retail, telecom, noise');
      io = capture();
      expect(await main(['data', 'tau3'], io)).toBe(2);
      expect(io.stderr).toBe('switchboard: unknown data set "tau3" (known: tau2)\n');
    } finally {
      if (before === undefined) delete process.env.SWITCHBOARD_DATA;
      else process.env.SWITCHBOARD_DATA = before;
    }
  });
});

describe('switchboard data tau2 against the real files', { tags: ['tau2-data', 'noise-data'] }, () => {
  const commit = TAU2_DATA_MANIFEST.commit;
  /** Where each manifest file is on this machine (the test data folders). */
  const local = (f: Tau2DataFile) => {
    if (f.path === 'LICENSE') return join(testData('retail'), '..', 'LICENSE');
    const [part, ...rest] = f.path.split('/');
    return join(testData(part as 'airline'), ...rest);
  };
  let server: RawServer;
  let root: string;
  const env = { SWITCHBOARD_DATA: process.env.SWITCHBOARD_DATA };
  beforeEach(async () => {
    server = await startRawServer(new Map(TAU2_DATA_MANIFEST.files.map((f) => [`/${commit}/${f.source}`, local(f)])));
    root = await tmp();
    process.env.SWITCHBOARD_DATA = root;
  });
  afterEach(async () => {
    await server.close();
    if (env.SWITCHBOARD_DATA === undefined) delete process.env.SWITCHBOARD_DATA;
    else process.env.SWITCHBOARD_DATA = env.SWITCHBOARD_DATA;
  });

  it('downloads retail, telecom and noise; tau2-retail and tau2-telecom then run without --data', async () => {
    let io = capture();
    const code = await main(['data', 'tau2', '--only', 'retail,telecom,noise', '--base-url', server.baseUrl], io);
    expect(io.stderr.split('\n')[0]).toBe(`tau2-bench a2c024725189 → ${root}/tau2/${commit}`);
    expect(code).toBe(0);
    const dir = tau2CacheDir();
    expect(io.stdout).toBe(
      [
        `retail: downloaded, 4 files, 3.2 MB, verified → ${dir}/retail`,
        `telecom: downloaded, 10 files, 14.5 MB, verified → ${dir}/telecom`,
        `noise: downloaded, 6 files, 1.9 MB, verified → ${dir}/noise`,
        '',
      ].join('\n'),
    );
    expect(readFileSync(join(dir, 'telecom/user_db.toml'))).toEqual(
      readFileSync(join(testData('telecom'), 'user_db.toml')),
    );
    io = capture();
    expect(await main(['run', '--domain', 'tau2-retail', '--task-ids', '0', '--json'], io)).toBe(0);
    const summary = JSON.parse(io.stdout) as { tasks: { task_id: string; mean: number }[] };
    expect(summary.tasks.map((t) => [t.task_id, t.mean])).toEqual([['0', 1]]);
    // tau2-telecom from the cache too (its base split).
    io = capture();
    const telecomTask = '[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]';
    expect(await main(['run', '--domain', 'tau2-telecom', '--task-ids', telecomTask, '--json'], io)).toBe(0);
    const telecom = JSON.parse(io.stdout) as { tasks: { task_id: string; mean: number }[] };
    expect(telecom.tasks.map((t) => [t.task_id, t.mean])).toEqual([[telecomTask, 1]]);
  });

  it('airline/db.json is accepted only when it is the pinned commit file', async () => {
    const io = capture();
    const code = await main(['data', 'tau2', '--only', 'airline', '--base-url', server.baseUrl], io);
    const db = readFileSync(join(testData('airline'), 'db.json'));
    if (gitBlob(db) === 'c6a1e817aa9102c5822e83affb3595acbc312701') {
      expect(code).toBe(0);
    } else {
      // ../shared/tau2/airline/db.json is assembled from tau-bench, not tau2-bench's own file.
      expect(code).toBe(1);
      expect(io.stderr.split('\n').at(-2)).toBe(
        `switchboard: tau2 data airline/db.json (sierra-research/tau2-bench commit a2c024725189): git blob id ${gitBlob(db)} does not match the manifest's c6a1e817aa9102c5822e83affb3595acbc312701; the file is corrupt or not the pinned one`,
      );
      expect(existsSync(join(tau2CacheDir(), 'airline'))).toBe(false);
    }
  });
});
