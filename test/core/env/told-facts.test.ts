/**
 * ToolContext.tell / RuleCheckContext.told: what a write tool tells reaches the `after` checks of
 * the same call and no other (not the `before` checks, not the next call); a tool is given no
 * `tell` when no `after` check will see the call; a `syncState` that writes after the tool drops
 * what it told (the state it spoke of may have changed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { buildDomain, defineDomain, defineTool, type RuleCheck, type ToolDb } from '../../../src/core/schema/domain.ts';

const SCHEMA = `
CREATE TABLE customers (id TEXT PRIMARY KEY, paid INTEGER NOT NULL);
CREATE TABLE payments (id INTEGER PRIMARY KEY, customer_id TEXT NOT NULL, amount INTEGER NOT NULL);
`;
const SEED = JSON.stringify({ customers: [{ id: 'C1', paid: 0 }] });
const TASKS = JSON.stringify([{ id: 'plain', user_scenario: { instructions: 'Pay.' } }]);

/** Whether each `pay` call was handed a `tell`, in order. */
const handed: boolean[] = [];

const pay = defineTool({
  name: 'pay',
  kind: 'write',
  description: 'Record a payment; tells its amount.',
  params: z.object({ customer_id: z.string(), amount: z.number().int() }),
  async run({ db, tell }, { customer_id, amount }) {
    handed.push(tell !== undefined);
    await db.run('INSERT INTO payments (customer_id, amount) VALUES (?, ?)', [customer_id, amount]);
    tell?.(`amount ${customer_id}`, amount);
    return 'paid';
  },
});
const note = defineTool({
  name: 'note',
  kind: 'write',
  description: 'Record a payment of 0; tells nothing.',
  params: z.object({ customer_id: z.string() }),
  async run({ db }, { customer_id }) {
    await db.run('INSERT INTO payments (customer_id, amount) VALUES (?, 0)', [customer_id]);
    return 'noted';
  },
});

/** Reports what the call told, as `key=value` pairs. */
const toldAfter: RuleCheck = {
  rule: 'told-after',
  description: 'Reports what the tool told.',
  async check(ctx) {
    return `after: ${[...ctx.told].map(([k, v]) => `${k}=${String(v)}`).join(', ')}`;
  },
};
/** Reports how many facts a `before` check sees. */
const toldBefore: RuleCheck = {
  rule: 'told-before',
  description: 'Reports the facts seen before the tool.',
  when: 'before',
  tools: ['pay'],
  async check(ctx) {
    return `before: ${ctx.told.size}`;
  },
};

function domainWith(syncState?: (db: ToolDb) => Promise<void>) {
  return buildDomain(
    defineDomain({
      name: 'told',
      language: 'en-US',
      roles: ['inbound'],
      now: Date.UTC(2025, 0, 15, 12),
      tools: [pay, note],
      ruleChecks: [toldBefore, toldAfter],
      greeting: 'Hello.',
      ...(syncState ? { syncState } : {}),
    }),
    { policy: '# Policy\n', schema: SCHEMA, seed: SEED, tasks: TASKS },
  );
}

/** A sync that writes only once the payments reach 100 (the customer's total). */
async function syncTotals(db: ToolDb): Promise<void> {
  await db.run(
    'UPDATE customers SET paid = (SELECT sum(amount) FROM payments WHERE customer_id = customers.id) WHERE (SELECT sum(amount) FROM payments WHERE customer_id = customers.id) >= 100',
  );
}

describe('ToolContext.tell and RuleCheckContext.told', () => {
  const runtimes: DomainRuntime[] = [];
  const envs: Environment[] = [];
  let plain: DomainRuntime;
  let synced: DomainRuntime;
  const open = async (rt: DomainRuntime) => {
    const env = await rt.open();
    envs.push(env);
    return env;
  };
  let n = 0;
  const violations = async (env: Environment, name: string, args: Record<string, unknown>, checks = true) => {
    const out = await env.call({ id: `c${++n}`, name, arguments: args }, 'assistant', n, { checks });
    expect(out.error).toBe(false);
    return out.violations.map((v) => v.message);
  };

  beforeAll(async () => {
    plain = await DomainRuntime.create(domainWith(), await inProcessSqlDbFactory());
    synced = await DomainRuntime.create(domainWith(syncTotals), await inProcessSqlDbFactory());
    runtimes.push(plain, synced);
  });
  afterAll(async () => {
    for (const env of envs) await env.close();
    for (const rt of runtimes) await rt.close();
  });

  it("hands the call's after checks what the tool told, and nothing to the before checks or the next call", async () => {
    const env = await open(plain);
    handed.length = 0;
    expect(await violations(env, 'pay', { customer_id: 'C1', amount: 5 })).toEqual(['before: 0', 'after: amount C1=5']);
    expect(await violations(env, 'note', { customer_id: 'C1' })).toEqual(['after: ']);
    expect(await violations(env, 'pay', { customer_id: 'C1', amount: 7 })).toEqual(['before: 0', 'after: amount C1=7']);
    expect(handed).toEqual([true, true]);
  });

  it('gives the tool no tell when no after check will see the call', async () => {
    const env = await open(plain);
    handed.length = 0;
    expect(await violations(env, 'pay', { customer_id: 'C1', amount: 5 }, false)).toEqual([]);
    const out = await env.call({ id: 'u1', name: 'pay', arguments: { customer_id: 'C1', amount: 5 } }, 'user', 0);
    // `pay` is not a user tool: refused before it runs.
    expect(out.error).toBe(true);
    expect(handed).toEqual([false]);
  });

  it('drops what the tool told when the sync writes after it', async () => {
    const env = await open(synced);
    expect(await violations(env, 'pay', { customer_id: 'C1', amount: 60 })).toEqual([
      'before: 0',
      'after: amount C1=60',
    ]);
    // The sync now sets the total (a write of its own): the told amount is dropped.
    expect(await violations(env, 'pay', { customer_id: 'C1', amount: 40 })).toEqual(['before: 0', 'after: ']);
    expect((await env.query('SELECT paid FROM customers'))[0]).toEqual({ paid: 100 });
  });
});
