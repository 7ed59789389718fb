/** Issue 5 remainder: vocal tics and asides, TTS babble, muffled segments, persona voices, endpoint TTS. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { endpointTts } from '../../src/adapters/shared/endpoint-tts.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { activeRms, bandEnergyDb, rms } from '../../src/core/audio/measure.ts';
import { whiteNoise } from '../../src/core/audio/noise.ts';
import { msToSamples } from '../../src/core/audio/pcm.ts';
import { coughSound, sniffleSound } from '../../src/core/audio/tics.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { MemoryAudioStore } from '../../src/core/channel/audio-store.ts';
import { babbleBed, BABBLE_BED_S, BABBLE_SENTENCES, BABBLE_TALKERS } from '../../src/core/channel/babble.ts';
import { callerTurnAudio, INSERT_GAP_MS } from '../../src/core/channel/caller-audio.ts';
import { runChannel } from '../../src/core/channel/chain.ts';
import { asidePhrases, planInserts } from '../../src/core/channel/inserts.ts';
import {
  ESPEAK_VARIANTS,
  personaVoice,
  PERSONA_PITCH,
  PERSONA_RATE_WPM,
} from '../../src/core/channel/persona-voice.ts';
import { planChannel } from '../../src/core/channel/plan.ts';
import { PRESETS, PRESET_NAMES, type ChannelPreset } from '../../src/core/channel/presets.ts';
import { EffectEvent } from '../../src/core/channel/timeline.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import type { Tts, TtsVoice } from '../../src/core/ports/tts.ts';
import { omniAudioCompletion, startOpenAiServer, wavBase64, type TestServer } from '../fixtures/openai-server.ts';
import { speechLike } from './helpers.ts';

const OFF: ChannelPreset = PRESETS.clean;
const espeak = espeakTts();
/** espeak-ng, recording every call. */
function recording(inner: Tts = espeak) {
  const calls: { text: string; voice: TtsVoice | undefined }[] = [];
  const tts: Tts = {
    id: inner.id,
    synthesize: (text, voice) => {
      calls.push({ text, voice });
      return inner.synthesize(text, voice);
    },
  };
  return { tts, calls };
}

