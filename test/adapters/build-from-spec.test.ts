/**
 * The page's build of a domain from a dropped spec ({@link RolloutService.buildFromSpec}), driven
 * in Node: the same files and counts as the core scaffold, served like a built-in domain after
 * admission, and bad input refused with the scaffold's own message; a dropped folder of MCP tool
 * files and a build with the code agent at a fake endpoint give the CLI's files byte for byte;
 * a built domain's files restore it ({@link RolloutService.openBuilt}), and damaged files are
 * refused naming the file.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { createRolloutService } from '../../src/adapters/browser/rollout-service.ts';
import { buildDomainFolder } from '../../src/adapters/node/build-domain.ts';
import { buildDomainFiles } from '../../src/core/build-domain/index.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { scriptedModels, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { EDITED_PERSONA, EDITOR_REPLIES } from '../fixtures/editor-replies.ts';

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
      files: { ...core.files, 'build-report.json': `${JSON.stringify(core.report, null, 2)}\n` },
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

const PETSTORE = join(SPECS, 'swagger-petstore/openapi.yaml');
const TOOLS = join(SPECS, 'github-mcp-server/tools');
let server: TestServer;
let work = '';
beforeAll(async () => {
  server = await startOpenAiServer(scriptedModels({ editor: EDITOR_REPLIES }));
  work = await mkdtemp(join(tmpdir(), 'sb-page-build-'));
});
afterAll(async () => {
  await server.close();
  await rm(work, { recursive: true, force: true });
});

/** The files of a folder the CLI wrote: name → text. */
async function folderFiles(dir: string): Promise<Record<string, string>> {
  const names = (await readdir(dir)).sort();
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await readFile(join(dir, n), 'utf8')])));
}

