/**
 * Issue 11, item 4: nothing the agent (or caller) puts in tool arguments makes a rollout invalid.
 * Every tool of every domain (carrier, tau2-airline, tau2-retail, tau2-telecom) is called with arguments shaped
 * by its own JSON schema but filled with edge values: 1e-9, -0, huge numbers, "NaN" strings,
 * empty, unicode and very long strings, wrong types, missing and extra fields, mixed with the
 * values its tasks' reference solutions use (so calls get past the lookups into the writes).
 * Each call must come back as an outcome (a result or an `Error: …` tool message), never as an
 * exception, which the episode loop would turn into an invalid rollout.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { loadTau2Domain } from '../../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { toolSchema, toolsFor, type Domain } from '../../src/core/schema/domain.ts';
import type { Requestor } from '../../src/core/schema/task.ts';
import { tau2DataDir } from '../domains/tau2-helpers.ts';
import { testData } from '../fixtures/data.ts';

type Json = Record<string, unknown>;

const NUMBERS = [1e-9, -1e-9, -0, 0, 0.005, 1.005, -1, 1, 2 ** 53 + 1, 1e300, -1e300, Number.MAX_VALUE, 5e-324];
const STRINGS = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-0',
  '1e-9',
  '0x10',
  '\u0000',
  'é\u0301',
  '😀',
  '好的',
  '\u202e',
  "' OR 1=1 --",
  '%',
  'x'.repeat(10_000),
];
const WRONG = [null, true, false, [], {}, [1], { a: 1 }];

/** Every value a key takes in the task's reference actions, by key name (valid ids and amounts). */
function knownValues(domain: Domain): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const walk = (key: string, v: unknown) => {
    if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Json)) walk(Array.isArray(v) ? key : k, x);
      return;
    }
    const list = out.get(key) ?? [];
    if (!list.includes(v) && list.length < 20) list.push(v);
    out.set(key, list);
  };
  for (const t of domain.tasks) for (const a of t.evaluation_criteria?.actions ?? []) walk('', a.arguments);
  return out;
}

/** An arbitrary for a JSON-schema node: mostly schema-shaped edge values, sometimes wrong types. */
function fromSchema(schema: Json, key: string, known: Map<string, unknown[]>, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.constantFrom<unknown>(...WRONG, ...NUMBERS.slice(0, 3), ...STRINGS.slice(0, 3));
  const seen = known.get(key) ?? [];
  const options: fc.Arbitrary<unknown>[] = [];
  if (seen.length) options.push(fc.constantFrom(...seen));
  const type = schema.type;
  if (Array.isArray(schema.enum)) options.push(fc.constantFrom(...(schema.enum as unknown[])));
  if (Array.isArray(schema.anyOf)) {
    for (const s of schema.anyOf as Json[]) options.push(fromSchema(s, key, known, depth));
  } else if (type === 'number' || type === 'integer') {
    options.push(fc.constantFrom(...NUMBERS), fc.double(), fc.integer());
  } else if (type === 'string') {
    options.push(fc.constantFrom(...STRINGS), fc.string({ unit: 'binary', maxLength: 40 }));
  } else if (type === 'boolean') {
    options.push(fc.boolean());
  } else if (type === 'array' && depth < 4) {
    const items = (schema.items as Json | undefined) ?? {};
    options.push(fc.array(fromSchema(items, key, known, depth + 1), { maxLength: 4 }));
  } else if (type === 'object' && depth < 4) {
    options.push(objectFromSchema(schema, known, depth + 1));
  }
  if (options.length === 0) options.push(wrong);
  return fc.oneof({ arbitrary: fc.oneof(...options), weight: 6 }, { arbitrary: wrong, weight: 1 });
}

function objectFromSchema(schema: Json, known: Map<string, unknown[]>, depth = 0): fc.Arbitrary<Json> {
  const props = (schema.properties as Record<string, Json> | undefined) ?? {};
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(props)) model[k] = fromSchema(s, k, known, depth);
  const required = (schema.required as string[] | undefined) ?? [];
  // Required keys are usually present; any key may be missing; sometimes an extra key.
  return fc
    .tuple(
      fc.record(model, { requiredKeys: [] }),
      fc.record(Object.fromEntries(required.map((k) => [k, model[k]!])) as Record<string, fc.Arbitrary<unknown>>),
      fc.boolean(),
      fc.option(fc.constantFrom<[string, unknown]>(['extra', 1], ['__proto__', { polluted: true }], ['', ''])),
    )
    .map(([some, req, keepRequired, extra]) => {
      const out: Json = keepRequired ? { ...some, ...req } : { ...some };
      if (extra) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, writable: true });
      return out;
    });
}

/**
 * A reference call of the tool with one or two of its arguments replaced by schema-shaped edge
 * values or removed: calls that pass the lookups and reach the tool's writes.
 */
