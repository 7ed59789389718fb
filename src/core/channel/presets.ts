/**
 * Named channel presets. A preset holds ranges and probabilities; {@link planChannel} draws one
 * concrete plan from it for a given (preset, seed, task id, turn).
 */
import type { NoiseKind } from '../audio/noise.ts';

/** Names of the presets. */
export const PRESET_NAMES = ['clean', 'control', 'regular', 'harsh'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** An inclusive range [min, max] sampled uniformly. */
export type Range = readonly [number, number];

/** Settings of one preset. `null` switches an effect off. */
export interface ChannelPreset {
  /** Continuous background noise mixed at an SNR (dB) against the speech's active level. */
  noise: {
    /** Procedural kinds to choose from when the noise bank has no continuous recordings. */
    procedural: readonly NoiseKind[];
    /** Mean SNR in dB. */
    snrDb: Range;
    /** Peak deviation of the slowly drifting SNR from its mean, in dB. */
    driftDb: number;
    /** Period of the drift in ms (sampled). */
    driftPeriodMs: Range;
  } | null;
  /** Poisson burst noises. */
  bursts: { ratePerMin: number; snrDb: Range } | null;
  /** Wind on the mic, per turn with a probability. */
  wind: { probability: number; snrDb: Range } | null;
  /** Muffled mic: 4th-order low-pass, per turn with a probability, entered and left with ramps. */
  muffle: {
    probability: number;
    cutoffHz: number;
    /** Length of the muffled segment in ms; `null` muffles the whole turn. */
    segmentMs: number | null;
    transitionMs: number;
  } | null;
  /** Far-field talker: lower direct level plus reverb, per turn with a probability. */
  farField: { probability: number; gainDb: Range; rt60Ms: Range; wetDb: Range } | null;
  /** Gilbert–Elliott packet loss. */
  packetLoss: { lossRate: Range; meanBurstMs: number; frameMs: number } | null;
  /** Telephony band-pass (Hz) and G.711 mu-law at 8 kHz. */
  telephony: { lowHz: number; highHz: number } | null;
}

/** Telephony band: 300–3400 Hz (ITU-T G.712 voice channel; tau2-bench `TELEPHONY_LOW/HIGH_FREQ`). */
export const TELEPHONY_BAND_HZ: readonly [number, number] = [300, 3400];

/**
 * The presets.
 * - `clean`: no effect at all (the 16 kHz TTS audio as is).
 * - `control`: only what every phone call has: telephony band-pass and mu-law at 8 kHz.
 * - `regular`: tau-Voice-like defaults (tau2-bench `voice_config.py`): noise at 15 ± 3 dB SNR,
 *   bursts 1/min at −5…+10 dB, muffling with probability 0.2 for 500 ms at 1500 Hz with 100 ms
 *   ramps, packet loss 1–2 % in 100 ms bursts, telephony.
 * - `harsh`: our own stress setting: noise at 5–10 dB, bursts 3/min, wind, longer muffling,
 *   far field, 3–5 % loss.
 */
export const PRESETS: Record<PresetName, ChannelPreset> = {
  clean: { noise: null, bursts: null, wind: null, muffle: null, farField: null, packetLoss: null, telephony: null },
  control: { noise: null, bursts: null, wind: null, muffle: null, farField: null, packetLoss: null, telephony: { lowHz: 300, highHz: 3400 } },
  regular: {
    noise: { procedural: ['pink', 'brown'], snrDb: [15, 15], driftDb: 3, driftPeriodMs: [8_000, 20_000] },
    bursts: { ratePerMin: 1, snrDb: [-5, 10] },
    wind: null,
    muffle: { probability: 0.2, cutoffHz: 1500, segmentMs: 500, transitionMs: 100 },
    farField: null,
    packetLoss: { lossRate: [0.01, 0.02], meanBurstMs: 100, frameMs: 20 },
    telephony: { lowHz: 300, highHz: 3400 },
  },
  harsh: {
    noise: { procedural: ['pink', 'brown', 'white'], snrDb: [5, 10], driftDb: 3, driftPeriodMs: [5_000, 12_000] },
    bursts: { ratePerMin: 3, snrDb: [-5, 10] },
    wind: { probability: 0.3, snrDb: [0, 10] },
    muffle: { probability: 0.4, cutoffHz: 1000, segmentMs: null, transitionMs: 100 },
    farField: { probability: 0.3, gainDb: [-12, -6], rt60Ms: [300, 700], wetDb: [-6, 0] },
    packetLoss: { lossRate: [0.03, 0.05], meanBurstMs: 100, frameMs: 20 },
    telephony: { lowHz: 300, highHz: 3400 },
  },
};
