import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { endpointOrigin, isSecretParam, redactText, redactUrl } from '../../src/adapters/shared/endpoint-secrets.ts';
import { endpointsToConfirm, keyFor, openLink, sharedOver, withKey, type KeyRing } from '../../src/ui/endpoint-keys.ts';
import { paramsSpec, parseHash } from '../../src/ui/share.ts';
import type { EndpointSettings } from '../../src/adapters/browser/rollout-types.ts';

describe('endpoint origins and redaction', () => {
  it('gives the origin a key is bound to: scheme, host and port, default port omitted', () => {
    expect(endpointOrigin('https://API.Example:443/v1/')).toBe('https://api.example');
    expect(endpointOrigin('https://api.example:8443/v1')).toBe('https://api.example:8443');
    expect(endpointOrigin('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000');
    expect(endpointOrigin('https://u:pw@api.example/v1?api_key=x')).toBe('https://api.example');
    expect(endpointOrigin('https://api.example@evil.test/v1')).toBe('https://evil.test');
    expect(endpointOrigin('wss://RT.example/v1/realtime?model=m')).toBe('wss://rt.example');
    expect(endpointOrigin('ws://127.0.0.1:9000/v1/realtime')).toBe('ws://127.0.0.1:9000');
    expect(endpointOrigin('ftp://files.example/x')).toBeNull();
    expect(endpointOrigin('javascript:alert(1)')).toBeNull();
    expect(endpointOrigin('api.example/v1')).toBeNull();
    expect(endpointOrigin('')).toBeNull();
  });

  it('redacts user info and secret query values, keeping the rest readable', () => {
    expect(redactUrl('https://u:pw@h.example/v1?api_key=sk-1&x=2')).toBe(
      'https://REDACTED@h.example/v1?api_key=REDACTED&x=2',
    );
    expect(redactUrl('https://user@h.example/v1/')).toBe('https://REDACTED@h.example/v1');
    expect(
      redactUrl('https://h/v1?key=a&token=b&model=c&apiKey=d&APIKEY=e&access_token=f&tokens_used=1&monkey=2'),
    ).toBe(
      'https://h/v1?key=REDACTED&token=REDACTED&model=c&apiKey=REDACTED&APIKEY=REDACTED&access_token=REDACTED&tokens_used=1&monkey=2',
    );
    expect(redactUrl('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000/v1');
    expect(redactUrl('wss://u:p@h/ws?token=t')).toBe('wss://REDACTED@h/ws?token=REDACTED');
    expect(redactUrl('not a url')).toBe('not a url');
    expect(['x-goog-api-key', 'client_secret', 'sig', 'password', 'Code'].map(isSecretParam)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['model', 'keyword', 'monkey', 'tokens_used', 'api_version'].map(isSecretParam)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('redacts every URL inside an error line or a model spec, not the words around it', () => {
    expect(redactText('vllm:m at https://u:p@h.example/v1?api_key=sk-9: HTTP 503 (2 attempts).')).toBe(
      'vllm:m at https://REDACTED@h.example/v1?api_key=REDACTED: HTTP 503 (2 attempts).',
    );
    expect(redactText('unknown agent "bogus:m@http://a:b@127.0.0.1:9/v1?token=t" (known: reference)')).toBe(
      'unknown agent "bogus:m@http://REDACTED@127.0.0.1:9/v1?token=REDACTED" (known: reference)',
    );
    expect(redactText('see (https://h.example/docs?key=k), then retry')).toBe(
      'see (https://h.example/docs?key=REDACTED), then retry',
    );
    expect(redactText('no URL here: key=abc')).toBe('no URL here: key=abc');
  });
});

describe('API keys bound to origins', () => {
  const ring: KeyRing = { 'https://api.example': 'sk-A' };

  it('gives a key only to a base URL of the origin it was saved for', () => {
    expect(keyFor(ring, 'https://api.example/v1')).toBe('sk-A');
    expect(keyFor(ring, 'https://api.example:443/other')).toBe('sk-A');
    expect(keyFor(ring, 'http://api.example/v1')).toBeUndefined();
    expect(keyFor(ring, 'https://api.example:8443/v1')).toBeUndefined();
    expect(keyFor(ring, 'https://api.example.evil.test/v1')).toBeUndefined();
    expect(keyFor(ring, 'https://api.example@evil.test/v1')).toBeUndefined();
    expect(keyFor({ ...ring, toString: 'x' } as KeyRing, 'javascript:toString')).toBeUndefined();
  });

  it('saves and forgets keys per origin', () => {
    const two = withKey(ring, 'http://127.0.0.1:8000/v1', 'sk-B');
    expect(two).toEqual({ 'https://api.example': 'sk-A', 'http://127.0.0.1:8000': 'sk-B' });
    expect(withKey(two, 'https://api.example/v2', 'sk-A2')).toEqual({
      'http://127.0.0.1:8000': 'sk-B',
      'https://api.example': 'sk-A2',
    });
    expect(withKey(two, 'https://API.example:443', '')).toEqual({ 'http://127.0.0.1:8000': 'sk-B' });
    expect(withKey(two, 'not a url', 'sk-C')).toBe(two);
  });

  it('asks before calling an endpoint of a link that differs from the saved one', () => {
    const saved = { agent: 'https://api.example/v1' };
    expect(
      endpointsToConfirm(
        [
          { who: 'agent', baseURL: 'https://api.example/v2' },
          { who: 'caller', baseURL: 'https://api.example/v1' },
        ],
        saved,
      ),
    ).toEqual([{ who: 'caller', baseURL: 'https://api.example/v1' }]); // no caller saved: ask
    expect(endpointsToConfirm([{ who: 'agent', baseURL: 'http://api.example/v1' }], saved)).toEqual([
      { who: 'agent', baseURL: 'http://api.example/v1' },
    ]);
  });
});

interface CorpusLink {
  name: string;
  hash: string;
  confirm: ('agent' | 'caller')[];
  keys: Partial<Record<'agent' | 'caller', string | null>>;
}
const corpus = JSON.parse(readFileSync(new URL('../fixtures/attacks/links/links.json', import.meta.url), 'utf8')) as {
  saved: { agent: string; caller: string; keys: KeyRing };
  links: CorpusLink[];
};

describe('crafted share links (test/fixtures/attacks/links)', () => {
  const settings = (baseURL: string): EndpointSettings => ({ flavor: 'openai', baseURL, model: 'mine' });
  const saved = { agent: settings(corpus.saved.agent), caller: settings(corpus.saved.caller) };
  const fallback = settings('http://127.0.0.1:8000/v1');

  it.each(corpus.links.map((l) => [l.name, l] as const))('%s', (_name, link) => {
    const opened = openLink(paramsSpec(parseHash(link.hash).params), saved, fallback, true);
    expect(opened.confirm.map((c) => c.who)).toEqual(link.confirm);
    for (const [who, key] of Object.entries(link.keys)) {
      const endpoint = who === 'agent' ? opened.agent : opened.caller;
      expect([who, keyFor(corpus.saved.keys, endpoint.baseURL) ?? null]).toEqual([who, key]);
      // Nothing of the link's base URL credentials survives into the settings used for the call.
      expect(endpoint.baseURL).not.toMatch(/sk-LINK|pw@/);
      expect(endpoint).not.toHaveProperty('apiKey');
    }
  });

  it('takes the link over the saved settings, never a key from either', () => {
    const merged = sharedOver(
      { ...settings('https://api.example/v1'), apiKey: 'sk-old', temperature: 0.2 },
      settings('https://evil.test/v1'),
    );
    expect(merged).toEqual({ flavor: 'openai', baseURL: 'https://evil.test/v1', model: 'mine', temperature: 0.2 });
  });
});
