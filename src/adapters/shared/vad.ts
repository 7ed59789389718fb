/**
 * Silero VAD v5 (the `silero_vad_v5.onnx` that `@ricky0123/vad-web` ships, MIT) run with
 * onnxruntime-web's WASM backend, in the page, a Worker or Node. No network: the caller hands
 * over the model bytes and, outside a bundler, the folder of onnxruntime-web's `.wasm` files.
 *
 * The model reads 512-sample frames at 16 kHz (32 ms) preceded by the last 64 samples of the
 * previous frame, and carries a recurrent state of shape [2, 1, 128]; it returns the speech
 * probability of the frame. Segments are formed with hysteresis like silero-vad's
 * `get_speech_timestamps` defaults (threshold 0.5, release 0.35, minimum speech 250 ms,
 * minimum silence 100 ms, 30 ms padding).
 */
import * as ort from 'onnxruntime-web';
import type { SpeechDetector, SpeechSegment } from '../../core/channel/caller-audio.ts';
import { SPEECH_RATE_HZ } from '../../core/audio/pcm.ts';

/** Frame of Silero v5 at 16 kHz: 512 samples (32 ms). */
export const VAD_FRAME = 512;
/** Context carried over from the previous frame: 64 samples (silero-vad's ONNX wrapper). */
export const VAD_CONTEXT = 64;

/** Segmenting settings; defaults follow silero-vad's `get_speech_timestamps`. */
export interface VadOptions {
  /** Speech starts at a frame probability ≥ this (default 0.5). */
  threshold?: number;
  /** Speech ends below this (default threshold − 0.15). */
  releaseThreshold?: number;
  /** Shorter segments are dropped, ms (default 250). */
  minSpeechMs?: number;
  /** Shorter pauses do not end a segment, ms (default 100). */
  minSilenceMs?: number;
  /** Padding added on both sides of a segment, ms (default 30). */
  padMs?: number;
}

/** Where the model and the runtime's files are. */
export interface SileroSource {
  /** Contents of `silero_vad_v5.onnx`. */
  model: Uint8Array;
  /**
   * Folder (path or URL prefix, ending in `/`) holding onnxruntime-web's `ort-wasm-*.wasm`; in
   * Node, `node_modules/onnxruntime-web/dist/`. Omit it when a bundler serves them.
   */
  wasmPaths?: string;
}

/** Frame-level speech probabilities of 16 kHz audio (one per 512-sample frame). */
export interface SileroVad extends SpeechDetector {
  probabilities(samples: Float32Array): Promise<Float32Array>;
}

/** Load Silero VAD v5. Single-threaded WASM (no cross-origin isolation or workers needed). */
export async function loadSileroVad(src: SileroSource, opts: VadOptions = {}): Promise<SileroVad> {
  ort.env.wasm.numThreads = 1;
  if (src.wasmPaths) ort.env.wasm.wasmPaths = src.wasmPaths;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(src.model, { executionProviders: ['wasm'] });
  const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(SPEECH_RATE_HZ)]), []);

  async function probabilities(samples: Float32Array): Promise<Float32Array> {
    const frames = Math.ceil(samples.length / VAD_FRAME);
    const out = new Float32Array(frames);
    let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    const input = new Float32Array(VAD_CONTEXT + VAD_FRAME);
    for (let f = 0; f < frames; f++) {
      // Context: the previous frame's last 64 samples (zeros before the first frame).
      input.copyWithin(0, VAD_FRAME, VAD_FRAME + VAD_CONTEXT);
      if (f === 0) input.fill(0, 0, VAD_CONTEXT);
      const chunk = samples.subarray(f * VAD_FRAME, Math.min(samples.length, (f + 1) * VAD_FRAME));
      input.fill(0, VAD_CONTEXT);
      input.set(chunk, VAD_CONTEXT);
      const res = await session.run({ input: new ort.Tensor('float32', input.slice(), [1, input.length]), state, sr });
      state = res.stateN as ort.Tensor as typeof state;
      out[f] = (res.output!.data as Float32Array)[0] as number;
    }
    return out;
  }

  return {
    id: 'silero-vad-v5',
    probabilities,
    async segments(samples, sampleRate) {
      if (sampleRate !== SPEECH_RATE_HZ)
        throw new RangeError(`Silero VAD here takes 16 kHz audio, got ${sampleRate} Hz`);
      return speechSegments(await probabilities(samples), samples.length, opts);
    },
  };
}

/**
 * Speech segments (ms) from frame probabilities with hysteresis: a segment opens at a frame
 * ≥ `threshold`, closes after `minSilenceMs` below `releaseThreshold`, is dropped when shorter
 * than `minSpeechMs`, and is padded by `padMs` on both sides (clamped to the audio).
 */
export function speechSegments(probs: Float32Array, length: number, opts: VadOptions = {}): SpeechSegment[] {
  const frameMs = (VAD_FRAME * 1000) / SPEECH_RATE_HZ;
  const on = opts.threshold ?? 0.5;
  const off = opts.releaseThreshold ?? Math.max(0.01, on - 0.15);
  const minSpeech = opts.minSpeechMs ?? 250;
  const minSilence = opts.minSilenceMs ?? 100;
  const pad = opts.padMs ?? 30;
  const totalMs = (length * 1000) / SPEECH_RATE_HZ;
  const raw: SpeechSegment[] = [];
  let start = -1;
  let silentSince = -1;
  for (let f = 0; f < probs.length; f++) {
    const p = probs[f] as number;
    const t = f * frameMs;
    if (start < 0) {
      if (p >= on) start = t;
      continue;
    }
    if (p >= off) silentSince = -1;
    else if (silentSince < 0) silentSince = t;
    else if (t + frameMs - silentSince >= minSilence) {
      raw.push({ startMs: start, endMs: silentSince });
      start = -1;
      silentSince = -1;
    }
  }
  if (start >= 0)
    raw.push({ startMs: start, endMs: silentSince >= 0 ? silentSince : Math.min(totalMs, probs.length * frameMs) });
  return raw
    .filter((s) => s.endMs - s.startMs >= minSpeech)
    .map((s) => ({ startMs: Math.max(0, s.startMs - pad), endMs: Math.min(totalMs, s.endMs + pad) }));
}
