/**
 * On-device models in Node: the same loading code as the page's model worker
 * (`src/adapters/shared/local-model-engine.ts`), run in-process on onnxruntime-node's CPU
 * backend. Models come from a models folder (default `models/` of the repository, or
 * `SWITCHBOARD_MODELS`) holding `manifest.json` and the files `npm run models:fetch` downloaded.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalModelClient, type LocalGenerator } from '../shared/local-model-client.ts';
// transformers.js and onnxruntime-node are imported on the first request only (dynamic `import()`
// below), so commands that use no on-device model start without them.
import type { LocalEngine, LocalGenerateRequest } from '../shared/local-model-engine.ts';
import {
  agentModels,
  LocalModelError,
  parseManifest,
  resolveLocalAgent,
  type ManifestModel,
  type ModelManifest,
  type ResolvedLocalAgent,
} from '../shared/local-model-manifest.ts';

/** The repository's `models/` folder. */
export const REPO_MODELS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../models');

/** The models folder: `env.SWITCHBOARD_MODELS` when set, else the repository's `models/`. */
export function modelsDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.SWITCHBOARD_MODELS ? resolve(env.SWITCHBOARD_MODELS) : REPO_MODELS_DIR;
}

/** Read and check `<dir>/manifest.json`. @throws LocalModelError when absent or malformed. */
export function readManifest(dir: string): ModelManifest {
  const file = join(dir, 'manifest.json');
  if (!existsSync(file)) throw new LocalModelError(`no model manifest at ${file}`);
  return parseManifest(JSON.parse(readFileSync(file, 'utf8')));
}

/** Files of `model` missing from `<dir>/<model id>/` (or of another size than the manifest says). */
export function missingFiles(dir: string, model: ManifestModel): string[] {
  return model.files
    .filter((f) => {
      const p = join(dir, model.id, f.path);
      return !existsSync(p) || (f.size !== null && statSync(p).size !== f.size);
    })
    .map((f) => `${model.id}/${f.path}`);
}

/**
 * Resolve `id` through the manifest of `dir` and check that every file it needs is there.
 * @throws LocalModelError for an unknown id or missing files (naming `npm run models:fetch`).
 */
export function resolveInstalledAgent(dir: string, id: string): ResolvedLocalAgent {
  const agent = resolveLocalAgent(readManifest(dir), id);
  const missing = agentModels(agent).flatMap((m) => missingFiles(dir, m));
  if (missing.length) {
    // Unpinned models are fetched with --pin (models:fetch refuses their files otherwise).
    const unpinned = agentModels(agent).some((m) => m.files.some((f) => !f.sha256));
    throw new LocalModelError(
      `on-device agent "${id}" needs files that are not in ${dir}: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}. ` +
        `On a machine with internet run: npm run models:fetch -- ${unpinned ? '--pin ' : ''}${agentModels(agent)
          .map((m) => m.id)
          .join(' ')}${unpinned ? ' (the manifest does not pin them yet: --pin records their commit and sha256)' : ''}`,
    );
  }
  return agent;
}

/** Loads the engine on first use and keeps it; one generation at a time. */
class LazyEngine implements LocalGenerator {
  private engine: Promise<LocalEngine> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  constructor(private readonly load: () => Promise<LocalEngine>) {}

  generate(request: LocalGenerateRequest) {
    this.engine ??= this.load();
    const run = this.queue.then(async () => (await this.engine!).generate(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async dispose(): Promise<void> {
    if (this.engine) await (await this.engine).dispose();
    this.engine = null;
  }
}

/** A {@link LocalModelClient} running in this process, plus a way to free its models. */
export interface NodeLocalModel {
  client: LocalModelClient;
  dispose(): Promise<void>;
}

/**
 * The on-device agent `id` of the manifest in `dir` (default {@link modelsDir}), as a
 * `ModelClient`. Checks the manifest and files now; imports the model runtime (transformers.js,
 * onnxruntime-node) and loads the models on the first request.
 * @throws LocalModelError for an unknown id or missing files.
 */
export function nodeLocalModel(id: string, dir: string = modelsDir()): NodeLocalModel {
  const agent = resolveInstalledAgent(dir, id);
  const engine = new LazyEngine(async () => {
    const { loadLocalEngine } = await import('../shared/local-model-engine.ts');
    return loadLocalEngine(agent, { modelsPath: dir, device: 'cpu' });
  });
  return { client: new LocalModelClient(id, engine), dispose: () => engine.dispose() };
}
