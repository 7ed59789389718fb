import { defineConfig, type Plugin } from 'vite';
import preact from '@preact/preset-vite';

/**
 * The npm package `espeak-ng` (an Emscripten build) starts with an `if (ENVIRONMENT_IS_NODE)`
 * branch that never runs in a page: it imports Node's `module` and resolves `new URL('./',
 * import.meta.url)`. Vite warned about both in every build, the first without naming the file.
 * This marks the two expressions `@vite-ignore` in the build (main and worker bundles), so they
 * stay as written (unreached in a browser) and the build is quiet. A package whose text differs
 * fails the build naming the file and the expression, rather than letting the warnings come back
 * unexplained. The source map keeps the package's lines (only two gain a comment).
 */
function espeakNodeBranch(): Plugin {
  const file = '/node_modules/espeak-ng/dist/espeak-ng.js';
  const marks: [string, string][] = [
    ["await import('module')", "await import(/* @vite-ignore */ 'module')"],
    ["new URL('./', import.meta.url)", "new URL(/* @vite-ignore */ './', import.meta.url)"],
  ];
  return {
    name: 'switchboard:espeak-node-branch',
    apply: 'build',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith(file)) return undefined;
      let out = code;
      for (const [from, to] of marks) {
        if (!out.includes(from))
          throw new Error(`${id}: expected \`${from}\` in its Node-only branch (espeak-ng package changed?)`);
        out = out.replace(from, to);
      }
      return { code: out, map: null };
    },
  };
}

export default defineConfig({
  plugins: [preact(), espeakNodeBranch()],
  // The page's workers are bundled apart, with their own plugins (espeak-ng is reached from one).
  // rolldown's plugin-timing report (PLUGIN_TIMINGS) is off in both: it timed vite's own worker
  // plugin, whose one call is the whole worker build, and told the reader to profile it.
  worker: { format: 'es', plugins: () => [espeakNodeBranch()], rolldownOptions: { checks: { pluginTimings: false } } },
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
  build: { target: 'es2022', sourcemap: true, rolldownOptions: { checks: { pluginTimings: false } } },
  // Local preview for the end-to-end tests and `npm run preview`: no network beyond this host.
  preview: { host: '127.0.0.1' },
});
