/**
 * tau2-bench domains the page can download in one click (airline, retail, telecom): the pinned
 * files from GitHub (cached in IndexedDB), loaded into the main rollout worker and remembered for
 * batch workers. Telecom loads its base split (114 tasks).
 */
import { indexedDbTau2Cache, tau2Cached } from '../adapters/browser/tau2-cache.ts';
import { loadTau2Part, tau2CacheKey, tau2PartBytes } from '../adapters/browser/tau2-download.ts';
import { TAU2_PIN } from '../adapters/browser/tau2-pin.ts';
import { tau2PartFiles } from '../core/tau2/data-manifest.ts';
import { mainWorker, rememberTau2 } from './runtime.ts';

/** A downloadable tau2-bench domain. */
export interface Tau2Download {
  /** Our domain name (`tau2-airline`). */
  name: string;
  /** tau2-bench's folder (`airline`). */
  folder: string;
  /** What it is, in a few words. */
  about: string;
}

/** The downloadable tau2-bench domains. */
export const TAU2_DOWNLOADS: readonly Tau2Download[] = [
  { name: 'tau2-airline', folder: 'airline', about: 'flight reservations: book, change, cancel, baggage' },
  { name: 'tau2-retail', folder: 'retail', about: 'online shop orders: returns, exchanges, addresses' },
  {
    name: 'tau2-telecom',
    folder: 'telecom',
    about: 'phone troubleshooting: the caller works their own phone as the agent guides them (dual control)',
  },
];

/** The downloadable domain called `name`, if any. */
export function tau2Download(name: string): Tau2Download | undefined {
  return TAU2_DOWNLOADS.find((d) => d.name === name);
}

/** Download size of a domain's files, bytes, and whether the manifest pins every file's size. */
export function tau2Bytes(d: Tau2Download): { bytes: number; exact: boolean } {
  return tau2PartBytes(d.folder, TAU2_PIN);
}

/** The pinned commit, short. */
export const TAU2_COMMIT_SHORT = TAU2_PIN.commit.slice(0, 12);

/** Whether a domain's files are in this browser's cache already. */
export function tau2IsCached(d: Tau2Download): Promise<boolean> {
  const keys = tau2PartFiles(d.folder, TAU2_PIN).map((f) => tau2CacheKey(TAU2_PIN, f.path));
  return tau2Cached(keys).catch(() => false);
}

const loading = new Map<string, Promise<void>>();

/**
 * Load tau2 domain `d` into the main worker unless it has it: its files from the cache or GitHub
 * (checked against their pinned sha256), then parsed in the worker. Concurrent calls share one load.
 * @throws Error naming the file and URL when a download fails or a hash differs.
 */
export function loadTau2(d: Tau2Download, onProgress?: (done: number, total: number) => void): Promise<void> {
  let p = loading.get(d.name);
  if (!p) {
    p = (async () => {
      if ((await mainWorker().service.domainNames()).includes(d.name)) return;
      const files = await loadTau2Part(d.folder, {
        manifest: TAU2_PIN,
        cache: indexedDbTau2Cache(),
        ...(onProgress ? { onProgress } : {}),
      });
      await mainWorker().service.openTau2(files, d.folder);
      rememberTau2(d.name, files, d.folder);
    })();
    void p.then(
      () => loading.delete(d.name),
      () => loading.delete(d.name),
    );
    loading.set(d.name, p);
  }
  return p;
}

/** `3.2 MB`. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
