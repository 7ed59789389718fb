import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

export default defineConfig({
  plugins: [preact()],
  worker: { format: 'es' },
  optimizeDeps: { include: ['sql.js', 'comlink'] },
  build: { target: 'es2022', sourcemap: true },
});
