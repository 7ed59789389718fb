/**
 * On-device model pickers: the agents (and, for the microphone, the speech recognizers) of the
 * bundled manifest (`models/manifest.json`), each with its download size and pinned revision
 * before anything is fetched, the device this browser offers (WebGPU or WASM), and loading the
 * chosen one into a model worker — files downloaded from the Hugging Face Hub on first use with a
 * progress bar, then cached by the browser — which reports the device it really runs on.
 */
import { useEffect, useState } from 'preact/hooks';
import { proxy } from '../../adapters/browser/rollout-client.ts';
import { MODEL_MANIFEST } from '../../adapters/browser/model-hub.ts';
import { errorText, loadRecognizer, mainWorker } from '../runtime.ts';
import type { RecognizerRef } from '../share.ts';

type RawModel = {
  id?: string;
  repo?: string;
  revision?: string;
  files?: { path?: string; size?: number | null; sha256?: string | null }[];
};
type RawAgent = { id?: string; llm?: string; asr?: string; audio?: string };

/**
 * What agent `id` downloads: its models' repos at their revisions, the total bytes of the files
 * whose size the manifest pins, and whether every size is pinned.
 */
export function agentDownload(
  json: unknown,
  id: string,
): { models: { repo: string; revision: string }[]; bytes: number; exact: boolean; unpinned: string[] } {
  const m = json as { models?: RawModel[]; agents?: RawAgent[] } | null;
  const agent = m?.agents?.find((a) => a.id === id);
  const ids = agent ? [agent.asr, agent.llm, agent.audio].filter((x): x is string => !!x) : [id];
  const models = ids.map((x) => m?.models?.find((y) => y.id === x)).filter((x): x is RawModel => !!x);
  const files = models.flatMap((x) => x.files ?? []);
  return {
    models: models.map((x) => ({ repo: x.repo ?? '?', revision: x.revision ?? '?' })),
    bytes: files.reduce((n, f) => n + (f.size ?? 0), 0),
    exact: files.length > 0 && files.every((f) => typeof f.size === 'number'),
    unpinned: models.filter(isUnpinned).map((x) => x.repo ?? '?'),
  };
}

/**
 * A model the manifest does not pin: its revision is a branch name (not a 40-hex commit) or a
 * file has no sha256, so what downloads may change and is not checked.
 */
function isUnpinned(m: RawModel): boolean {
  return !/^[0-9a-f]{40}$/.test(m.revision ?? '') || (m.files ?? []).some((f) => !f.sha256);
}

/** `12.3 MB`. */
function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Agent ids of a manifest: its agents, and its chat models alone (text only). */
function agentIds(json: unknown): string[] {
  const m = json as { models?: { id?: unknown; task?: unknown }[]; agents?: { id?: unknown }[] } | null;
  const ids = (m?.agents ?? []).map((a) => a.id).filter((x): x is string => typeof x === 'string');
  for (const x of m?.models ?? []) if (x.task === 'text-generation' && typeof x.id === 'string') ids.push(x.id);
  return ids;
}

/** Speech recognizers of a manifest (its `automatic-speech-recognition` models): id and pinned revision. */
export function asrModels(json: unknown): RecognizerRef[] {
  const m = json as { models?: { id?: unknown; task?: unknown; revision?: unknown }[] } | null;
  return (m?.models ?? [])
    .filter((x) => x.task === 'automatic-speech-recognition' && typeof x.id === 'string')
    .map((x) => ({ id: x.id as string, revision: typeof x.revision === 'string' ? x.revision : '' }));
}

