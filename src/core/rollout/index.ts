export * from './episode.ts';
export * from "./batch.ts";
