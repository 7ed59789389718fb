/**
 * Declarative tools (tools.json) against the hand-written carrier tools: the same calls give the
 * same tool messages and the same write log, for good and bad arguments.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { carrier } from '../../../domains/carrier/domain.ts';
import { builtinDomainDir, loadDomain, loadDomainDir } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/index.ts';
import { declarativeTools, parseDeclarativeTools, withToolsFile } from '../../../src/core/schema/declarative-tools.ts';
import { toolSchema } from '../../../src/core/schema/domain.ts';
import type { ToolCall } from '../../../src/core/schema/index.ts';
import * as mini from '../../fixtures/mini-domain.ts';

const FILE = new URL('../../fixtures/declarative/carrier-tools.json', import.meta.url);
const TEXT = readFileSync(FILE, 'utf8');
const declared = parseDeclarativeTools('carrier-tools.json', TEXT);

let code: DomainRuntime;
let data: DomainRuntime;
const open: Environment[] = [];

beforeAll(async () => {
  const dir = builtinDomainDir('carrier');
  const byName = new Map(declared.map((t) => [t.name, t]));
  const asData = { ...carrier, tools: carrier.tools.map((t) => byName.get(t.name) ?? t) };
  const factory = await sqlJsFactory();
  code = await DomainRuntime.create(await loadDomainDir(dir, carrier), factory);
  data = await DomainRuntime.create(await loadDomainDir(dir, asData), factory);
});

afterEach(async () => {
  for (const env of open.splice(0)) await env.close();
});

/** Run the same calls in a fresh episode of each runtime; outcomes as [content, error, writes]. */
async function both(calls: Omit<ToolCall, 'id'>[]) {
  const runs = [];
  for (const runtime of [code, data]) {
    const env = await runtime.open();
    open.push(env);
    const outs = [];
    for (const [i, c] of calls.entries()) {
      const o = await env.call({ id: `c${i}`, ...c });
      outs.push({ content: o.content, error: o.error, writes: o.writes });
    }
    runs.push({ outs, log: [...env.writes] });
  }
  expect(runs[1]).toEqual(runs[0]);
  return runs[0]!;
}

describe('declarative tools match the hand-written carrier tools', () => {
  it('shows models the same parameter schemas', () => {
    for (const t of declared) {
      const hand = carrier.tools.find((h) => h.name === t.name)!;
      const [a, b] = [toolSchema(t), toolSchema(hand)];
      expect(a.function.parameters).toEqual(b.function.parameters);
      expect(a.function.description).toBe(b.function.description);
    }
  });

  it('find_customer_by_phone: same account, same errors', async () => {
    const { outs } = await both([
      { name: 'find_customer_by_phone', arguments: { phone: '138 1234-5678' } },
      { name: 'find_customer_by_phone', arguments: { phone: '1381234567' } },
      { name: 'find_customer_by_phone', arguments: { phone: '1381234567a' } },
      { name: 'find_customer_by_phone', arguments: { phone: '13800000000' } },
      { name: 'find_customer_by_phone', arguments: { phone: 13812345678 } },
    ]);
    expect(JSON.parse(outs[0]!.content)).toEqual({
      customer_id: 'C1001',
      name: '李娜',
      phone: '13812345678',
      status: 'active',
      plan_id: 'PL18',
      plan_name: '基础18元套餐',
      next_plan_id: null,
      prepaid_balance: 17,
    });
    expect(outs.slice(1).map((o) => o.content)).toEqual([
      'Error: phone must be 11 digits, got "1381234567"',
      'Error: phone must be 11 digits, got "1381234567a"',
      'Error: no customer with phone 13800000000',
      'Error: invalid arguments for find_customer_by_phone: phone: Invalid input: expected string, received number',
    ]);
  });

  it('change_plan: same result and write, same guarded errors', async () => {
    const { outs, log } = await both([
      { name: 'change_plan', arguments: { customer_id: 'C1008', plan_id: 'PL58' } },
      { name: 'change_plan', arguments: { customer_id: 'C1008', plan_id: 'PL58' } },
      { name: 'change_plan', arguments: { customer_id: 'C9999', plan_id: 'PL58' } },
      { name: 'change_plan', arguments: { customer_id: 'C1008', plan_id: 'PL99' } },
      { name: 'change_plan', arguments: { customer_id: 'C1008', plan_id: 'PL88' } },
      { name: 'change_plan', arguments: { customer_id: 'C1008' } },
    ]);
    expect(JSON.parse(outs[0]!.content)).toEqual({
      customer_id: 'C1008',
      plan_id: 'PL88',
      next_plan_id: 'PL58',
      effective_from: '2025-04-01',
    });
    expect(outs.slice(1).map((o) => [o.content, o.writes.length])).toEqual([
      ['Error: plan PL58 is already scheduled for customer C1008 from 2025-04-01', 0],
      ['Error: customer C9999 not found', 0],
      ['Error: plan PL99 not found', 0],
      ['Error: customer C1008 is already on plan PL88', 0],
      ['Error: invalid arguments for change_plan: plan_id: Invalid input: expected string, received undefined', 0],
    ]);
    expect(log.map((e) => [e.table, e.op, e.key, e.column, e.before, e.after])).toEqual([
      ['customers', 'update', { customer_id: 'C1008' }, 'next_plan_id', null, 'PL58'],
    ]);
  });

  it('file_dispute: same new row and ids, same errors', async () => {
    const { outs, log } = await both([
      { name: 'file_dispute', arguments: { charge_id: 'CH00020', reason: 'not_subscribed' } },
      { name: 'file_dispute', arguments: { charge_id: 'CH00021', reason: 'wrong_amount' } },
      { name: 'file_dispute', arguments: { charge_id: 'CH99999', reason: 'wrong_amount' } },
      { name: 'file_dispute', arguments: { charge_id: 'CH00020', reason: 'too_expensive' } },
    ]);
    expect(outs.map((o) => o.content)).toEqual([
      '{"dispute_id":"D0003","charge_id":"CH00020","reason":"not_subscribed","status":"open","created_at":"2025-03-15T10:00:00+08:00"}',
      '{"dispute_id":"D0004","charge_id":"CH00021","reason":"wrong_amount","status":"open","created_at":"2025-03-15T10:00:00+08:00"}',
      'Error: charge CH99999 not found',
      'Error: invalid arguments for file_dispute: reason: Invalid option: expected one of "not_subscribed"|"service_not_received"|"wrong_amount"|"duplicate_charge"',
    ]);
    expect(log.filter((e) => e.table === 'charges').map((e) => [e.key, e.column, e.before, e.after])).toEqual([
      [{ charge_id: 'CH00020' }, 'disputed', 0, 1],
      [{ charge_id: 'CH00021' }, 'disputed', 0, 1],
    ]);
    expect(log.filter((e) => e.table === 'disputes').length).toBe(10);
  });
});

