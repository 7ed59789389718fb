import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

export default defineConfig({
  plugins: [preact()],
  worker: { format: 'es' },
  // espeak-ng (GPL-3.0) is only reached through a dynamic import in the rollout worker: a
  // separate chunk plus its wasm asset, never in the main bundle. It is left unbundled in dev so
  // its wasm URL stays the package's own file.
  optimizeDeps: { include: ['sql.js', 'comlink'], exclude: ['espeak-ng'] },
  resolve: {
    alias: [
      // wavefile's "module" entry has only named exports; the core imports its default (as Node
      // resolves it, through the CommonJS build). Bundle that same build in the page.
      { find: /^wavefile$/, replacement: 'wavefile/dist/wavefile.js' },
    ],
  },
  build: { target: 'es2022', sourcemap: true },
  // Local preview for the end-to-end tests and `npm run preview`: no network beyond this host.
  preview: { host: '127.0.0.1' },
});
