/**
 * Drawing one concrete channel plan from a preset. A plan is plain data and fully determined by
 * (preset, seed, task id, turn, duration, noise-bank names): the same inputs give the same plan,
 * and the same plan and speech give the same bytes.
 */
import { hash32, rngFromState, type Rng } from '../ports/rng.ts';
import { dropSpans, gilbertElliottDrops } from '../audio/packet-loss.ts';
import { msToSamples, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import type { ProceduralBurst } from '../audio/noise.ts';
import { PRESETS, type ChannelPreset, type PresetName, type Range } from './presets.ts';
import { DRIFT_SPEED_HZ } from './snr-drift.ts';

/** Where the plan is drawn for. */
export interface PlanKey {
  seed: number;
  taskId: string;
  /** Index of the caller turn within the episode (default 0). */
  turn?: number;
}

/** Names of the recordings available to the plan (see `NoiseBank`). */
export interface BankNames {
  continuous?: readonly string[];
  bursts?: readonly string[];
}

/**
 * A noise source: `procedural:<kind>` (white, pink, brown, wind, knock, ring) or `file:<name>`
 * (a recording in the noise bank).
 */
export type SourceRef = `procedural:${string}` | `file:${string}`;

/** One concrete plan for one turn. Times in ms from the start of the turn's audio. */
export interface ChannelPlan {
  preset: string;
  seed: number;
  taskId: string;
  turn: number;
  /** 16 kHz. */
  sampleRate: number;
  /** Length of the turn's audio in samples (and so of the output). */
  length: number;
  durationMs: number;
  /**
   * Background noise: `snrDb` is the mean SNR the agent hears (see {@link ChannelPreset.noise}),
   * drifting by ±`driftDb` (`snr-drift.ts`) from `driftStartS` on the curve; a recording is
   * looped from `offset` (share of its length), a procedural source is generated from `seed`.
   */
  noise: {
    source: SourceRef;
    snrDb: number;
    driftDb: number;
    driftSpeedHz: number;
    driftStartS: number;
    offset: number;
    seed: number;
  } | null;
  bursts: { atMs: number; source: SourceRef; snrDb: number; seed: number }[];
  wind: { snrDb: number; seed: number } | null;
  /**
   * Muffled spans: `segments` sorted and disjoint; `startMs`/`endMs` span the first start to the
   * last end. Each edge is a crossfade of `transitionMs` centred on it.
   */
  muffle: {
    cutoffHz: number;
    startMs: number;
    endMs: number;
    transitionMs: number;
    segments: { startMs: number; endMs: number }[];
  } | null;
  farField: { gainDb: number; rt60Ms: number; wetDb: number; seed: number } | null;
  packetLoss: {
    lossRate: number;
    meanBurstMs: number;
    frameMs: number;
    spans: { startMs: number; endMs: number; frames: number }[];
  } | null;
  telephony: { lowHz: number; highHz: number } | null;
}

const uniform = (rng: Rng, [lo, hi]: Range) => lo + (hi - lo) * rng.next();
/** One repeat of the drift curve at {@link DRIFT_SPEED_HZ}: 20 s (the least common multiple of its periods 2, 20/27 and 5 s). */
const DRIFT_CURVE_S = 20;
const PROCEDURAL_BURSTS: readonly ProceduralBurst[] = ['knock', 'ring'];

/**
 * Draw the plan of one turn of `length` samples at 16 kHz. `preset` is a preset name or a custom
 * {@link ChannelPreset}. Each effect draws from its own forked generator, so switching one effect
 * off in a custom preset does not change the others.
 */
export function planChannel(
  preset: PresetName | ChannelPreset,
  key: PlanKey,
  length: number,
  bank: BankNames = {},
): ChannelPlan {
  const p = typeof preset === 'string' ? PRESETS[preset] : preset;
  const name = typeof preset === 'string' ? preset : 'custom';
  const turn = key.turn ?? 0;
  const root = rngFromState(hash32(`channel:${name}:${key.seed}:${key.taskId}:${turn}`));
  const durationMs = (length * 1000) / SPEECH_RATE_HZ;
  const plan: ChannelPlan = {
    preset: name,
    seed: key.seed,
    taskId: key.taskId,
    turn,
    sampleRate: SPEECH_RATE_HZ,
    length,
    durationMs,
    noise: null,
    bursts: [],
    wind: null,
    muffle: null,
    farField: null,
    packetLoss: null,
    telephony: p.telephony ? { ...p.telephony } : null,
  };

  if (p.noise) {
    const r = root.fork('noise');
    const files = bank.continuous ?? [];
    const source: SourceRef = files.length > 0 ? `file:${r.pick(files)}` : `procedural:${r.pick(p.noise.procedural)}`;
    plan.noise = {
      source,
      snrDb: uniform(r, p.noise.snrDb),
      driftDb: p.noise.driftDb,
      driftSpeedHz: p.noise.driftSpeedHz,
      // A seeded point on one repeat of the drift curve.
      driftStartS: (r.next() * DRIFT_CURVE_S) / (p.noise.driftSpeedHz / DRIFT_SPEED_HZ || 1),
      offset: r.next(),
      seed: r.int(2 ** 32),
    };
  }
  if (p.bursts) {
    const r = root.fork('bursts');
    const files = bank.bursts ?? [];
    let t = -Math.log(1 - r.next()) * (60_000 / p.bursts.ratePerMin);
    while (t < durationMs) {
      const source: SourceRef = files.length > 0 ? `file:${r.pick(files)}` : `procedural:${r.pick(PROCEDURAL_BURSTS)}`;
      plan.bursts.push({ atMs: t, source, snrDb: uniform(r, p.bursts.snrDb), seed: r.int(2 ** 32) });
      t += -Math.log(1 - r.next()) * (60_000 / p.bursts.ratePerMin);
    }
  }
  if (p.wind) {
    const r = root.fork('wind');
    if (r.next() < p.wind.probability) plan.wind = { snrDb: uniform(r, p.wind.snrDb), seed: r.int(2 ** 32) };
  }
  if (p.muffle) {
    const r = root.fork('muffle');
    if (r.next() < p.muffle.probability) {
      const max = Math.max(1, Math.floor(p.muffle.maxSegments ?? 1));
      // One segment keeps the draws of a single-segment preset; more: a count, then one
      // segment inside each of `count` equal slots (so they never overlap).
      const count = p.muffle.segmentMs === null || max === 1 ? 1 : 1 + r.int(max);
      const slot = durationMs / count;
      const segments: { startMs: number; endMs: number }[] = [];
      for (let i = 0; i < count; i++) {
        const seg = p.muffle.segmentMs === null ? durationMs : Math.min(p.muffle.segmentMs, slot);
        const startMs = p.muffle.segmentMs === null ? 0 : i * slot + r.next() * (slot - seg);
        segments.push({ startMs, endMs: startMs + seg });
      }
      plan.muffle = {
        cutoffHz: p.muffle.cutoffHz,
        startMs: segments[0]!.startMs,
        endMs: segments[segments.length - 1]!.endMs,
        transitionMs: p.muffle.transitionMs,
        segments,
      };
    }
  }
  if (p.farField) {
    const r = root.fork('far_field');
    if (r.next() < p.farField.probability) {
      plan.farField = {
        gainDb: uniform(r, p.farField.gainDb),
        rt60Ms: uniform(r, p.farField.rt60Ms),
        wetDb: uniform(r, p.farField.wetDb),
        seed: r.int(2 ** 32),
      };
    }
  }
  if (p.packetLoss) {
    const r = root.fork('packet_loss');
    const lossRate = uniform(r, p.packetLoss.lossRate);
    const frames = Math.ceil(length / msToSamples(p.packetLoss.frameMs, SPEECH_RATE_HZ));
    const drops = gilbertElliottDrops(
      frames,
      { lossRate, meanBurstMs: p.packetLoss.meanBurstMs, frameMs: p.packetLoss.frameMs },
      r,
    );
    const spans = dropSpans(drops, p.packetLoss.frameMs).map((s) => ({ ...s, endMs: Math.min(s.endMs, durationMs) }));
    plan.packetLoss = { lossRate, meanBurstMs: p.packetLoss.meanBurstMs, frameMs: p.packetLoss.frameMs, spans };
  }
  return plan;
}
