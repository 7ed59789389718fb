export * from './environment.ts';
export * from './state.ts';
export * from './changes.ts';
export * from './write-log.ts';
export * from './write-images.ts';