describe('vocal tics and asides', () => {
  it('clean and control never insert; the rate of a preset is met over many turns; same key → same plan', () => {
    const text = 'I would like to change the phone number on my account, please.';
    for (const name of ['clean', 'control'] as const) {
      for (let turn = 0; turn < 200; turn++)
        expect(planInserts(name, { seed: 3, taskId: 't', turn }, text, 'en')).toEqual([]);
    }
    const p: ChannelPreset = {
      ...OFF,
      tics: { probability: 0.3, levelDb: [-6, 0] },
      asides: { probability: 0.2, levelDb: [-8, -4] },
    };
    const N = 2000;
    let tics = 0;
    let asides = 0;
    for (let turn = 0; turn < N; turn++) {
      const ins = planInserts(p, { seed: 1, taskId: 'rate', turn }, text, 'en');
      tics += ins.filter((i) => i.kind === 'vocal_tic').length;
      asides += ins.filter((i) => i.kind === 'aside').length;
      for (const i of ins) {
        // At a word boundary: start of a token or the end of the text.
        expect(
          i.atChar === text.length ||
            (i.atChar >= 0 && text[i.atChar] !== ' ' && (i.atChar === 0 || text[i.atChar - 1] === ' ')),
        ).toBe(true);
      }
    }
    // Binomial sd at N = 2000: 0.010 and 0.009; tolerance 4 sd.
    expect(Math.abs(tics / N - 0.3)).toBeLessThan(0.04);
    expect(Math.abs(asides / N - 0.2)).toBeLessThan(0.036);
    expect(planInserts(p, { seed: 1, taskId: 'rate', turn: 5 }, text, 'en')).toEqual(
      planInserts(p, { seed: 1, taskId: 'rate', turn: 5 }, text, 'en'),
    );
    expect(PRESETS.regular.tics!.probability).toBeGreaterThan(0);
    expect(PRESETS.harsh.asides!.probability).toBeGreaterThan(PRESETS.regular.asides!.probability);
  });

  it('cough (180–560 ms) is voice-band, sniffle (110–400 ms) is high-band', () => {
    for (let s = 0; s < 5; s++) {
      const c = coughSound(16000, seededRng(s));
      const f = sniffleSound(16000, seededRng(s));
      expect(c.length / 16).toBeGreaterThanOrEqual(180);
      expect(c.length / 16).toBeLessThanOrEqual(560);
      expect(f.length / 16).toBeGreaterThanOrEqual(110);
      expect(f.length / 16).toBeLessThanOrEqual(400);
      // Measured: cough 200–3000 Hz vs 4–8 kHz ≥ 15 dB; sniffle 1.5–6 kHz vs 0–1 kHz ≥ 15 dB.
      expect(bandEnergyDb(c, 16000, 200, 3000) - bandEnergyDb(c, 16000, 4000, 8000)).toBeGreaterThan(15);
      expect(bandEnergyDb(f, 16000, 1500, 6000) - bandEnergyDb(f, 16000, 0, 1000)).toBeGreaterThan(15);
    }
  });

  for (const [language, text] of [
    ['en', 'I need to change the phone number on my account.'],
    ['zh', '我想把账户上的电话号码改一下。'],
  ] as const) {
    it(`${language}: tic and aside go into the audio at their timeline spans, the aside is TTS in the domain's language, the text is unchanged`, async () => {
      const p: ChannelPreset = {
        ...OFF,
        tics: { probability: 1, levelDb: [0, 0] },
        asides: { probability: 1, levelDb: [-6, -6] },
      };
      const { tts, calls } = recording();
      const store = new MemoryAudioStore();
      const voice = { language };
      const out = await callerTurnAudio({ tts, voice, renderer: nodeGraphRenderer, preset: p, store }, text, {
        seed: 2,
        taskId: 'ins',
        turn: 1,
        prefix: 'x',
      });
      const events = out.ref.timeline.filter((e) => e.type === 'vocal_tic' || e.type === 'aside');
      expect(events.map((e) => e.type).sort()).toEqual(['aside', 'vocal_tic']);
      for (const e of out.ref.timeline) EffectEvent.parse(e);
      const aside = events.find((e) => e.type === 'aside')!;
      expect(asidePhrases(language)).toContain(aside.params.text);
      expect(calls.some((c) => c.text === aside.params.text && c.voice?.language === language)).toBe(true);
      expect(out.asides).toEqual([
        { text: aside.params.text, at_char: aside.params.at_char, start_ms: aside.start_ms, end_ms: aside.end_ms },
      ]);
      const clean = decodeWav(store.files.get(out.ref.clean)!).samples;
      expect(out.ref.duration_ms).toBeCloseTo((clean.length * 1000) / 16000, 6);
      for (const e of events) {
        const a = msToSamples(e.start_ms, 16000);
        const b = msToSamples(e.end_ms, 16000);
        // The span holds sound, the gaps around it are digital silence.
        expect(rms(clean, a, b)).toBeGreaterThan(0.005);
        expect(rms(clean, Math.max(0, a - msToSamples(INSERT_GAP_MS, 16000)), a)).toBe(0);
        expect(rms(clean, b, Math.min(clean.length, b + msToSamples(INSERT_GAP_MS, 16000)))).toBe(0);
      }
      // The aside is 6 dB under the turn's speech level (±1 dB after 16-bit quantization).
      const a = msToSamples(aside.start_ms, 16000);
      const b = msToSamples(aside.end_ms, 16000);
      const asideLevel = activeRms(clean.subarray(a, b), 16000);
      const ownLevel = activeRms((await espeak.synthesize(String(aside.params.text), voice)).samples, 16000);
      expect(20 * Math.log10(asideLevel / ownLevel)).toBeCloseTo(-6, 0);
    });
  }
});

describe('TTS babble noise', () => {
  it('is generated once per (language, seed), 20 s of unit RMS from several voices, and cached', async () => {
    const { tts, calls } = recording();
    const a = await babbleBed(tts, 'en', 41);
    expect(calls).toHaveLength(BABBLE_TALKERS * BABBLE_SENTENCES);
    expect(new Set(calls.map((c) => c.voice?.voice)).size).toBeGreaterThanOrEqual(3);
    expect(a.length).toBe(BABBLE_BED_S * 16000);
    expect(rms(a)).toBeCloseTo(1, 4);
    expect(await babbleBed(tts, 'en', 41)).toBe(a);
    expect(calls).toHaveLength(BABBLE_TALKERS * BABBLE_SENTENCES);
    const zh = await babbleBed(tts, 'zh', 41);
    expect(
      calls.slice(-BABBLE_SENTENCES).every((c) => c.voice?.language === 'zh' && /[\u4e00-\u9fff]/.test(c.text)),
    ).toBe(true);
    expect(zh).not.toEqual(a);
    // Several overlapping talkers: few near-silent 20 ms frames (a single talker has pauses).
    const frame = 320;
    let quiet = 0;
    for (let s = 0; s + frame <= a.length; s += frame) if (rms(a, s, s + frame) < 0.1) quiet++;
    expect(quiet / (a.length / frame)).toBeLessThan(0.02);
  });

  it('harsh may use it; mixed at the planned SNR within ±0.5 dB', async () => {
    expect(PRESETS.harsh.noise!.procedural).toContain('babble');
    const p: ChannelPreset = {
      ...OFF,
      noise: { procedural: ['babble'], snrDb: [10, 10], driftDb: 0, driftSpeedHz: 0.5 },
    };
    const speech = speechLike(4, 16000);
    const plan = planChannel(p, { seed: 41, taskId: 'bab' }, speech.length);
    expect(plan.noise!.source).toBe('procedural:babble');
    await expect(runChannel(nodeGraphRenderer, speech, plan)).rejects.toThrow(/babble bed/);
    const bed = await babbleBed(espeak, 'en', 41);
    const out = await runChannel(nodeGraphRenderer, speech, plan, { babble: bed });
    const noise = out.samples.map((v, i) => v - (speech[i] as number));
    const snr = 20 * Math.log10(activeRms(speech, 16000) / rms(noise));
    expect(Math.abs(snr - 10)).toBeLessThan(0.5);
    expect(out.timeline.find((e) => e.type === 'background_noise')!.params.source).toBe('procedural:babble');
  });
});

