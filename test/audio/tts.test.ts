import { describe, expect, it } from 'vitest';
import { espeakTts, espeakVoiceFor } from '../../src/adapters/node/audio/espeak-tts.ts';
import { activeRms, bandEnergyDb } from '../../src/core/audio/measure.ts';
import { decodeWav, encodeWav } from '../../src/core/audio/wav.ts';

// Needs the Debian package espeak-ng (installed by .ci/run).
describe('espeak-ng TTS (Debian espeak-ng program)', () => {
  const tts = espeakTts();

  it('speaks English as 16 kHz mono audio, deterministically', async () => {
    const a = await tts.synthesize('My account number is one three eight.', { language: 'en', rateWpm: 175 });
    expect(a.sampleRate).toBe(16000);
    const seconds = a.samples.length / 16000;
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(5);
    expect(activeRms(a.samples, 16000)).toBeGreaterThan(0.01);
    // Speech energy sits mostly below 4 kHz.
    expect(bandEnergyDb(a.samples, 16000, 100, 4000) - bandEnergyDb(a.samples, 16000, 4000, 8000)).toBeGreaterThan(10);
    const b = await tts.synthesize('My account number is one three eight.', { language: 'en', rateWpm: 175 });
    expect(Buffer.from(encodeWav(a.samples, 16000)).equals(Buffer.from(encodeWav(b.samples, 16000)))).toBe(true);
    expect(decodeWav(encodeWav(a.samples, 16000)).samples.length).toBe(a.samples.length);
  });

  it('speaks faster at a higher rate, and speaks Mandarin', async () => {
    const slow = await tts.synthesize('Please hold on a second while I check.', { language: 'en', rateWpm: 120 });
    const fast = await tts.synthesize('Please hold on a second while I check.', { language: 'en', rateWpm: 240 });
    expect(fast.samples.length).toBeLessThan(slow.samples.length * 0.7);
    expect(espeakVoiceFor({ language: 'zh-CN' })).toBe('cmn');
    const zh = await tts.synthesize('我的账号是一三八。', { language: 'zh' });
    expect(zh.samples.length / 16000).toBeGreaterThan(0.5);
  });
});
