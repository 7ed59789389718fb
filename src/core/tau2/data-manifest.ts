/**
 * tau2-bench's domain data files (airline, retail, telecom) and its background-noise recordings at
 * one pinned commit of sierra-research/tau2-bench (MIT), with the digests every download is checked against, and the
 * platform-neutral download-and-verify step. The CLI (`switchboard data tau2`, cache on disk,
 * `src/adapters/node/tau2-data.ts`) and the page (IndexedDB) both use {@link fetchTau2Files}
 * with their own `fetch`; nothing here touches a file system.
 *
 * Where the digests come from: `gitBlob` is the blob id of the file in the commit's tree
 * (`git ls-tree <commit> data/tau2/domains/<name>`); `sha256` was computed from the file's bytes,
 * which are byte-identical to that blob (same git blob id). For `airline/db.json` the bytes were
 * not at hand when the manifest was written (the blob is over the size limit of the snapshot it was
 * made from), so that one file is checked by its git blob id alone.
 */
import { SwitchboardError } from '../errors.ts';

/** One data file of the pinned commit. */
export interface Tau2DataFile {
  /**
   * Path inside the data set, which is also its path in the cache: `LICENSE` (the repository's
   * root licence), `<domain>/<file>` or `noise/<name>.wav`.
   */
  path: string;
  /**
   * Path in the repository at the commit: `LICENSE`, `data/tau2/domains/<domain>/<file>`, or
   * `data/voice/background_noise_audio_pcm_mono_verified/<bursts|continuous>/<name>.wav`.
   */
  source: string;
  /** Size in bytes, when known. */
  bytes?: number;
  /** sha256 of the file's bytes, 64 lowercase hex digits, when known. */
  sha256?: string;
  /** Git blob id (SHA-1 of `blob <size>\0<bytes>`) as listed in the commit's tree, 40 hex digits. */
  gitBlob: string;
}

/** The pinned tau2-bench data set. */
export interface Tau2DataManifest {
  /** GitHub `owner/name`. */
  repo: string;
  /** Full commit id the files are taken from. */
  commit: string;
  /** Licence of the files (the repository's `LICENSE`, downloaded with them). */
  license: string;
  files: readonly Tau2DataFile[];
}

/**
 * The parts of the data set, as folder names: the three domains and `noise` (mono 16-bit 16 kHz
 * WAV recordings: `people_talking` 40.5 s continuous; car_horn, dog_bark, engine_idling,
 * ringing_phone and siren bursts of 5 s or less).
 */
export const TAU2_DATA_PARTS = ['airline', 'retail', 'telecom', 'noise'] as const;
/** A folder of the data set. */
export type Tau2DataPart = (typeof TAU2_DATA_PARTS)[number];

/**
 * Raw-file base URL of the repository; a file is at `<base>/<commit>/<repository path>`
 * (GitHub's raw.githubusercontent.com layout).
 */
export const TAU2_DEFAULT_BASE_URL = 'https://raw.githubusercontent.com/sierra-research/tau2-bench';

/**
 * tau2-bench commit a2c024725189 (2026-08-18): the files our tau2 loaders read (`db.json`,
 * `tasks.json`, `policy.md`, `split_tasks.json` of airline and retail), telecom's data files
 * (tasks.json is 14 MB) and the six noise recordings.
 */
