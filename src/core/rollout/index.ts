export * from './episode.ts';
export * from './batch.ts';
export * from './normalize.ts';
