/**
 * `npm run build` is quiet about the page's rollout worker. With the repository's vite.config.ts,
 * bundling it as the page does (a module worker, so with the config's worker plugins) logs no
 * warning. Before, vite printed
 * `new URL('./', import.meta.url) doesn't exist at build time …` without naming the file, and
 * `Module "module" has been externalized for browser compatibility` — both from the package's
 * `if (ENVIRONMENT_IS_NODE)` branch, which never runs in a page — and rolldown's
 * INEFFECTIVE_DYNAMIC_IMPORT for `src/core/audio/wav.ts`, imported dynamically by
 * `rollout-service.ts` though the worker imports it statically anyway.
 */
import { fileURLToPath } from 'node:url';
import { build, createLogger, type Logger, type Plugin } from 'vite';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The page's rollout worker: it reaches espeak-ng (`src/adapters/browser/audio/espeak-tts.ts`). */
const ROLLOUT_WORKER = 'workers/rollout.worker.ts';
/** An entry that does not exist on disk: it starts the rollout worker as the page does. */
const WORKER_ENTRY = `${ROOT}test/e2e/rollout-worker-entry.js`;

/** Build `input` with vite.config.ts as `npm run build` does; returns the warnings and file names. */
async function buildQuietly(input: string, plugins: Plugin[] = []): Promise<{ warnings: string[]; files: string[] }> {
  const warnings: string[] = [];
  const logger: Logger = {
    ...createLogger('warn', { allowClearScreen: false }),
    info: () => undefined,
    warn: (msg) => void warnings.push(msg.trim()),
    warnOnce: (msg) => void warnings.push(msg.trim()),
  };
  // As `npm run build` runs: vite reports an externalized Node built-in only in a production
  // build, and vitest sets NODE_ENV=test.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  const out = await build({
    root: ROOT,
    configFile: `${ROOT}vite.config.ts`,
    customLogger: logger,
    logLevel: 'warn',
    plugins,
    build: { write: false, sourcemap: false, rolldownOptions: { input } },
  }).finally(() => {
    process.env.NODE_ENV = nodeEnv;
  });
  const outputs = (Array.isArray(out) ? out : [out]).flatMap((o) => ('output' in o ? o.output : []));
  return { warnings, files: outputs.map((o) => o.fileName) };
}

it('bundles the rollout worker (channel audio, espeak-ng) as the page does, without a warning', async () => {
  const entry: Plugin = {
    name: 'test:rollout-worker-entry',
    resolveId: (id) => (id === WORKER_ENTRY ? id : undefined),
    load: (id) =>
      id === WORKER_ENTRY
        ? `new Worker(new URL('../../${ROLLOUT_WORKER}', import.meta.url), { type: 'module' });`
        : undefined,
  };
  const { warnings, files } = await buildQuietly(WORKER_ENTRY, [entry]);
  expect(files.filter((f) => /^assets\/(espeak-tts-[\w-]+\.js|espeak-ng-[\w-]+\.wasm)$/.test(f))).toHaveLength(2);
  expect(warnings).toEqual([]);
}, 180_000);
