/**
 * Audio benchmarks (issue 5): × real time of the `regular` channel at 16 kHz (target ≥ 1,000×;
 * tau2-bench's numpy/scipy chain does 611× on this machine) and espeak-ng TTS time per sentence.
 */
import type { BenchCase } from './harness.ts';
import { nodeGraphRenderer } from '../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../src/adapters/node/audio/espeak-tts.ts';
import { runChannel } from '../src/core/channel/chain.ts';
import { planChannel } from '../src/core/channel/plan.ts';

/** Length of the benchmarked caller turn: 10 s of audio. */
const TURN_S = 10;
/** Target: 1,000× real time → a 10 s turn in ≤ 10 ms. */
const TARGET_X = 1000;
/** tau2-bench's chain: 611× real time → 16.4 ms for 10 s. */
const TAU2_X = 611;

function speechLike(seconds: number): Float32Array {
  const n = seconds * 16000;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / 16000;
    out[i] = 0.2 * Math.sin(2 * Math.PI * 150 * t) * Math.max(0, Math.sin(2 * Math.PI * 4 * t));
  }
  return out;
}

/** The audio cases. A case's median in ms for a 10 s turn; ratio ≤ 1 meets 1,000× real time. */
export async function audioCases(): Promise<BenchCase[]> {
  const speech = speechLike(TURN_S);
  let seed = 0;
  const tts = espeakTts();
  const cases: BenchCase[] = [
    {
      name: `regular channel, ${TURN_S} s turn @16 kHz (≥ ${TARGET_X}× RT)`,
      fn: () =>
        runChannel(nodeGraphRenderer, speech, planChannel('regular', { seed: seed++, taskId: 'bench' }, speech.length)),
      targetMs: (TURN_S * 1000) / TARGET_X,
      baselineMs: { label: 'tau2-bench numpy/scipy', ms: (TURN_S * 1000) / TAU2_X },
    },
  ];
  try {
    await tts.synthesize('ok');
    cases.push({
      name: 'espeak-ng TTS, one sentence → 16 kHz',
      fn: () => tts.synthesize('I would like to change my flight to Friday morning, please.'),
    });
  } catch {
    console.log('(espeak-ng not installed: TTS case skipped)');
  }
  return cases;
}
