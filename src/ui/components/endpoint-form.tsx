/** A remote OpenAI-compatible endpoint in the page: its settings form and how it is shared and stored. */
import type { EndpointSettings, ModelFlavor } from '../../adapters/browser/rollout-types.ts';
import { endpointOrigin, redactUrl } from '../../adapters/shared/endpoint-secrets.ts';
import { endpointKey, saveEndpointKey, saveEndpoint } from '../runtime.ts';

/**
 * A remote endpoint as a participant spec, with the key saved for its base URL's origin (and no
 * other: a key is never sent to an endpoint it was not saved for).
 */
export function endpointSpec(e: EndpointSettings): EndpointSettings {
  const apiKey = endpointKey(e.baseURL);
  return {
    flavor: e.flavor,
    baseURL: e.baseURL,
    model: e.model,
    ...(apiKey ? { apiKey } : {}),
    ...(e.temperature !== undefined ? { temperature: e.temperature } : {}),
  };
}

/** What is stored of a remote endpoint (history records): never the key, and a redacted base URL. */
export function storedEndpoint(e: EndpointSettings): EndpointSettings {
  const { apiKey: _, ...rest } = e;
  return { ...rest, baseURL: redactUrl(e.baseURL) };
}

/**
 * Endpoint settings form (kept in localStorage only, under `storageKey` when given). The API key
 * field shows and saves the key of the base URL's origin: changing the base URL to another
 * origin shows that origin's key (usually none), never carries the old one over. Typing a key
 * calls `onChange` with the same settings (a new object), so the view rebuilds its call settings
 * with the key before a Run.
 */
export function EndpointForm({
  value,
  onChange,
  storageKey,
  who = 'agent',
}: {
  value: EndpointSettings;
  onChange(e: EndpointSettings): void;
  storageKey?: string;
  /** Whose endpoint: the call's agent or caller, or the domain builder's code agent. */
  who?: 'agent' | 'caller' | 'code agent';
}) {
  const set = (patch: Partial<EndpointSettings>) => {
    const next = { ...value, ...patch };
    saveEndpoint(next, storageKey);
    onChange(next);
  };
  const origin = endpointOrigin(value.baseURL);
  return (
    <fieldset class="endpoint" data-endpoint={who === 'code agent' ? 'builder' : who}>
      <legend>Remote {who} endpoint (saved in this browser only; never shared)</legend>
      <label>
        Flavor{' '}
        <select value={value.flavor} onChange={(e) => set({ flavor: e.currentTarget.value as ModelFlavor })}>
          <option value="openai">openai</option>
          <option value="vllm">vllm</option>
          <option value="vllm-omni">vllm-omni</option>
        </select>
      </label>
      <label>
        Base URL{' '}
        <input type="url" value={value.baseURL} onInput={(e) => set({ baseURL: e.currentTarget.value })} size={32} />
      </label>
      <label>
        Model <input value={value.model} onInput={(e) => set({ model: e.currentTarget.value })} size={24} />
      </label>
      <label>
        API key{' '}
        <input
          type="password"
          autoComplete="off"
          value={(origin && endpointKey(value.baseURL)) || ''}
          disabled={!origin}
          onInput={(e) => {
            // Typing a key adopts this endpoint: its settings are saved with it.
            saveEndpointKey(value.baseURL, e.currentTarget.value);
            saveEndpoint(value, storageKey);
            // The view's participant specs read the key: have the view (and this form) drawn again.
            onChange({ ...value });
          }}
          size={20}
        />{' '}
        <small class="key-origin">{origin ? `sent only to ${origin}` : 'needs an http(s) base URL'}</small>
      </label>
    </fieldset>
  );
}