export const TAU2_DATA_MANIFEST: Tau2DataManifest = {
  repo: 'sierra-research/tau2-bench',
  commit: 'a2c024725189473d2d7cea3a5cfdbcc67478e41f',
  license: 'MIT',
  files: [
    {
      path: 'LICENSE',
      source: 'LICENSE',
      bytes: 1072,
      sha256: 'e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe',
      gitBlob: 'f0323a32227c1327820da33d2fb9d3338a27ac84',
    },
    {
      path: 'airline/db.json',
      source: 'data/tau2/domains/airline/db.json',
      gitBlob: 'c6a1e817aa9102c5822e83affb3595acbc312701',
    },
    {
      path: 'airline/policy.md',
      source: 'data/tau2/domains/airline/policy.md',
      bytes: 7676,
      sha256: '10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4',
      gitBlob: '8098be7db3f47de943fad39d1e057ede6cc6cd04',
    },
    {
      path: 'airline/split_tasks.json',
      source: 'data/tau2/domains/airline/split_tasks.json',
      bytes: 1443,
      sha256: 'b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b',
      gitBlob: 'c83cce155671e66a6bf07450fd2845fe0eb1f229',
    },
    {
      path: 'airline/tasks.json',
      source: 'data/tau2/domains/airline/tasks.json',
      bytes: 155528,
      sha256: 'ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052',
      gitBlob: 'ea4ff5e3f5e3d97ca391846a6e8dd9eb3437dc80',
    },
    {
      path: 'retail/db.json',
      source: 'data/tau2/domains/retail/db.json',
      bytes: 2811616,
      sha256: '413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765',
      gitBlob: '4d67b03b2d39ade5a7ab6facb2edd7ab3e013d48',
    },
    {
      path: 'retail/policy.md',
      source: 'data/tau2/domains/retail/policy.md',
      bytes: 6699,
      sha256: '2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467',
      gitBlob: 'd127e6b074654926f337d0d98b0e669ebe90d19e',
    },
    {
      path: 'retail/split_tasks.json',
      source: 'data/tau2/domains/retail/split_tasks.json',
      bytes: 3263,
      sha256: 'ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20',
      gitBlob: '8b20704a17aa1940b1e58668f89dcef2ddaeeea3',
    },
    {
      path: 'retail/tasks.json',
      source: 'data/tau2/domains/retail/tasks.json',
      bytes: 345982,
      sha256: '8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8',
      gitBlob: 'e95a9f898b2d1f6568ea8faec78edc3767ce747d',
    },
    {
      path: 'telecom/db.toml',
      source: 'data/tau2/domains/telecom/db.toml',
      bytes: 9628,
      sha256: '562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0',
      gitBlob: '6c8a639d85896a049a5daf87332107a840a55aac',
    },
    {
      path: 'telecom/user_db.toml',
      source: 'data/tau2/domains/telecom/user_db.toml',
      bytes: 933,
      sha256: '4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c',
      gitBlob: '1def9a98eabf1d4a5fc95a67387ec294f56196d8',
    },
    {
      path: 'telecom/tasks.json',
      source: 'data/tau2/domains/telecom/tasks.json',
      bytes: 13977063,
      sha256: '37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4',
      gitBlob: '6f41a5e3489e187fa247d729706509d8250a31c1',
    },
    {
      path: 'telecom/tasks_small.json',
      source: 'data/tau2/domains/telecom/tasks_small.json',
      bytes: 83833,
      sha256: 'c8ea6f75adc18a8ad363974292cbd26b6e8b0e348ec87d265a4188e0088a8f24',
      gitBlob: '42edfc08d208b008ff68b41b40ebd0de560c1842',
    },
    {
      path: 'telecom/split_tasks.json',
      source: 'data/tau2/domains/telecom/split_tasks.json',
      bytes: 356149,
      sha256: '605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec',
      gitBlob: 'a5b01687eaaa5c669f792bff33c0d6ec13be36fd',
    },
    {
      path: 'telecom/main_policy.md',
      source: 'data/tau2/domains/telecom/main_policy.md',
      bytes: 5699,
      sha256: '95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7',
      gitBlob: 'c55f5bd10c49a3d0b48f6e83a3168e6242fb2be7',
    },
    {
      path: 'telecom/main_policy_solo.md',
      source: 'data/tau2/domains/telecom/main_policy_solo.md',
      bytes: 5200,
      sha256: '781296ae5419169cb64aac0c4fa2aa6129c78f3c1592f64abd80df6fbabb7042',
      gitBlob: '2da88ab26054dbd574e48353e54b4296f0e554dd',
    },
    {
      path: 'telecom/tech_support_manual.md',
      source: 'data/tau2/domains/telecom/tech_support_manual.md',
      bytes: 17589,
      sha256: '015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba',
      gitBlob: 'b64a9f1433bfb62bdaf9e5c1d90c10e833b26c17',
    },
    {
      path: 'telecom/tech_support_workflow.md',
      source: 'data/tau2/domains/telecom/tech_support_workflow.md',
      bytes: 16390,
      sha256: '64f3ccd13875d14f358b21b9af221dab09e0e7bf5690d0e4322fb91855a43a4d',
      gitBlob: '36104c70ea1caf5adfbbc8b26b61e29a1da72a7c',
    },
    {
      path: 'telecom/tech_support_workflow_solo.md',
      source: 'data/tau2/domains/telecom/tech_support_workflow_solo.md',
      bytes: 15470,
      sha256: 'b174d1f9705b5d7df49468daf99560a5633f86d23e10499a1166a7753706a412',
      gitBlob: '768d8f446ee7bd9d301f614a03d9a403810c2ecc',
    },
    {
      path: 'noise/people_talking.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/continuous/people_talking.wav',
      bytes: 1297212,
      sha256: '757966dde40b87b2862013eaf0808e47a560e1d3bc9e75167df292313328ab56',
      gitBlob: 'e114f7b6fd13e15357a95f9f1bb9fc4fae0725e0',
    },
    {
      path: 'noise/car_horn.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/bursts/car_horn.wav',
      bytes: 128044,
      sha256: 'af82e9e4d783e43808dcab75e9791397a65319b2d1ced0c11c99651e8788b07b',
      gitBlob: '0ddd123421ae9ef5a118e5b9dda4e34dda89cd42',
    },
    {
      path: 'noise/dog_bark.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/bursts/dog_bark.wav',
      bytes: 112334,
      sha256: 'd398b4296f96dbb6c568c544d0b78a286ec58e09afe5df1a85c84282a0bf1b65',
      gitBlob: 'd45de0944a2ae05165c0eef4e68ee87ab4218f23',
    },
    {
      path: 'noise/engine_idling.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/bursts/engine_idling.wav',
      bytes: 128042,
      sha256: '4d9780fd6ca4e925d9942eb748b9ca41a673a58633315dee8b6b79a2a7b08e57',
      gitBlob: '51c16864383bad431a2e4d672b3cf5cfe96d6e1f',
    },
    {
      path: 'noise/ringing_phone.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/bursts/ringing_phone.wav',
      bytes: 146282,
      sha256: '9e8130d2f0bb132b950802f878e69cec599fe567b3eb85eac23f22e0e2a27d9e',
      gitBlob: '21a51aa47d5425d559856cd21fe277abb7cbedb9',
    },
    {
      path: 'noise/siren.wav',
      source: 'data/voice/background_noise_audio_pcm_mono_verified/bursts/siren.wav',
      bytes: 128044,
      sha256: 'dc6c3c8bacbf8445117aa691f67050189a03cd86e4d7ee2115a9732b34ab7fdf',
      gitBlob: '635df41e1d52a40b84109dc31be8fa2186aa2791',
    },
  ],
};

