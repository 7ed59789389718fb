/**
 * Local files of Silero VAD in Node: the model from `@ricky0123/vad-web/dist/silero_vad_v5.onnx`
 * and onnxruntime-web's WASM folder, both from node_modules (no download).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadSileroVad, type SileroSource, type SileroVad, type VadOptions } from '../../shared/vad.ts';

const require = createRequire(import.meta.url);

/** Model bytes and WASM folder for {@link loadSileroVad}. */
export async function nodeSileroSource(): Promise<SileroSource> {
  // Both packages' main entries sit in their dist/ folders, next to the files we need.
  const vadDist = dirname(require.resolve('@ricky0123/vad-web'));
  const ortDist = dirname(require.resolve('onnxruntime-web'));
  return {
    model: new Uint8Array(await readFile(join(vadDist, 'silero_vad_v5.onnx'))),
    wasmPaths: `${pathToFileURL(ortDist).href}/`,
  };
}

/** Silero VAD v5 loaded from node_modules. */
export async function nodeSileroVad(opts: VadOptions = {}): Promise<SileroVad> {
  return loadSileroVad(await nodeSileroSource(), opts);
}
