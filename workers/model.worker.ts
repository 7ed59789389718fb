/**
 * Browser model worker: on-device models through @huggingface/transformers, served to the page
 * through comlink (see `src/adapters/shared/local-model-service.ts`). Runs on WebGPU when the
 * worker's `navigator.gpu` exists, on WASM otherwise. Local files only: models come from the
 * models folder URL the page passes to `load` (the hub is switched off). Started by
 * `src/adapters/browser/local-model.ts`.
 */
import { expose } from 'comlink';
import { createLocalModelService, pickDevice } from '../src/adapters/shared/local-model-service.ts';

expose(createLocalModelService(() => pickDevice(self.navigator as { gpu?: unknown })));
