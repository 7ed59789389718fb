/**
 * Domains built in this browser from API descriptions (issue 19 item 5): kept in IndexedDB
 * (`built-domain-store.ts`), served again by the main rollout worker on every page load (loaded
 * and gated again by the worker's `openBuilt`), and remembered here for the batch workers.
 * A kept record that cannot be read, loaded or admitted is reported and skipped; it never stops
 * the page.
 */
import {
  deleteStoredBuilt,
  listStoredBuilt,
  putStoredBuilt,
  type StoredBuilt,
  type StoredProblem,
} from '../adapters/browser/built-domain-store.ts';
import { errorText, mainWorker } from './runtime.ts';

/** The files of the domains built or restored in this page load, by name (for batch workers). */
const files = new Map<string, Record<string, string>>();

/** What the restore found: the domains now served, and the kept records it skipped, with why. */
export interface Restored {
  names: string[];
  problems: StoredProblem[];
}

let restored: Promise<Restored> | undefined;

/**
 * Serve the kept domains in the main worker, once per page load; resolves when each is served
 * or skipped (never rejects).
 */
export function restoreBuilt(): Promise<Restored> {
  restored ??= (async () => {
    const { built, problems } = await listStoredBuilt();
    const names: string[] = [];
    const { service } = mainWorker();
    for (const entry of built) {
      try {
        await service.openBuilt(entry.name, entry.files);
        files.set(entry.name, entry.files);
        names.push(entry.name);
      } catch (e) {
        problems.push({ name: entry.name, reason: errorText(e) });
      }
    }
    return { names, problems };
  })().catch((e: unknown) => ({ names: [], problems: [{ name: 'built domains', reason: errorText(e) }] }));
  return restored;
}

/**
 * Keep a domain just built in the main worker: remembered for batch workers, and written to
 * IndexedDB. Resolves with null, or why it could not be kept past this page load (e.g. quota).
 */
export async function keepBuilt(entry: StoredBuilt): Promise<string | null> {
  files.set(entry.name, entry.files);
  try {
    await putStoredBuilt(entry);
    return null;
  } catch (e) {
    return errorText(e);
  }
}

/** Forget a built domain: from IndexedDB, the main worker and the batch workers' list. */
export async function removeBuilt(name: string): Promise<void> {
  files.delete(name);
  await deleteStoredBuilt(name);
  await mainWorker().service.forget(name);
}

/** The files of built domain `name`, when it was built or restored in this page load. */
export function builtFiles(name: string): Record<string, string> | undefined {
  return files.get(name);
}