describe('tools file validation names the file and field', () => {
  const tool = (over: Record<string, unknown>) => ({
    tools: [
      {
        name: 'get_x',
        kind: 'read',
        description: 'x',
        parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        steps: [],
        result: { sql: 'SELECT * FROM x WHERE id = ?', args: ['id'] },
        ...over,
      },
    ],
  });
  const err = (raw: unknown) => {
    try {
      declarativeTools('d/tools.json', raw);
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };

  it('rejects malformed shapes, SQL and references with the field path', () => {
    expect(err({ tools: [] })).toBe('d/tools.json: tools: Too small: expected array to have >=1 items');
    expect(err(tool({ kind: 'delete' }))).toBe(
      'd/tools.json: tools[0].kind: Invalid option: expected one of "read"|"write"',
    );
    expect(err(tool({ result: { sql: "SELECT * FROM x WHERE id = '" + 'a' + "'", args: ['id'] } }))).toBe(
      'd/tools.json: tools[0].result.sql: has 0 "?" placeholders but 1 args',
    );
    expect(err(tool({ result: { sql: 'SELECT * FROM x WHERE id = :id', args: [] } }))).toBe(
      'd/tools.json: tools[0].result.sql: named placeholders (:name) are not allowed; use ? and args',
    );
    expect(err(tool({ result: { sql: 'SELECT 1; DROP TABLE x', args: [] } }))).toBe(
      'd/tools.json: tools[0].result.sql: only one statement is allowed',
    );
    expect(err(tool({ result: { sql: 'SELECT * FROM x WHERE id = ?', args: ['ids'] } }))).toBe(
      'd/tools.json: tools[0].result.args[0]: unknown parameter "ids" (parameters: id)',
    );
    expect(err(tool({ steps: [{ write: 'DELETE FROM x WHERE id = ?', args: ['id'] }] }))).toBe(
      'd/tools.json: tools[0].steps[0].write: a read tool cannot write',
    );
    expect(err(tool({ kind: 'write', steps: [{ write: 'SELECT * FROM x WHERE id = ?', args: ['id'] }] }))).toBe(
      'd/tools.json: tools[0].steps[0].write: must start with INSERT or UPDATE or DELETE, got "SELECT"',
    );
    expect(err(tool({ steps: [{ fail_if: 'SELECT 1 WHERE ? = 1', args: ['r.n'], error: 'e' }] }))).toBe(
      'd/tools.json: tools[0].steps[0].args[0]: "r.n" names no earlier lookup (lookups so far: none)',
    );
    expect(err(tool({ steps: [{ lookup: 'r', sql: 'SELECT 1 AS n', args: [], error: 'no {id} for {idx}' }] }))).toBe(
      'd/tools.json: tools[0].steps[0].error: unknown parameter "idx" (parameters: id)',
    );
    // A lookup's own error cannot name its row: there is none when it fires.
    expect(err(tool({ steps: [{ lookup: 'r', sql: 'SELECT 1 AS n', args: [], error: 'no {r.n}' }] }))).toBe(
      'd/tools.json: tools[0].steps[0].error: "r.n" names no earlier lookup (lookups so far: none)',
    );
    expect(err(tool({ parameters: { type: 'string', properties: {} } }))).toBe(
      'd/tools.json: tools[0].parameters.type: Invalid input: expected "object"',
    );
    expect(err({ tools: [tool({}).tools[0], tool({}).tools[0]] })).toBe(
      'd/tools.json: tools[1].name: tool "get_x" is defined twice',
    );
    expect(() => parseDeclarativeTools('d/tools.json', '{"tools": [')).toThrow('d/tools.json: not valid JSON');
  });

  it('binds a value that looks like SQL as data', async () => {
    const env = await data.open();
    open.push(env);
    const out = await env.call({
      id: 'x',
      name: 'change_plan',
      arguments: { customer_id: "C1008'; DELETE FROM customers; --", plan_id: 'PL58' },
    });
    expect(out.content).toBe("Error: customer C1008'; DELETE FROM customers; -- not found");
    expect((await env.query('SELECT COUNT(*) AS n FROM customers'))[0]!.n).toBeGreaterThan(0);
  });
});

describe('a code-free domain folder (domain.json + tools.json)', () => {
  it('loads through the Node loader and runs its tools in the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-decl-'));
    try {
      const files: Record<string, unknown> = {
        'domain.json': {
          name: 'mini_data',
          language: 'en-US',
          now: '2025-01-15T09:00:00Z',
          greeting: 'Hello, how can I help you today?',
        },
        'tools.json': {
          tools: [
            {
              name: 'find_account',
              kind: 'read',
              description: 'Find an account by phone number.',
              parameters: { type: 'object', properties: { phone: { type: 'string' } }, required: ['phone'] },
              steps: [
                {
                  lookup: 'a',
                  sql: 'SELECT account_id FROM accounts WHERE phone = ?',
                  args: ['phone'],
                  error: 'no account with phone {phone}',
                },
              ],
              result: {
                sql: 'SELECT account_id, name, balance FROM accounts WHERE account_id = ?',
                args: ['a.account_id'],
              },
            },
            {
              name: 'pay',
              kind: 'write',
              description: 'Pay an amount off the balance.',
              parameters: {
                type: 'object',
                properties: { account_id: { type: 'string' }, amount: { type: 'integer', exclusiveMinimum: 0 } },
                required: ['account_id', 'amount'],
              },
              steps: [
                {
                  lookup: 'a',
                  sql: 'SELECT balance FROM accounts WHERE account_id = ?',
                  args: ['account_id'],
                  error: 'no account {account_id}',
                },
                {
                  fail_if: 'SELECT 1 WHERE ? > ?',
                  args: ['amount', 'a.balance'],
                  error: 'amount {amount} exceeds the balance {a.balance}',
                },
                {
                  write: 'UPDATE accounts SET balance = balance - ? WHERE account_id = ?',
                  args: ['amount', 'account_id'],
                },
                { write: 'INSERT INTO payments (account_id, amount) VALUES (?, ?)', args: ['account_id', 'amount'] },
              ],
              result: { sql: 'SELECT ? AS account_id, ? AS paid', args: ['account_id', 'amount'] },
            },
          ],
        },
        'seed.json': mini.MINI_SEED,
        'tasks.json': [],
      };
      for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(body));
      writeFileSync(join(dir, 'schema.sql'), mini.MINI_SCHEMA);
      writeFileSync(join(dir, 'policy.md'), mini.MINI_POLICY);
      const domain = await loadDomain(dir);
      expect([domain.name, domain.now, domain.roles, domain.tools.map((t) => t.name)]).toEqual([
        'mini_data',
        mini.MINI_NOW,
        ['inbound'],
        ['find_account', 'pay'],
      ]);
      const env = await (await DomainRuntime.create(domain, await sqlJsFactory())).open();
      open.push(env);
      const outs = [];
      for (const [name, args] of [
        ['find_account', { phone: '5550001' }],
        ['pay', { account_id: 'A2', amount: 6 }],
        ['pay', { account_id: 'A2', amount: 0 }],
        ['pay', { account_id: 'A1', amount: 10 }],
      ] as const) {
        outs.push((await env.call({ id: name, name, arguments: args })).content);
      }
      expect(outs).toEqual([
        '{"account_id":"A1","name":"Ada","balance":30}',
        'Error: amount 6 exceeds the balance 5',
        'Error: invalid arguments for pay: amount: Too small: expected number to be >0',
        '{"account_id":"A1","paid":10}',
      ]);
      expect(env.writes.map((e) => [e.table, e.op, e.column, e.before, e.after])).toEqual([
        ['accounts', 'update', 'balance', 30, 20],
        ['payments', 'insert', 'payment_id', null, 1],
        ['payments', 'insert', 'account_id', null, 'A1'],
        ['payments', 'insert', 'amount', null, 10],
      ]);
      writeFileSync(
        join(dir, 'domain.json'),
        JSON.stringify({ name: 'x', language: 'en', now: 'soon', greeting: 'hi' }),
      );
      await expect(loadDomain(dir)).rejects.toThrow(`${join(dir, 'domain.json')}: now: Invalid ISO datetime`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a tools.json tool that the domain code already defines', () => {
    expect(() => withToolsFile(carrier, 'domains/carrier/tools.json', TEXT)).toThrow(
      'domains/carrier/tools.json: tools[0].name: tool "find_customer_by_phone" is already defined by the domain\'s code',
    );
  });
});

