/**
 * `switchboard build-domain`: an OpenAPI 3.x description (JSON or YAML) or an MCP tool list →
 * the files of a code-free domain folder. Pure: reading and writing files is the caller's
 * (src/adapters/node/build-domain.ts).
 */
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { readMcp, mcpTools } from './mcp.ts';
import { readOpenApi } from './openapi.ts';
import { MAX_SPEC_CHARS, SpecError, type SpecModel } from './spec-model.ts';
import { scaffoldDomain, type Scaffold, type ScaffoldOptions } from './scaffold.ts';
import { buildDomain, type Domain, type DomainSources } from '../schema/domain.ts';
import { DOMAIN_FILE, TOOLS_FILE, parseDomainJson, withToolsFile } from '../schema/declarative-tools.ts';

export { SpecError, type SpecModel } from './spec-model.ts';
export { scaffoldDomain, type BuildReport, type Scaffold, type ScaffoldOptions } from './scaffold.ts';

/**
 * Parse a spec file's text: JSON when it starts with `{` or `[`, YAML otherwise.
 * @throws SpecError naming `file` (and the line for YAML) when the text is neither, or longer than
 *   {@link MAX_SPEC_CHARS}.
 */
export function parseSpecText(file: string, text: string): unknown {
  if (text.length > MAX_SPEC_CHARS)
    throw new SpecError(
      file,
      '',
      `${text.length} characters: more than ${MAX_SPEC_CHARS}, too large a spec for one domain`,
    );
  const body = text.replace(/^\uFEFF/, '');
  if (/^\s*[[{]/.test(body)) {
    try {
      return JSON.parse(body);
    } catch (e) {
      throw new SpecError(file, '', `not valid JSON (${(e as Error).message})`);
    }
  }
  try {
    // `maxAliasCount` bounds alias expansion (a "billion laughs" file is refused, not expanded).
    return parseYaml(body, { maxAliasCount: 1000, uniqueKeys: true });
  } catch (e) {
    const line = e instanceof YAMLParseError && e.linePos ? `line ${e.linePos[0].line}` : '';
    throw new SpecError(file, line, `not valid YAML or JSON (${(e as Error).message.split('\n')[0]})`);
  }
}

/**
 * Read a parsed spec: OpenAPI 3.x (`"openapi": "3.…"`) or an MCP tool list.
 * @throws SpecError naming `file` and the path in the spec: Swagger 2.0 or another OpenAPI
 *   version, neither format, `$ref` cycles, name clashes, more than 1000 operations.
 */
export function readSpec(file: string, doc: unknown): SpecModel {
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    const d = doc as Record<string, unknown>;
    if (d.swagger !== undefined)
      throw new SpecError(
        file,
        'swagger',
        `Swagger ${String(d.swagger)} is not supported; convert it to OpenAPI 3.x first`,
      );
    if (d.openapi !== undefined) {
      if (typeof d.openapi !== 'string' || !/^3\.\d+/.test(d.openapi))
        throw new SpecError(file, 'openapi', `OpenAPI ${JSON.stringify(d.openapi)} is not supported; only 3.x`);
      return readOpenApi(file, d);
    }
  }
  const mcp = mcpTools(doc);
  if (mcp) return readMcp(file, mcp.tools, mcp.at);
  throw new SpecError(
    file,
    '',
    'neither an OpenAPI 3.x description ("openapi": "3.x") nor an MCP tool list ("tools": [...])',
  );
}

/** Names of the files a folder of MCP tools is read from (others, like a README or LICENSE, are left out). */
export const MCP_FILE_NAME = /\.(json|snap)$/;

/**
 * Several MCP tool files (each one tool `{"name", "inputSchema"}` or a tool list in any shape
 * {@link mcpTools} accepts) → the text of one tool list `{"tools": [...]}`, their tools in
 * file-name order (what `--from <folder>` and a folder dropped on the page build).
 * @param files name (or path in the folder) and text of each file; those not named by
 *   {@link MCP_FILE_NAME} are left out
 * @throws SpecError naming the folder when no file is left, or naming a file that is not an MCP
 *   tool or tool list (or not JSON/YAML)
 */
export function mergeMcpFiles(folder: string, files: readonly { name: string; text: string }[]): string {
  const picked = files
    .filter((f) => MCP_FILE_NAME.test(f.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (picked.length === 0) throw new SpecError(folder, '', 'a spec folder needs MCP tool files (*.json, *.snap)');
  const tools: unknown[] = [];
  for (const f of picked) {
    const found = mcpTools(parseSpecText(f.name, f.text));
    if (!found) throw new SpecError(f.name, '', 'not an MCP tool ({"name", "inputSchema"}) or tool list');
    tools.push(...found.tools);
  }
  return JSON.stringify({ tools });
}

/**
 * Spec text → domain files and build report ({@link parseSpecText}, {@link readSpec},
 * {@link scaffoldDomain}).
 * @throws SpecError naming `file` and the path in the spec for bad input or when no task can be built.
 */
export function buildDomainFiles(
  file: string,
  text: string,
  options: Omit<ScaffoldOptions, 'source'> & { source?: string },
): Scaffold {
  const model = readSpec(file, parseSpecText(file, text));
  return scaffoldDomain(model, { ...options, source: options.source ?? file });
}

/**
 * A code-free domain from its files in memory (name → text, as {@link buildDomainFiles} returns
 * them): `domain.json` and `tools.json` joined with `policy.md`, `schema.sql`, `seed.json` and
 * `tasks.json` by `buildDomain` — what loading the written folder gives, without a filesystem
 * (the page builds domains in the tab with it).
 * @param dir folder name used in error messages (`<dir>/<file>`)
 * @throws Error naming `<dir>/<file>` when a file is missing; DomainFileError naming it and the field when one is malformed.
 */
export function domainFromFiles(dir: string, files: Readonly<Record<string, string>>): Domain {
  const at = (name: string) => `${dir}/${name}`;
  const text = (name: string): string => {
    const t = files[name];
    if (t === undefined) throw new Error(`${at(name)}: missing`);
    return t;
  };
  const def = withToolsFile(parseDomainJson(at(DOMAIN_FILE), text(DOMAIN_FILE)), at(TOOLS_FILE), text(TOOLS_FILE));
  const names: Record<keyof DomainSources, string> = {
    policy: 'policy.md',
    schema: 'schema.sql',
    seed: 'seed.json',
    tasks: 'tasks.json',
  };
  const keys = Object.keys(names) as (keyof DomainSources)[];
  const sources = Object.fromEntries(keys.map((k) => [k, text(names[k])])) as unknown as DomainSources;
  const paths = Object.fromEntries(keys.map((k) => [k, at(names[k])])) as Record<keyof DomainSources, string>;
  return buildDomain(def, sources, paths);
}

/**
 * A domain name (an identifier) from a folder or file-stem name: runs of other characters become
 * `_`, a leading digit gets `d_` (`my-shop` → `my_shop`, `2024` → `d_2024`; empty → `generated`).
 */
export function domainNameOf(name: string): string {
  return name.replace(/[^a-zA-Z0-9_]+/g, '_').replace(/^([0-9])/, 'd_$1') || 'generated';
}
