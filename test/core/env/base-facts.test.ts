/**
 * RuleCheckContext.baseFact: a rule check's fact of the episode's starting state is computed once
 * and shared by the episodes opened from the same pristine database, and computed afresh (with the
 * same result an unshared computation gives) once the episode wrote one of the fact's tables: by a
 * tool call, by a snapshot restored into a forked episode, or through raw access to the database.
 * An episode with an initial state of its own does not share the pristine database's facts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { buildDomain, defineDomain, defineTool, type RuleCheck } from '../../../src/core/schema/domain.ts';

const SCHEMA = `
CREATE TABLE customers (id TEXT PRIMARY KEY, vip INTEGER NOT NULL);
CREATE TABLE payments (id INTEGER PRIMARY KEY, customer_id TEXT NOT NULL, amount INTEGER NOT NULL);
`;
const SEED = JSON.stringify({ customers: [{ id: 'C1', vip: 1 }] });
const TASKS = JSON.stringify([
  { id: 'plain', user_scenario: { instructions: 'Pay.' } },
  {
    id: 'not-vip',
    user_scenario: { instructions: 'Pay.' },
    initial_state: { rows: { customers: [{ id: 'C1', vip: 0 }] } },
  },
]);

const pay = defineTool({
  name: 'pay',
  kind: 'write',
  description: 'Record a payment.',
  params: z.object({ customer_id: z.string(), amount: z.number().int() }),
  async run({ db }, { customer_id, amount }) {
    await db.run('INSERT INTO payments (customer_id, amount) VALUES (?, ?)', [customer_id, amount]);
    return 'paid';
  },
});
const setVip = defineTool({
  name: 'set_vip',
  kind: 'write',
  description: 'Set the VIP flag.',
  params: z.object({ customer_id: z.string(), vip: z.number().int() }),
  async run({ db }, { customer_id, vip }) {
    await db.run('UPDATE customers SET vip = ? WHERE id = ?', [vip, customer_id]);
    return 'set';
  },
});

/** How many times the fact below was computed (read from the database). */
let computed = 0;
/** How the fact below was handed to the check: its promise, or its settled value as it is. */
const handed: ('promise' | 'value')[] = [];
/** A rule reporting the VIP flag it read as a fact of the starting state (table `customers`). */
const vipFact: RuleCheck = {
  rule: 'vip-fact',
  description: 'Reports the payer’s VIP flag.',
  tools: ['pay'],
  async check(ctx) {
    const id = String(ctx.args.customer_id);
    const fact = ctx.baseFact(`vip ${id}`, ['customers'], async () => {
      computed++;
      return (await ctx.db.one('SELECT vip FROM customers WHERE id = ?', [id]))?.vip ?? null;
    });
    handed.push(fact instanceof Promise ? 'promise' : 'value');
    return `vip ${String(await fact)}`;
  },
};

const domain = buildDomain(
  defineDomain({
    name: 'facts',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15, 12),
    tools: [pay, setVip],
    ruleChecks: [vipFact],
    greeting: 'Hello.',
  }),
  { policy: '# Policy\n', schema: SCHEMA, seed: SEED, tasks: TASKS },
);

