/**
 * The page's build of a domain from a dropped spec ({@link RolloutService.buildFromSpec}), driven
 * in Node: the same files and counts as the core scaffold, served like a built-in domain after
 * admission, and bad input refused with the scaffold's own message.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { createRolloutService } from '../../src/adapters/browser/rollout-service.ts';
import { buildDomainFiles } from '../../src/core/build-domain/index.ts';

const SPECS = fileURLToPath(new URL('../fixtures/specs/', import.meta.url));
const service = createRolloutService(() => sqlJsFactory());

/** Message of what `f` throws (rejects with). */
async function failure(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}

describe('buildFromSpec (the page drop zone)', () => {
  it('builds a GitHub MCP tool list as the core does and serves it like a built-in domain', async () => {
    const dir = join(SPECS, 'github-mcp-server/tools');
    const tools = [];
    for (const f of (await readdir(dir)).sort()) tools.push(JSON.parse(await readFile(join(dir, f), 'utf8')));
    const text = JSON.stringify({ tools });
    const core = buildDomainFiles('gh-tools.json', text, { name: 'gh_tools', language: 'zh', tasks: 4, seed: 2 });
    const coreTasks = JSON.parse(core.files['tasks.json']!) as { id: string }[];
    const built = await service.buildFromSpec('gh-tools.json', text, { language: 'zh', tasks: 4, seed: 2 });
    expect(built).toEqual({
      name: 'gh_tools',
      tasks: coreTasks.length,
      tools: (JSON.parse(core.files['tools.json']!) as { tools: unknown[] }).tools.length,
      tables: core.report.tables.length,
      skipped: core.report.skipped,
    });
    expect(await service.domainNames()).toContain('gh_tools');
    const info = await service.describe('gh_tools');
    expect(info.tasks.map((t) => t.id)).toEqual(coreTasks.map((t) => t.id));
    expect(info.language).toBe('zh-CN');
    // A second build of the same name replaces the first.
    await service.buildFromSpec('gh-tools.json', text, { language: 'zh', tasks: 1, seed: 2 });
    expect((await service.describe('gh_tools')).tasks).toHaveLength(1);
  }, 60_000);

  it('refuses bad specs and names with the scaffold’s message, listing nothing', async () => {
    const before = await service.domainNames();
    expect(await failure(() => service.buildFromSpec('empty.yaml', ''))).toBe(
      'empty.yaml: neither an OpenAPI 3.x description ("openapi": "3.x") nor an MCP tool list ("tools": [...])',
    );
    expect(await failure(() => service.buildFromSpec('broken.json', '{"openapi": "3.0.0",'))).toMatch(
      /^broken\.json: not valid JSON \(/,
    );
    expect(await failure(() => service.buildFromSpec('v2.json', '{"openapi": "2.5"}'))).toBe(
      'v2.json: openapi: OpenAPI "2.5" is not supported; only 3.x',
    );
    expect(await failure(() => service.buildFromSpec('huge.json', `{"tools": [${' '.repeat(11_000_000)}]}`))).toMatch(
      /^huge\.json: \d+ characters: more than \d+, too large a spec for one domain$/,
    );
    const petstore = await readFile(join(SPECS, 'swagger-petstore/openapi.yaml'), 'utf8');
    expect(await failure(() => service.buildFromSpec('carrier.yaml', petstore))).toBe(
      'carrier: a built-in domain has this name; choose another name',
    );
    expect(await failure(() => service.buildFromSpec('openapi.yaml', petstore, { name: 'my shop' }))).toBe(
      'name "my shop": must be an identifier (letters, digits, _)',
    );
    expect(await service.domainNames()).toEqual(before);
  }, 60_000);
});