/**
 * A download or check of tau2 data that failed; the message names the file and what to do.
 * Caller: report it and stop (the CLI's `data` command exits 1); retry later for a network failure.
 */
export class Tau2DataError extends SwitchboardError {
  override name = 'Tau2DataError';
}

/**
 * URL of a data file: `<base>/<commit>/<source>` (GitHub's raw layout).
 * @param baseUrl e.g. {@link TAU2_DEFAULT_BASE_URL}; a trailing slash is ignored.
 */
export function tau2FileUrl(baseUrl: string, commit: string, file: Pick<Tau2DataFile, 'source'>): string {
  return `${baseUrl.replace(/\/+$/, '')}/${commit}/${file.source}`;
}

/**
 * The files of one part (`<part>/…`), in manifest order.
 * @throws Tau2DataError for a part the manifest does not hold.
 */
export function tau2PartFiles(part: string, manifest: Tau2DataManifest = TAU2_DATA_MANIFEST): Tau2DataFile[] {
  const files = manifest.files.filter((f) => f.path.startsWith(`${part}/`));
  if (files.length === 0) {
    const known = [...new Set(manifest.files.map((f) => f.path.split('/')[0]).filter((p) => p !== 'LICENSE'))];
    throw new Tau2DataError(`unknown tau2 data part "${part}" (known: ${known.join(', ')})`);
  }
  return files;
}

