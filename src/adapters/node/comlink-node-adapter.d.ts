// comlink ships `dist/esm/node-adapter.mjs` with its types in `node-adapter.d.ts`, which
// TypeScript does not pair with an `.mjs` import. Point the runtime path at those types.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter.js';
}
