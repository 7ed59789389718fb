export * from './types.ts';
export * from './phrases.ts';
export * from './reference-plan.ts';
export * from './scripted.ts';
export * from './noisy.ts';
