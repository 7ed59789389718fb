/**
 * `build-domain` on a 50-operation OpenAPI 3 spec (issue 19): ten resources, each with list, get,
 * create, update and delete, the later ones referencing the earlier. Prints the median wall time
 * of the scaffold alone (parse, read, tables, tools, synthetic database, policy, tasks; no files)
 * and the median time the gate takes on the result (database build, then every task's gold
 * replay and reference and do-nothing episodes).
 */
import { buildDomainFiles } from '../src/core/build-domain/index.ts';
import { buildDomain } from '../src/core/schema/domain.ts';
import { parseDomainJson, withToolsFile } from '../src/core/schema/declarative-tools.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { gateDomain } from '../src/core/gate/gate.ts';

const NOUNS = [
  'Branch',
  'Customer',
  'Account',
  'Card',
  'Merchant',
  'Payment',
  'Refund',
  'Statement',
  'Alert',
  'Ticket',
];

/** The spec: 10 schemas × 5 operations, as JSON text. */
export function fiftyOperationSpec(): string {
  const schemas: Record<string, unknown> = {};
  const paths: Record<string, unknown> = {};
  NOUNS.forEach((n, i) => {
    const lower = n.toLowerCase();
    const props: Record<string, unknown> = {
      id: { type: 'integer' },
      name: { type: 'string' },
      status: { type: 'string', enum: ['open', 'active', 'closed'] },
      amount: { type: 'number' },
      created: { type: 'string', format: 'date' },
      ...(i > 0 ? { [`${NOUNS[i - 1]!.toLowerCase()}Id`]: { type: 'integer' } } : {}),
    };
    schemas[n] = { type: 'object', required: ['name'], properties: props };
    const ref = { $ref: `#/components/schemas/${n}` };
    const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
    const idParam = [{ name: `${lower}Id`, in: 'path', required: true, schema: { type: 'integer' } }];
    paths[`/${lower}s`] = {
      get: {
        operationId: `list${n}s`,
        parameters: [{ name: 'status', in: 'query', schema: { type: 'string' } }],
        responses: { 200: { description: 'ok', ...json({ type: 'array', items: ref }) } },
      },
      post: {
        operationId: `create${n}`,
        requestBody: json(ref),
        responses: { 201: { description: 'ok', ...json(ref) } },
      },
    };
    paths[`/${lower}s/{${lower}Id}`] = {
      get: { operationId: `get${n}`, parameters: idParam, responses: { 200: { description: 'ok', ...json(ref) } } },
      patch: {
        operationId: `update${n}`,
        parameters: idParam,
        requestBody: json({
          type: 'object',
          properties: { status: { type: 'string', enum: ['open', 'active', 'closed'] }, amount: { type: 'number' } },
        }),
        responses: { 200: { description: 'ok', ...json(ref) } },
      },
      delete: { operationId: `delete${n}`, parameters: idParam, responses: { 204: { description: 'gone' } } },
    };
  });
  return JSON.stringify({ openapi: '3.0.3', info: { title: 'Bank', version: '1' }, paths, components: { schemas } });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Lines of the benchmark: scaffold `runs` times, gate the result `gates` times; medians. */
export async function buildDomainBenchLines(runs = 7, gates = 3): Promise<string[]> {
  const text = fiftyOperationSpec();
  const opts = { name: 'bank', language: 'en' as const, tasks: 12, seed: 0 };
  const scaffoldMs: number[] = [];
  let built = buildDomainFiles('bank.json', text, opts);
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    built = buildDomainFiles('bank.json', text, opts);
    scaffoldMs.push(performance.now() - t0);
  }
  const f = built.files;
  const def = withToolsFile(parseDomainJson('domain.json', f['domain.json']!), 'tools.json', f['tools.json']!);
  const domain = buildDomain(def, {
    policy: f['policy.md']!,
    schema: f['schema.sql']!,
    seed: f['seed.json']!,
    tasks: f['tasks.json']!,
  });
  const factory = await sqlJsFactory();
  const gateMs: number[] = [];
  let accepted = true;
  for (let i = 0; i < gates; i++) {
    const t0 = performance.now();
    const runtime = await DomainRuntime.create(domain, factory);
    const report = await gateDomain(runtime);
    gateMs.push(performance.now() - t0);
    accepted &&= report.accepted;
  }
  const rows = built.report.tables.reduce((n, t) => n + t.rows, 0);
  return [
    `  spec: ${built.report.tools.length} operations, ${built.report.tables.length} tables → ${rows} seed rows, ${built.report.tasks.length} tasks`,
    `    scaffold (no files, no gate)      median ${median(scaffoldMs).toFixed(1).padStart(7)} ms over ${runs} runs`,
    `    gate of the result (${accepted ? 'accepted' : 'REFUSED'})      median ${median(gateMs).toFixed(0).padStart(7)} ms over ${gates} runs`,
  ];
}
