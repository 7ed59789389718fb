/**
 * tau2-bench data on demand in the page: the files of one part of the pinned data set
 * (`airline`, `retail`: `db.json`, `tasks.json`, `policy.md`, `split_tasks.json`) taken from a
 * cache (IndexedDB in the page, see `tau2-cache.ts`) or downloaded from GitHub, every one checked
 * against the manifest (`src/core/tau2/data-manifest.ts`: size, sha256, git blob id) by the core's
 * {@link verifyTau2File} / {@link fetchTau2Files}, so the second load needs no network.
 * Platform-neutral apart from `fetch` and WebCrypto, which the page and Node 20 both have.
 */
import {
  TAU2_DATA_MANIFEST,
  fetchTau2Files,
  tau2PartFiles,
  verifyTau2File,
  type FetchLike,
  type Tau2DataManifest,
} from '../../core/tau2/data-manifest.ts';

/** Verified file bytes by key (`<commit>/<manifest path>`, e.g. `a2c0…/airline/db.json`). */
export interface Tau2Cache {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
}

/** Options of {@link loadTau2Part}. */
export interface LoadTau2Options {
  manifest?: Tau2DataManifest;
  cache?: Tau2Cache;
  /** Raw-layout base URL; default the manifest module's (GitHub). */
  baseUrl?: string;
  fetch?: typeof fetch;
  /**
   * Bytes at hand so far (cached files count at once) and the part's total, 0 when the manifest
   * does not pin every file's size (see {@link tau2PartBytes}).
   */
  onProgress?(done: number, total: number): void;
}

/** Cache key of a manifest path. */
export function tau2CacheKey(manifest: Tau2DataManifest, path: string): string {
  return `${manifest.commit}/${path}`;
}

/**
 * Download size of a part, bytes: the sum of its pinned sizes, and whether every file has one
 * (tau2-bench's airline `db.json` is pinned by git blob id only).
 */
export function tau2PartBytes(
  part: string,
  manifest: Tau2DataManifest = TAU2_DATA_MANIFEST,
): { bytes: number; exact: boolean } {
  const files = tau2PartFiles(part, manifest);
  return {
    bytes: files.reduce((n, f) => n + (f.bytes ?? 0), 0),
    exact: files.every((f) => f.bytes !== undefined),
  };
}

/**
 * The files of `part` as text by file name (`db.json` → its text): each from the cache when the
 * cached bytes still verify, else downloaded, verified and cached.
 * @throws Tau2DataError naming the file and URL when a download fails or does not verify
 *   (nothing of it is cached then); Error when a file is not UTF-8 text.
 */
export async function loadTau2Part(part: string, opts: LoadTau2Options = {}): Promise<Record<string, string>> {
  const manifest = opts.manifest ?? TAU2_DATA_MANIFEST;
  const files = tau2PartFiles(part, manifest);
  const size = tau2PartBytes(part, manifest);
  const total = size.exact ? size.bytes : 0;
  const have = new Map<string, Uint8Array>();
  const progress = new Map<string, number>();
  const report = () =>
    opts.onProgress?.(
      [...progress.values()].reduce((a, b) => a + b, 0),
      total,
    );
  for (const f of files) {
    const cached = await opts.cache?.get(tau2CacheKey(manifest, f.path)).catch(() => undefined);
    if (!cached) continue;
    const ok = await verifyTau2File(f, cached, manifest).then(
      () => true,
      () => false,
    );
    if (ok) {
      have.set(f.path, cached);
      progress.set(f.path, cached.length);
    }
  }
  report();
  const missing = files.filter((f) => !have.has(f.path));
  if (missing.length) {
    const get = opts.fetch ?? fetch;
    let current = '';
    // The core's fetch step with a body reader that reports bytes as they arrive.
    const counting: FetchLike = async (url) => {
      const res = await get(url);
      return {
        ok: res.ok,
        status: res.status,
        arrayBuffer: () =>
          readBody(res, (n) => {
            progress.set(current, n);
            report();
          }),
      };
    };
    for (const f of missing) {
      current = f.path;
      const got = await fetchTau2Files([f], {
        fetch: counting,
        manifest,
        ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      });
      const bytes = got.get(f.path)!;
      have.set(f.path, bytes);
      await opts.cache?.put(tau2CacheKey(manifest, f.path), bytes).catch(() => undefined);
    }
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return Object.fromEntries(files.map((f) => [f.path.slice(part.length + 1), decoder.decode(have.get(f.path)!)]));
}

/** A response body's bytes, reporting the count received so far. */
async function readBody(res: Response, progress: (n: number) => void): Promise<ArrayBuffer> {
  if (!res.body) {
    const b = await res.arrayBuffer();
    progress(b.byteLength);
    return b;
  }
  const parts: Uint8Array[] = [];
  let n = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    progress(n);
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out.buffer;
}
