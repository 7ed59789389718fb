import { describe, expect, it } from 'vitest';
import { nodeSileroVad } from '../../src/adapters/node/audio/silero-files.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { activeRms } from '../../src/core/audio/measure.ts';
import { loopTo } from '../../src/core/audio/noise.ts';
import { callerTurnAudio, speechEndSample } from '../../src/core/channel/caller-audio.ts';
import { runChannel } from '../../src/core/channel/chain.ts';
import { planChannel } from '../../src/core/channel/plan.ts';
import { MemoryAudioStore } from '../../src/core/channel/audio-store.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import type { SpeechSegment } from '../../src/core/channel/caller-audio.ts';
import { loadNoise } from './helpers.ts';

// Silero VAD v5 from @ricky0123/vad-web, run by onnxruntime-web (WASM) from node_modules.
const overlapMs = (a: SpeechSegment, b: SpeechSegment) =>
  Math.max(0, Math.min(a.endMs, b.endMs) - Math.max(a.startMs, b.startMs));

/** First and last active sample of a TTS clip (energy gate), in ms. */
function speechSpan(x: Float32Array): SpeechSegment {
  const end = speechEndSample(x);
  const rev = x.slice().reverse();
  const start = x.length - speechEndSample(rev);
  return { startMs: start / 16, endMs: end / 16 };
}

describe('Silero VAD (onnxruntime-web, WASM, local files)', async () => {
  const vad = await nodeSileroVad();
  const tts = espeakTts();

  it('finds the espeak-ng sentences placed in engine noise and sent through the regular channel', {
    tags: ['noise-data'],
  }, async () => {
    const sentences = [
      'I would like to change my flight to Friday morning.',
      'My booking code is X 4 2 7 B.',
      '我的账号是一三八。',
    ];
    const gapMs = 1500;
    const clips = await Promise.all(sentences.map((s, i) => tts.synthesize(s, { language: i === 2 ? 'zh' : 'en' })));
    const total = clips.reduce((n, c) => n + c.samples.length, 0) + (clips.length + 1) * gapMs * 16;
    const speech = new Float32Array(total);
    const known: SpeechSegment[] = [];
    let at = gapMs * 16;
    for (const c of clips) {
      speech.set(c.samples, at);
      const s = speechSpan(c.samples);
      known.push({ startMs: at / 16 + s.startMs, endMs: at / 16 + s.endMs });
      at += c.samples.length + gapMs * 16;
    }
    const engine = loadNoise('engine_idling');
    const bank = { continuous: { engine_idling: engine } };
    const plan = planChannel('regular', { seed: 3, taskId: 'vad' }, speech.length, { continuous: ['engine_idling'] });
    expect(plan.noise?.source).toBe('file:engine_idling');
    const degraded = (await runChannel(nodeGraphRenderer, speech, plan, bank)).samples;
    const found = await vad.segments(degraded, 16000);
    expect(found.length).toBeGreaterThanOrEqual(known.length);
    for (const k of known) {
      const covered = found.reduce((a, f) => a + overlapMs(f, k), 0);
      expect(covered / (k.endMs - k.startMs)).toBeGreaterThan(0.85);
    }
    // Little speech reported in the gaps (noise only): < 15 % of the detected time.
    const detected = found.reduce((a, f) => a + f.endMs - f.startMs, 0);
    const inside = found.reduce((a, f) => a + known.reduce((b, k) => b + overlapMs(f, k), 0), 0);
    expect((detected - inside) / detected).toBeLessThan(0.15);
  });

  it('reports no speech in noise alone (engine idling at speech level)', { tags: ['noise-data'] }, async () => {
    const engine = loopTo(loadNoise('engine_idling'), 16000 * 5);
    const g = 0.05 / activeRms(engine, 16000);
    for (let i = 0; i < engine.length; i++) engine[i] = (engine[i] as number) * g;
    expect(await vad.segments(engine, 16000)).toEqual([]);
  });

  it('times a dropout cut: the cut audio ends where the VAD says the heard words end', async () => {
    const store = new MemoryAudioStore();
    const ch = { tts, renderer: nodeGraphRenderer, preset: 'control' as const, store, vad, voice: { language: 'en' } };
    const out = await callerTurnAudio(
      ch,
      'My phone number is five five five, zero one two three.',
      { seed: 1, taskId: 'cut', turn: 1, prefix: 'x' },
      'My phone number is five five',
    );
    const prefix = await tts.synthesize('My phone number is five five', { language: 'en' });
    const segs = await vad.segments(prefix.samples, 16000);
    expect(out.cutMs).toBeCloseTo(segs[segs.length - 1]!.endMs, 6);
    expect(decodeWav(out.degraded).samples.length / 16).toBeCloseTo(out.cutMs!, 6);
  });
});
