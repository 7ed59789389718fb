/**
 * WAV files through the `wavefile` package (pure JavaScript: runs in the page, a Worker and
 * Node). Encoding always writes mono 16-bit PCM; the float → int16 step is ours
 * ({@link floatToInt16}: rounding and clipping).
 */
import wavefile from 'wavefile';
import { floatToInt16, limitPeakInPlace, SPEECH_PEAK_CEILING, SPEECH_RATE_HZ } from './pcm.ts';
import { resampleRate } from './resample.ts';

const { WaveFile } = wavefile;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Decoded audio: mono float samples in [-1, 1] and their rate. */
export interface DecodedAudio {
  samples: Float32Array;
  sampleRate: number;
}

/**
 * Encode mono float samples as a 16-bit PCM WAV file (RIFF, 44-byte header). Written directly
 * (wavefile's writer packs sample by sample: ~35 ms for 10 s of audio, which alone would miss the
 * channel's speed target); the bytes equal wavefile's `fromScratch(1, rate, '16', pcm)` output,
 * which the tests check.
 */
export function encodeWav(samples: Float32Array, sampleRate: number): Uint8Array {
  return encodeWavPcm16(floatToInt16(samples), sampleRate);
}

/**
 * An empty 16-bit mono WAV file of `length` samples (header written, data zero) and, on
 * little-endian platforms, an `Int16Array` over its data chunk to write the samples into
 * directly; `null` on big-endian ones (use {@link encodeWavPcm16} there).
 */
export function allocWavPcm16(length: number, sampleRate: number): { wav: Uint8Array; pcm: Int16Array | null } {
  const wav = new Uint8Array(44 + length * 2);
  writeWavHeader(wav, length, sampleRate);
  return { wav, pcm: LITTLE_ENDIAN ? new Int16Array(wav.buffer, 44, length) : null };
}

function writeWavHeader(out: Uint8Array, length: number, sampleRate: number): void {
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + length * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 16, true); // fmt chunk size
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * 2, true); // byte rate
  v.setUint16(32, 2, true); // block align
  v.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  v.setUint32(40, length * 2, true);
}

/** {@link encodeWav} from 16-bit PCM directly (no float step). */
export function encodeWavPcm16(pcm: Int16Array, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + pcm.length * 2);
  const v = new DataView(out.buffer);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + pcm.length * 2, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 16, true); // fmt chunk size
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * 2, true); // byte rate
  v.setUint16(32, 2, true); // block align
  v.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  v.setUint32(40, pcm.length * 2, true);
  // WAV is little-endian: copy the samples in one go on little-endian platforms (all we run on).
  if (LITTLE_ENDIAN) new Int16Array(out.buffer, 44, pcm.length).set(pcm);
  else for (let i = 0; i < pcm.length; i++) v.setInt16(44 + 2 * i, pcm[i] as number, true);
  return out;
}

/** The same file written by wavefile (reference for tests). */
export function encodeWavWithWavefile(samples: Float32Array, sampleRate: number): Uint8Array {
  const wav = new WaveFile();
  wav.fromScratch(1, sampleRate, '16', floatToInt16(samples));
  return wav.toBuffer();
}

/**
 * Decode a WAV file (PCM 8/16/24/32-bit, 32/64-bit float, mu-law, A-law; any channel count) to
 * mono float samples. Several channels are averaged. Integer formats are scaled by their full
 * range (16-bit: `v / 32768`).
 */
export function decodeWav(bytes: Uint8Array): DecodedAudio {
  const wav = new WaveFile(bytes);
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; audioFormat: number };
  if (wav.bitDepth === '8a') wav.fromALaw('16');
  else if (wav.bitDepth === '8m') wav.fromMuLaw('16');
  const bitDepth = wav.bitDepth;
  const isFloat = bitDepth === '32f' || bitDepth === '64';
  const bits = Number.parseInt(bitDepth, 10);
  // Unsigned 8-bit is centred on 128; every other integer depth is signed.
  const offset = bits === 8 && !isFloat ? 128 : 0;
  const scale = isFloat ? 1 : 2 ** (bits - 1);
  const channels = fmt.numChannels;
  const raw = wav.getSamples(true, Float64Array) as unknown as Float64Array;
  const frames = Math.floor(raw.length / channels);
  const out = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += ((raw[i * channels + c] as number) - offset) / scale;
    out[i] = s / channels;
  }
  return { samples: out, sampleRate: fmt.sampleRate };
}

/**
 * Resample mono audio between any two integer rates (e.g. a TTS engine's 22 050 Hz → 16 kHz)
 * with {@link resampleRate} (polyphase Kaiser-windowed sinc). It replaced wavefile's sinc
 * resampler, which ran at about 7× real time on 22 050 Hz speech and dominated TTS time.
 */
export function resample(samples: Float32Array, fromHz: number, toHz: number): Float32Array {
  return resampleRate(samples, fromHz, toHz);
}

/**
 * A TTS engine's waveform (mono, any integer rate, full scale = 1) as speech for the channel: a
 * copy resampled to 16 kHz and scaled to peak at most {@link SPEECH_PEAK_CEILING} (0.9 FS,
 * tau2-bench's headroom) so that neither the resampler's overshoot of near-full-scale input nor
 * the 16-bit conversion can clip. Every TTS adapter (espeak-ng in Node and the page, endpoint
 * speech, on-device models) goes through it. Throws RangeError for a rate that is not a positive
 * integer ({@link resample}).
 */
export function speechFromTtsSamples(
  samples: Float32Array,
  sampleRate: number,
): { samples: Float32Array; sampleRate: number } {
  return { samples: limitPeakInPlace(resample(samples, sampleRate, SPEECH_RATE_HZ)), sampleRate: SPEECH_RATE_HZ };
}

/**
 * A TTS program's WAV (any rate, 16-bit) as speech for the channel: decoded (mixed to mono) and
 * made speech by {@link speechFromTtsSamples} (16 kHz, peak at most 0.9 FS). Throws what
 * {@link decodeWav} throws.
 */
export function speechFromTtsWav(bytes: Uint8Array): { samples: Float32Array; sampleRate: number } {
  const decoded = decodeWav(bytes);
  return speechFromTtsSamples(decoded.samples, decoded.sampleRate);
}
