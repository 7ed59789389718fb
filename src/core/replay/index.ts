/** Replay of recorded episodes (tau2-bench results or our trajectories) against our domains. */
export * from './compare.ts';
export * from './episode.ts';
export * from './tau2-format.ts';
export * from './replay.ts';
