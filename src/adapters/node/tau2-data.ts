/**
 * tau2-bench's data files on disk (Node): the cache that `switchboard data tau2` fills and that
 * `--domain tau2-airline` / `tau2-retail` read when no `--data` is given.
 *
 * Layout: `<data root>/tau2/<commit>/{LICENSE, airline/, retail/, telecom/, noise/}`, where the
 * data root is `$SWITCHBOARD_DATA` or `~/.cache/switchboard`, and each part folder holds the files
 * {@link TAU2_DATA_MANIFEST} lists for it. A part folder only ever appears complete and verified:
 * its files are written into a hidden `.<part>.partial-…` folder first, which is renamed into place
 * once every file has passed its digest check (a rename within one folder is atomic on POSIX).
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  TAU2_DATA_MANIFEST,
  TAU2_DATA_PARTS,
  TAU2_DEFAULT_BASE_URL,
  Tau2DataError,
  fetchTau2Files,
  tau2LicenseFile,
  tau2PartFiles,
  verifyTau2File,
  type FetchLike,
  type Tau2DataFile,
  type Tau2DataManifest,
} from '../../core/tau2/data-manifest.ts';

/** Environment variables this module reads. */
export interface Tau2DataEnv {
  /** Data root (default `~/.cache/switchboard`). */
  SWITCHBOARD_DATA?: string | undefined;
  /** Raw-file base URL (default {@link TAU2_DEFAULT_BASE_URL}); tests point it at a local server. */
  SWITCHBOARD_TAU2_BASE_URL?: string | undefined;
}

/** The data root: `$SWITCHBOARD_DATA`, else `~/.cache/switchboard`. */
export function dataRoot(env: Tau2DataEnv = process.env): string {
  return env.SWITCHBOARD_DATA || join(homedir(), '.cache', 'switchboard');
}

/** The cache folder of the pinned commit: `<data root>/tau2/<commit>`. */
export function tau2CacheDir(env: Tau2DataEnv = process.env, manifest: Tau2DataManifest = TAU2_DATA_MANIFEST): string {
  return join(dataRoot(env), 'tau2', manifest.commit);
}

/** `<cache>/<part>` when that part has been downloaded and verified, else undefined. */
export function cachedTau2Part(
  part: string,
  env: Tau2DataEnv = process.env,
  manifest: Tau2DataManifest = TAU2_DATA_MANIFEST,
): string | undefined {
  const dir = join(tau2CacheDir(env, manifest), part);
  return existsSync(dir) && statSync(dir).isDirectory() ? dir : undefined;
}

/** What {@link downloadTau2Data} did with one part. */
export interface Tau2PartResult {
  part: string;
  /** Folder the part is in. */
  dir: string;
  /** `downloaded`, or `cached` (already there; its files re-checked). */
  status: 'downloaded' | 'cached';
  files: number;
  bytes: number;
}

/** Options of {@link downloadTau2Data}. */
export interface DownloadTau2Options {
  /** Parts to fetch; default all of {@link TAU2_DATA_PARTS}. */
  parts?: readonly string[];
  /** Default `$SWITCHBOARD_TAU2_BASE_URL`, else {@link TAU2_DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** Default {@link tau2CacheDir}. */
  cacheDir?: string;
  /** Default the global `fetch`. */
  fetch?: FetchLike;
  manifest?: Tau2DataManifest;
  env?: Tau2DataEnv;
  /** Progress lines (one per file). */
  log?: (line: string) => void;
}

async function verifyOnDisk(dir: string, files: readonly Tau2DataFile[], manifest: Tau2DataManifest): Promise<number> {
  let bytes = 0;
  for (const file of files) {
    const path = join(dir, file.path);
    let data: Uint8Array;
    try {
      data = new Uint8Array(await readFile(path));
    } catch {
      throw new Tau2DataError(`tau2 data ${file.path}: missing from the cache at ${path}`);
    }
    await verifyTau2File(file, data, manifest);
    bytes += data.length;
  }
  return bytes;
}

/** Write `data` to `path` through a temporary file and a rename. */
async function writeAtomic(path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.partial-${process.pid}`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/**
 * Download tau2-bench's data files at the pinned commit into the cache and check every file's
 * digests. A part already in the cache is re-checked (no download); a cached part that fails the
 * check is removed and downloaded again. Leftover `.partial` folders of interrupted runs are removed.
 *
 * @returns one result per part, in the order asked.
 * @throws Tau2DataError naming the file on a network failure, an HTTP error or a digest mismatch;
 *   the part being downloaded is then not in the cache (nothing half-written is left as valid).
 */
export async function downloadTau2Data(options: DownloadTau2Options = {}): Promise<Tau2PartResult[]> {
  const env = options.env ?? process.env;
  const manifest = options.manifest ?? TAU2_DATA_MANIFEST;
  const parts = options.parts ?? TAU2_DATA_PARTS;
  const baseUrl = options.baseUrl ?? (env.SWITCHBOARD_TAU2_BASE_URL || TAU2_DEFAULT_BASE_URL);
  const cacheDir = options.cacheDir ?? tau2CacheDir(env, manifest);
  const fetchFn = options.fetch ?? ((url: string) => fetch(url, { redirect: 'follow' }));
  const log = options.log ?? (() => {});
  const partFiles = parts.map((part) => ({ part, files: tau2PartFiles(part, manifest) }));
  await mkdir(cacheDir, { recursive: true });
  for (const name of await readdir(cacheDir)) {
    if (/^\..+\.partial-/.test(name) || /\.partial-\d+$/.test(name))
      await rm(join(cacheDir, name), { recursive: true, force: true });
  }

  const license = tau2LicenseFile(manifest);
  const licensePath = join(cacheDir, license.path);
  const licenseOk = await verifyOnDisk(cacheDir, [license], manifest).then(
    () => true,
    () => false,
  );
  if (!licenseOk) {
    const got = await fetchTau2Files([license], { fetch: fetchFn, baseUrl, manifest });
    await writeAtomic(licensePath, got.get(license.path)!);
  }

  const results: Tau2PartResult[] = [];
  for (const { part, files } of partFiles) {
    const dir = join(cacheDir, part);
    if (existsSync(dir)) {
      try {
        const bytes = await verifyOnDisk(cacheDir, files, manifest);
        log(`${part}: in the cache, ${files.length} files verified`);
        results.push({ part, dir, status: 'cached', files: files.length, bytes });
        continue;
      } catch (e) {
        log(`${part}: cached copy fails its check (${(e as Error).message}); downloading again`);
        await rm(dir, { recursive: true, force: true });
      }
    }
    const partial = join(cacheDir, `.${part}.partial-${process.pid}`);
    try {
      const got = await fetchTau2Files(files, {
        fetch: fetchFn,
        baseUrl,
        manifest,
        onFile: (file, n) =>
          log(
            `${file.path}: ${n} bytes, verified${file.sha256 ? '' : ' by its git blob id only (the manifest pins no sha256 for it)'}`,
          ),
      });
      await mkdir(partial, { recursive: true });
      let bytes = 0;
      for (const [path, data] of got) {
        await writeFile(join(partial, path.slice(part.length + 1)), data);
        bytes += data.length;
      }
      await rename(partial, dir);
      results.push({ part, dir, status: 'downloaded', files: files.length, bytes });
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
  return results;
}
