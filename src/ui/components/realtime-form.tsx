/**
 * The realtime agent in the page: a voice agent behind an OpenAI-Realtime-compatible WebSocket
 * server (`--agent realtime:<ws-url>` in the CLI). Its settings form, the agent spec it makes and
 * what is stored of it. URL and model are saved in this browser; the key is saved in the key ring
 * for the URL's `ws(s)://` origin like an endpoint's, sent only there, and never stored with a
 * call or put in a share link (a link says only `agent=realtime`; the URL comes from this browser).
 */
import { useState } from 'preact/hooks';
import type { AgentSpec } from '../../adapters/browser/rollout-types.ts';
import { endpointOrigin, redactUrl } from '../../adapters/shared/endpoint-secrets.ts';
import { endpointKey, saveEndpointKey, saveRealtime, type RealtimeSettings } from '../runtime.ts';

/** True for a `ws://` or `wss://` URL with a host. */
export function isRealtimeUrl(url: string): boolean {
  return /^wss?:\/\/[^/\s]/i.test(url.trim());
}

/** The URL the agent connects to: the settings' URL with `model` as its query parameter (when given). */
export function realtimeUrl(s: RealtimeSettings): string {
  if (!s.model) return s.url.trim();
  try {
    const u = new URL(s.url.trim());
    u.searchParams.set('model', s.model);
    return u.href;
  } catch {
    return s.url.trim();
  }
}

/** The agent spec of the settings, with the key saved for the URL's origin (and no other). */
export function realtimeSpec(s: RealtimeSettings): Extract<AgentSpec, { kind: 'realtime' }> {
  const url = realtimeUrl(s);
  const apiKey = endpointKey(url);
  return { kind: 'realtime', url, dialect: s.dialect, ...(apiKey ? { apiKey } : {}) };
}

/** What is stored of a realtime agent (history records): never the key, and a redacted URL. */
export function storedRealtime(a: Extract<AgentSpec, { kind: 'realtime' }>): AgentSpec {
  return { kind: 'realtime', url: redactUrl(a.url), ...(a.dialect ? { dialect: a.dialect } : {}) };
}

/** The realtime agent's settings form. */
export function RealtimeForm({ value, onChange }: { value: RealtimeSettings; onChange(s: RealtimeSettings): void }) {
  const [, redraw] = useState(0);
  const set = (patch: Partial<RealtimeSettings>) => {
    const next = { ...value, ...patch };
    saveRealtime(next);
    onChange(next);
  };
  const origin = isRealtimeUrl(value.url) ? endpointOrigin(value.url) : null;
  return (
    <fieldset class="endpoint" data-endpoint="realtime">
      <legend>Realtime agent (OpenAI-Realtime WebSocket; saved in this browser only, never shared)</legend>
      <label>
        WebSocket URL{' '}
        <input
          name="realtime-url"
          value={value.url}
          placeholder="wss://host/v1/realtime"
          onInput={(e) => set({ url: e.currentTarget.value })}
          size={32}
        />
      </label>
      <label>
        Model{' '}
        <input
          name="realtime-model"
          value={value.model}
          onInput={(e) => set({ model: e.currentTarget.value })}
          size={18}
        />
      </label>
      <label>
        Events{' '}
        <select
          name="realtime-dialect"
          value={value.dialect}
          onChange={(e) => set({ dialect: e.currentTarget.value as 'ga' | 'beta' })}
        >
          <option value="ga">GA</option>
          <option value="beta">beta</option>
        </select>
      </label>
      <label>
        API key{' '}
        <input
          name="realtime-key"
          type="password"
          autoComplete="off"
          value={(origin && endpointKey(value.url)) || ''}
          disabled={!origin}
          onInput={(e) => {
            saveEndpointKey(value.url, e.currentTarget.value);
            saveRealtime(value);
            redraw((n) => n + 1);
            // The view's agent spec reads the key: have it drawn again.
            onChange({ ...value });
          }}
          size={20}
        />{' '}
        <small class="key-origin">
          {origin
            ? `sent only to ${origin}, as a WebSocket subprotocol (use a short-lived key)`
            : 'needs a ws:// or wss:// URL'}
        </small>
      </label>
    </fieldset>
  );
}
