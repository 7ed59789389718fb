/** Training signals: GRPO groups and advantages at three granularities, SFT and GRPO exports. */
export * from './groups.ts';
export * from './rollouts.ts';
export * from './turn-level.ts';
export * from './export.ts';
export * from './session.ts';
export * from './continuation.ts';
