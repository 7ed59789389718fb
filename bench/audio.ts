/**
 * Audio benchmark inputs and cases (issues 5 and 17): 10 s of real espeak-ng speech and the plan
 * with every channel effect forced on (used by bench/channel.ts, the chain's benchmark), and
 * espeak-ng TTS time per sentence.
 */
import type { BenchCase } from './harness.ts';
import { espeakTts } from '../src/adapters/node/audio/espeak-tts.ts';
import { planChannel, type ChannelPlan } from '../src/core/channel/plan.ts';
import type { Tts } from '../src/core/ports/tts.ts';

/** Length of the benchmarked caller turn: 10 s of audio. */
export const TURN_S = 10;

const SENTENCES = [
  'I would like to change my flight to Friday morning, please.',
  'My booking number is four seven two nine, and the last name is Garcia.',
  'Could you also check whether my bag allowance includes a second suitcase?',
];

/** 10 s of espeak-ng speech: the sentences spoken in turn, repeated to fill the length. */
export async function realSpeech(tts: Tts, seconds: number): Promise<Float32Array> {
  const parts = await Promise.all(SENTENCES.map((s) => tts.synthesize(s)));
  const out = new Float32Array(seconds * 16000);
  for (let at = 0, k = 0; at < out.length; k++) {
    const p = parts[k % parts.length]!.samples;
    out.set(p.subarray(0, Math.min(p.length, out.length - at)), at);
    at += p.length;
  }
  return out;
}

/** The `harsh` plan of `seed` with every effect on (those the draw left off are set). */
export function everyEffect(seed: number, length: number): ChannelPlan {
  const p = planChannel('harsh', { seed, taskId: 'bench' }, length);
  const durationMs = p.durationMs;
  return {
    ...p,
    // Babble needs a TTS bed; the procedural kinds are generated per turn.
    noise: { ...p.noise!, source: p.noise!.source === 'procedural:babble' ? 'procedural:pink' : p.noise!.source },
    bursts: p.bursts.length ? p.bursts : [{ atMs: durationMs / 3, source: 'procedural:knock', snrDb: 0, seed }],
    wind: p.wind ?? { snrDb: 5, seed: seed + 1 },
    muffle: p.muffle ?? {
      cutoffHz: 1000,
      startMs: 2000,
      endMs: 3500,
      transitionMs: 150,
      segments: [{ startMs: 2000, endMs: 3500 }],
    },
    farField: p.farField ?? { gainDb: -9, rt60Ms: 500, wetDb: -3, seed: seed + 2 },
  };
}

/** The audio cases: espeak-ng TTS time per sentence (the channel chain is in bench/channel.ts). */
export async function audioCases(): Promise<BenchCase[]> {
  const tts = espeakTts();
  try {
    await tts.synthesize('ok');
  } catch {
    console.log('(espeak-ng not installed: audio cases skipped)');
    return [];
  }
  return [
    {
      name: 'espeak-ng TTS, one sentence → 16 kHz',
      fn: () => tts.synthesize('I would like to change my flight to Friday morning, please.'),
    },
  ];
}
