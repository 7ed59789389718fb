/**
 * Browser model worker: on-device models through @huggingface/transformers, served to the page
 * through comlink (see `src/adapters/shared/local-model-service.ts`). Runs on WebGPU when the
 * worker's `navigator.gpu` gives an adapter, on WASM otherwise. Local files only: models come
 * from the models folder URL the page passes to `load` (the hub is switched off), and
 * onnxruntime-web's WASM files are this site's bundled copies (transformers.js would otherwise
 * fetch them from a CDN). Started by `src/adapters/browser/local-model.ts`.
 */
import { expose } from 'comlink';
import { env } from '@huggingface/transformers';
// The onnxruntime-web transformers.js itself imports (its own nested copy; the versions must match).
import ortMjs from '../node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs?url';
import ortWasm from '../node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm?url';
import type { LocalDevice } from '../src/adapters/shared/local-model-engine.ts';
import {
  createLocalModelService,
  pickDevice,
  type LocalModelService,
} from '../src/adapters/shared/local-model-service.ts';

const wasm = env.backends.onnx.wasm;
if (wasm)
  wasm.wasmPaths = { mjs: new URL(ortMjs, self.location.href).href, wasm: new URL(ortWasm, self.location.href).href };

/** `navigator.gpu` alone is not enough (headless or --disable-gpu Chromium): it must give an adapter. */
const gpu = (self.navigator as { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
const offered: Promise<LocalDevice> = (async () => {
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  return pickDevice(adapter ? { gpu } : {});
})();

let device: LocalDevice = 'wasm';
const service = createLocalModelService(() => device);
const api: LocalModelService = {
  async load(manifest, id, modelsPath, hub, onProgress) {
    device = await offered;
    return service.load(manifest, id, modelsPath, hub, onProgress);
  },
  async loadRecognizer(manifest, id, modelsPath, hub, onProgress) {
    device = await offered;
    return service.loadRecognizer(manifest, id, modelsPath, hub, onProgress);
  },
  transcribe: (audio) => service.transcribe(audio),
  generate: (request) => service.generate(request),
  dispose: () => service.dispose(),
};
expose(api);
