/**
 * The page's espeak-ng (the npm package's WebAssembly build, run here in Node): the same text in
 * the same voice gives the same bytes whatever the wall clock says. The build seeds its random
 * generator from the clock and voice variants add breath noise from it, which made babble beds
 * and persona voices differ between two runs of one share link.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { wasmEspeakTts } from '../../../src/adapters/browser/audio/espeak-tts.ts';
import { personaVoice } from '../../../src/core/channel/persona-voice.ts';
import { babbleSentences } from '../../../src/core/channel/babble.ts';

const wasmPath = createRequire(import.meta.url).resolve('espeak-ng/dist/espeak-ng.wasm');
let compiled: Promise<WebAssembly.Module> | undefined;
const load = () => (compiled ??= readFile(wasmPath).then((b) => WebAssembly.compile(b)));

afterEach(() => {
  vi.useRealTimers();
});

describe('espeak-ng wasm TTS', () => {
  it('speaks a voice variant identically at two different wall-clock times', async () => {
    const tts = wasmEspeakTts(load);
    // A babble talker's voice with a female variant (those add breath noise).
    const voice = [0, 1, 2, 3, 4, 5]
      .map((t) => personaVoice('en', `babble:1:${t}`))
      .find((v) => v.voice?.includes('+f'));
    expect(voice?.voice).toMatch(/^en-us\+f\d$/);
    const text = babbleSentences('en')[0]!;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const a = await tts.synthesize(text, voice);
    vi.setSystemTime(new Date('2026-01-01T00:00:07Z'));
    const b = await tts.synthesize(text, voice);
    expect(a.sampleRate).toBe(16000);
    expect(a.samples.length).toBeGreaterThan(16000);
    expect(b.samples.length).toBe(a.samples.length);
    let differing = 0;
    for (let i = 0; i < a.samples.length; i++) if (a.samples[i] !== b.samples[i]) differing++;
    expect(differing).toBe(0);
  });
});
