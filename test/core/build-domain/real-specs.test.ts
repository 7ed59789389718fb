/**
 * `build-domain` on public API descriptions nobody here wrote (test/fixtures/specs, vendored byte
 * for byte with their licenses): each builds a gated domain folder, and on every task the
 * reference agent scores exactly 1 and the do-nothing agent exactly 0.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDomainFolder } from '../../../src/adapters/node/build-domain.ts';
import { loadDomain } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';

const SPECS = new URL('../../fixtures/specs/', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-realspec-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('vendored specs', () => {
  it('are byte-exact copies (sha256 as listed in the fixtures README) with a license beside each', () => {
    const readme = readFileSync(join(SPECS, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(listed.length).toBe(9);
    for (const [sum, file] of listed) {
      expect(
        createHash('sha256')
          .update(readFileSync(join(SPECS, file)))
          .digest('hex'),
        file,
      ).toBe(sum);
      expect(existsSync(join(SPECS, file.split('/')[0]!, 'LICENSE')), file).toBe(true);
    }
  });
});

async function build(spec: string, out: string, extra: { language?: 'zh' | 'en'; tasks?: number } = {}) {
  return buildDomainFolder({
    from: join(SPECS, spec),
    out: join(work, out),
    language: extra.language ?? 'en',
    tasks: extra.tasks ?? 12,
    seed: 0,
  });
}

function expectDiscriminating(gate: Awaited<ReturnType<typeof build>>['gate']) {
  expect(gate.domain_problems).toEqual([]);
  for (const t of gate.tasks) {
    expect([t.task_id, t.reasons]).toEqual([t.task_id, []]);
    expect([t.task_id, t.reference_reward, t.noop_reward]).toEqual([t.task_id, 1, 0]);
  }
  expect(gate.accepted).toBe(true);
}

describe('Swagger Petstore (OpenAPI 3.0, YAML, Apache-2.0)', () => {
  it('builds tables, tools and 12 gated tasks; skips what it cannot express, with reasons', async () => {
    const { report, gate, dir } = await build('swagger-petstore/openapi.yaml', 'petstore');
    expect(dir).toBe(join(work, 'petstore'));
    expect(report.tables.map((t) => [t.name, t.rows, t.key])).toEqual([
      ['categories', 60, ['id']],
      ['users', 60, ['id']],
      ['tags', 60, ['id']],
      ['pets', 120, ['id']],
      ['orders', 120, ['id']],
    ]);
    expect(report.tools.map((t) => `${t.name}:${t.kind}:${t.verb}`)).toEqual([
      'update_pet:write:update',
      'add_pet:write:create',
      'find_pets_by_status:read:list',
      'find_pets_by_tags:read:list',
      'get_pet_by_id:read:get',
      'update_pet_with_form:write:update',
      'delete_pet:write:delete',
      'place_order:write:create',
      'get_order_by_id:read:get',
      'delete_order:write:delete',
      'create_user:write:create',
      'login_user:read:list',
      'logout_user:read:list',
      'get_user_by_name:read:get',
      'update_user:write:update',
      'delete_user:write:delete',
    ]);
    expect(report.skipped.map((s) => s.path)).toEqual([
      'components.schemas.Pet.properties.photoUrls',
      'components.schemas.Pet.properties.tags',
      'components.schemas.ApiResponse',
      'paths./pet/findByTags.get.parameters[0]',
      'paths./pet/{petId}/uploadImage.post.parameters[1]',
      'paths./pet/{petId}/uploadImage.post',
      'paths./store/inventory.get',
      'paths./user/createWithList.post',
    ]);
    expect(report.skipped.find((s) => s.path === 'paths./user/createWithList.post')?.reason).toBe(
      'request body is an array (batch operations are not supported)',
    );
    expect(report.tasks.map((t) => t.write)).toEqual([
      'update_pet',
      'update_pet_with_form',
      'delete_pet',
      'place_order',
      'delete_order',
      'create_user',
      'update_user',
      'delete_user',
      'update_pet',
      'update_pet_with_form',
      'delete_pet',
      'place_order',
    ]);
    expectDiscriminating(gate);
    expect(readdirSync(dir!).sort()).toEqual([
      'build-report.json',
      'domain.json',
      'policy.md',
      'schema.sql',
      'seed.json',
      'tasks.json',
      'tools.json',
    ]);
  });

  it('runs its tools with guards: a row found, a named error for a missing one, a bad enum, a referenced row', async () => {
    const domain = await loadDomain(join(work, 'petstore'));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const env = await runtime.open();
    try {
      const seedPets = domain.seed.pets!;
      const pet = seedPets[0]!;
      const got = await env.call({ id: 'c1', name: 'get_pet_by_id', arguments: { pet_id: pet.id } });
      expect(JSON.parse(got.content)).toEqual(pet);
      const missing = await env.call({ id: 'c2', name: 'get_pet_by_id', arguments: { pet_id: 99 } });
      expect(missing.content).toBe('Error: pet 99 not found');
      const badEnum = await env.call({
        id: 'c3',
        name: 'update_pet_with_form',
        arguments: { pet_id: pet.id, status: 'lost' },
      });
      expect(badEnum.error).toBe(true);
      expect(badEnum.content).toMatch(/^Error: invalid arguments for update_pet_with_form: status: /);
      const nothing = await env.call({ id: 'c4', name: 'update_pet_with_form', arguments: { pet_id: pet.id } });
      expect(nothing.content).toBe('Error: nothing to change: give at least one of name, status');
      const ordered = domain.seed.orders![0]!.pet_id as number;
      const refused = await env.call({ id: 'c5', name: 'delete_pet', arguments: { pet_id: ordered } });
      expect(refused.content).toBe(`Error: pet ${ordered} still has orders; it cannot be deleted`);
      const placed = await env.call({ id: 'c6', name: 'place_order', arguments: { pet_id: 99, quantity: 1 } });
      expect(placed.content).toBe('Error: pet 99 not found');
      const ok = await env.call({
        id: 'c7',
        name: 'place_order',
        arguments: { pet_id: pet.id, quantity: 3, complete: true },
      });
      expect(JSON.parse(ok.content)).toMatchObject({ id: 1121, pet_id: pet.id, quantity: 3, complete: 1 });
      expect([...new Set(env.writes.map((w) => `${w.op} ${w.table}`))]).toEqual(['insert orders']);
    } finally {
      await env.close();
    }
  });
});

describe('Petstore expanded (OpenAPI 3.0, allOf, Apache-2.0)', () => {
  it('merges allOf into the pets table and gates delete tasks', async () => {
    const { report, gate } = await build('oai-petstore-expanded/petstore-expanded.yaml', 'expanded', { tasks: 4 });
    expect(report.tables).toEqual([{ name: 'pets', from: 'components.schemas.Pet', rows: 60, key: ['id'] }]);
    expect(report.tools.map((t) => t.name)).toEqual(['find_pets', 'add_pet', 'find_pet_by_id', 'delete_pet']);
    // add_pet has no parent record: its tasks create a pet with nothing to find first.
    expect(report.tasks.map((t) => `${t.read}→${t.write}`)).toEqual([
      'null→add_pet',
      'find_pet_by_id→delete_pet',
      'null→add_pet',
      'find_pet_by_id→delete_pet',
    ]);
    expectDiscriminating(gate);
  });
});

describe('GitHub MCP server tool snapshots (MCP, MIT)', () => {
  it('groups tools by noun into tables with simple and composite keys, gates update tasks in Mandarin', async () => {
    const { report, gate } = await build('github-mcp-server/tools', 'github', { language: 'zh', tasks: 6 });
    expect(report.format).toBe('mcp');
    expect(report.tables.map((t) => [t.name, t.key])).toEqual([
      ['gists', ['gist_id']],
      ['labels', ['name', 'owner', 'repo']],
    ]);
    expect(report.tools.map((t) => `${t.name}:${t.kind}:${t.verb}`)).toEqual([
      'create_gist:write:create',
      'get_gist:read:get',
      'get_label:read:get',
      'label_write:write:update',
      'list_gists:read:list',
      'list_label:read:list',
      'update_gist:write:update',
    ]);
    expect(report.tasks.map((t) => t.write)).toEqual([
      'create_gist',
      'label_write',
      'update_gist',
      'create_gist',
      'label_write',
      'update_gist',
    ]);
    expectDiscriminating(gate);
    const tasks = JSON.parse(readFileSync(join(work, 'github', 'tasks.json'), 'utf8'));
    expect(tasks[1].user_scenario.requests[0]).toMatch(/^你好，我想把label的/);
    expect(tasks[1].evaluation_criteria.actions[1].arguments.method).toBe('update');
    // A create with no parent record: one action, no R1 assertion, a whitelist without a row filter.
    expect(tasks[0].user_scenario.requests[0]).toMatch(/^你好，我想新建一条gist：/);
    expect(tasks[0].evaluation_criteria.actions.map((a: { name: string }) => a.name)).toEqual(['create_gist']);
    expect(tasks[0].evaluation_criteria.assertions.map((a: { rule: string }) => a.rule)).toEqual(['R2', 'R3']);
    expect(tasks[0].evaluation_criteria.write_whitelist).toEqual([{ table: 'gists', ops: ['insert'] }]);
  });
});
