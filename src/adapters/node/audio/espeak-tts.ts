/**
 * {@link Tts} over the `espeak-ng` command-line program (Debian package `espeak-ng`, GPL-3.0; run
 * as a separate process, not linked). It writes 22 050 Hz 16-bit WAV to stdout; we resample to
 * 16 kHz with wavefile's sinc resampler and scale the utterance to peak at most
 * `SPEECH_PEAK_CEILING` (0.9 FS, tau2-bench's headroom), so neither the resampler's
 * overshoot nor the 16-bit conversion clips.
 */
import { spawn } from 'node:child_process';
import type { Tts, TtsAudio, TtsVoice } from '../../../core/ports/tts.ts';
import { speechFromTtsWav } from '../../../core/audio/wav.ts';

/** espeak-ng voice for a language tag: Mandarin → `cmn`, English → `en-us`, else the tag itself. */
export function espeakVoiceFor(voice: TtsVoice): string {
  if (voice.voice) return voice.voice;
  const lang = voice.language.toLowerCase();
  if (lang === 'zh' || lang.startsWith('zh-') || lang === 'cmn') return 'cmn';
  if (lang === 'en') return 'en-us';
  return lang;
}

function run(bin: string, args: string[], input: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) =>
      reject(new Error(`cannot run ${bin}: ${e.message} (install the Debian package espeak-ng)`)),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(new Uint8Array(Buffer.concat(out)));
      else reject(new Error(`${bin} exited with ${code}: ${Buffer.concat(err).toString().trim()}`));
    });
    child.stdin.end(input);
  });
}

/** Options of {@link espeakTts}. */
export interface EspeakOptions {
  /** Program to run (default `espeak-ng` on the PATH). */
  bin?: string;
  /** Voice used when `synthesize` gets none (default English, 175 wpm, pitch 50). */
  defaultVoice?: TtsVoice;
}

/** A {@link Tts} backed by the espeak-ng program. Text goes through stdin (never a shell). */
export function espeakTts(opts: EspeakOptions = {}): Tts {
  const bin = opts.bin ?? 'espeak-ng';
  const fallback = opts.defaultVoice ?? { language: 'en' };
  return {
    id: 'espeak-ng',
    async synthesize(text: string, voice: TtsVoice = fallback): Promise<TtsAudio> {
      const args = ['--stdout', '-v', espeakVoiceFor(voice)];
      if (voice.rateWpm !== undefined) args.push('-s', String(Math.round(voice.rateWpm)));
      if (voice.pitch !== undefined) args.push('-p', String(Math.round(voice.pitch)));
      const wav = await run(bin, args, text);
      return speechFromTtsWav(wav);
    },
  };
}
