/**
 * Load domain folders from the filesystem (Node). A domain folder holds `policy.md`,
 * `schema.sql`, `seed.json` and `tasks.json` next to its `domain.ts`; the code half is imported
 * statically (see {@link builtinDomains}) and joined with the files by `buildDomain`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDomain, type Domain, type DomainDefinition, type DomainSources } from '../../core/schema/domain.ts';
import { carrier } from '../../../domains/carrier/domain.ts';

/** File name of each data half of a domain folder. */
export const DOMAIN_FILES: Readonly<Record<keyof DomainSources, string>> = {
  policy: 'policy.md',
  schema: 'schema.sql',
  seed: 'seed.json',
  tasks: 'tasks.json',
};

const KEYS = Object.keys(DOMAIN_FILES) as (keyof DomainSources)[];

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`${path}: cannot read (${(e as Error).message})`);
  }
}

/**
 * Read a domain folder's data files and join them with the code half `def`.
 *
 * @param dir the domain folder (absolute, or relative to the working directory)
 * @throws Error naming the file path when a file is missing, and `DomainFileError` (whose
 *   `file` is the full path) when a file is malformed.
 */
export async function loadDomainDir(dir: string, def: DomainDefinition): Promise<Domain> {
  const paths = Object.fromEntries(KEYS.map((k) => [k, join(dir, DOMAIN_FILES[k])])) as Record<keyof DomainSources, string>;
  const texts = await Promise.all(KEYS.map((k) => readText(paths[k])));
  const sources = Object.fromEntries(KEYS.map((k, i) => [k, texts[i]!])) as unknown as DomainSources;
  return buildDomain(def, sources, paths);
}

/** The domains shipped in `domains/`, by name: their code halves. */
export const builtinDomains: Readonly<Record<string, DomainDefinition>> = { carrier };

/** Absolute path of a built-in domain's folder (`<repo>/domains/<name>`). */
export function builtinDomainDir(name: string): string {
  return fileURLToPath(new URL(`../../../domains/${encodeURIComponent(name)}/`, import.meta.url));
}

/**
 * Load a built-in domain by name.
 * @throws Error listing the known names when `name` is not one.
 */
export async function loadBuiltinDomain(name: string): Promise<Domain> {
  const def = Object.hasOwn(builtinDomains, name) ? builtinDomains[name] : undefined;
  if (!def) {
    throw new Error(`unknown domain "${name}"; known domains: ${Object.keys(builtinDomains).sort().join(', ')}`);
  }
  return loadDomainDir(builtinDomainDir(name), def);
}
