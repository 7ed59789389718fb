/**
 * The on-device model service that `workers/model.worker.ts` exposes through comlink: load an
 * agent of the manifest from the models folder, then generate. Kept apart from the worker file
 * so that Node runs (and tests) the very same code in-process.
 */
import {
  loadLocalEngine,
  loadLocalTranscriber,
  type LocalRuntime,
  type LocalTranscriber,
  type DownloadProgress,
  type LocalDevice,
  type LocalEngine,
  type LocalGenerateRequest,
  type LocalGeneration,
} from './local-model-engine.ts';
import { parseManifest, resolveLocalAgent, resolveLocalAsr } from './local-model-manifest.ts';

/**
 * The device a page or worker runs models on: WebGPU when `navigator.gpu` exists, WASM
 * otherwise.
 */
export function pickDevice(nav: { gpu?: unknown } | undefined): LocalDevice {
  return nav && nav.gpu !== undefined && nav.gpu !== null ? 'webgpu' : 'wasm';
}

/** What the model worker offers. All methods are async (comlink). */
export interface LocalModelService {
  /**
   * Load agent `id` of `manifest` (the parsed or raw `manifest.json`) from `modelsPath`, or with
   * `hub` from that Hub-layout host (`onProgress` gets each file's bytes as they arrive).
   * Replaces a loaded agent. Resolves to the device used.
   */
  load(
    manifest: unknown,
    id: string,
    modelsPath: string,
    hub?: string,
    onProgress?: (p: DownloadProgress) => void,
  ): Promise<{ device: LocalDevice }>;
  generate(request: LocalGenerateRequest): Promise<LocalGeneration>;
  /**
   * Load speech recognizer `id` (an `automatic-speech-recognition` model of `manifest`) as
   * {@link load} loads an agent; replaces a loaded recognizer. Resolves to the device used.
   */
  loadRecognizer(
    manifest: unknown,
    id: string,
    modelsPath: string,
    hub?: string,
    onProgress?: (p: DownloadProgress) => void,
  ): Promise<{ device: LocalDevice }>;
  /**
   * What the loaded recognizer hears in `audio` (16 kHz mono samples), trimmed; `language`
   * (BCP-47, the domain's) is the language a multilingual Whisper decodes in.
   */
  transcribe(audio: Float32Array, language?: string): Promise<string>;
  /** Free the agent's and the recognizer's models. */
  dispose(): Promise<void>;
}

/**
 * A {@link LocalModelService}. `device` is called at load time (the worker passes
 * `() => pickDevice(navigator)`; Node passes `() => 'cpu'`).
 */
export function createLocalModelService(device: () => LocalDevice): LocalModelService {
  let engine: LocalEngine | null = null;
  let recognizer: LocalTranscriber | null = null;
  /** Where the models of one load come from and run. */
  const runtime = (
    modelsPath: string,
    hub: string | undefined,
    onProgress: ((p: DownloadProgress) => void) | undefined,
  ): LocalRuntime => ({
    modelsPath,
    device: device(),
    ...(hub ? { hub: { host: hub, ...(onProgress ? { onProgress } : {}) } } : {}),
  });
  return {
    async loadRecognizer(manifest, id, modelsPath, hub, onProgress) {
      const model = resolveLocalAsr(parseManifest(manifest), id);
      await recognizer?.dispose();
      recognizer = null;
      const r = runtime(modelsPath, hub, onProgress);
      recognizer = await loadLocalTranscriber(model, r);
      return { device: r.device };
    },
    async transcribe(audio, language) {
      if (!recognizer) throw new Error('no speech recognizer loaded: call loadRecognizer() first');
      return recognizer.transcribe(audio, language);
    },
    async load(manifest, id, modelsPath, hub, onProgress) {
      const agent = resolveLocalAgent(parseManifest(manifest), id);
      await engine?.dispose();
      engine = null;
      const r = runtime(modelsPath, hub, onProgress);
      engine = await loadLocalEngine(agent, r);
      return { device: r.device };
    },
    async generate(request) {
      if (!engine) throw new Error('no on-device model loaded: call load() first');
      return engine.generate(request);
    },
    async dispose() {
      await engine?.dispose();
      engine = null;
      await recognizer?.dispose();
      recognizer = null;
    },
  };
}
