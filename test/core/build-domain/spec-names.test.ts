/**
 * `build-domain` on names and files a user's spec or command can hold: dotted schema names
 * (`v1.Book`), two properties that become one column, a property named `constructor`, a NUL in an
 * enum value, an enum value too long to be spoken; a damaged `--replies` record, an `--out` that
 * cannot be written beside or that is filled while the domain is built.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDomainFolder, readAgentRecord } from '../../../src/adapters/node/build-domain.ts';
import { buildDomainFiles } from '../../../src/core/build-domain/index.ts';
import { gateDomain } from '../../../src/core/gate/gate.ts';

const work = mkdtempSync(join(tmpdir(), 'sb-spec-names-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const OPTS = { name: 'lib', language: 'en' as const, tasks: 2, seed: 0 };

/** Books at `/books/{id}` (get, put, delete) and `/books` (post), the schema named `schema`. */
function library(schema: string, properties: Record<string, unknown>) {
  const ref = { $ref: `#/components/schemas/${schema.replace(/~/g, '~0').replace(/\//g, '~1')}` };
  const id = [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }];
  const body = { content: { 'application/json': { schema: ref } } };
  return {
    openapi: '3.0.3',
    info: { title: 'Library', version: '1' },
    paths: {
      '/books/{id}': {
        get: {
          operationId: 'getBook',
          parameters: id,
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: ref } } } },
        },
        put: {
          operationId: 'updateBook',
          parameters: id,
          requestBody: body,
          responses: { 200: { description: 'ok' } },
        },
        delete: { operationId: 'deleteBook', parameters: id, responses: { 204: { description: 'ok' } } },
      },
      '/books': { post: { operationId: 'createBook', requestBody: body, responses: { 201: { description: 'ok' } } } },
    },
    components: { schemas: { [schema]: { type: 'object', properties: { id: { type: 'integer' }, ...properties } } } },
  };
}

const TITLE = { title: { type: 'string' }, state: { type: 'string', enum: ['in', 'out'] } };
const build = (doc: unknown) => buildDomainFiles('lib.json', JSON.stringify(doc), OPTS);
const toolsOf = (doc: unknown) => build(doc).report.tools.map((t) => `${t.name}:${t.kind}:${t.table}`);

describe('build-domain names', () => {
  it('reads a dotted schema name (v1.Book) as a table, like a plain one', () => {
    expect(toolsOf(library('Book', TITLE))).toEqual([
      'get_book:read:books',
      'update_book:write:books',
      'delete_book:write:books',
      'create_book:write:books',
    ]);
    // Before: the name was cut at the dot, no operation found its table, and the build said
    // "the spec has no write operation". The delete's path (`/books`) names no `v1_books`.
    expect(toolsOf(library('v1.Book', TITLE))).toEqual([
      'get_book:read:v1_books',
      'update_book:write:v1_books',
      'create_book:write:v1_books',
    ]);
    expect(build(library('../../etc', TITLE)).report.tables.map((t) => t.name)).toEqual(['etcs']);
  });

  it('lists a property that becomes a column another already is, instead of merging them', () => {
    const { report, files } = build(
      library('Book', {
        ownerId: { type: 'string' },
        owner_id: { type: 'integer' },
        Title: { type: 'string' },
        title: { type: 'string' },
      }),
    );
    expect(report.skipped.filter((s) => s.reason.startsWith('becomes column'))).toEqual([
      {
        path: 'components.schemas.Book.properties.owner_id',
        reason: 'becomes column owner_id of books, which an earlier property is; left out',
      },
      {
        path: 'components.schemas.Book.properties.title',
        reason: 'becomes column title of books, which an earlier property is; left out',
      },
    ]);
    expect(files['schema.sql']).toContain('  owner_id TEXT,\n  title TEXT,\n');
  });

  it('renames a parameter named constructor, which the argument check read as the inherited function', async () => {
    const mcp: { tools: unknown[] } = {
      tools: [
        {
          name: 'get_car',
          inputSchema: { type: 'object', properties: { car_id: { type: 'string' } }, required: ['car_id'] },
        },
        {
          name: 'update_car',
          inputSchema: {
            type: 'object',
            properties: { car_id: { type: 'string' }, constructor: { type: 'string' }, colour: { type: 'string' } },
            required: ['car_id'],
          },
        },
      ],
    };
    const spec = join(work, 'cars.json');
    writeFileSync(spec, JSON.stringify(mcp));
    const out = join(work, 'cars');
    const built = await buildDomainFolder({ from: spec, out, language: 'en', tasks: 2, seed: 0 });
    expect(built.gate.tasks.map((t) => [t.task_id, t.reasons, t.reference_reward, t.noop_reward])).toEqual([
      ['cars-update_car-1', [], 1, 0],
      ['cars-update_car-2', [], 1, 0],
    ]);
    const tools = JSON.parse(readFileSync(join(out, 'tools.json'), 'utf8')).tools;
    expect(Object.keys(tools[1].parameters.properties)).toEqual(['car_id', 'constructor_value', 'colour']);
  });

  it('never picks a one-value enum column as the value an update task changes', () => {
    // Before: seeds 2 and 3 picked `kind` and the build stopped on "Rng.pick on an empty array".
    const doc = library('Book', { title: { type: 'string' }, kind: { type: 'string', enum: ['book'] } });
    for (const seed of [0, 1, 2, 3]) {
      const { files } = buildDomainFiles('lib.json', JSON.stringify(doc), { ...OPTS, tasks: 4, seed });
      const updates = JSON.parse(files['tasks.json']!).flatMap(
        (t: { evaluation_criteria: { write_whitelist: { ops: string[]; columns?: string[] }[] } }) =>
          t.evaluation_criteria.write_whitelist.filter((w) => w.ops.includes('update')).map((w) => w.columns),
      );
      expect(updates.length, `seed ${seed}`).toBeGreaterThan(0);
      expect(
        updates.filter((c: string[]) => c.join() !== 'title'),
        `seed ${seed}`,
      ).toEqual([]);
    }
  });

  it('writes a NUL in an enum value as char(0), and the gate admits the domain', async () => {
    const doc = library('Book', { state: { type: 'string', enum: ['in', 'x\u0000y'] } });
    expect(build(doc).files['schema.sql']).toContain("state TEXT CHECK (state IN ('in', 'x' || char(0) || 'y'))");
    const spec = join(work, 'nul.json');
    writeFileSync(spec, JSON.stringify(doc));
    const built = await buildDomainFolder({ from: spec, out: join(work, 'nul'), language: 'en', tasks: 2, seed: 0 });
    expect(built.dir).toBe(join(work, 'nul'));
  });

  it("says why the gate refuses a task whose rollouts are invalid (the caller's text over its limit)", async () => {
    const spec = join(work, 'long.json');
    writeFileSync(
      spec,
      JSON.stringify(library('Book', { state: { type: 'string', enum: ['y'.repeat(20_000), 'z'.repeat(20_000)] } })),
    );
    const built = await buildDomainFolder({ from: spec, out: join(work, 'long'), language: 'en', tasks: 1, seed: 0 });
    expect(built.dir).toBeNull();
    const why = 'invalid rollout: simulator error: caller reply of 20048 characters is over the limit of 16000';
    expect(built.gate.tasks[0]!.reasons).toEqual([
      `reference agent with scripted caller scores null, not 1 (${why})`,
      `do-nothing agent scores null, not 0 (${why})`,
    ]);
  });
});

