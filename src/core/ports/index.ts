export * from './sql-db.ts';
export * from './clock.ts';
export * from './rng.ts';
export * from './tts.ts';
