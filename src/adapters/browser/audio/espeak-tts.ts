/**
 * {@link Tts} over the npm package `espeak-ng` (an Emscripten build of eSpeak NG with its voice
 * data embedded in the wasm; GPL-3.0-or-later). This module is only ever reached through a
 * dynamic `import()` (see `rollout-service.ts`), so it and the 18 MB wasm are a separately
 * loaded chunk and asset, never part of the main bundle. The wasm is served from this origin
 * (vite asset), compiled once, and instantiated afresh for each utterance (the build is a
 * command-line program: one run per instance). Output: espeak-ng's 22 050 Hz WAV, resampled
 * to 16 kHz like the Node adapter.
 */
import ESpeakNg from 'espeak-ng';
import wasmUrl from 'espeak-ng/dist/espeak-ng.wasm?url';
import type { Tts, TtsAudio, TtsVoice } from '../../../core/ports/tts.ts';
import { decodeWav, resample } from '../../../core/audio/wav.ts';
import { SPEECH_RATE_HZ } from '../../../core/audio/pcm.ts';

/** espeak-ng voice for a language tag (same mapping as the Node adapter). */
export function espeakVoiceFor(voice: TtsVoice): string {
  if (voice.voice) return voice.voice;
  const lang = voice.language.toLowerCase();
  if (lang === 'zh' || lang.startsWith('zh-') || lang === 'cmn') return 'cmn';
  if (lang === 'en') return 'en-us';
  return lang;
}

interface EspeakModule {
  FS: { writeFile(path: string, data: string): void; readFile(path: string): Uint8Array };
}
type EspeakFactory = (opts: Record<string, unknown>) => Promise<EspeakModule>;

let compiled: Promise<WebAssembly.Module> | undefined;
const compile = () =>
  (compiled ??= (async () => {
    const res = await fetch(wasmUrl);
    if (!res.ok) throw new Error(`cannot load espeak-ng.wasm: HTTP ${res.status}`);
    return WebAssembly.compile(await res.arrayBuffer());
  })());

/** Run espeak-ng once; text goes through a file (never an argument, so a leading `-` is text). */
async function speak(text: string, voice: TtsVoice): Promise<Uint8Array> {
  const module = await compile();
  const errors: string[] = [];
  const args = ['-v', espeakVoiceFor(voice), '-w', '/tmp/out.wav', '-f', '/tmp/in.txt'];
  if (voice.rateWpm !== undefined) args.push('-s', String(Math.round(voice.rateWpm)));
  if (voice.pitch !== undefined) args.push('-p', String(Math.round(voice.pitch)));
  // The build exports no callMain: the program runs once, on instantiation, with `arguments`;
  // the text file is written before it starts.
  const es = await (ESpeakNg as unknown as EspeakFactory)({
    arguments: args,
    preRun: [(m: EspeakModule) => m.FS.writeFile('/tmp/in.txt', text)],
    print: () => undefined,
    printErr: (s: string) => errors.push(s),
    locateFile: (f: string) => (f.endsWith('.wasm') ? wasmUrl : f),
    instantiateWasm(imports: WebAssembly.Imports, done: (i: WebAssembly.Instance) => void) {
      void WebAssembly.instantiate(module, imports).then(done);
      return {};
    },
  });
  try {
    return es.FS.readFile('/tmp/out.wav');
  } catch {
    throw new Error(`espeak-ng wrote no audio${errors.length ? `: ${errors.join(' ')}` : ''}`);
  }
}

/** The browser espeak-ng {@link Tts}. */
export function browserEspeakTts(defaultVoice: TtsVoice = { language: 'en' }): Tts {
  return {
    id: 'espeak-ng',
    async synthesize(text: string, voice: TtsVoice = defaultVoice): Promise<TtsAudio> {
      const decoded = decodeWav(await speak(text, voice));
      return { samples: resample(decoded.samples, decoded.sampleRate, SPEECH_RATE_HZ), sampleRate: SPEECH_RATE_HZ };
    },
  };
}
