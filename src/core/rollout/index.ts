export * from './episode.ts';
export * from './batch.ts';
export * from './normalize.ts';
export * from './limits.ts';
