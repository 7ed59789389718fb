/**
 * Built-in domains in the browser (and in any vite-built bundle, Web Workers included): the data
 * files of every `domains/<name>/` folder that has all four (`policy.md`, `schema.sql`,
 * `seed.json`, `tasks.json`) are bundled as text by vite's `import.meta.glob`, and joined with
 * the folder's `domain.ts` code half (or a code-free folder's `domain.json`, plus declarative
 * tools from `tools.json`) by the core's `buildDomain` — the page's counterpart of the Node
 * loader (`src/adapters/node/load-domain.ts`).
 *
 * Folders without the four files (the tau2-bench domains, whose data comes from a tau2 checkout)
 * are not listed.
 */
import { buildDomain, type Domain, type DomainDefinition, type DomainSources } from '../../core/schema/domain.ts';
import { DOMAIN_FILE, TOOLS_FILE, parseDomainJson, withToolsFile } from '../../core/schema/declarative-tools.ts';

const FILES: Readonly<Record<keyof DomainSources, string>> = {
  policy: 'policy.md',
  schema: 'schema.sql',
  seed: 'seed.json',
  tasks: 'tasks.json',
};

const texts = import.meta.glob<string>('/domains/*/{policy.md,schema.sql,seed.json,tasks.json}', {
  query: '?raw',
  import: 'default',
});
const modules = import.meta.glob<Record<string, unknown>>('/domains/*/domain.ts');
/** Declarative tools (`tools.json`) and code-free definitions (`domain.json`), as text. */
const dataFiles = import.meta.glob<string>('/domains/*/{tools.json,domain.json}', { query: '?raw', import: 'default' });

/** `/domains/<name>/<file>` → name. */
function folderOf(path: string): string {
  return path.split('/')[2] ?? '';
}

/** Names of the built-in domains whose folder has every data file and a `domain.ts` (or `domain.json`), sorted. */
export function builtinDomainNames(): string[] {
  const count = new Map<string, number>();
  for (const path of Object.keys(texts)) count.set(folderOf(path), (count.get(folderOf(path)) ?? 0) + 1);
  const names = [...count].filter(([, n]) => n === Object.keys(FILES).length).map(([name]) => name);
  return names
    .filter((name) => `/domains/${name}/domain.ts` in modules || `/domains/${name}/${DOMAIN_FILE}` in dataFiles)
    .sort();
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
 * Load a built-in domain by name: its bundled files joined with its code half.
 * @throws Error listing the known names when `name` is not a built-in domain; `DomainFileError`
 *   (naming `domains/<name>/<file>`) when a file is malformed.
 */
export async function loadBrowserDomain(name: string): Promise<Domain> {
  const known = builtinDomainNames();
  if (!known.includes(name)) throw new Error(`unknown domain "${name}"; known domains: ${known.join(', ')}`);
  const keys = Object.keys(FILES) as (keyof DomainSources)[];
  const loaded = await Promise.all(keys.map((k) => texts[`/domains/${name}/${FILES[k]}`]!()));
  const sources = Object.fromEntries(
    keys.map((k, i) => [k, loaded[i]!.replace(/^\uFEFF/, '')]),
  ) as unknown as DomainSources;
  const data = async (file: string) => (await dataFiles[`/domains/${name}/${file}`]?.())?.replace(/^\uFEFF/, '');
  let def: DomainDefinition;
  const load = modules[`/domains/${name}/domain.ts`];
  if (load) {
    const defs = Object.values(await load()).filter(isDomainDefinition);
    if (defs.length !== 1)
      throw new Error(`domains/${name}/domain.ts must export exactly one domain definition (found ${defs.length})`);
    def = defs[0]!;
  } else {
    def = parseDomainJson(`domains/${name}/${DOMAIN_FILE}`, (await data(DOMAIN_FILE))!);
  }
  const tools = await data(TOOLS_FILE);
  if (tools !== undefined) def = withToolsFile(def, `domains/${name}/${TOOLS_FILE}`, tools);
  const paths = Object.fromEntries(keys.map((k) => [k, `domains/${name}/${FILES[k]}`]));
  return buildDomain(def, sources, paths);
}

const tau2Schemas = import.meta.glob<string>('/domains/tau2-*/schema.sql', { query: '?raw', import: 'default' });

/** `schema.sql` of a tau2 domain folder (`tau2-airline`, `tau2-retail`), bundled as text. */
export async function tau2SchemaText(name: string): Promise<string> {
  const load = tau2Schemas[`/domains/${name}/schema.sql`];
  if (!load) throw new Error(`no schema for tau2 domain "${name}"`);
  return load();
}