describe('data rule checks (rule_checks in tools.json) match the hand-written carrier rule R5', () => {
  /** Carrier R5 ("no plan change while the customer has an overdue bill") written as data. */
  const R5 = {
    rule: 'R5',
    description: 'A plan change is not scheduled while the customer has an overdue bill.',
    policy: '客户有逾期账单时不得办理套餐变更',
    tools: ['change_plan'],
    violation_if:
      "SELECT group_concat(bill_id, ', ') AS bills FROM (SELECT bill_id FROM bills WHERE customer_id = ? AND status = 'overdue' ORDER BY bill_id) HAVING COUNT(*) > 0",
    args: ['customer_id'],
    message: 'plan change scheduled for customer {customer_id} while bills {row.bills} are overdue',
  };

  /** Carrier without the tools the fixture declares, and without rule checks: the base a tools file adds to. */
  const names = new Set(declared.map((t) => t.name));
  const base = { ...carrier, tools: carrier.tools.filter((t) => !names.has(t.name)), ruleChecks: [] };

  it('reports the same violations as the code check, and none where the rule holds', async () => {
    const codeR5 = carrier.ruleChecks!.filter((r) => r.description.startsWith('A plan change'));
    const withData = withToolsFile(
      base,
      'tools.json',
      JSON.stringify({ tools: JSON.parse(TEXT).tools, rule_checks: [R5] }),
    );
    const dir = builtinDomainDir('carrier');
    const factory = await sqlJsFactory();
    const runtimes = [
      await DomainRuntime.create(await loadDomainDir(dir, { ...carrier, ruleChecks: codeR5 }), factory),
      await DomainRuntime.create(
        await loadDomainDir(dir, {
          ...withData,
          tools: carrier.tools
            .filter((t) => t.name !== 'change_plan')
            .concat(withData.tools.filter((t) => t.name === 'change_plan')),
        }),
        factory,
      ),
    ];
    const seen = [];
    for (const rt of runtimes) {
      const env = await rt.open();
      open.push(env);
      const outs = [];
      for (const args of [
        { customer_id: 'C1007', plan_id: 'PL58' },
        { customer_id: 'C1008', plan_id: 'PL58' },
      ])
        outs.push((await env.call({ id: 'c', name: 'change_plan', arguments: args })).violations);
      seen.push(outs);
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]).toEqual([
      [
        {
          rule: 'R5',
          message: 'plan change scheduled for customer C1007 while bills B10027 are overdue',
          policy: '客户有逾期账单时不得办理套餐变更',
        },
      ],
      [],
    ]);
  });

  it('refuses a malformed data rule check naming the field', () => {
    const file = (check: Record<string, unknown>) =>
      JSON.stringify({ tools: JSON.parse(TEXT).tools, rule_checks: [{ ...R5, ...check }] });
    const load = (check: Record<string, unknown>) => () => withToolsFile(base, 'tools.json', file(check));
    expect(load({ tools: ['cancel_everything'] })).toThrow(
      /^tools\.json: rule_checks\[0\]\.tools\[0\]: unknown tool "cancel_everything" \(tools: /,
    );
    expect(load({ args: ['plan'] })).toThrow(
      'tools.json: rule_checks[0].args[0]: unknown parameter "plan" (parameters: customer_id, plan_id)',
    );
    expect(load({ violation_if: "SELECT 1 FROM bills WHERE customer_id = '' || ? || ''; DELETE FROM bills" })).toThrow(
      'tools.json: rule_checks[0].violation_if: only one statement is allowed',
    );
    expect(load({ message: 'bills {row.bills} of {customer}' })).toThrow(
      'tools.json: rule_checks[0].message: unknown parameter "customer" (parameters: customer_id, plan_id)',
    );
  });
});