describe('RuleCheckContext.baseFact', () => {
  let runtime: DomainRuntime;
  const envs: Environment[] = [];
  const open = async (taskId = 'plain') => {
    const env = await runtime.open(runtime.domain.tasks.find((t) => t.id === taskId));
    envs.push(env);
    return env;
  };
  let n = 0;
  const message = async (env: Environment, name: string, args: Record<string, unknown>) => {
    const out = await env.call({ id: `c${++n}`, name, arguments: args }, 'assistant', n);
    expect(out.error).toBe(false);
    return out.violations.map((v) => v.message);
  };
  const payC1 = (env: Environment) => message(env, 'pay', { customer_id: 'C1', amount: 5 });

  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain, await inProcessSqlDbFactory());
  });
  afterAll(async () => {
    for (const env of envs) await env.close();
    await runtime.close();
  });

  it('computes a fact once for the episodes of one starting state, afresh after a write to its table', async () => {
    computed = 0;
    handed.length = 0;
    expect(await payC1(await open())).toEqual(['vip 1']);
    expect(await payC1(await open())).toEqual(['vip 1']);
    expect(computed).toBe(1);
    // A write to another table (payments) keeps the shared fact.
    const paid = await open();
    expect(await payC1(paid)).toEqual(['vip 1']);
    expect(await payC1(paid)).toEqual(['vip 1']);
    expect(computed).toBe(1);
    // A write to `customers`: computed from this episode's database, not kept.
    const changed = await open();
    await message(changed, 'set_vip', { customer_id: 'C1', vip: 0 });
    expect(await payC1(changed)).toEqual(['vip 0']);
    expect(await payC1(changed)).toEqual(['vip 0']);
    expect(computed).toBe(3);
    // Other episodes still get the starting state's value, from the shared fact.
    expect(await payC1(await open())).toEqual(['vip 1']);
    expect(computed).toBe(3);
    // A kept fact once settled comes as its value; one being computed (first, or afresh) as a promise.
    expect(handed).toEqual(['promise', 'value', 'value', 'value', 'promise', 'promise', 'value']);
  });

  it('gives a forked episode the check results of the episode it was forked from', async () => {
    const source = await open();
    await message(source, 'set_vip', { customer_id: 'C1', vip: 0 });
    const snap = await source.snapshot();
    const unforked = await payC1(source);
    const fork = await open();
    expect(await payC1(fork)).toEqual(['vip 1']);
    await fork.restore(snap);
    expect(await payC1(fork)).toEqual(unforked);
    expect(unforked).toEqual(['vip 0']);
    // Restoring a snapshot without such a write brings the shared fact back.
    const clean = await open();
    const cleanSnap = await clean.snapshot();
    const again = await open();
    await message(again, 'set_vip', { customer_id: 'C1', vip: 0 });
    await again.restore(cleanSnap);
    const before = computed;
    expect(await payC1(again)).toEqual(['vip 1']);
    expect(computed).toBe(before);
  });

  it('does not share the pristine database’s facts with an episode of another initial state', async () => {
    expect(await payC1(await open('not-vip'))).toEqual(['vip 0']);
    expect(await payC1(await open())).toEqual(['vip 1']);
  });

  it('computes afresh once the database was written around the tools', async () => {
    const env = await open();
    expect(await payC1(env)).toEqual(['vip 1']);
    await env.query('UPDATE customers SET vip = 2 WHERE id = ?', ['C1']);
    expect(await payC1(env)).toEqual(['vip 2']);
    const raw = await open();
    await raw.db.run('UPDATE customers SET vip = 3 WHERE id = ?', ['C1']);
    expect(await payC1(raw)).toEqual(['vip 3']);
    expect(await payC1(await open())).toEqual(['vip 1']);
  });

  it('does not keep a failed computation', async () => {
    let fail = true;
    const flaky: RuleCheck = {
      rule: 'flaky',
      description: 'Fails to compute once.',
      tools: ['pay'],
      async check(ctx) {
        return String(
          await ctx.baseFact('flaky', ['customers'], async () => {
            if (fail) throw new Error('read failed');
            return 'ok';
          }),
        );
      },
    };
    const rt = runtime.withTasks(runtime.domain.tasks);
    (rt.domain as { ruleChecks?: readonly RuleCheck[] }).ruleChecks = [flaky];
    const env = await rt.open();
    try {
      await expect(env.call({ id: 'f1', name: 'pay', arguments: { customer_id: 'C1', amount: 1 } })).rejects.toThrow(
        'read failed',
      );
      fail = false;
      expect(
        (await env.call({ id: 'f2', name: 'pay', arguments: { customer_id: 'C1', amount: 1 } })).violations,
      ).toEqual([{ rule: 'flaky', message: 'ok' }]);
    } finally {
      await env.close();
      await rt.close();
    }
  });
});