/** Speech recognizer ids of a manifest. */
function asrIds(json: unknown): string[] {
  return asrModels(json).map((r) => r.id);
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

/** Bytes of one file so far, as the model worker reports them. */
type FileProgress = { file: string; loaded: number; total: number };

/**
 * Picker and loader of one kind of on-device model. Element ids start with `prefix`
 * (`<prefix>-id`, `-load`, `-size`, `-progress`, `-device`, `-error`, `-none`).
 */
function LocalModelPicker({
  prefix,
  legend,
  ids: listIds,
  load: loadModel,
  value,
  onChange,
  disabled,
}: {
  prefix: string;
  legend: string;
  /** The ids this picker offers, from the manifest. */
  ids(manifest: unknown): string[];
  /** Load `id`, reporting each file's bytes; resolves with the device it runs on. */
  load(id: string, onProgress: (p: FileProgress) => void): Promise<{ device: string }>;
  value: string;
  onChange(id: string): void;
  disabled?: boolean;
}) {
  const [ids, setIds] = useState<string[] | null>();
  const [offered, setOffered] = useState<'webgpu' | 'wasm'>();
  const [state, setState] = useState<{ busy?: boolean; device?: string; error?: string }>({});
  const [progress, setProgress] = useState<{ loaded: number; total: number }>();
  useEffect(() => {
    void browserDevice().then(setOffered);
    const list = listIds(MODEL_MANIFEST);
    setIds(list.length ? list : null);
    if (list.length && !list.includes(value)) onChange(list[0]!);
  }, []);
  const size = value ? agentDownload(MODEL_MANIFEST, value) : undefined;
  const load = async () => {
    setState({ busy: true });
    setProgress(undefined);
    const files = new Map<string, { loaded: number; total: number }>();
    try {
      const { device } = await loadModel(value, (p) => {
        files.set(p.file, p);
        let loaded = 0;
        let total = 0;
        for (const f of files.values()) {
          loaded += f.loaded;
          total += f.total;
        }
        setProgress({ loaded, total });
      });
      setState({ device });
    } catch (e) {
      setState({ error: errorText(e) });
    }
  };
  return (
    <fieldset class="endpoint" id={`${prefix}-picker`}>
      <legend>{legend}</legend>
      {ids === null && (
        <span class="muted" id={`${prefix}-none`}>
          The page's model manifest lists none.
        </span>
      )}
      {ids && ids.length > 0 && (
        <>
          <label>
            Model{' '}
            <select
              id={`${prefix}-id`}
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
          <button
            type="button"
            id={`${prefix}-load`}
            disabled={disabled || state.busy || !value}
            onClick={() => void load()}
          >
            {state.busy ? 'Loading…' : 'Download and load'}
          </button>{' '}
          {size && (
            <span class="muted" id={`${prefix}-size`}>
              {size.exact ? mb(size.bytes) : `${mb(size.bytes)} + files of unpinned size`} from{' '}
              {size.models
                .map((m) => `${m.repo}@${m.revision.length === 40 ? m.revision.slice(0, 12) : m.revision}`)
                .join(', ')}
            </span>
          )}
          {size && size.unpinned.length > 0 && (
            <p role="note" class="warning" id={`${prefix}-unpinned`}>
              Not pinned: {size.unpinned.join(', ')} {size.unpinned.length === 1 ? 'has' : 'have'} no commit or sha256
              in the page's model manifest, so the files downloaded are whatever the Hub serves now and are not checked.
              On a machine with internet, <code>npm run models:fetch -- --pin</code> records them.
            </p>
          )}
          {state.busy && progress && (
            <>
              {' '}
              <progress id={`${prefix}-progress`} max={progress.total || undefined} value={progress.loaded} />{' '}
              <span class="muted">
                {mb(progress.loaded)} of {mb(progress.total)}
              </span>
            </>
          )}
        </>
      )}{' '}
      <span id={`${prefix}-device`} aria-live="polite">
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
        <p role="alert" class="error" id={`${prefix}-error`}>
          {state.error}
        </p>
      )}
    </fieldset>
  );
}

/** Picker and loader of an on-device agent (loaded into the rollout worker's model worker). */
export function LocalAgentPicker(props: { value: string; onChange(id: string): void; disabled?: boolean }) {
  return (
    <LocalModelPicker
      prefix="local"
      legend="On-device agent (runs in this tab; downloaded from the Hugging Face Hub on first use, then cached)"
      ids={agentIds}
      load={(id, onProgress) => mainWorker().service.loadLocal(id, proxy(onProgress))}
      {...props}
    />
  );
}

/**
 * Picker and loader of the speech recognizer that turns the caller's recorded voice into the
 * words of their turn (runs in its own model worker in this tab).
 */
export function RecognizerPicker(props: { value: string; onChange(id: string): void; disabled?: boolean }) {
  return (
    <LocalModelPicker
      prefix="asr"
      legend="Speech recognition of your voice (runs in this tab; downloaded from the Hugging Face Hub on first use, then cached)"
      ids={asrIds}
      load={loadRecognizer}
      {...props}
    />
  );
}
