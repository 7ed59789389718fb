/**
 * Secrets in endpoint URLs, and the origin an API key is bound to.
 *
 * A base URL can carry credentials: user info (`https://user:pw@host/v1`) or a query parameter
 * (`?api_key=…`, `?key=…`, `?token=…`, as some gateways take them). Such URLs are redacted before
 * anything is persisted or printed (trajectories, summaries, page history, error lines):
 * user info becomes `REDACTED@`, the value of every secret-looking query parameter becomes
 * `REDACTED`, the rest is kept so the reader still sees which endpoint it was.
 *
 * An API key saved in the page is bound to the origin of the base URL it was saved for: scheme,
 * host and port, as the URL Standard's `origin` (default ports omitted), so
 * `https://api.example/v1` and `https://api.example:443/v2` share a key and
 * `http://api.example/v1` does not.
 */

/** The marker that replaces a secret. */
export const REDACTED = 'REDACTED';

/**
 * Last words of query parameter names whose values are secrets; words are split at `_`, `-`,
 * `.` and lower-to-upper case changes (`apiKey` → `api_key`), compared in lower case.
 */
const SECRET_WORD =
  /(?:^|_)(?:key|apikey|token|accesstoken|secret|password|passwd|pwd|signature|sig|auth|code|credentials?)$/;

/**
 * True when a query parameter of that name holds a secret: `key`, `token`, `secret`,
 * `password`, `signature`, `sig`, `auth`, `code`, `credential(s)` alone or as the last word
 * (`api_key`, `api-key`, `apiKey`, `APIKEY`, `access_token`, `x-goog-api-key`, `client_secret`);
 * not `monkey` or `tokens_used`.
 */
export function isSecretParam(name: string): boolean {
  return SECRET_WORD.test(
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/[-.]/g, '_')
      .toLowerCase(),
  );
}

/**
 * The origin of an http(s) or ws(s) URL (`scheme://host[:port]`, lower case, default port
 * omitted), or null when `url` is not an absolute http, https, ws or wss URL (a realtime agent's
 * key is bound to its `ws(s)://` origin as an endpoint's is to its `http(s)://` one).
 */
export function endpointOrigin(url: string): string | null {
  try {
    const u = new URL(url.trim());
    return ['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * `url` with its credentials redacted: user info → `REDACTED@`, secret query values →
 * `REDACTED`, and no trailing slash. A string that is not a URL is returned with the same rules
 * applied textually ({@link redactText}).
 * @example redactUrl('https://u:pw@h.example/v1?api_key=sk-1&x=2') === 'https://REDACTED@h.example/v1?api_key=REDACTED&x=2'
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactText(url);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== 'ws:' && u.protocol !== 'wss:')
    return redactText(url);
  const userinfo = u.username !== '' || u.password !== '';
  u.username = '';
  u.password = '';
  if ([...u.searchParams.keys()].some(isSecretParam)) {
    const kept = [...u.searchParams].map(([k, v]) => [k, isSecretParam(k) ? REDACTED : v]);
    u.search = new URLSearchParams(kept).toString();
  }
  const text = u.toString().replace(/\/$/, '');
  return userinfo ? text.replace('://', `://${REDACTED}@`) : text;
}

/** A URL-looking run inside free text (scheme, then anything but white space and quotes), bounded. */
const URL_IN_TEXT = /\b(?:https?|wss?):\/\/[^\s"'<>`]{1,4096}/gi;

/**
 * `text` (an error message, a model spec like `vllm:m@https://u:p@h/v1`) with every http(s) /
 * ws(s) URL in it redacted as by {@link redactUrl}. Linear in the text's length.
 */
export function redactText(text: string): string {
  return text.replace(URL_IN_TEXT, (m) => {
    // A URL ends before trailing punctuation of the sentence around it.
    const tail = /[).,;:!?\]]+$/.exec(m)?.[0] ?? '';
    const body = tail ? m.slice(0, -tail.length) : m;
    try {
      new URL(body);
    } catch {
      return `${body.replace(/\/\/[^/@\s]*@/, `//${REDACTED}@`)}${tail}`;
    }
    return `${redactUrl(body)}${tail}`;
  });
}
