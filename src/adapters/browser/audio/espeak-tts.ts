/**
 * {@link Tts} over the npm package `espeak-ng` (an Emscripten build of eSpeak NG with its voice
 * data embedded in the wasm; GPL-3.0-or-later). This module is only ever reached through a
 * dynamic `import()` (see `rollout-service.ts`), so it and the 18 MB wasm are a separately
 * loaded chunk and asset, never part of the main bundle. The wasm is served from this origin
 * (vite asset), compiled once, and instantiated afresh for each utterance (the build is a
 * command-line program: one run per instance). Output: espeak-ng's 22 050 Hz WAV, resampled
 * to 16 kHz and peak-limited to 0.9 FS like the Node adapter (`speechFromTtsWav`).
 *
 * Deterministic: this build seeds its C library's random generator from the wall clock, and
 * voice variants (`en-us+f3`, `cmn+m2`, the persona and babble voices) add breath noise from it,
 * so the same text came out different from one second to the next. The module's wall clock
 * (its `emscripten_date_now` import) is pinned to the epoch: same text and voice → same bytes.
 */
import ESpeakNg from 'espeak-ng';
import wasmUrl from 'espeak-ng/dist/espeak-ng.wasm?url';
import type { Tts, TtsAudio, TtsVoice } from '../../../core/ports/tts.ts';
import { speechFromTtsWav } from '../../../core/audio/wav.ts';

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
const compileFromOrigin = () =>
  (compiled ??= (async () => {
    const res = await fetch(wasmUrl);
    if (!res.ok) throw new Error(`cannot load espeak-ng.wasm: HTTP ${res.status}`);
    return WebAssembly.compile(await res.arrayBuffer());
  })());

/** The wall clock the wasm sees, ms since the epoch: fixed, so its `srand(time(…))` seed is too. */
export const ESPEAK_WASM_CLOCK_MS = 0;

/** Run espeak-ng once; text goes through a file (never an argument, so a leading `-` is text). */
async function speak(module: WebAssembly.Module, text: string, voice: TtsVoice): Promise<Uint8Array> {
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
      // The C library's time() (and so espeak-ng's random seed) reads this import.
      (imports.env as Record<string, unknown>).emscripten_date_now = () => ESPEAK_WASM_CLOCK_MS;
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

/**
 * espeak-ng {@link Tts} over a compiled `espeak-ng.wasm` (`load` resolves it once per call; the
 * page fetches it from this origin, a Node test reads the package's file).
 */
export function wasmEspeakTts(
  load: () => Promise<WebAssembly.Module>,
  defaultVoice: TtsVoice = { language: 'en' },
): Tts {
  return {
    id: 'espeak-ng',
    async synthesize(text: string, voice: TtsVoice = defaultVoice): Promise<TtsAudio> {
      return speechFromTtsWav(await speak(await load(), text, voice));
    },
  };
}

/** The browser espeak-ng {@link Tts} (the wasm fetched from this origin). */
export function browserEspeakTts(defaultVoice: TtsVoice = { language: 'en' }): Tts {
  return wasmEspeakTts(compileFromOrigin, defaultVoice);
}
