/**
 * On-device models in the page: a {@link LocalModelClient} whose engine runs in
 * `workers/model.worker.ts` (WebGPU or WASM), reached through comlink. With `hub`, the files are
 * downloaded on first use from a host with the Hugging Face Hub's layout (transformers.js' own
 * loading, cached by the browser) for the models of the bundled manifest (`model-hub.ts`);
 * otherwise the manifest and files come from the page's own origin (default `/models/`).
 */
import { proxy, wrap, type Remote } from 'comlink';
import type { DownloadProgress } from '../shared/local-model-engine.ts';
import { LocalModelClient } from '../shared/local-model-client.ts';
import type { LocalDevice } from '../shared/local-model-engine.ts';
import type { LocalModelService } from '../shared/local-model-service.ts';
import {
  agentModels,
  parseManifest,
  resolveLocalAgent,
  resolveLocalAsr,
  type ManifestModel,
} from '../shared/local-model-manifest.ts';

/**
 * Files the agent `id` needs that this site does not serve under `<modelsUrl><model id>/`
 * (a static server's HTML fallback page counts as missing). Same rule as the Node loader.
 */
export async function missingModelFiles(manifest: unknown, id: string, modelsUrl: string): Promise<string[]> {
  const agent = resolveLocalAgent(parseManifest(manifest), id);
  const files = agentModels(agent).flatMap((m) => m.files.map((f) => ({ path: `${m.id}/${f.path}`, size: f.size })));
  const missing = await Promise.all(
    files.map(async (f) => {
      const res = await fetch(`${modelsUrl}${f.path}`, { method: 'HEAD' }).catch(() => null);
      const type = res?.headers.get('content-type') ?? '';
      const length = Number(res?.headers.get('content-length') ?? NaN);
      const bad =
        !res?.ok || type.startsWith('text/html') || (f.size !== null && Number.isFinite(length) && length !== f.size);
      return bad ? f.path : null;
    }),
  );
  return missing.filter((x): x is string => x !== null);
}

/** Where the page finds models. */
export interface BrowserLocalModelOptions {
  /** URL path of the models folder (holding `manifest.json`). Default `/models/`. */
  modelsUrl?: string;
  /** Download from this Hub-layout host (absolute URL) with this manifest instead of the folder. */
  hub?: { host: string; manifest: unknown; onProgress?(p: DownloadProgress): void };
}

/** A loaded on-device agent in the page. */
export interface BrowserLocalModel {
  client: LocalModelClient;
  /** `webgpu` or `wasm`. */
  device: LocalDevice;
  /** Free the models and stop the worker. */
  dispose(): Promise<void>;
}

/**
 * Start a model worker and load agent `id` of the models folder's manifest into it.
 * @throws (rejects) when the manifest cannot be fetched, the id is unknown or a file is missing.
 */
export async function browserLocalModel(
  id: string,
  options: BrowserLocalModelOptions = {},
): Promise<BrowserLocalModel> {
  const base = options.modelsUrl ?? '/models/';
  const modelsUrl = base.endsWith('/') ? base : `${base}/`;
  const hub = options.hub;
  let manifest: unknown = hub?.manifest;
  if (!hub) {
    const res = await fetch(`${modelsUrl}manifest.json`);
    if (!res.ok) throw new Error(`cannot load ${modelsUrl}manifest.json: HTTP ${res.status}`);
    manifest = await res.json();
  }
  const missing = hub ? [] : await missingModelFiles(manifest, id, modelsUrl);
  if (missing.length) {
    throw new Error(
      `on-device agent "${id}" needs files that are not in ${modelsUrl}: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}. ` +
        'Run npm run models:fetch on a machine with internet and serve the models folder beside the page.',
    );
  }
  const { worker, service } = startModelWorker();
  try {
    const { device } = await service.load(
      manifest,
      id,
      modelsUrl,
      hub?.host,
      hub?.onProgress ? proxy(hub.onProgress) : undefined,
    );
    return {
      client: new LocalModelClient(id, { generate: (r) => service.generate(r) }),
      device,
      dispose: () => stopModelWorker(worker, service),
    };
  } catch (e) {
    worker.terminate();
    if (!hub) throw e;
    const models = agentModels(resolveLocalAgent(parseManifest(manifest), id));
    throw downloadError(`on-device agent "${id}"`, models, hub.host, e);
  }
}

/** A model worker and its comlink proxy. */
function startModelWorker(): { worker: Worker; service: Remote<LocalModelService> } {
  const worker = new Worker(new URL('../../../workers/model.worker.ts', import.meta.url), {
    type: 'module',
    name: 'switchboard-model',
  });
  return { worker, service: wrap<LocalModelService>(worker) };
}

/** Free a model worker's models and stop it. */
async function stopModelWorker(worker: Worker, service: Remote<LocalModelService>): Promise<void> {
  await service.dispose();
  worker.terminate();
}

/** Name what was being fetched from where: a bare "Failed to fetch" says neither. */
function downloadError(what: string, models: readonly ManifestModel[], host: string, e: unknown): Error {
  return new Error(
    `${what}: could not download ${models.map((m) => `${m.repo}@${m.revision}`).join(', ')} from ${host} (${e instanceof Error ? e.message : String(e)})`,
  );
}

/** A loaded speech recognizer in the page (the microphone's words as text). */
export interface BrowserRecognizer {
  /** What it hears in 16 kHz mono samples; `language` (BCP-47) as the domain speaks. */
  transcribe(audio: Float32Array, language?: string): Promise<string>;
  /** `webgpu` or `wasm`. */
  device: LocalDevice;
  dispose(): Promise<void>;
}

/**
 * Start a model worker and load speech recognizer `id` (an `automatic-speech-recognition` model
 * of `hub.manifest`) from the Hub-layout host `hub.host` (transformers.js' own loading, browser
 * cache, pinned files checked as they download).
 * @throws (rejects) naming the id, the repo at its revision and the host when it cannot be loaded.
 */
export async function browserRecognizer(
  id: string,
  hub: NonNullable<BrowserLocalModelOptions['hub']>,
): Promise<BrowserRecognizer> {
  const model = resolveLocalAsr(parseManifest(hub.manifest), id);
  const { worker, service } = startModelWorker();
  try {
    const { device } = await service.loadRecognizer(
      hub.manifest,
      id,
      '/models/',
      hub.host,
      hub.onProgress ? proxy(hub.onProgress) : undefined,
    );
    return {
      transcribe: (audio, language) => service.transcribe(audio, language),
      device,
      dispose: () => stopModelWorker(worker, service),
    };
  } catch (e) {
    worker.terminate();
    throw downloadError(`speech recognizer "${id}"`, [model], hub.host, e);
  }
}
