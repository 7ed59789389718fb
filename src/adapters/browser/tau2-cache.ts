/**
 * The page's cache of downloaded tau2-bench files: IndexedDB database `switchboard-data`, store
 * `tau2`, one record per verified file keyed `<commit>/<folder>/<file>` (see `tau2-download.ts`).
 */
import { openDB, type IDBPDatabase } from 'idb';
import type { Tau2Cache } from './tau2-download.ts';

const DB_NAME = 'switchboard-data';
const STORE = 'tau2';
let opened: Promise<IDBPDatabase> | undefined;
const open = () =>
  (opened ??= openDB(DB_NAME, 1, {
    upgrade(d) {
      d.createObjectStore(STORE);
    },
  }));

/** The IndexedDB {@link Tau2Cache} (created on first use). */
export function indexedDbTau2Cache(): Tau2Cache {
  const db = open();
  return {
    async get(key) {
      const v: unknown = await (await db).get(STORE, key);
      return v instanceof Uint8Array ? v : undefined;
    },
    async put(key, bytes) {
      await (await db).put(STORE, bytes, key);
    },
  };
}

/** Whether every key is in the cache (without reading the bytes' hashes). */
export async function tau2Cached(keys: readonly string[]): Promise<boolean> {
  const db = await open();
  const found = await Promise.all(keys.map((k) => db.getKey(STORE, k)));
  return found.every((k) => k !== undefined);
}
