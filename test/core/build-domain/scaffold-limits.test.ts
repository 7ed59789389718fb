/**
 * The scaffold's former limits: a nested object is flattened one level into columns and tool
 * parameters (`address: {city, zip}` → `address_city`, `address_zip`), listed in the build report;
 * a create with no parent record gets a task of its own; `--tasks` is capped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDomainFolder } from '../../../src/adapters/node/build-domain.ts';
import { buildDomainFiles } from '../../../src/core/build-domain/index.ts';
import { MAX_TASKS } from '../../../src/core/build-domain/scaffold.ts';
import { writeFileSync } from 'node:fs';

const work = mkdtempSync(join(tmpdir(), 'sb-scaffold-limits-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const OPTS = { name: 'clinic', language: 'en' as const, tasks: 4, seed: 0 };

/** Patients with a nested address (one level) and a nested-twice geo, created with no parent. */
const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Clinic', version: '1' },
  paths: {
    '/patients': {
      post: {
        operationId: 'createPatient',
        summary: 'Register a patient.',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Patient' } } } },
        responses: { 201: { description: 'ok' } },
      },
    },
    '/patients/{patientId}': {
      get: {
        operationId: 'getPatient',
        parameters: [{ name: 'patientId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: {
          200: {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Patient' } } },
          },
        },
      },
      patch: {
        operationId: 'updatePatient',
        parameters: [{ name: 'patientId', in: 'path', required: true, schema: { type: 'integer' } }],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Patient' } } } },
        responses: { 200: { description: 'ok' } },
      },
    },
  },
  components: {
    schemas: {
      Patient: {
        type: 'object',
        required: ['name', 'address'],
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          address: {
            type: 'object',
            required: ['city'],
            properties: {
              city: { type: 'string' },
              zip: { type: 'string' },
              geo: { type: 'object', properties: { lat: { type: 'number' } } },
            },
          },
        },
      },
    },
  },
};

describe('build-domain scaffold limits', () => {
  it('flattens a nested object one level into columns and parameters, and lists it', () => {
    const { report, files } = buildDomainFiles('clinic.json', JSON.stringify(SPEC), OPTS);
    expect(report.flattened).toEqual([
      { path: 'components.schemas.Patient.properties.address', columns: ['address_city', 'address_zip'] },
    ]);
    expect(report.skipped).toEqual([
      {
        path: 'components.schemas.Patient.properties.address.properties.geo',
        reason: 'object field of a nested object is not a column (nested objects are flattened one level only)',
      },
    ]);
    expect(files['schema.sql']).toContain('  address_city TEXT,\n  address_zip TEXT,\n');
    const tools = JSON.parse(files['tools.json']!).tools as {
      name: string;
      parameters: { properties: Record<string, unknown>; required?: string[] };
    }[];
    const create = tools.find((t) => t.name === 'create_patient')!;
    expect(Object.keys(create.parameters.properties)).toEqual(['id', 'name', 'address_city', 'address_zip']);
    // address and its city are required; zip is not.
    expect(create.parameters.required).toEqual(['name', 'address_city']);
  });

  it('flattens a nested object input of an MCP tool one level into parameters', () => {
    const note = (name: string, extra: Record<string, unknown>, required: string[]) => ({
      name,
      inputSchema: { type: 'object', properties: { note_id: { type: 'string' }, ...extra }, required },
    });
    const meta = {
      meta: {
        type: 'object',
        required: ['author'],
        properties: { author: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
      },
    };
    const { report, files } = buildDomainFiles(
      'notes.json',
      JSON.stringify({ tools: [note('get_note', {}, ['note_id']), note('update_note', meta, ['note_id', 'meta'])] }),
      { ...OPTS, name: 'notes' },
    );
    expect(report.flattened).toEqual([{ path: 'tools[1].inputSchema.properties.meta', columns: ['meta_author'] }]);
    expect(report.skipped).toEqual([
      {
        path: 'tools[1].inputSchema.properties.meta.properties.tags',
        reason: 'array field of a nested object input; left out (nested objects are flattened one level only)',
      },
    ]);
    const update = JSON.parse(files['tools.json']!).tools.find((t: { name: string }) => t.name === 'update_note');
    expect(update.parameters.required).toEqual(['note_id', 'meta_author']);
  });

  it('gives a create with no parent record a task, which the gate admits', async () => {
    const from = join(work, 'clinic.json');
    writeFileSync(from, JSON.stringify(SPEC));
    const { report, gate, dir } = await buildDomainFolder({ ...OPTS, from, out: join(work, 'clinic') });
    expect(report.tasks).toEqual([
      { id: 'clinic-create_patient-1', read: null, write: 'create_patient' },
      { id: 'clinic-update_patient-2', read: 'get_patient', write: 'update_patient' },
      { id: 'clinic-create_patient-3', read: null, write: 'create_patient' },
      { id: 'clinic-update_patient-4', read: 'get_patient', write: 'update_patient' },
    ]);
    expect(gate.tasks.map((t) => [t.reference_reward, t.noop_reward])).toEqual(Array(4).fill([1, 0]));
    expect(dir).not.toBeNull();
  });

  it(`caps the task count at ${MAX_TASKS}`, () => {
    expect(() => buildDomainFiles('clinic.json', JSON.stringify(SPEC), { ...OPTS, tasks: MAX_TASKS + 1 })).toThrow(
      `tasks: ${MAX_TASKS + 1} is not a whole number from 1 to ${MAX_TASKS} (the most one build makes)`,
    );
  });
});
