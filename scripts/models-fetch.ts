/**
 * `npm run models:fetch -- [model ids…] [--pin] [--dir <models folder>] [--endpoint <hub URL>]`
 *
 * For machines with internet: downloads the files `models/manifest.json` lists for each model
 * (all models when no id is given; an agent id stands for its models) into
 * `<models folder>/<model id>/<path>` and checks each file's sha256. A file already there with
 * the right sha256 is kept. A file whose sha256 differs is deleted and the run fails.
 *
 * Files whose sha256 the manifest does not pin yet are refused, unless `--pin`: then the
 * revision is resolved to its commit, and the commit, sizes and sha256 of what was downloaded
 * are written back into the manifest (review and commit that change).
 *
 * Exit codes: 0 all files present and verified; 1 a download or check failed (offline, 404,
 * sha256 mismatch, unpinned file); 2 bad command line.
 */
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  agentModels,
  parseManifest,
  resolveLocalAgent,
  type ManifestModel,
  type ModelManifest,
} from '../src/adapters/shared/local-model-manifest.ts';

/** Options of {@link fetchModels}. */
export interface FetchOptions {
  /** Models folder holding `manifest.json`. */
  dir: string;
  /** Model or agent ids; all models when empty. */
  ids: readonly string[];
  /** Record commit, sizes and sha256 of unpinned files into the manifest. */
  pin: boolean;
  /** Hub base URL. Default `https://huggingface.co`. */
  endpoint: string;
  log: (line: string) => void;
}

/** A failure the script reports in one line (no stack trace). */
export class FetchError extends Error {
  override name = 'FetchError';
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function get(url: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'follow' });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new FetchError(
      `cannot reach ${new URL(url).origin} (${cause}): models:fetch needs internet access; on an offline machine copy the models folder from one that has it`,
    );
  }
  if (!res.ok) throw new FetchError(`${url}: HTTP ${res.status}`);
  return res;
}

async function download(url: string, to: string): Promise<void> {
  const res = await get(url);
  mkdirSync(dirname(to), { recursive: true });
  const part = `${to}.part`;
  writeFileSync(part, new Uint8Array(await res.arrayBuffer()));
  renameSync(part, to);
}

function pickModels(manifest: ModelManifest, ids: readonly string[]): ManifestModel[] {
  if (ids.length === 0) return manifest.models;
  const out = new Map<string, ManifestModel>();
  for (const id of ids) {
    const model = manifest.models.find((m) => m.id === id);
    const list = model ? [model] : agentModels(resolveLocalAgent(manifest, id));
    for (const m of list) out.set(m.id, m);
  }
  return [...out.values()];
}

/**
 * Fetch and verify. Returns the number of files downloaded.
 * @throws FetchError on the first failure.
 */
export async function fetchModels(o: FetchOptions): Promise<number> {
  const manifestPath = join(o.dir, 'manifest.json');
  const raw = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    models: { id: string; revision: string; files: { path: string; sha256: string | null; size?: number | null }[] }[];
  };
  const manifest = parseManifest(raw);
  let downloaded = 0;
  let changed = false;
  for (const model of pickModels(manifest, o.ids)) {
    const unpinned = model.files.filter((f) => f.sha256 === null);
    if (unpinned.length && !o.pin) {
      throw new FetchError(
        `${model.id}: ${unpinned.length} file(s) have no sha256 in the manifest (${unpinned[0]!.path}…); run with --pin to record them`,
      );
    }
    const rawModel = raw.models.find((m) => m.id === model.id)!;
    let revision = model.revision;
    if (o.pin && !/^[0-9a-f]{40}$/.test(revision)) {
      const info = (await (
        await get(`${o.endpoint}/api/models/${model.repo}/revision/${encodeURIComponent(revision)}`)
      ).json()) as { sha?: string };
      if (!info.sha || !/^[0-9a-f]{40}$/.test(info.sha))
        throw new FetchError(`${model.repo}@${revision}: the hub gave no commit id`);
      revision = info.sha;
      rawModel.revision = revision;
      changed = true;
      o.log(`${model.id}: ${model.revision} is commit ${revision}`);
    }
    for (const [i, file] of model.files.entries()) {
      const dest = join(o.dir, model.id, file.path);
      if (file.sha256 && existsSync(dest) && (await sha256File(dest)) === file.sha256) {
        o.log(`${model.id}/${file.path}: present, sha256 ok`);
        continue;
      }
      await download(`${o.endpoint}/${model.repo}/resolve/${revision}/${file.path}`, dest);
      downloaded++;
      const sum = await sha256File(dest);
      if (file.sha256 === null) {
        rawModel.files[i]!.sha256 = sum;
        rawModel.files[i]!.size = statSync(dest).size;
        changed = true;
        o.log(`${model.id}/${file.path}: pinned sha256 ${sum}`);
      } else if (sum !== file.sha256) {
        rmSync(dest);
        throw new FetchError(
          `${model.id}/${file.path}: sha256 ${sum} does not match the manifest's ${file.sha256}; file deleted`,
        );
      } else o.log(`${model.id}/${file.path}: downloaded, sha256 ok`);
    }
  }
  if (changed) {
    writeFileSync(manifestPath, `${JSON.stringify(raw, null, 2)}\n`);
    o.log(`updated ${manifestPath}: review and commit the pinned revisions and sha256`);
  }
  return downloaded;
}

function main(argv: readonly string[]): Promise<number> {
  const ids: string[] = [];
  let pin = false;
  let dir = resolve(dirname(fileURLToPath(import.meta.url)), '../models');
  let endpoint = process.env.SWITCHBOARD_HF_ENDPOINT ?? 'https://huggingface.co';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--pin') pin = true;
    else if (a === '--dir' || a === '--endpoint') {
      const v = argv[++i];
      if (!v) throw new FetchError(`${a} needs a value`);
      if (a === '--dir') dir = resolve(v);
      else endpoint = v.replace(/\/+$/, '');
    } else if (a.startsWith('-')) throw Object.assign(new FetchError(`unknown option ${a}`), { usage: true });
    else ids.push(a);
  }
  return fetchModels({ dir, ids, pin, endpoint, log: (l) => console.log(l) });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (n) => console.log(`models:fetch: done (${n} file(s) downloaded)`),
    (e: unknown) => {
      console.error(`models:fetch: ${(e as Error).message}`);
      process.exitCode = (e as { usage?: boolean }).usage ? 2 : 1;
    },
  );
}
