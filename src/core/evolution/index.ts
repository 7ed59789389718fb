/** The self-evolving task bank: labels from repeats, sampling weights, the evolve loop. */
export * from './labels.ts';
export * from './weights.ts';
export * from './evolve.ts';
export * from './attribution.ts';
export * from './findings.ts';
export * from './issues.ts';
export * from './report-summary.ts';
export * from './caller-checks.ts';
export * from './db-brittleness.ts';
export * from './cross-policy.ts';
export * from './patterns.ts';
export * from './harden.ts';
export * from './harden-round.ts';
export * from './bank.ts';
export * from './proposals.ts';
export * from './channel-axis.ts';
