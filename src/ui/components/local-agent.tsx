/**
 * The on-device agent option: the agents of the page's models folder (`/models/manifest.json`;
 * the dev server serves the repository's `models/`, a static build needs the folder copied
 * beside it), the device this browser offers (WebGPU or WASM), and loading the chosen agent
 * into a model worker, which reports the device it really runs on.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText, mainWorker } from '../runtime.ts';

/** Agent ids of a manifest: its agents, and its chat models alone (text only). */
function agentIds(json: unknown): string[] {
  const m = json as { models?: { id?: unknown; task?: unknown }[]; agents?: { id?: unknown }[] } | null;
  const ids = (m?.agents ?? []).map((a) => a.id).filter((x): x is string => typeof x === 'string');
  for (const x of m?.models ?? []) if (x.task === 'text-generation' && typeof x.id === 'string') ids.push(x.id);
  return ids;
}

/** What this browser offers before anything loads: WebGPU when it gives an adapter, else WASM. */
async function browserDevice(): Promise<'webgpu' | 'wasm'> {
  const gpu = (navigator as { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
  if (!gpu) return 'wasm';
  try {
    return (await gpu.requestAdapter()) ? 'webgpu' : 'wasm';
  } catch {
    return 'wasm';
  }
}

const DEVICE_TEXT = { webgpu: 'WebGPU', wasm: 'WASM (CPU)' } as const;

/** Picker and loader of an on-device agent. */
export function LocalAgentPicker({
  value,
  onChange,
  disabled,
}: {
  value: string;
  onChange(id: string): void;
  disabled?: boolean;
}) {
  const [ids, setIds] = useState<string[] | null>();
  const [offered, setOffered] = useState<'webgpu' | 'wasm'>();
  const [state, setState] = useState<{ busy?: boolean; device?: string; error?: string }>({});
  useEffect(() => {
    void browserDevice().then(setOffered);
    fetch('/models/manifest.json')
      .then((r) => (r.ok ? r.json() : null))
      .then((j: unknown) => {
        const list = j ? agentIds(j) : null;
        setIds(list);
        if (list?.length && !list.includes(value)) onChange(list[0]!);
      })
      .catch(() => setIds(null));
  }, []);
  const load = async () => {
    setState({ busy: true });
    try {
      const { device } = await mainWorker().service.loadLocal(value);
      setState({ device });
    } catch (e) {
      setState({ error: errorText(e) });
    }
  };
  return (
    <fieldset class="endpoint" id="local-agent">
      <legend>
        On-device agent (runs in this tab; model files from this site's /models/ folder, never from the hub)
      </legend>
      {ids === undefined && <span class="muted">looking for /models/manifest.json…</span>}
      {ids === null && (
        <span class="muted" id="local-none">
          No models folder here: run <code>npm run models:fetch</code> and serve <code>models/</code> beside the page.
        </span>
      )}
      {ids && ids.length > 0 && (
        <>
          <label>
            Agent{' '}
            <select
              id="local-id"
              value={value}
              disabled={disabled || state.busy}
              onChange={(e) => {
                onChange(e.currentTarget.value);
                setState({});
              }}
            >
              {ids.map((id) => (
                <option key={id} value={id}>
                  {id}
                </option>
              ))}
            </select>
          </label>{' '}
          <button type="button" id="local-load" disabled={disabled || state.busy || !value} onClick={() => void load()}>
            {state.busy ? 'Loading…' : 'Load'}
          </button>
        </>
      )}{' '}
      <span id="local-device" aria-live="polite">
        Device:{' '}
        <strong>
          {state.device
            ? `${DEVICE_TEXT[state.device as 'webgpu' | 'wasm'] ?? state.device} (loaded)`
            : offered
              ? `${DEVICE_TEXT[offered]} (this browser)`
              : '…'}
        </strong>
      </span>
      {state.error && (
        <p role="alert" class="error" id="local-error">
          {state.error}
        </p>
      )}
    </fieldset>
  );
}
