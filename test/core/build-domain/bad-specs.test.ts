/**
 * `build-domain` on bad input: every problem is an error naming the file and the path in the spec,
 * or a skip listed in the build report; a failure or a refusal leaves no folder behind; the same
 * spec and seed give the same bytes.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDomainFolder } from '../../../src/adapters/node/build-domain.ts';
import { buildDomainFiles, parseSpecText, readSpec } from '../../../src/core/build-domain/index.ts';
import { gateDomain } from '../../../src/core/gate/gate.ts';
import { fiftyOperationSpec } from '../../../bench/build-domain.ts';

const work = mkdtempSync(join(tmpdir(), 'sb-badspec-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const OPTS = { name: 'shop', language: 'en' as const, tasks: 4, seed: 0 };

/** A small valid OpenAPI 3 shop: customers and their orders. */
function shop(extra: { paths?: Record<string, unknown>; schemas?: Record<string, unknown> } = {}) {
  return {
    openapi: '3.0.3',
    info: { title: 'Shop', version: '1' },
    paths: {
      '/orders/{orderId}': {
        get: {
          operationId: 'getOrder',
          parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'integer' } }],
          responses: {
            200: {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
          },
        },
        patch: {
          operationId: 'updateOrder',
          summary: 'Change the state of an order.',
          parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'integer' } }],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { state: { type: 'string', enum: ['open', 'paid', 'shipped'] } },
                  required: ['state'],
                },
              },
            },
          },
          responses: {
            200: {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
          },
        },
      },
      ...extra.paths,
    },
    components: {
      schemas: {
        Customer: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
        Order: {
          type: 'object',
          properties: {
            id: { type: 'integer' },
            customerId: { type: 'integer' },
            state: { type: 'string', enum: ['open', 'paid', 'shipped'] },
            placed: { type: 'string', format: 'date' },
          },
        },
        ...extra.schemas,
      },
    },
  };
}

const build = (doc: unknown, file = 'spec.json') => buildDomainFiles(file, JSON.stringify(doc), OPTS);

describe('build-domain input errors name the file and the path in the spec', () => {
  it('refuses Swagger 2.0, other OpenAPI versions and files that are neither format', () => {
    expect(() => readSpec('a.yaml', parseSpecText('a.yaml', 'swagger: "2.0"\npaths: {}\n'))).toThrow(
      'a.yaml: swagger: Swagger 2.0 is not supported; convert it to OpenAPI 3.x first',
    );
    expect(() => build({ openapi: '4.0.0', paths: {} })).toThrow(
      'spec.json: openapi: OpenAPI "4.0.0" is not supported; only 3.x',
    );
    expect(() => build({ hello: 'world' })).toThrow(
      'spec.json: neither an OpenAPI 3.x description ("openapi": "3.x") nor an MCP tool list ("tools": [...])',
    );
    expect(() => parseSpecText('b.yaml', 'openapi: 3.0.0\npaths:\n  - a\n b: [\n')).toThrow(
      /^b\.yaml: line \d+: not valid YAML or JSON/,
    );
    expect(() => parseSpecText('c.json', '{"openapi": ')).toThrow(/^c\.json: not valid JSON/);
  });

  it('refuses $ref cycles (alias chains and allOf) and external refs', () => {
    expect(() =>
      build(shop({ schemas: { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } } })),
    ).toThrow(
      'spec.json: components.schemas.A: $ref cycle: components.schemas.B → components.schemas.A → components.schemas.B',
    );
    expect(() =>
      build(
        shop({
          schemas: {
            A: { allOf: [{ $ref: '#/components/schemas/B' }] },
            B: { allOf: [{ $ref: '#/components/schemas/A' }] },
          },
        }),
      ),
    ).toThrow('$ref cycle: components.schemas.A → components.schemas.B → components.schemas.A');
    expect(() => build(shop({ schemas: { C: { $ref: 'other.yaml#/Pet' } } }))).toThrow(
      'spec.json: components.schemas.C: external or malformed $ref "other.yaml#/Pet" is not supported (only #/components/…)',
    );
  });

  it('refuses name clashes of operations and of tables', () => {
    const dup = { '/x': { get: { operationId: 'get_order', responses: {} } } };
    expect(() => build(shop({ paths: dup }))).toThrow(
      'spec.json: paths./x.get.operationId: name clash: paths./orders/{orderId}.get and paths./x.get both become tool "get_order"',
    );
    expect(() =>
      build(shop({ schemas: { order: { type: 'object', properties: { id: { type: 'integer' } } } } })),
    ).toThrow(
      'spec.json: components.schemas.order: name clash: both components.schemas.Order and components.schemas.order become table "orders"',
    );
  });

  it('refuses huge specs: more than 1000 operations, more than 10 MB', () => {
    const paths = Object.fromEntries(
      Array.from({ length: 1001 }, (_, i) => [`/p${i}`, { get: { operationId: `op${i}`, responses: {} } }]),
    );
    expect(() => build(shop({ paths }))).toThrow(
      'spec.json: paths./p998.get: more than 1000 operations: too large a spec for one domain; split it',
    );
    expect(() => parseSpecText('big.json', ' '.repeat(10_000_001))).toThrow(
      'big.json: 10000001 characters: more than 10000000, too large a spec for one domain',
    );
  });

  it('lists what it leaves out: operations without ids, unsupported types, nested values', () => {
    const { report } = build(
      shop({
        paths: { '/customers': { post: { summary: 'no id', responses: {} } } },
        schemas: {
          Customer: {
            type: 'object',
            properties: {
              id: { type: 'integer' },
              name: { type: 'string' },
              photo: { type: 'file' },
              tags: { type: 'array', items: { type: 'string' } },
            },
          },
        },
      }),
    );
    expect(report.skipped).toEqual([
      {
        path: 'components.schemas.Customer.properties.photo',
        reason: 'file property is not a column (nested values are not stored)',
      },
      {
        path: 'components.schemas.Customer.properties.tags',
        reason: 'array property is not a column (nested values are not stored)',
      },
      { path: 'paths./customers.post', reason: 'no operationId: the tool would have no stable name' },
    ]);
  });

  it('says why when no task can be built', () => {
    const readOnly = shop();
    delete (readOnly.paths['/orders/{orderId}'] as Record<string, unknown>).patch;
    expect(() => build(readOnly)).toThrow(
      'spec.json: no task can be built: the spec has no write operation (every tool reads)',
    );
  });

  it('refuses MCP tool lists with a tool without an object inputSchema, naming it', () => {
    const tools = {
      tools: [
        {
          name: 'get_note',
          inputSchema: { type: 'object', properties: { note_id: { type: 'string' } }, required: ['note_id'] },
        },
        { name: 'bad', inputSchema: { type: 'string' } },
      ],
    };
    expect(() => build(tools, 'tools.json')).toThrow(
      'tools.json: tools[1].inputSchema: tool bad: "inputSchema" must be a JSON Schema of type "object"',
    );
    expect(() => build({ tools: [] }, 'tools.json')).toThrow('tools.json: tools: the tool list is empty');
  });
});

