/** Scoring: reward components, vetoes, assertions, process reward and pass^k. */
export * from './evaluate.ts';
export * from './replay.ts';
export * from './component.ts';
export * from './state-match.ts';
export * from './communicate.ts';
export * from './spoken-numbers.ts';
export * from './env-assertions.ts';
export * from './action-match.ts';
export * from './write-whitelist.ts';
export * from './quality.ts';
export * from './dialogue-acts.ts';
export * from './consent.ts';
export * from './behaviour-checks.ts';
export * from './judging.ts';
export * from './process-reward.ts';
export * from './pass-hat-k.ts';
export * from './turns.ts';
