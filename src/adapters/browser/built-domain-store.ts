/**
 * Domains built in the page from an API description (issue 19 item 5), kept in IndexedDB
 * (database `switchboard-built`, store `domains`, one record per domain keyed by its name) so
 * they survive a reload: the domain folder's files as text, exactly as the build returned them
 * (never an API key: the files hold the model's name and replies only). Records are checked when
 * read; one that is not a well-formed record is listed as a problem and skipped, never thrown.
 */
import { openDB, type IDBPDatabase } from 'idb';

/** One kept domain. */
export interface StoredBuilt {
  /** Domain name (an identifier); the key. */
  name: string;
  /** The spec's file name, or the dropped folder's name. */
  source: string;
  /** When it was built, ms since the epoch (wall clock; shown only). */
  savedAt: number;
  /** The domain folder's files: name → text (`domain.json`, `tools.json`, `tasks.json`, …). */
  files: Record<string, string>;
}

/** A record that could not be read, by its key, and why. */
export interface StoredProblem {
  name: string;
  reason: string;
}

const DB_NAME = 'switchboard-built';
const STORE = 'domains';
let opened: Promise<IDBPDatabase> | undefined;
const open = () =>
  (opened ??= openDB(DB_NAME, 1, {
    upgrade(d) {
      d.createObjectStore(STORE, { keyPath: 'name' });
    },
  }));

/** Why `value` (kept under `key`) is not a {@link StoredBuilt}, or null when it is one. */
export function storedBuiltProblem(key: string, value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a built-domain record';
  const v = value as Record<string, unknown>;
  if (v.name !== key) return `its name is ${JSON.stringify(v.name)}, not "${key}"`;
  if (typeof v.source !== 'string') return 'source is not text';
  if (typeof v.savedAt !== 'number' || !Number.isFinite(v.savedAt)) return 'savedAt is not a time';
  if (!v.files || typeof v.files !== 'object' || Array.isArray(v.files)) return 'files is not a set of files';
  for (const [file, text] of Object.entries(v.files))
    if (typeof text !== 'string') return `files["${file}"] is not text`;
  return null;
}

/**
 * Every kept domain in name order, and the records that are not well formed (by key, with the
 * reason). Resolves with both empty when IndexedDB cannot be opened (the reason as one problem).
 */
export async function listStoredBuilt(): Promise<{ built: StoredBuilt[]; problems: StoredProblem[] }> {
  const built: StoredBuilt[] = [];
  const problems: StoredProblem[] = [];
  try {
    let cursor = await (await open()).transaction(STORE).store.openCursor();
    while (cursor) {
      const key = String(cursor.key);
      const problem = storedBuiltProblem(key, cursor.value);
      if (problem) problems.push({ name: key, reason: problem });
      else built.push(cursor.value as StoredBuilt);
      cursor = await cursor.continue();
    }
  } catch (e) {
    problems.push({ name: DB_NAME, reason: `IndexedDB could not be read: ${(e as Error).message}` });
  }
  return { built, problems };
}

/** Keep `entry` (replacing a kept domain of the same name). @throws the IndexedDB error (e.g. quota). */
export async function putStoredBuilt(entry: StoredBuilt): Promise<void> {
  await (await open()).put(STORE, entry);
}

/** Forget the kept domain `name` (nothing when there is none). */
export async function deleteStoredBuilt(name: string): Promise<void> {
  await (await open()).delete(STORE, name);
}
