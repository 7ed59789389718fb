/**
 * Named channel presets. A preset holds ranges and probabilities; {@link planChannel} draws one
 * concrete plan from it for a given (preset, seed, task id, turn).
 */
import type { NoiseKind } from '../audio/noise.ts';
import { DEFAULT_LOSS_RATE_RANGE } from '../audio/packet-loss.ts';
import { DRIFT_SPEED_HZ } from './snr-drift.ts';

/** A procedural noise source: a generated noise kind, or `babble` (several overlapping TTS voices, see `babble.ts`). */
export type ProceduralSource = NoiseKind | 'babble';

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
    procedural: readonly ProceduralSource[];
    /**
     * Mean SNR in dB, as the agent hears it: speech (after far field) against noise, both in the
     * telephony band when the preset has one (full band otherwise).
     */
    snrDb: Range;
    /** Peak deviation of the drifting SNR from its mean, in dB (tau2-bench `NOISE_SNR_DRIFT_DB`: 3). */
    driftDb: number;
    /** Variation speed of the drift in Hz ({@link DRIFT_SPEED_HZ}: tau2-bench's 0.5 Hz; see `snr-drift.ts`). */
    driftSpeedHz: number;
  } | null;
  /** Poisson burst noises. */
  bursts: { ratePerMin: number; snrDb: Range } | null;
  /** Wind on the mic, per turn with a probability. */
  wind: { probability: number; snrDb: Range } | null;
  /**
   * Muffled mic: a 4th-order Butterworth low-pass run twice (the magnitude of tau2-bench's
   * zero-phase `filtfilt` of `butter(4)`: −6 dB at the cutoff, −48 dB per octave), per turn with
   * a probability, entered and left with ramps.
   */
  muffle: {
    probability: number;
    cutoffHz: number;
    /** Length of the muffled segment in ms; `null` muffles the whole turn. */
    segmentMs: number | null;
    transitionMs: number;
    /**
     * With `segmentMs`: at most this many muffled segments in one turn (default 1), each drawn
     * inside its own equal slot of the turn so they never overlap; the mic goes muffled/clear
     * with crossfades of `transitionMs` at every edge.
     */
    maxSegments?: number;
  } | null;
  /** Far-field talker: lower direct level plus reverb, per turn with a probability. */
  farField: { probability: number; gainDb: Range; rt60Ms: Range; wetDb: Range } | null;
  /** Gilbert–Elliott packet loss. */
  packetLoss: { lossRate: Range; meanBurstMs: number; frameMs: number } | null;
  /** Telephony band-pass (Hz) and G.711 mu-law at 8 kHz. */
  telephony: { lowHz: number; highHz: number } | null;
  /**
   * Vocal tics (procedural cough or sniffle) inserted into a caller turn with this probability
   * per turn, at a word boundary, at `levelDb` relative to the speech's active level. Absent or
   * null: none.
   */
  tics?: { probability: number; levelDb: Range } | null;
  /**
   * Speech not meant for the agent ("hold on a second", spoken with the caller's voice in the
   * domain's language, turned away from the phone: `levelDb` relative to the speech) inserted
   * with this probability per turn at a word boundary. Absent or null: none.
   */
  asides?: { probability: number; levelDb: Range } | null;
}

/** Telephony band: 300–3400 Hz (ITU-T G.712 voice channel; tau2-bench `TELEPHONY_LOW/HIGH_FREQ`). */
export const TELEPHONY_BAND_HZ: readonly [number, number] = [300, 3400];

/**
 * The presets.
 * - `clean`: no effect at all (the 16 kHz TTS audio as is).
 * - `control`: only what every phone call has: telephony band-pass and mu-law at 8 kHz.
 * - `regular`: tau-Voice-like defaults (tau2-bench `voice_config.py`): noise at 15 ± 3 dB SNR in
 *   the telephony band (drifting as tau2's envelope does),
 *   bursts 1/min at −5…+10 dB, muffling with probability 0.2 for 500 ms at 1500 Hz with 100 ms
 *   ramps, packet loss 1–2 % in 100 ms bursts, telephony; ours on top: a vocal tic and an aside
 *   each in 5 % of caller turns.
 * - `harsh`: our own stress setting: noise at 5–10 dB (procedural or TTS babble), bursts 3/min,
 *   wind, up to three 1.5 s muffled spans per turn, far field, 3–5 % loss, tics and asides in
 *   15 % of caller turns.
 */
export const PRESETS: Record<PresetName, ChannelPreset> = {
  clean: {
    noise: null,
    bursts: null,
    wind: null,
    muffle: null,
    farField: null,
    packetLoss: null,
    telephony: null,
    tics: null,
    asides: null,
  },
  control: {
    noise: null,
    bursts: null,
    wind: null,
    muffle: null,
    farField: null,
    packetLoss: null,
    telephony: { lowHz: TELEPHONY_BAND_HZ[0], highHz: TELEPHONY_BAND_HZ[1] },
    tics: null,
    asides: null,
  },
  regular: {
    noise: { procedural: ['pink', 'brown'], snrDb: [15, 15], driftDb: 3, driftSpeedHz: DRIFT_SPEED_HZ },
    bursts: { ratePerMin: 1, snrDb: [-5, 10] },
    wind: null,
    muffle: { probability: 0.2, cutoffHz: 1500, segmentMs: 500, transitionMs: 100 },
    farField: null,
    packetLoss: { lossRate: DEFAULT_LOSS_RATE_RANGE, meanBurstMs: 100, frameMs: 20 },
    telephony: { lowHz: TELEPHONY_BAND_HZ[0], highHz: TELEPHONY_BAND_HZ[1] },
    tics: { probability: 0.05, levelDb: [-6, 0] },
    asides: { probability: 0.05, levelDb: [-8, -4] },
  },
  harsh: {
    noise: {
      procedural: ['pink', 'brown', 'white', 'babble'],
      snrDb: [5, 10],
      driftDb: 3,
      driftSpeedHz: DRIFT_SPEED_HZ,
    },
    bursts: { ratePerMin: 3, snrDb: [-5, 10] },
    wind: { probability: 0.3, snrDb: [0, 10] },
    muffle: { probability: 0.4, cutoffHz: 1000, segmentMs: 1500, transitionMs: 150, maxSegments: 3 },
    farField: { probability: 0.3, gainDb: [-12, -6], rt60Ms: [300, 700], wetDb: [-6, 0] },
    packetLoss: { lossRate: [0.03, 0.05], meanBurstMs: 100, frameMs: 20 },
    telephony: { lowHz: TELEPHONY_BAND_HZ[0], highHz: TELEPHONY_BAND_HZ[1] },
    tics: { probability: 0.15, levelDb: [-3, 3] },
    asides: { probability: 0.15, levelDb: [-8, -3] },
  },
};