function mutatedReference(references: Json[], params: Json, known: Map<string, unknown[]>): fc.Arbitrary<Json> {
  const props = (params.properties as Record<string, Json> | undefined) ?? {};
  const keys = Object.keys(props);
  if (references.length === 0 || keys.length === 0) return objectFromSchema(params, known);
  const change = fc.tuple(
    fc.constantFrom(...keys),
    fc.oneof(
      { arbitrary: fc.constant<unknown>(undefined), weight: 1 },
      { arbitrary: fc.constantFrom<unknown>(...NUMBERS, ...STRINGS.slice(0, 12), ...WRONG), weight: 4 },
    ),
  );
  return fc
    .tuple(fc.constantFrom(...references), fc.array(change, { minLength: 1, maxLength: 2 }))
    .map(([ref, changes]) => {
      const out: Json = structuredClone(ref);
      for (const [k, v] of changes) {
        if (v === undefined) delete out[k];
        else out[k] = v;
      }
      return out;
    });
}

async function fuzzDomain(domain: Domain, runs: number): Promise<{ calls: number; writes: number }> {
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const known = knownValues(domain);
  let calls = 0;
  let writes = 0;
  try {
    for (const actor of ['assistant', 'user'] as Requestor[]) {
      for (const tool of toolsFor(domain, actor)) {
        const params = toolSchema(tool).function.parameters as Json;
        const references = domain.tasks.flatMap((t) =>
          (t.evaluation_criteria?.actions ?? []).filter((a) => a.name === tool.name).map((a) => a.arguments as Json),
        );
        const args = fc.oneof(objectFromSchema(params, known), mutatedReference(references, params, known));
        let env = await runtime.open(domain.tasks[0]);
        try {
          await fc.assert(
            fc.asyncProperty(args, async (args) => {
              calls++;
              // A fresh database every 25 calls, so writes do not pile up.
              if (calls % 25 === 0) {
                await env.close();
                env = await runtime.open(domain.tasks[calls % domain.tasks.length]);
              }
              let outcome: Awaited<ReturnType<typeof env.call>>;
              try {
                outcome = await env.call({ id: `f${calls}`, name: tool.name, arguments: args }, actor);
              } catch (e) {
                throw new Error(
                  `${domain.name} ${tool.name}(${JSON.stringify(args).slice(0, 300)}) threw: ${(e as Error).message}`,
                );
              }
              expect(typeof outcome.content).toBe('string');
              expect(outcome.error).toBe(outcome.content.startsWith('Error: '));
              if (outcome.writes.length) writes++;
            }),
            { numRuns: runs, seed: 11, endOnFailure: true },
          );
        } finally {
          await env.close();
        }
      }
    }
  } finally {
    await runtime.close();
  }
  return { calls, writes };
}

describe('tool argument fuzz (every tool of every domain)', () => {
  it('carrier: no argument makes a tool throw', async () => {
    const { calls, writes } = await fuzzDomain(await loadBuiltinDomain('carrier'), 300);
    expect(calls).toBeGreaterThan(3000);
    // Some fuzzed calls get through to real writes (the fuzz reaches the tools' write paths).
    expect(writes).toBeGreaterThan(0);
  });

  // tau2-bench's real data (test/fixtures/data.ts); skipped without it.
  describe('tau2 domains', { tags: ['tau2-data'] }, () => {
    let tau2: { airline: Domain; retail: Domain; telecom: Domain };
    beforeAll(async () => {
      tau2 = {
        airline: await loadTau2Domain('tau2-airline', tau2DataDir('airline')),
        retail: await loadTau2Domain('tau2-retail', tau2DataDir('retail')),
        telecom: await loadTau2Domain('tau2-telecom', testData('telecom')),
      };
    });

    it('tau2-airline: no argument makes a tool throw', async () => {
      const { calls, writes } = await fuzzDomain(tau2.airline, 300);
      expect(calls).toBeGreaterThan(3000);
      // Some fuzzed calls get through to real writes (the fuzz reaches the tools' write paths).
      expect(writes).toBeGreaterThan(0);
    });

    it('tau2-retail: no argument makes a tool throw', async () => {
      const { calls, writes } = await fuzzDomain(tau2.retail, 300);
      expect(calls).toBeGreaterThan(3000);
      // Some fuzzed calls get through to real writes (the fuzz reaches the tools' write paths).
      expect(writes).toBeGreaterThan(0);
    });

    it('tau2-telecom: no argument makes a tool of either side throw', async () => {
      const { calls, writes } = await fuzzDomain(tau2.telecom, 100);
      expect(calls).toBeGreaterThan(3000);
      expect(writes).toBeGreaterThan(0);
    });
  });
});
