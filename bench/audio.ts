/**
 * Audio benchmarks (issues 5 and 17): × real time of the channel chain alone on 10 s of real
 * espeak-ng speech with every effect forced on (noise with drift, a burst, wind, far field,
 * muffled mic, packet loss, telephony with mu-law; target ≥ 1,000× real time, i.e. ≤ 10 ms
 * median), the `clean` preset on the same speech, and espeak-ng TTS time per sentence. No figure of another system is printed: none is
 * measured in this run.
 */
import type { BenchCase } from './harness.ts';
import { nodeGraphRenderer } from '../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../src/adapters/node/audio/espeak-tts.ts';
import { runChannel } from '../src/core/channel/chain.ts';
import { planChannel, type ChannelPlan } from '../src/core/channel/plan.ts';
import type { Tts } from '../src/core/ports/tts.ts';

/** Length of the benchmarked caller turn: 10 s of audio. */
export const TURN_S = 10;
/** Target: 1,000× real time → a 10 s turn in ≤ 10 ms. */
const TARGET_X = 1000;

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

/** The audio cases. A case's median in ms for a 10 s turn; ratio ≤ 1 is 1,000× real time or faster. */
export async function audioCases(): Promise<BenchCase[]> {
  const tts = espeakTts();
  try {
    await tts.synthesize('ok');
  } catch {
    console.log('(espeak-ng not installed: audio cases skipped)');
    return [];
  }
  const speech = await realSpeech(tts, TURN_S);
  let seed = 0;
  return [
    {
      name: `channel, every effect, ${TURN_S} s espeak-ng @16 kHz (≥ ${TARGET_X}× RT)`,
      fn: () => runChannel(nodeGraphRenderer, speech, everyEffect(seed++, speech.length)),
      targetMs: (TURN_S * 1000) / TARGET_X,
    },
    {
      name: `channel, clean preset, ${TURN_S} s espeak-ng @16 kHz`,
      fn: () =>
        runChannel(nodeGraphRenderer, speech, planChannel('clean', { seed: seed++, taskId: 'bench' }, speech.length)),
    },
    {
      name: 'espeak-ng TTS, one sentence → 16 kHz',
      fn: () => tts.synthesize('I would like to change my flight to Friday morning, please.'),
    },
  ];
}
