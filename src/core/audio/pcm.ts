/**
 * Sample-format conversions. Audio inside Switchboard is mono `Float32Array` in [-1, 1]; what an
 * agent receives is 16-bit PCM (see {@link floatToInt16}).
 */

/** Sample rate of every audio file sent to agents: 16 kHz (issue 5: "16 kHz mono 16-bit WAV"). */
export const SPEECH_RATE_HZ = 16_000;
/** Sample rate of the G.711 telephony leg: 8 kHz (ITU-T G.711). */
export const TELEPHONY_RATE_HZ = 8_000;

/**
 * Float samples → 16-bit PCM with rounding to the nearest step and clipping to
 * [-32768, 32767]. (wavefile's own float→int16 path truncates towards zero, which biases the
 * signal; this is why the conversion lives here.) NaN becomes 0.
 */
export function floatToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.round((samples[i] as number) * 32768);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v || 0;
  }
  return out;
}

/** 16-bit PCM → float samples (`v / 32768`, so -32768 maps to exactly -1). */
export function int16ToFloat(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = (samples[i] as number) / 32768;
  return out;
}

/**
 * Quantize `samples` to 16 bits in one pass: the 16-bit values go to `pcm` (same length; e.g. a
 * WAV file's data chunk) and their float values (`v / 32768`) into `back` (same length; `samples`
 * itself by default, in place; `null`: nowhere, `samples` is only read). Equals
 * {@link floatToInt16} and {@link int16ToFloat} without the intermediate arrays. Returns `back`
 * (`samples` when `back` is `null`).
 * @throws RangeError when `pcm` or `back` has another length than `samples`.
 */
export function quantize16Into(
  samples: Float32Array,
  pcm: Int16Array,
  back: Float32Array | null = samples,
): Float32Array {
  if (pcm.length !== samples.length)
    throw new RangeError(`quantize16Into: ${pcm.length} PCM slots for ${samples.length} samples`);
  if (back && back.length !== samples.length)
    throw new RangeError(`quantize16Into: ${back.length} float slots for ${samples.length} samples`);
  for (let i = 0; i < samples.length; i++) {
    // floor(v + 0.5) = Math.round(v) for a float32 sample times 32768 (see ROUNDING in
    // resample.ts), and much faster in V8.
    const r = Math.floor((samples[i] as number) * 32768 + 0.5);
    const v = r > 32767 ? 32767 : r < -32768 ? -32768 : r | 0; // | 0: NaN and -0 become 0
    pcm[i] = v;
    if (back) back[i] = v / 32768;
  }
  return back ?? samples;
}

/** Convert a duration in ms to a whole number of samples at `rateHz` (rounded). */
export function msToSamples(ms: number, rateHz: number): number {
  return Math.round((ms * rateHz) / 1000);
}

/** Convert a number of samples at `rateHz` to milliseconds. */
export function samplesToMs(samples: number, rateHz: number): number {
  return (samples * 1000) / rateHz;
}

/** Decibels → linear amplitude factor (`10^(dB/20)`). */
export function dbToGain(db: number): number {
  return 10 ** (db / 20);
}

/**
 * Peak ceiling of synthesized speech: 0.9 of full scale (−0.92 dBFS), the headroom tau2-bench
 * leaves (its `TELEPHONY_HEADROOM` scales by 0.9). TTS programs write near full scale (espeak-ng
 * peaks at ~32,729 of 32,767 at 22,050 Hz) and resampling to 16 kHz overshoots, so without a
 * ceiling the 16-bit conversion clips.
 */
export const SPEECH_PEAK_CEILING = 0.9;

/**
 * Scale `samples` in place so that max |sample| ≤ `ceiling` (full scale = 1): louder audio is
 * multiplied by `ceiling / peak` (one gain for the whole utterance, no compression); audio at or
 * below the ceiling is left as it is. Returns `samples`. Throws RangeError for a ceiling outside
 * (0, 1].
 */
export function limitPeakInPlace(samples: Float32Array, ceiling = SPEECH_PEAK_CEILING): Float32Array {
  if (!(ceiling > 0 && ceiling <= 1)) throw new RangeError(`peak ceiling must be in (0, 1], got ${ceiling}`);
  let peak = 0;
  for (let i = 0; i < samples.length; i++) {
    const a = Math.abs(samples[i] as number);
    if (a > peak) peak = a;
  }
  if (peak <= ceiling) return samples;
  const g = ceiling / peak;
  for (let i = 0; i < samples.length; i++) samples[i] = (samples[i] as number) * g;
  return samples;
}
