/**
 * Load domain folders from the filesystem (Node). A domain folder holds `policy.md`,
 * `schema.sql`, `seed.json` and `tasks.json` next to its `domain.ts`; the code half is imported
 * statically (see {@link builtinDomains}) and joined with the files by `buildDomain`.
 */
import { readFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDomain, type Domain, type DomainDefinition, type DomainSources } from '../../core/schema/domain.ts';
import { DOMAIN_FILE, TOOLS_FILE, parseDomainJson, withToolsFile } from '../../core/schema/declarative-tools.ts';
import { carrier } from '../../../domains/carrier/domain.ts';
import { debtNegotiation } from '../../../domains/debt-negotiation/domain.ts';
import { allowTypeScriptImports } from './ts-imports.ts';
import { insuranceRenewal } from '../../../domains/insurance-renewal/domain.ts';

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
    // A byte-order mark from a Windows editor is not part of the text.
    return (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  } catch (e) {
    throw new Error(`${path}: cannot read (${(e as Error).message})`);
  }
}

/**
 * Read a domain folder's data files and join them with the code half `def`. A `tools.json` in the
 * folder adds declarative tools (src/core/schema/declarative-tools.ts) after `def`'s own.
 *
 * @param dir the domain folder (absolute, or relative to the working directory)
 * @throws Error naming the file path when a file is missing, and `DomainFileError` (whose
 *   `file` is the full path) when a file is malformed.
 */
export async function loadDomainDir(dir: string, def: DomainDefinition): Promise<Domain> {
  const paths = Object.fromEntries(KEYS.map((k) => [k, join(dir, DOMAIN_FILES[k])])) as Record<
    keyof DomainSources,
    string
  >;
  // Read all four at once, but report the first failure in file order (deterministic).
  const settled = await Promise.allSettled(KEYS.map((k) => readText(paths[k])));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const texts = settled.map((r) => (r as PromiseFulfilledResult<string>).value);
  const sources = Object.fromEntries(KEYS.map((k, i) => [k, texts[i]!])) as unknown as DomainSources;
  const toolsPath = join(dir, TOOLS_FILE);
  const full = existsSync(toolsPath) ? withToolsFile(def, toolsPath, await readText(toolsPath)) : def;
  return buildDomain(full, sources, paths);
}

/** The domains shipped in `domains/`, by name: their code halves. */
export const builtinDomains: Readonly<Record<string, DomainDefinition>> = {
  carrier,
  'insurance-renewal': insuranceRenewal,
  'debt-negotiation': debtNegotiation,
};

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

function isDomainDefinition(x: unknown): x is DomainDefinition {
  const d = x as Partial<DomainDefinition> | null;
  return (
    !!d &&
    typeof d === 'object' &&
    typeof d.name === 'string' &&
    Array.isArray(d.tools) &&
    typeof d.greeting === 'string'
  );
}

/**
 * Load a domain from any folder laid out like `domains/<name>/`: its `domain.ts` (or
 * `domain.js`) must export one {@link DomainDefinition} (default or named export). A code-free
 * folder has `domain.json` and `tools.json` instead (see `parseDomainJson`).
 *
 * @throws Error naming the folder when it has no domain module or the module exports no domain.
 */
export async function loadDomainFolder(dir: string): Promise<Domain> {
  const abs = resolve(dir);
  const file = ['domain.ts', 'domain.js'].map((f) => join(abs, f)).find((f) => existsSync(f));
  const json = join(abs, DOMAIN_FILE);
  if (!file && existsSync(json)) return loadDomainDir(abs, parseDomainJson(json, await readText(json)));
  if (!file) throw new Error(`${abs}: not a domain folder (no domain.ts or ${DOMAIN_FILE})`);
  let mod: Record<string, unknown>;
  try {
    if (file.endsWith('.ts')) await allowTypeScriptImports();
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new Error(
      `${file}: cannot import (${(e as Error).message.split('\n')[0]}); a domain folder imports the core by relative path, so keep it inside a Switchboard checkout (e.g. domains/<name>/)`,
    );
  }
  const defs = Object.values(mod).filter(isDomainDefinition);
  if (defs.length !== 1) {
    throw new Error(`${file}: must export exactly one domain definition (found ${defs.length})`);
  }
  return loadDomainDir(abs, defs[0]!);
}

/**
 * Resolve a `--domain` argument: a built-in domain name, or a path to a domain folder.
 * @throws Error listing the built-in names when `spec` is neither.
 */
export async function loadDomain(spec: string): Promise<Domain> {
  if (Object.hasOwn(builtinDomains, spec)) return loadBuiltinDomain(spec);
  if (spec.includes('/') || spec.includes('\\') || existsSync(spec)) {
    if (!existsSync(spec) || !statSync(spec).isDirectory()) throw new Error(`${resolve(spec)}: no such domain folder`);
    return loadDomainFolder(spec);
  }
  return loadBuiltinDomain(spec);
}
