/**
 * Text to speech. Caller turns are spoken through a {@link Tts}: espeak-ng (Debian binary in
 * Node; the GPL-3.0 WASM build in the page as an optional chunk), on-device neural TTS, or an
 * endpoint's own speech.
 */

/** How to speak: the persona picks these. */
export interface TtsVoice {
  /** BCP-47-ish language: `en`, `en-US`, `zh` (Mandarin), … */
  language: string;
  /** Engine-specific voice name; overrides `language` when set (espeak-ng: `en-us`, `cmn`). */
  voice?: string;
  /** Speaking rate in words per minute (espeak-ng default 175 wpm). */
  rateWpm?: number;
  /** Pitch 0–99 (espeak-ng's scale, default 50). */
  pitch?: number;
}

/** Synthesized speech: mono float samples at 16 kHz. */
export interface TtsAudio {
  samples: Float32Array;
  /** Always 16 000 Hz: adapters resample the engine's native rate. */
  sampleRate: number;
}

/** A text-to-speech engine. */
export interface Tts {
  /** Short description for trajectories, e.g. `espeak-ng:1.51`. */
  readonly id: string;
  /** Speak `text`. Deterministic for a given engine, text and voice. */
  synthesize(text: string, voice?: TtsVoice): Promise<TtsAudio>;
}