/** The licence file's entry (`LICENSE`), which every download stores beside the parts. */
export function tau2LicenseFile(manifest: Tau2DataManifest = TAU2_DATA_MANIFEST): Tau2DataFile {
  const file = manifest.files.find((f) => f.path === 'LICENSE');
  if (!file) throw new Tau2DataError('the tau2 data manifest lists no LICENSE');
  return file;
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** sha256 of `bytes` as 64 lowercase hex digits (WebCrypto, as in browsers, workers and Node ≥ 20). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

/** Git's blob id of `bytes`: SHA-1 of `blob <length>\0` followed by the bytes (git's object format). */
export async function gitBlobId(bytes: Uint8Array): Promise<string> {
  const header = new TextEncoder().encode(`blob ${bytes.length}\0`);
  const all = new Uint8Array(header.length + bytes.length);
  all.set(header, 0);
  all.set(bytes, header.length);
  return hex(await crypto.subtle.digest('SHA-1', all));
}

/**
 * Check a file's bytes against its manifest entry: size (when known), sha256 (when known) and
 * git blob id.
 * @throws Tau2DataError naming the file, the expected and actual digests, and the commit.
 */
export async function verifyTau2File(
  file: Tau2DataFile,
  bytes: Uint8Array,
  manifest: Tau2DataManifest = TAU2_DATA_MANIFEST,
): Promise<void> {
  const where = `tau2 data ${file.path} (${manifest.repo} commit ${manifest.commit.slice(0, 12)})`;
  if (file.bytes !== undefined && bytes.length !== file.bytes) {
    throw new Tau2DataError(
      `${where}: ${bytes.length} bytes, the manifest expects ${file.bytes}; the file is incomplete or not the pinned one`,
    );
  }
  if (file.sha256 !== undefined) {
    const sum = await sha256Hex(bytes);
    if (sum !== file.sha256) {
      throw new Tau2DataError(
        `${where}: sha256 ${sum} does not match the manifest's ${file.sha256}; the file is corrupt or not the pinned one`,
      );
    }
  }
  const blob = await gitBlobId(bytes);
  if (blob !== file.gitBlob) {
    throw new Tau2DataError(
      `${where}: git blob id ${blob} does not match the manifest's ${file.gitBlob}; the file is corrupt or not the pinned one`,
    );
  }
}

/** The part of the Fetch API {@link fetchTau2Files} uses (global `fetch` fits). */
export type FetchLike = (url: string) => Promise<{ ok: boolean; status: number; arrayBuffer(): Promise<ArrayBuffer> }>;

/** Options of {@link fetchTau2Files}. */
export interface FetchTau2Options {
  fetch: FetchLike;
  /** Default {@link TAU2_DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** Default {@link TAU2_DATA_MANIFEST}. */
  manifest?: Tau2DataManifest;
  /** Called after each file is downloaded and verified. */
  onFile?: (file: Tau2DataFile, bytes: number) => void;
}

/**
 * Download the given files from the pinned commit and verify each one; nothing is returned unless
 * every file passed.
 *
 * @returns the verified bytes by manifest path, in the order given.
 * @throws Tau2DataError on the first network failure, HTTP error or digest mismatch (naming the
 *   file and URL).
 */
export async function fetchTau2Files(
  files: readonly Tau2DataFile[],
  options: FetchTau2Options,
): Promise<Map<string, Uint8Array>> {
  const manifest = options.manifest ?? TAU2_DATA_MANIFEST;
  const baseUrl = options.baseUrl ?? TAU2_DEFAULT_BASE_URL;
  const out = new Map<string, Uint8Array>();
  for (const file of files) {
    const url = tau2FileUrl(baseUrl, manifest.commit, file);
    let res: Awaited<ReturnType<FetchLike>>;
    try {
      res = await options.fetch(url);
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new Tau2DataError(`tau2 data ${file.path}: cannot reach ${url} (${cause})`);
    }
    if (!res.ok) throw new Tau2DataError(`tau2 data ${file.path}: ${url} answered HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    await verifyTau2File(file, bytes, manifest);
    out.set(file.path, bytes);
    options.onFile?.(file, bytes.length);
  }
  return out;
}