describe('muffled mic segments', () => {
  it('several muffled spans per turn with crossfades: ≥ 20 dB less energy above 2 kHz inside than in the clear spans', async () => {
    const p: ChannelPreset = {
      ...OFF,
      muffle: { probability: 1, cutoffHz: 1500, segmentMs: 1000, transitionMs: 100, maxSegments: 3 },
    };
    const white = whiteNoise(16000 * 9, seededRng(4)).map((v) => v * 0.1);
    let plan = planChannel(p, { seed: 0, taskId: 'mf' }, white.length);
    for (let s = 1; plan.muffle!.segments.length < 3; s++)
      plan = planChannel(p, { seed: s, taskId: 'mf' }, white.length);
    const segs = plan.muffle!.segments;
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.startMs).toBeGreaterThanOrEqual(segs[i - 1]!.endMs);
    const y = (await runChannel(nodeGraphRenderer, white, plan)).samples;
    const hi = (a: number, b: number) =>
      bandEnergyDb(y.subarray(msToSamples(a, 16000), msToSamples(b, 16000)), 16000, 2000, 8000) -
      10 * Math.log10((b - a) / 1000);
    const margin = 100; // beyond the 100 ms crossfade (±50 ms around each edge)
    const clear: [number, number][] = [];
    let from = 0;
    for (const s of segs) {
      if (s.startMs - margin - (from + margin) > 200) clear.push([from + margin, s.startMs - margin]);
      from = s.endMs;
    }
    if (plan.durationMs - margin - (from + margin) > 200) clear.push([from + margin, plan.durationMs - margin]);
    expect(clear.length).toBeGreaterThan(0);
    for (const s of segs) {
      const muffled = hi(s.startMs + margin, s.endMs - margin);
      for (const [a, b] of clear) expect(hi(a, b) - muffled).toBeGreaterThan(20);
    }
    // Smooth: the wet gain ramps over the transition (energy midway through a ramp lies between).
    const s0 = segs[0]!;
    const mid = hi(s0.startMs - 25, s0.startMs + 25);
    expect(mid).toBeLessThan(hi(clear[0]![0], clear[0]![1]) - 1);
    expect(mid).toBeGreaterThan(hi(s0.startMs + margin, s0.endMs - margin) + 1);
    const out = await runChannel(nodeGraphRenderer, white, plan);
    expect(out.timeline.filter((e) => e.type === 'muffle').map((e) => [e.start_ms, e.end_ms])).toEqual(
      segs.map((s) => [s.startMs, s.endMs]),
    );
  });

  it('a single-segment preset draws one span as before', () => {
    const plan = planChannel(
      { ...OFF, muffle: { ...PRESETS.regular.muffle!, probability: 1 } },
      { seed: 1, taskId: 't' },
      16000 * 3,
    );
    expect(plan.muffle!.segments).toHaveLength(1);
    expect(plan.muffle!.endMs - plan.muffle!.startMs).toBeCloseTo(500, 9);
    for (const name of PRESET_NAMES) expect(() => planChannel(name, { seed: 1, taskId: 't' }, 100)).not.toThrow();
  });
});

