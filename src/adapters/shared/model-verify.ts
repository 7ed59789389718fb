/**
 * Download checks of on-device model files: a `fetch` for transformers.js (`env.fetch`) that
 * passes every file of a manifest model through as it streams (progress stays live) and, at its
 * end, compares the bytes with the manifest's pinned `size` and `sha256`. A file that differs
 * errors its body, so transformers.js' loading rejects and the file never enters the browser's
 * Cache API nor Node's file cache (both store only a completely read body). Files the manifest
 * does not pin (`sha256: null`) and URLs of other files pass unchecked.
 *
 * Runs in the page's model worker and in Node (WebCrypto `crypto.subtle`, `TransformStream`).
 */
import type { ManifestModel } from './local-model-manifest.ts';

/** What one pinned file must be. */
interface Expected {
  /** `<repo>@<revision>/<path>`, for messages. */
  name: string;
  sha256: string;
  size: number | null;
}

/**
 * Thrown (as the body's error) for a downloaded file that is not the manifest's: its message
 * names the file, both sha256 (or sizes) and says the file was not loaded.
 */
export class ModelFileMismatchError extends Error {
  override name = 'ModelFileMismatchError';
}

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The URL of `path` of model `m` on Hub-layout host `host` (`<host><repo>/resolve/<revision>/<path>`),
 * as transformers.js builds it with `env.remotePathTemplate = '{model}/resolve/{revision}/'`.
 */
export function hubFileUrl(host: string, m: Pick<ManifestModel, 'repo' | 'revision'>, path: string): string {
  const base = host.endsWith('/') ? host : `${host}/`;
  return new URL(`${m.repo}/resolve/${encodeURIComponent(m.revision)}/${path}`, base).href;
}

/**
 * A `fetch` that checks the pinned files of `models` downloaded from `host` against the manifest
 * (exact size in bytes, then sha256 of the whole body).
 * @param models the manifest models being loaded
 * @param host the Hub-layout host (absolute URL)
 * @param inner the fetch to wrap (default the global `fetch`)
 * @returns a fetch whose responses for pinned files error their body with a
 *   {@link ModelFileMismatchError} when the bytes differ
 */
export function verifyingFetch(
  models: readonly ManifestModel[],
  host: string,
  inner: typeof fetch = (input, init) => fetch(input, init),
): (input: string | URL, init?: RequestInit) => Promise<Response> {
  const expected = new Map<string, Expected>();
  for (const m of models)
    for (const f of m.files)
      if (f.sha256)
        expected.set(hubFileUrl(host, m, f.path), {
          name: `${m.repo}@${m.revision}/${f.path}`,
          sha256: f.sha256,
          size: f.size,
        });
  return async (input, init) => {
    const res = await inner(input, init);
    const want = expected.get(new URL(String(input)).href);
    if (!want || !res.ok || !res.body) return res;
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    const check = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        chunks.push(chunk);
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      async flush(controller) {
        if (want.size !== null && bytes !== want.size) {
          controller.error(
            new ModelFileMismatchError(
              `${want.name}: ${bytes} bytes where the manifest pins ${want.size}; file not loaded`,
            ),
          );
          return;
        }
        const all = new Uint8Array(bytes);
        let at = 0;
        for (const c of chunks) {
          all.set(c, at);
          at += c.byteLength;
        }
        chunks.length = 0;
        const sum = hex(await crypto.subtle.digest('SHA-256', all));
        if (sum !== want.sha256)
          controller.error(
            new ModelFileMismatchError(
              `${want.name}: sha256 ${sum} does not match the manifest's ${want.sha256}; file not loaded`,
            ),
          );
      },
    });
    return new Response(res.body.pipeThrough(check), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
