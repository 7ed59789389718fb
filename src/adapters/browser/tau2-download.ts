/**
 * tau2-bench data on demand in the page: a domain's four files (`db.json`, `tasks.json`,
 * `policy.md`, `split_tasks.json`) fetched from GitHub at a pinned commit, each checked against
 * its pinned sha256 and size, and kept in a cache (IndexedDB in the page, see
 * `tau2-cache.ts`) so the second load needs no network. Platform-neutral apart from `fetch` and
 * `crypto.subtle`, which the page and Node 20 both have.
 *
 * URL layout (GitHub's raw file host): `<base>/<repo>/<commit>/data/tau2/domains/<folder>/<file>`,
 * base {@link RAW_GITHUB}; tests serve the same layout from a local server.
 */

/** One pinned file: its sha256 (lower-case hex) and size in bytes. */
export interface Tau2FilePin {
  sha256: string;
  bytes: number;
}

/**
 * Where a tau2-bench release's data comes from: the repository (`owner/name`), the full commit
 * and, per domain folder (`airline`, `retail`), each file's pin.
 */
export interface Tau2DataPin {
  repo: string;
  commit: string;
  domains: Readonly<Record<string, Readonly<Record<string, Tau2FilePin>>>>;
}

/** GitHub's raw file host. */
export const RAW_GITHUB = 'https://raw.githubusercontent.com';

/** URL of `file` of domain folder `folder` at the pinned commit. */
export function tau2FileUrl(pin: Tau2DataPin, folder: string, file: string, base: string = RAW_GITHUB): string {
  return `${base.replace(/\/$/, '')}/${pin.repo}/${pin.commit}/data/tau2/domains/${folder}/${file}`;
}

/** Total download size of a domain folder, bytes. @throws Error when the pin has no such folder. */
export function tau2FolderBytes(pin: Tau2DataPin, folder: string): number {
  const files = pin.domains[folder];
  if (!files)
    throw new Error(`no pinned tau2-bench data for "${folder}" (known: ${Object.keys(pin.domains).join(', ')})`);
  return Object.values(files).reduce((n, f) => n + f.bytes, 0);
}

/** sha256 of `bytes` as lower-case hex (WebCrypto). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Verified file bytes by key (`<commit>/<folder>/<file>`). */
export interface Tau2Cache {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
}

/** Options of {@link fetchTau2Folder}. */
export interface FetchTau2Options {
  cache?: Tau2Cache;
  /** URL base with GitHub's raw layout. Default {@link RAW_GITHUB}. */
  base?: string;
  fetch?: typeof fetch;
  /** Bytes received so far (cached files count at once) of the folder's total. */
  onProgress?(done: number, total: number): void;
}

/**
 * The files of domain folder `folder` as text (file name → text), from the cache or downloaded.
 * A cached copy whose hash no longer matches is downloaded again.
 * @throws Error naming the URL on an HTTP error, and the file with both hashes on a sha256 or size
 *   mismatch (nothing is cached then).
 */
export async function fetchTau2Folder(
  pin: Tau2DataPin,
  folder: string,
  opts: FetchTau2Options = {},
): Promise<Record<string, string>> {
  const files = pin.domains[folder];
  const total = tau2FolderBytes(pin, folder);
  const get = opts.fetch ?? fetch;
  const received = new Map<string, number>();
  const report = () =>
    opts.onProgress?.(
      [...received.values()].reduce((a, b) => a + b, 0),
      total,
    );
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const one = async (file: string, want: Tau2FilePin): Promise<[string, string]> => {
    const key = `${pin.commit}/${folder}/${file}`;
    const cached = await opts.cache?.get(key).catch(() => undefined);
    if (cached && cached.length === want.bytes && (await sha256Hex(cached)) === want.sha256) {
      received.set(file, want.bytes);
      report();
      return [file, decoder.decode(cached)];
    }
    const url = tau2FileUrl(pin, folder, file, opts.base);
    const res = await get(url);
    if (!res.ok) throw new Error(`tau2-bench ${folder}/${file}: HTTP ${res.status} from ${url}`);
    const bytes = await readBody(res, (n) => {
      received.set(file, n);
      report();
    });
    const got = await sha256Hex(bytes);
    if (got !== want.sha256 || bytes.length !== want.bytes)
      throw new Error(
        `tau2-bench ${folder}/${file} from ${url}: sha256 ${got} (${bytes.length} bytes), expected ${want.sha256} (${want.bytes} bytes) at commit ${pin.commit}`,
      );
    await opts.cache?.put(key, bytes).catch(() => undefined);
    return [file, decoder.decode(bytes)];
  };
  return Object.fromEntries(await Promise.all(Object.entries(files!).map(([f, w]) => one(f, w))));
}

/** A response body as bytes, reporting the bytes received so far. */
async function readBody(res: Response, progress: (n: number) => void): Promise<Uint8Array> {
  if (!res.body) {
    const b = new Uint8Array(await res.arrayBuffer());
    progress(b.length);
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
  return out;
}
