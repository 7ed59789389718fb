/**
 * Packet loss with a two-state Gilbert–Elliott (Gilbert) model: in the good state no frame is
 * lost, in the bad state every frame is lost. Loss therefore comes in bursts whose mean length
 * is set directly, and whose long-run share of frames is the loss rate.
 */
import type { Rng } from '../ports/rng.ts';
import { msToSamples } from './pcm.ts';

/** Frame (packet) length: 20 ms, the usual G.711 RTP packetization (RFC 3551). */
export const DEFAULT_FRAME_MS = 20;
/** Mean burst length: 100 ms (tau2-bench `FRAME_DROP_BURST_DURATION_MS`). */
export const DEFAULT_MEAN_BURST_MS = 100;
/** Loss-rate range of the `regular` preset: 1–2 % of frames (issue 5; tau2-bench uses 1 %). */
export const DEFAULT_LOSS_RATE_RANGE: readonly [number, number] = [0.01, 0.02];

/** Settings of {@link gilbertElliottDrops}. */
export interface GilbertElliottOptions {
  /** Long-run share of lost frames, in [0, 1). */
  lossRate: number;
  /** Mean length of a loss burst in ms (default 100 ms). */
  meanBurstMs?: number;
  /** Frame length in ms (default 20 ms). */
  frameMs?: number;
}

/** Transition probabilities per frame: good → bad and bad → good. */
export function gilbertElliottTransitions(opts: GilbertElliottOptions): { pGoodToBad: number; pBadToGood: number } {
  const frameMs = opts.frameMs ?? DEFAULT_FRAME_MS;
  const burstMs = opts.meanBurstMs ?? DEFAULT_MEAN_BURST_MS;
  if (!(opts.lossRate >= 0 && opts.lossRate < 1))
    throw new RangeError(`lossRate must be in [0, 1), got ${opts.lossRate}`);
  // A burst lasts a geometric number of frames with mean burstMs / frameMs (at least one frame).
  const pBadToGood = Math.min(1, frameMs / burstMs);
  // Stationary share of the bad state: pGB / (pGB + pBG) = lossRate.
  const pGoodToBad = (opts.lossRate * pBadToGood) / (1 - opts.lossRate);
  return { pGoodToBad: Math.min(1, pGoodToBad), pBadToGood };
}

/**
 * Which of `frames` frames are lost (1) or kept (0). The first frame's state is drawn from the
 * stationary distribution, so short signals see the configured rate on average too.
 */
export function gilbertElliottDrops(frames: number, opts: GilbertElliottOptions, rng: Rng): Uint8Array {
  const { pGoodToBad, pBadToGood } = gilbertElliottTransitions(opts);
  const drops = new Uint8Array(frames);
  let bad = rng.next() < opts.lossRate;
  for (let f = 0; f < frames; f++) {
    if (f > 0) bad = bad ? rng.next() >= pBadToGood : rng.next() < pGoodToBad;
    drops[f] = bad ? 1 : 0;
  }
  return drops;
}

/** Zero every lost frame of `samples` (a new array; frame `f` covers samples [f·len, (f+1)·len)). */
export function applyFrameDrops(
  samples: Float32Array,
  rateHz: number,
  drops: Uint8Array,
  frameMs = DEFAULT_FRAME_MS,
): Float32Array {
  const out = samples.slice();
  const len = msToSamples(frameMs, rateHz);
  for (let f = 0; f < drops.length; f++) if (drops[f]) out.fill(0, f * len, Math.min(out.length, (f + 1) * len));
  return out;
}

/** Runs of lost frames as time spans in ms (one span per burst). */
export function dropSpans(
  drops: Uint8Array,
  frameMs = DEFAULT_FRAME_MS,
): { startMs: number; endMs: number; frames: number }[] {
  const spans: { startMs: number; endMs: number; frames: number }[] = [];
  for (let f = 0; f < drops.length; f++) {
    if (!drops[f]) continue;
    const start = f;
    while (f + 1 < drops.length && drops[f + 1]) f++;
    spans.push({ startMs: start * frameMs, endMs: (f + 1) * frameMs, frames: f + 1 - start });
  }
  return spans;
}
