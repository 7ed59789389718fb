/** The npm package `espeak-ng` ships no types: an Emscripten module factory. */
declare module 'espeak-ng' {
  const factory: (options: Record<string, unknown>) => Promise<unknown>;
  export default factory;
}
