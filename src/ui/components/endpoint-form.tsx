/** A remote OpenAI-compatible endpoint in the page: its settings form and how it is shared and stored. */
import type { EndpointSettings, ModelFlavor } from '../../adapters/browser/rollout-types.ts';
import { saveEndpoint } from '../runtime.ts';

/** A remote endpoint as a participant spec: the key only when set. */
export function endpointSpec(e: EndpointSettings): EndpointSettings {
  return {
    flavor: e.flavor,
    baseURL: e.baseURL,
    model: e.model,
    ...(e.apiKey ? { apiKey: e.apiKey } : {}),
    ...(e.temperature !== undefined ? { temperature: e.temperature } : {}),
  };
}

/** What is stored and shared of a remote endpoint: never the key. */
export function withoutKey(e: EndpointSettings): EndpointSettings {
  const { apiKey: _, ...rest } = e;
  return rest;
}

/** Shared settings of a remote participant over this machine's saved ones (the key stays local). */
export function sharedOver(saved: EndpointSettings, shared: EndpointSettings): EndpointSettings {
  return {
    ...saved,
    flavor: shared.flavor,
    model: shared.model,
    baseURL: shared.baseURL || saved.baseURL,
    ...(shared.temperature !== undefined ? { temperature: shared.temperature } : {}),
  };
}

/** Endpoint settings form (kept in localStorage only, under `storageKey` when given). */
export function EndpointForm({
  value,
  onChange,
  storageKey,
  who = 'agent',
}: {
  value: EndpointSettings;
  onChange(e: EndpointSettings): void;
  storageKey?: string;
  who?: 'agent' | 'caller';
}) {
  const set = (patch: Partial<EndpointSettings>) => {
    const next = { ...value, ...patch };
    saveEndpoint(next, storageKey);
    onChange(next);
  };
  return (
    <fieldset class="endpoint" data-endpoint={who}>
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
          value={value.apiKey ?? ''}
          onInput={(e) => set({ apiKey: e.currentTarget.value })}
          size={20}
        />
      </label>
    </fieldset>
  );
}
