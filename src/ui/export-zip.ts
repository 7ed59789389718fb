/**
 * Downloads from the page: a file through a temporary link, and stored records as one zip in the
 * CLI's `--out` folder layout (used by History and Batch).
 */
import { trajectoriesJsonl, type StoredRecord } from '../adapters/browser/trajectory-store.ts';
import { trajectoryStore } from './runtime.ts';

/** Save `data` as a file through a temporary link. */
export function download(name: string, data: string | Uint8Array, type: string) {
  const url = URL.createObjectURL(new Blob([data as BlobPart], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * One zip in the CLI's `--out` folder layout: `trajectories.jsonl` (oldest first) and every
 * caller WAV at the relative path its trajectory references (`audio/<domain>/<task>/…`).
 * fflate is loaded on first export.
 */
export async function exportZip(records: readonly StoredRecord[]): Promise<Uint8Array> {
  const { zipSync, strToU8 } = await import('fflate');
  const files: Record<string, Uint8Array> = { 'trajectories.jsonl': strToU8(trajectoriesJsonl(records)) };
  const store = trajectoryStore();
  for (const r of records) {
    for (const [name, bytes] of await store.audioOf(r.key)) files[name] = bytes;
  }
  // WAV and JSONL barely compress at speed; level 6 for the text, stored WAVs.
  return zipSync(
    Object.fromEntries(
      Object.entries(files).map(([n, b]) => [n, n.endsWith('.wav') ? [b, { level: 0 }] : [b, { level: 6 }]]),
    ),
  );
}