describe('build-domain files', () => {
  it('names the field of a damaged --replies record, and a file that cannot be read', async () => {
    const file = join(work, 'replies.json');
    writeFileSync(file, JSON.stringify({ model: 'm', seed: 0, replies: [{ task_id: 'a', text: 'x' }, { text: 5 }] }));
    await expect(readAgentRecord(file)).rejects.toThrow(
      `${file}: not an agent-replies.json record ({"model", "seed", "replies": [...]}) (replies.1.text: Invalid input: expected string, received number)`,
    );
    await expect(readAgentRecord(join(work, 'none.json'))).rejects.toThrow(
      `${join(work, 'none.json')}: cannot be read (ENOENT)`,
    );
    const good = {
      model: 'm',
      seed: 0,
      replies: [{ stage: 'caller_text', task_id: 'a', text: null, error: 'HTTP 500' }],
    };
    writeFileSync(file, JSON.stringify(good));
    expect(await readAgentRecord(file)).toEqual(good);
  });

  it('never overwrites an --out filled while the domain was built, and names an --out it cannot write beside', async () => {
    const spec = join(work, 'lib.json');
    writeFileSync(spec, JSON.stringify(library('Book', TITLE)));
    const out = join(work, 'busy');
    const opts = { from: spec, out, language: 'en' as const, tasks: 1, seed: 0 };
    await expect(
      buildDomainFolder({
        ...opts,
        // Another build (or the user) fills `out` while this one is gated.
        gate: (runtime) => {
          mkdirSync(out, { recursive: true });
          writeFileSync(join(out, 'mine.txt'), 'keep');
          return gateDomain(runtime);
        },
      }),
    ).rejects.toThrow(`${out}: was filled while the domain was built; left as it is, nothing written`);
    expect(readdirSync(out)).toEqual(['mine.txt']);
    expect(readdirSync(work).filter((n) => n.includes('.building-'))).toEqual([]);
    // An empty folder made meanwhile is still replaced.
    const empty = join(work, 'empty');
    const built = await buildDomainFolder({
      ...opts,
      out: empty,
      gate: (r) => {
        mkdirSync(empty);
        return gateDomain(r);
      },
    });
    expect(existsSync(join(empty, 'tasks.json'))).toBe(true);
    expect(built.dir).toBe(empty);
    const blocked = join(work, 'lib.json', 'sub', 'out');
    await expect(buildDomainFolder({ ...opts, out: blocked })).rejects.toThrow(
      `${blocked}: cannot write beside it (ENOTDIR)`,
    );
  });
});
