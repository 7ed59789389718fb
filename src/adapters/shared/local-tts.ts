/**
 * On-device neural {@link Tts} through transformers.js (`--tts local:<id>`): a `text-to-speech`
 * model of `models/manifest.json` run from the models folder only (`env.allowRemoteModels =
 * false`), in Node (onnxruntime-node CPU) or the page (WASM / WebGPU). No `node:*` imports.
 *
 * The path is transformers.js's `text-to-speech` pipeline for a text-to-waveform model, i.e. VITS
 * (MMS-TTS, `Xenova/mms-tts-*`): `config.json` with `model_type: "vits"` and `sampling_rate`, a
 * character-level `tokenizer.json` (+ `tokenizer_config.json`, `VitsTokenizer`), and one ONNX graph
 * `onnx/model.onnx` (`onnx/model_quantized.onnx` for `dtype: q8`) taking `input_ids` [batch,
 * tokens] and returning `waveform` [batch, samples]. The waveform is resampled from the model's
 * `sampling_rate` to 16 kHz mono and peak-limited to 0.9 FS like every TTS's speech
 * (`speechFromTtsSamples`).
 *
 * MMS-TTS models are one language each: `TtsVoice` is ignored. VITS samples noise inside its
 * graph, so a real model's speech is not bit-identical run to run.
 */
import { pipeline } from '@huggingface/transformers';
import type { Tts, TtsAudio } from '../../core/ports/tts.ts';
import { speechFromTtsSamples } from '../../core/audio/wav.ts';
import { SPEECH_RATE_HZ } from '../../core/audio/pcm.ts';
import { useLocalModelsOnly, type LocalRuntime } from './local-model-engine.ts';
import type { ManifestModel } from './local-model-manifest.ts';

/** Length of the silence returned for text the model's tokenizer keeps nothing of: 20 ms at 16 kHz. */
export const UNSPEAKABLE_SAMPLES = 320;

/** What the pipeline returns for one text (transformers.js `RawAudio`). */
interface RawAudioLike {
  audio: Float32Array;
  sampling_rate: number;
}

type Synthesizer = ((text: string) => Promise<RawAudioLike>) & {
  tokenizer: (text: string) => { input_ids: { dims: readonly number[] } };
  dispose(): Promise<void>;
};

/** A {@link Tts} over an on-device model that can free it. */
export interface LocalTts extends Tts {
  dispose(): Promise<void>;
}

/**
 * A {@link Tts} over the manifest's `text-to-speech` model `model`, loaded from
 * `runtime.modelsPath` on the first {@link Tts.synthesize} (one synthesis at a time).
 * @throws (rejects on first use) when a file is missing or the model cannot be loaded.
 */
export function localTts(model: ManifestModel, runtime: LocalRuntime): LocalTts {
  if (model.task !== 'text-to-speech')
    throw new Error(`model ${model.id} is a ${model.task} model, not text-to-speech`);
  let loaded: Promise<Synthesizer> | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  const load = async (): Promise<Synthesizer> => {
    useLocalModelsOnly(runtime.modelsPath);
    return (await pipeline('text-to-speech', model.id, {
      device: runtime.device,
      dtype: model.dtype as never,
    })) as unknown as Synthesizer;
  };
  const speak = async (text: string): Promise<TtsAudio> => {
    loaded ??= load();
    const synth = await loaded;
    // Text the tokenizer keeps nothing of (punctuation only, another script, …) is a short silence:
    // a VITS graph cannot run on zero tokens, and the channel needs some audio.
    if ((synth.tokenizer(text).input_ids.dims.at(-1) ?? 0) === 0)
      return { samples: new Float32Array(UNSPEAKABLE_SAMPLES), sampleRate: SPEECH_RATE_HZ };
    const out = await synth(text);
    return speechFromTtsSamples(out.audio, out.sampling_rate);
  };
  return {
    id: `local:${model.id}`,
    synthesize(text) {
      const run = queue.then(() => speak(text));
      queue = run.catch(() => undefined);
      return run;
    },
    async dispose() {
      const l = loaded;
      loaded = null;
      if (l) await (await l).dispose();
    },
  };
}
