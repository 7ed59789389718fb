// The CLI as prebuilt JavaScript (issue 15, item 6: start-up without tsx's loader).
//
// `prebuiltEntry()` returns the URL of `src/cli/main.ts` bundled by esbuild into
// node_modules/.cache/switchboard-cli/<build>/ (our modules bundled, packages left as imports,
// code split so that each command's module is its own chunk, loaded when that command runs).
// The build is made on first use and again whenever a source file it was made from is newer
// than it (one stat per file, ~2 ms). `import.meta.url` in a bundled file is rewritten to the
// file's own location, so paths such as `../../package.json` or `./ts-worker.mjs` keep
// pointing at the checkout. When anything fails (no esbuild, a read-only checkout) it returns
// undefined and bin/switchboard.mjs runs the TypeScript through tsx as before.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * 64-bit FNV-1a of `text`'s UTF-16 code units, as 16 hex digits: a folder name, not a checksum
 * (node:crypto costs every start ~5 ms to import; the whole of `--help` is ~45 ms above Node's own
 * start).
 */
function fnv1a64(text) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) h = BigInt.asUintN(64, (h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}
/**
 * Where builds are cached, one folder per build, and the manifest naming the current one: a folder
 * of this checkout's own (named by a hash of its path), so that checkouts sharing one
 * node_modules (git worktrees with a symlinked node_modules) never run each other's builds.
 */
const CACHE_DIR = join(ROOT, 'node_modules/.cache/switchboard-cli', fnv1a64(ROOT));
const MANIFEST = join(CACHE_DIR, 'manifest.json');
/** Builds older than this, other than the current one, are removed when a new one is made. */
const PRUNE_AFTER_MS = 10 * 60_000;

/** The current build when it is newer than every file it was made from, else undefined. */
function freshBuild() {
  try {
    const m = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    if (m.node !== process.version) return undefined;
    for (const f of m.inputs) if (statSync(join(ROOT, f)).mtimeMs > m.builtMs) return undefined;
    return pathToFileURL(join(CACHE_DIR, m.build, 'main.js')).href;
  } catch {
    return undefined;
  }
}

/** esbuild plugin: `import.meta.url` of each bundled file becomes that file's URL, relative to the bundle. */
function ownMetaUrl(outdir) {
  return {
    name: 'own-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        let contents = readFileSync(args.path, 'utf8');
        if (/import\.meta\.(dirname|filename)/.test(contents))
          throw new Error(`${args.path}: import.meta.dirname/filename are not rewritten; use import.meta.url`);
        const rel = relative(outdir, args.path).split(sep).join('/');
        contents = contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`);
        return { contents, loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js' };
      });
    },
  };
}

/** Bundle src/cli/main.ts (and the rollout threads' entry) into a new build folder and make it the current one. */
async function build() {
  const { build: esbuild } = await import('esbuild');
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const outdir = join(CACHE_DIR, id);
  mkdirSync(outdir, { recursive: true });
  // Node loads the bundle at its real path (a symlinked node_modules resolved), so `import.meta.url`
  // is rewritten relative to that.
  const realOutdir = realpathSync(outdir);
  // Taken before any source is read: a file saved during the build makes the next start rebuild.
  const builtMs = Date.now();
  const result = await esbuild({
    absWorkingDir: ROOT,
    // run-thread: the entry of `run`'s rollout threads (src/cli/run-trials.ts starts them on it).
    entryPoints: { main: join(ROOT, 'src/cli/main.ts'), 'run-thread': join(ROOT, 'src/cli/run-thread.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outdir,
    metafile: true,
    logLevel: 'silent',
    plugins: [ownMetaUrl(realOutdir)],
  });
  const inputs = [...Object.keys(result.metafile.inputs), 'bin/prebuilt.mjs', 'package.json'];
  const tmp = `${MANIFEST}.${id}`;
  writeFileSync(tmp, JSON.stringify({ build: id, builtMs, node: process.version, inputs }));
  renameSync(tmp, MANIFEST); // atomic: a concurrent start reads the old or the new manifest
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (name !== id && name !== 'manifest.json' && Date.now() - statSync(path).mtimeMs > PRUNE_AFTER_MS)
      rmSync(path, { recursive: true, force: true });
  }
  return pathToFileURL(join(outdir, 'main.js')).href;
}

/**
 * URL of the prebuilt CLI entry (exports `main`), built now if missing or stale; undefined when
 * it cannot be built (then the caller runs the TypeScript sources through tsx).
 */
export async function prebuiltEntry() {
  const fresh = freshBuild();
  if (fresh) return fresh;
  try {
    mkdirSync(dirname(MANIFEST), { recursive: true });
    return await build();
  } catch (e) {
    if (process.env.SWITCHBOARD_DEBUG) process.stderr.write(`switchboard: no prebuilt CLI (${e.message}); using tsx\n`);
    return undefined;
  }
}