describe('buildFromSpec with a folder and with the code agent', () => {
  it('builds a dropped folder of MCP tool files (a LICENSE beside them left out) as `--from <folder>` does', async () => {
    const names = await readdir(TOOLS);
    const dropped = await Promise.all(
      [...names, '../LICENSE'].map(async (n) => ({
        name: n.replace('../', ''),
        text: await readFile(join(TOOLS, n), 'utf8'),
      })),
    );
    const built = await service.buildFromSpec('tools', dropped.reverse(), { language: 'zh', tasks: 5, seed: 3 });
    const cli = await buildDomainFolder({ from: TOOLS, out: join(work, 'tools'), language: 'zh', tasks: 5, seed: 3 });
    expect(built.name).toBe('tools');
    expect(built.files).toEqual(await folderFiles(cli.dir!));
    expect(built.tasks).toBe(cli.report.tasks.length);
    expect(await failure(() => service.buildFromSpec('notes', [{ name: 'README.md', text: '# no tools' }]))).toBe(
      'notes: a spec folder needs MCP tool files (*.json, *.snap)',
    );
    expect(
      await failure(() => service.buildFromSpec('mixed', [{ name: 'a.json', text: '{"openapi": "3.0.0"}' }])),
    ).toBe('a.json: not an MCP tool ({"name", "inputSchema"}) or tool list');
  }, 60_000);

  it('runs the code agent at the endpoint as `--agent` does: same files, rejects listed, the key sent and kept nowhere', async () => {
    const key = 'sk-page-builder-7731';
    const seen: { done: number; total: number }[] = [];
    const petstore = await readFile(PETSTORE, 'utf8');
    const built = await service.buildFromSpec(
      'openapi.yaml',
      petstore,
      { name: 'pets', tasks: 4, agent: { flavor: 'openai', baseURL: server.url, model: 'editor', apiKey: key } },
      (p) => seen.push(p),
    );
    // One request per task, then one per domain stage (rule texts, business rules, harder tasks).
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(Array(7).fill(`Bearer ${key}`));
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((done) => ({ done, total: 4 })));
    expect(built.agent?.admitted).toEqual([{ task_id: 'pets-update_pet-1', reason: 'Natural caller text' }]);
    expect(built.agent?.rejected.map((r) => [r.task_id, r.status])).toEqual([
      ['pets-update_pet_with_form-2', 'unparseable'],
      ['pets-delete_pet-3', 'gate_rejected'],
      ['pets-place_order-4', 'out_of_scope'],
    ]);
    const stage = (r: { admitted: { id: string }[]; rejected: { id: string; status: string }[] } | undefined) => [
      r?.admitted.map((p) => p.id),
      r?.rejected.map((p) => [p.id, p.status]),
    ];
    expect(stage(built.agent?.rules)).toEqual([['R3'], [['R9', 'unknown_rule']]]);
    expect(stage(built.agent?.business_rules)).toEqual([['R7'], []]);
    expect(stage(built.agent?.harder_tasks)).toEqual([[], [['(reply)', 'unparseable']]]);
    expect(JSON.stringify(built)).not.toContain(key);
    // The CLI, given the same replies by a second endpoint, writes the same folder.
    const second = await startOpenAiServer(scriptedModels({ editor: EDITOR_REPLIES }));
    const client = new OpenAiModelClient({ flavor: 'openai', baseURL: second.url, model: 'editor' });
    const cli = await buildDomainFolder({
      from: PETSTORE,
      out: join(work, 'pets'),
      name: 'pets',
      language: 'en',
      tasks: 4,
      seed: 0,
      agent: client,
    }).finally(() => second.close());
    expect(built.files).toEqual(await folderFiles(cli.dir!));
    expect((await service.describe('pets')).tasks[0]!.user_scenario.persona).toBe(EDITED_PERSONA);
  }, 60_000);

  it('never follows the endpoint to another origin: a redirect fails the build, the other origin gets nothing', async () => {
    const other = await startOpenAiServer(scriptedModels({ editor: EDITOR_REPLIES }));
    const hop = await startOpenAiServer((_body, _i, req) => ({
      status: 307,
      json: {},
      headers: { location: `${other.url}${req.path.replace(/^\/v1/, '')}` },
    }));
    try {
      const message = await failure(async () =>
        service.buildFromSpec('openapi.yaml', await readFile(PETSTORE, 'utf8'), {
          name: 'hop',
          tasks: 1,
          agent: { flavor: 'openai', baseURL: hop.url, model: 'editor', apiKey: 'sk-hop' },
        }),
      );
      expect(message).toMatch(/^the code agent's endpoint failed on task hop-update_pet-1: /);
      expect(message).toContain(
        `not followed: the code agent's requests (and key) go only to ${new URL(hop.url).origin}`,
      );
      expect(message).toMatch(/; nothing was written$/);
      expect(await service.domainNames()).not.toContain('hop');
      expect(hop.requests.length).toBeGreaterThan(0);
      expect(other.requests).toEqual([]);
    } finally {
      await hop.close();
      await other.close();
    }
  }, 60_000);

  it('Stop ends a build whose endpoint hangs at once, building nothing', async () => {
    const hung = await startOpenAiServer(() => ({ hang: true }));
    try {
      const started = Date.now();
      const building = failure(async () =>
        service.buildFromSpec('openapi.yaml', await readFile(PETSTORE, 'utf8'), {
          name: 'hung',
          tasks: 2,
          agent: { flavor: 'openai', baseURL: hung.url, model: 'editor' },
        }),
      );
      while (hung.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
      await service.cancel();
      expect(await building).toBe('hung: the build was stopped; nothing was built');
      // Well before the client's 60 s timeout, and no second request.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(hung.requests).toHaveLength(1);
      expect(await service.domainNames()).not.toContain('hung');
    } finally {
      await hung.close();
    }
  }, 60_000);

  it('restores a built domain from its files, and refuses damaged files naming the file', async () => {
    const built = await service.buildFromSpec('openapi.yaml', await readFile(PETSTORE, 'utf8'), {
      name: 'shop',
      tasks: 3,
    });
    await service.forget('shop');
    expect(await service.domainNames()).not.toContain('shop');
    expect(await failure(() => service.describe('shop'))).toBe(
      'unknown domain "shop"; known domains: carrier, debt-negotiation, insurance-renewal; built or opened in this tab: gh_tools, pets, tools (a domain built from an API description is kept only in the browser that built it)',
    );
    expect(await service.openBuilt('shop', built.files)).toEqual({ tasks: 3 });
    expect(await service.domainNames()).toContain('shop');
    expect((await service.describe('shop')).tasks.map((t) => t.id)).toEqual(
      (JSON.parse(built.files['tasks.json']!) as { id: string }[]).map((t) => t.id),
    );
    const { 'seed.json': _, ...noSeed } = built.files;
    expect(await failure(() => service.openBuilt('shop', noSeed))).toBe('shop/seed.json: missing');
    expect(await failure(() => service.openBuilt('shop', { ...built.files, 'tasks.json': '[{"id": ' }))).toMatch(
      /^shop\/tasks\.json: /,
    );
    expect(await failure(() => service.openBuilt('store', built.files))).toBe(
      'store/domain.json: name is "shop", not "store"',
    );
    expect(await failure(() => service.openBuilt('carrier', built.files))).toBe(
      'carrier: a built-in domain has this name; choose another name',
    );
    // A reference solution that no longer replays: the gate refuses it again.
    const tasks = JSON.parse(built.files['tasks.json']!) as {
      evaluation_criteria: { actions: { arguments: Record<string, unknown> }[] };
    }[];
    const args = tasks[0]!.evaluation_criteria.actions[1]!.arguments;
    const [field] = Object.keys(args);
    args[field!] = 987654;
    expect(
      await failure(() => service.openBuilt('shop', { ...built.files, 'tasks.json': JSON.stringify(tasks) })),
    ).toMatch(/^shop: refused by the gate: shop-.*987654/);
  }, 60_000);
});