describe('build-domain output', () => {
  it('is the same bytes for the same spec and seed, and another database for another seed', () => {
    const a = build(shop());
    const b = build(shop());
    expect(a.files).toEqual(b.files);
    const c = buildDomainFiles('spec.json', JSON.stringify(shop()), { ...OPTS, seed: 1 });
    expect(c.files['seed.json']).not.toBe(a.files['seed.json']);
    expect(Object.keys(a.files).sort()).toEqual([
      'domain.json',
      'policy.md',
      'schema.sql',
      'seed.json',
      'tasks.json',
      'tools.json',
    ]);
    const seed = JSON.parse(a.files['seed.json']!) as Record<
      string,
      { id: number; customer_id: number; placed: string }[]
    >;
    expect([seed.customers!.length, seed.orders!.length]).toEqual([60, 120]);
    const customers = new Set(seed.customers!.map((r) => r.id));
    expect(seed.orders!.every((o) => customers.has(o.customer_id))).toBe(true);
    // Dates within ±120 days of the policy clock (2025-03-15).
    expect(seed.orders!.every((o) => o.placed >= '2024-11-15' && o.placed <= '2025-07-13')).toBe(true);
    expect(a.files['policy.md']).toContain(
      '- **R3** update_order: Change the state of an order. It needs order_id, state. state must be one of open, paid, shipped.',
    );
  });

  it("builds the benchmark's 50-operation spec into 50 tools on 10 tables, every write covered in turn", () => {
    const { report } = buildDomainFiles('bank.json', fiftyOperationSpec(), { ...OPTS, tasks: 30 });
    expect([report.tools.length, report.tables.length, report.skipped]).toEqual([50, 10, []]);
    // 30 writes in turn, the creates of the first table too (no parent record: nothing to find first).
    expect(new Set(report.tasks.map((t) => t.write)).size).toBe(30);
  });

  it('writes nothing when the spec is bad, the folder exists, or the gate refuses', async () => {
    const specFile = join(work, 'shop.json');
    writeFileSync(specFile, JSON.stringify(shop()));
    const bad = join(work, 'bad.json');
    writeFileSync(bad, JSON.stringify({ swagger: '2.0' }));
    const out = join(work, 'out-bad');
    await expect(buildDomainFolder({ from: bad, out, language: 'en', tasks: 2, seed: 0 })).rejects.toThrow(
      `${bad}: swagger:`,
    );
    const taken = join(work, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'x'), '');
    await expect(buildDomainFolder({ from: specFile, out: taken, language: 'en', tasks: 2, seed: 0 })).rejects.toThrow(
      `${taken}: already exists and is not an empty folder; choose a new --out`,
    );
    // An injected gate that refuses (the real gate's report, marked refused): this checks the
    // write path on a refusal; the gate's own refusals are tested in test/core/gate.
    const refused = await buildDomainFolder({
      from: specFile,
      out: join(work, 'out-refused'),
      language: 'en',
      tasks: 2,
      seed: 0,
      gate: (runtime) =>
        gateDomain(runtime, { taskIds: [], ruleBinding: true }).then((r) => ({ ...r, accepted: false })),
    });
    expect(refused.dir).toBeNull();
    expect(readdirSync(work).filter((n) => n.includes('out-') || n.includes('.building-'))).toEqual([]);
    const ok = await buildDomainFolder({
      from: specFile,
      out: join(work, 'out-ok'),
      language: 'en',
      tasks: 2,
      seed: 0,
    });
    expect(ok.dir).toBe(join(work, 'out-ok'));
    expect(ok.gate.tasks.map((t) => [t.reference_reward, t.noop_reward])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect(existsSync(join(work, 'out-ok', 'build-report.json'))).toBe(true);
  });
});