describe('persona voices', () => {
  it('a persona maps to a stable espeak-ng variant, rate and pitch in range; two personas differ in voice and in sound', async () => {
    const a = personaVoice('en', 'persona:Impatient retiree who mumbles');
    const b = personaVoice('en', 'persona:Cheerful student');
    expect(personaVoice('en', 'persona:Impatient retiree who mumbles')).toEqual(a);
    expect(a).not.toEqual(b);
    for (const v of [a, b, personaVoice('zh', 'x')]) {
      expect(ESPEAK_VARIANTS.some((x) => v.voice!.endsWith(`+${x}`))).toBe(true);
      expect(v.rateWpm!).toBeGreaterThanOrEqual(PERSONA_RATE_WPM[0]);
      expect(v.rateWpm!).toBeLessThanOrEqual(PERSONA_RATE_WPM[1]);
      expect(v.pitch!).toBeGreaterThanOrEqual(PERSONA_PITCH[0]);
      expect(v.pitch!).toBeLessThanOrEqual(PERSONA_PITCH[1]);
    }
    expect(personaVoice('zh', 'x').voice!.startsWith('cmn+')).toBe(true);
    const text = 'My phone number is five five five, zero zero zero one.';
    const sa = (await espeak.synthesize(text, a)).samples;
    const sb = (await espeak.synthesize(text, b)).samples;
    expect(Buffer.from(sa.buffer).equals(Buffer.from(sb.buffer))).toBe(false);
    expect(Buffer.from((await espeak.synthesize(text, a)).samples.buffer).equals(Buffer.from(sa.buffer))).toBe(true);
  });
});

describe('endpoint speech as a Tts', () => {
  let server: TestServer;
  const tone = Array.from({ length: 12000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)));
  beforeAll(async () => {
    server = await startOpenAiServer(() => ({
      json: omniAudioCompletion({ model: 'qwen-omni', content: 'Hello there.', audio: wavBase64(tone, 24000) }),
    }));
  });
  afterAll(() => server.close());

  it('asks vLLM-Omni for audio, decodes the two-choice reply (24 kHz WAV) and resamples to 16 kHz', async () => {
    const tts = endpointTts(
      new OpenAiModelClient({ flavor: 'vllm-omni', model: 'qwen-omni', baseURL: server.url, maxRetries: 0 }),
      { speaker: 'Chelsie' },
    );
    const out = await tts.synthesize('Hello there.', { language: 'en', voice: 'en-us+f3' });
    expect(out.sampleRate).toBe(16000);
    expect(out.samples.length).toBe(8000); // 0.5 s
    // Still a 440 Hz tone at the same level: count rising zero crossings in the middle.
    let ups = 0;
    for (let i = 2001; i < 6000; i++) if ((out.samples[i - 1] as number) < 0 && (out.samples[i] as number) >= 0) ups++;
    expect(Math.abs(ups - 440 * (3999 / 16000))).toBeLessThanOrEqual(1);
    expect(rms(out.samples, 1000, 7000)).toBeCloseTo(8000 / 32768 / Math.SQRT2, 2);
    const body = server.requests.at(-1)!.body;
    expect(body.modalities).toEqual(['text', 'audio']);
    expect(body.speaker).toBe('Chelsie'); // an espeak-ng name is not a speaker
    expect(body.temperature).toBe(0);
    expect(body.messages.at(-1).content).toBe('Hello there.');
    expect(tts.id).toBe('endpoint:vllm-omni:qwen-omni');
  });

  it('refuses audio it cannot place before decoding it: over 120 s by size, a rate outside 8–48 kHz; stereo is mixed', async () => {
    const big = 'A'.repeat(31_000_000); // ~23 MB: over 120 s of 48 kHz 16-bit stereo
    const stereo = (() => {
      const b = Buffer.from(wavBase64([...tone, ...tone], 24000), 'base64');
      b.writeUInt16LE(2, 22); // 2 channels: the same samples read as 12,000 frames of L/R pairs
      b.writeUInt16LE(4, 32);
      b.writeUInt32LE(24000 * 4, 28);
      return b.toString('base64');
    })();
    const replies: Record<string, string> = {
      big,
      '96k': wavBase64(tone, 96000),
      stereo,
      long: wavBase64(new Array(24000 * 121).fill(0), 24000),
    };
    const bad = await startOpenAiServer((body: { messages: { content: string }[] }) => ({
      json: omniAudioCompletion({ model: 'o', content: 'ok', audio: replies[body.messages.at(-1)!.content]! }),
    }));
    try {
      const tts = endpointTts(
        new OpenAiModelClient({ flavor: 'vllm-omni', model: 'o', baseURL: bad.url, maxRetries: 0 }),
      );
      await expect(tts.synthesize('big')).rejects.toThrow(
        "endpoint TTS vllm-omni:o: refused the reply's audio: 23250000 bytes of audio, over the 120-s limit",
      );
      await expect(tts.synthesize('96k')).rejects.toThrow(
        "endpoint TTS vllm-omni:o: refused the reply's audio: sample rate 96000 Hz, outside 8000–48000 Hz",
      );
      await expect(tts.synthesize('long')).rejects.toThrow(
        "endpoint TTS vllm-omni:o: refused the reply's audio: 121.0 s of audio, over the 120-s limit",
      );
      const out = await tts.synthesize('stereo');
      expect([out.sampleRate, out.samples.length]).toEqual([16000, 8000]);
    } finally {
      await bad.close();
    }
  });
});
