/**
 * {@link AudioStore} on the filesystem: files under a root folder (the CLI's `--out`), each
 * referenced by its path relative to that folder, so trajectories.jsonl and its audio move
 * together.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { AudioStore } from '../../../core/channel/audio-store.ts';

/** Resolve a stored name under `root`, refusing absolute paths and `..` escapes. */
function under(root: string, name: string): string {
  const rel = normalize(name);
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`))
    throw new Error(`audio name "${name}" leaves the output folder`);
  return join(root, rel);
}

/** Files under `root`. `getSync` reads with `readFileSync` (for a model agent's `userAudio` hook). */
export function fsAudioStore(root: string): AudioStore {
  const made = new Set<string>();
  return {
    async put(name, bytes) {
      const path = under(root, name);
      const dir = dirname(path);
      if (!made.has(dir)) {
        await mkdir(dir, { recursive: true });
        made.add(dir);
      }
      await writeFile(path, bytes);
      return name;
    },
    async get(ref) {
      return new Uint8Array(await readFile(under(root, ref)));
    },
    getSync(ref) {
      try {
        return new Uint8Array(readFileSync(under(root, ref)));
      } catch {
        return undefined;
      }
    },
  };
}
