/**
 * A `fetch` that follows HTTP redirects by hand, only to URLs a check admits (issue 14): a policy
 * endpoint that `POST /rollout` was allowed to call must not lead the server, by answering 3xx,
 * to an address it was not allowed to call. Redirects are followed as the Fetch standard does
 * (WHATWG Fetch, "HTTP-redirect fetch": 303, and 301/302 after a POST, become a GET without a
 * body; 307/308 keep method and body; `Authorization` is dropped when the origin changes), at
 * most {@link MAX_REDIRECTS} hops.
 */
import { redactUrl } from './endpoint-secrets.ts';

/** Most redirects followed for one request (the Fetch standard allows 20; an API needs few). */
export const MAX_REDIRECTS = 5;

/** Why a redirect was not followed. Thrown from inside `fetch`, so clients see a transport fault. */
export class RedirectRefusedError extends Error {
  override name = 'RedirectRefusedError';
}

/**
 * `base` with redirects checked: each `Location` is resolved against the URL that answered and
 * passed to `refusal`, which returns null to follow it or a reason not to.
 * @throws RedirectRefusedError naming both URLs (credentials redacted) and the reason, or when
 *   there are more than {@link MAX_REDIRECTS} redirects.
 */
export function redirectCheckedFetch(base: typeof fetch, refusal: (url: string) => string | null): typeof fetch {
  return async (input, init) => {
    let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let opts: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const res = await base(url, opts);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status > 399 || location === null) return res;
      await res.body?.cancel().catch(() => {});
      const next = new URL(location, url).href;
      const from = `redirected (HTTP ${res.status}) from ${redactUrl(url)} to ${redactUrl(next)}`;
      const why = refusal(next);
      if (why) throw new RedirectRefusedError(`${from}, which is not followed: ${why}`);
      if (hop + 1 > MAX_REDIRECTS) throw new RedirectRefusedError(`${from}: more than ${MAX_REDIRECTS} redirects`);
      const method = (opts.method ?? 'GET').toUpperCase();
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        const { body: _body, ...rest } = opts;
        opts = { ...rest, method: 'GET' };
      }
      if (new URL(next).origin !== new URL(url).origin) {
        const headers = new Headers(opts.headers);
        headers.delete('authorization');
        opts = { ...opts, headers };
      }
      url = next;
    }
  };
}
