import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inProcessSqlDbFactory, workerSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { diffStates } from '../../../src/core/env/state.ts';
import type { SqlDbFactory } from '../../../src/core/ports/sql-db.ts';
import {
  DomainFileError,
  ToolError,
  buildDomain,
  defineDomain,
  defineTool,
  type Domain,
  type DomainSources,
} from '../../../src/core/schema/domain.ts';
import type { ToolCall } from '../../../src/core/schema/trajectory.ts';

// ---- An inline test domain: a tiny wallet service. -----------------------------------------

const SCHEMA = `
CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT NOT NULL, balance INTEGER NOT NULL, vip INTEGER NOT NULL DEFAULT 0);
CREATE TABLE payments (id INTEGER PRIMARY KEY, customer_id TEXT NOT NULL, amount INTEGER NOT NULL, note TEXT);
CREATE TABLE tags (customer_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (customer_id, tag));
`;

const SEED = JSON.stringify({
  customers: [
    { id: 'C2', name: 'Bob', balance: 50, vip: 0 },
    { id: 'C1', name: 'Ann', balance: 100, vip: 1 },
  ],
  tags: [
    { customer_id: 'C1', tag: 'new' },
    { customer_id: 'C1', tag: 'email' },
  ],
});

const POLICY = `# Wallet policy
- **R1** Never take a customer's balance below zero.
- **R2** Payments over 60 need a supervisor.
`;

const TASKS = JSON.stringify([
  { id: 'plain', user_scenario: { instructions: 'Pay 30 for Ann.' } },
  {
    id: 'with-rows',
    user_scenario: { instructions: 'Pay for Cy.' },
    initial_state: {
      rows: {
        customers: [
          { id: 'C2', name: 'Bob', balance: 5, vip: 1 },
          { id: 'C3', name: 'Cy', balance: 10, vip: 0 },
        ],
      },
    },
  },
]);

const getCustomer = defineTool({
  name: 'get_customer',
  kind: 'read',
  description: 'Look up a customer.',
  params: z.object({ customer_id: z.string() }),
  async run({ db }, { customer_id }) {
    const row = await db.one('SELECT id, name, balance FROM customers WHERE id = ?', [customer_id]);
    if (!row) throw new ToolError(`customer ${customer_id} not found`);
    return row;
  },
});

const pay = defineTool({
  name: 'pay',
  kind: 'write',
  description: 'Pay from a customer balance.',
  params: z.object({ customer_id: z.string(), amount: z.number().int().positive(), note: z.string().optional() }),
  async run({ db }, { customer_id, amount, note }) {
    // Writes first, checks after: a refused payment must be rolled back by the environment.
    const changed = await db.run('UPDATE customers SET balance = balance - ? WHERE id = ?', [amount, customer_id]);
    if (changed === 0) throw new ToolError(`customer ${customer_id} not found`);
    await db.run('INSERT INTO payments (customer_id, amount, note) VALUES (?, ?, ?)', [
      customer_id,
      amount,
      note ?? null,
    ]);
    const row = await db.one('SELECT balance FROM customers WHERE id = ?', [customer_id]);
    if ((row!.balance as number) < 0) throw new ToolError(`insufficient balance for ${amount}`);
    return `paid ${amount}`;
  },
});

const removeTag = defineTool({
  name: 'remove_tag',
  kind: 'write',
  description: 'Remove a tag from a customer.',
  params: z.object({ customer_id: z.string(), tag: z.string() }),
  async run({ db }, { customer_id, tag }) {
    const n = await db.run('DELETE FROM tags WHERE customer_id = ? AND tag = ?', [customer_id, tag]);
    return { removed: n };
  },
});

const brokenWrite = defineTool({
  name: 'broken_write',
  kind: 'generic',
  description: 'A tool with a bug: writes, then fails with a non-ToolError.',
  params: z.object({}),
  async run({ db }) {
    await db.run('UPDATE customers SET vip = 1 WHERE id = ?', ['C2']);
    throw new TypeError('cannot read properties of undefined');
  },
});

const checkBalance = defineTool({
  name: 'check_balance',
  kind: 'read',
  description: 'The caller checks their own balance.',
  params: z.object({ customer_id: z.string() }),
  async run({ db }, { customer_id }) {
    return (await db.one('SELECT balance FROM customers WHERE id = ?', [customer_id]))?.balance ?? null;
  },
});

const DEFINITION = defineDomain({
  name: 'wallet',
  language: 'en-US',
  roles: ['inbound'],
  now: Date.UTC(2025, 0, 15, 12),
  tools: [getCustomer, pay, removeTag, brokenWrite],
  userTools: [checkBalance],
  tables: { payments: { unordered: true, ignoreColumns: ['id'] } },
  ruleChecks: [
    {
      rule: 'R2',
      description: 'payments over 60 need a supervisor',
      async check({ tool, args }) {
        return tool === 'pay' && (args.amount as number) > 60 ? `payment of ${String(args.amount)} over 60` : null;
      },
    },
  ],
  greeting: 'Wallet service, how can I help?',
});

const SOURCES: DomainSources = { policy: POLICY, schema: SCHEMA, seed: SEED, tasks: TASKS };

function wallet(): Domain {
  return buildDomain(DEFINITION, SOURCES);
}

let callId = 0;
function call(name: string, args: Record<string, unknown> = {}): ToolCall {
  return { id: `call_${++callId}`, name, arguments: args };
}

const SEED_CUSTOMERS = [
  { id: 'C1', name: 'Ann', balance: 100, vip: 1 },
  { id: 'C2', name: 'Bob', balance: 50, vip: 0 },
];
const SEED_TAGS = [
  { customer_id: 'C1', tag: 'email' },
  { customer_id: 'C1', tag: 'new' },
];

// ---- The same tests over both SqlDb adapters. -------------------------------------------------

const adapters: [string, () => Promise<SqlDbFactory & { terminate?(): Promise<void> }>][] = [
  ['in-process sql.js', inProcessSqlDbFactory],
  ['Node worker_threads', workerSqlDbFactory],
];

describe.each(adapters)('Environment over %s', (_name, makeFactory) => {
  let factory: SqlDbFactory & { terminate?(): Promise<void> };
  let runtime: DomainRuntime;
  const envs: Environment[] = [];
  const open = async (taskId?: string): Promise<Environment> => {
    const task = taskId === undefined ? undefined : runtime.domain.tasks.find((t) => t.id === taskId);
    const env = await runtime.open(task);
    envs.push(env);
    return env;
  };

  beforeAll(async () => {
    factory = await makeFactory();
    runtime = await DomainRuntime.create(wallet(), factory);
  });
  afterAll(async () => {
    for (const env of envs) await env.close();
    await factory.terminate?.();
  });

  it('reads the table layout from the schema, without internal tables', () => {
    expect(runtime.tables).toEqual([
      { name: 'customers', columns: ['id', 'name', 'balance', 'vip'], primaryKey: ['id'], rowid: 'rowid' },
      { name: 'payments', columns: ['id', 'customer_id', 'amount', 'note'], primaryKey: ['id'], rowid: 'rowid' },
      { name: 'tags', columns: ['customer_id', 'tag'], primaryKey: ['customer_id', 'tag'], rowid: 'rowid' },
    ]);
    expect(runtime.replayable).toBe(true);
  });

  it('exportState sorts rows by primary key and returns exact contents', async () => {
    const env = await open();
    expect(await env.exportState()).toEqual({ customers: SEED_CUSTOMERS, payments: [], tags: SEED_TAGS });
    const state = await env.exportState();
    expect(Object.keys(state.customers![0]!)).toEqual(['id', 'name', 'balance', 'vip']);
  });

  it('logs an update and an insert as exact column entries', async () => {
    const env = await open();
    const out = await env.call(call('pay', { customer_id: 'C1', amount: 30 }), 'assistant', 3);
    const meta = { turn: 3, actor: 'assistant', tool: 'pay' } as const;
    expect(out).toEqual({
      content: 'paid 30',
      error: false,
      kind: 'write',
      violations: [],
      writes: [
        {
          seq: 1,
          ...meta,
          table: 'customers',
          op: 'update',
          key: { id: 'C1' },
          column: 'balance',
          before: 100,
          after: 70,
        },
        { seq: 2, ...meta, table: 'payments', op: 'insert', key: { id: 1 }, column: 'id', before: null, after: 1 },
        {
          seq: 3,
          ...meta,
          table: 'payments',
          op: 'insert',
          key: { id: 1 },
          column: 'customer_id',
          before: null,
          after: 'C1',
        },
        { seq: 4, ...meta, table: 'payments', op: 'insert', key: { id: 1 }, column: 'amount', before: null, after: 30 },
        { seq: 5, ...meta, table: 'payments', op: 'insert', key: { id: 1 }, column: 'note', before: null, after: null },
      ],
    });
    expect(env.writes).toEqual(out.writes);
  });

  it('logs a delete as exact column entries keyed by the composite key, continuing the sequence', async () => {
    const env = await open();
    await env.call(call('pay', { customer_id: 'C2', amount: 5, note: 'tip' }), 'assistant', 1);
    const out = await env.call(call('remove_tag', { customer_id: 'C1', tag: 'new' }), 'assistant', 4);
    const meta = { turn: 4, actor: 'assistant', tool: 'remove_tag', table: 'tags', op: 'delete' } as const;
    const key = { customer_id: 'C1', tag: 'new' };
    expect(out.content).toBe('{"removed":1}');
    expect(out.writes).toEqual([
      { seq: 6, ...meta, key, column: 'customer_id', before: 'C1', after: null },
      { seq: 7, ...meta, key, column: 'tag', before: 'new', after: null },
    ]);
    expect(env.writes.map((w) => w.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(env.writes[4]).toEqual({
      seq: 5,
      turn: 1,
      actor: 'assistant',
      tool: 'pay',
      table: 'payments',
      op: 'insert',
      key: { id: 1 },
      column: 'note',
      before: null,
      after: 'tip',
    });
  });

  it('an update that changes nothing logs nothing; a read tool returns its row as JSON', async () => {
    const env = await open();
    const read = await env.call(call('get_customer', { customer_id: 'C2' }));
    expect(read).toEqual({
      content: '{"id":"C2","name":"Bob","balance":50}',
      error: false,
      kind: 'read',
      violations: [],
      writes: [],
    });
    await env.db.run('UPDATE customers SET balance = balance WHERE id = ?', ['C1']);
    const out = await env.call(call('remove_tag', { customer_id: 'C9', tag: 'x' }));
    expect(out).toEqual({ content: '{"removed":0}', error: false, kind: 'write', violations: [], writes: [] });
    expect(env.writes).toEqual([]);
  });

  it('rolls back a failed write and logs nothing', async () => {
    const env = await open();
    const out = await env.call(call('pay', { customer_id: 'C2', amount: 80 }), 'assistant', 2);
    expect(out).toEqual({
      content: 'Error: insufficient balance for 80',
      error: true,
      kind: 'write',
      violations: [],
      writes: [],
    });
    expect(env.writes).toEqual([]);
    expect(await env.exportState()).toEqual({ customers: SEED_CUSTOMERS, payments: [], tags: SEED_TAGS });
    // The next successful write starts the log at 1 and sees no trace of the failed one.
    const ok = await env.call(call('pay', { customer_id: 'C2', amount: 20 }), 'assistant', 5);
    expect(ok.writes.map((w) => [w.seq, w.table, w.column, w.before, w.after])).toEqual([
      [1, 'customers', 'balance', 50, 30],
      [2, 'payments', 'id', null, 1],
      [3, 'payments', 'customer_id', null, 'C2'],
      [4, 'payments', 'amount', null, 20],
      [5, 'payments', 'note', null, null],
    ]);
  });

  it('turns unknown tools and bad arguments into Error outcomes', async () => {
    const env = await open();
    expect(await env.call(call('transfer_funds'))).toEqual({
      content: 'Error: unknown tool transfer_funds',
      error: true,
      kind: null,
      violations: [],
      writes: [],
    });
    expect((await env.call(call('check_balance', { customer_id: 'C1' }))).content).toBe(
      'Error: tool check_balance is not available to the agent',
    );
    expect((await env.call(call('pay', { customer_id: 'C1' }), 'user')).content).toBe(
      'Error: tool pay is not available to the caller',
    );
    expect(await env.call(call('pay', { customer_id: 'C1', amount: -5 }))).toEqual({
      content: 'Error: invalid arguments for pay: amount: Too small: expected number to be >0',
      error: true,
      kind: 'write',
      violations: [],
      writes: [],
    });
    expect((await env.call(call('get_customer', {}))).content).toBe(
      'Error: invalid arguments for get_customer: customer_id: Invalid input: expected string, received undefined',
    );
    expect((await env.call(call('get_customer', { customer_id: 'C9' }))).content).toBe('Error: customer C9 not found');
    expect(await env.call(call('check_balance', { customer_id: 'C1' }), 'user')).toEqual({
      content: '100',
      error: false,
      kind: 'read',
      violations: [],
      writes: [],
    });
    expect(await env.exportState()).toEqual({ customers: SEED_CUSTOMERS, payments: [], tags: SEED_TAGS });
  });

  it('rethrows a non-ToolError exception after rolling back its writes', async () => {
    const env = await open();
    await expect(env.call(call('broken_write'))).rejects.toThrow(new TypeError('cannot read properties of undefined'));
    expect(env.writes).toEqual([]);
    expect((await env.exportState()).customers).toEqual(SEED_CUSTOMERS);
  });

  it('reports rule violations of agent writes only', async () => {
    const env = await open();
    const big = await env.call(call('pay', { customer_id: 'C1', amount: 70 }), 'assistant', 0);
    expect(big.violations).toEqual([{ rule: 'R2', message: 'payment of 70 over 60' }]);
    const small = await env.call(call('pay', { customer_id: 'C1', amount: 10 }), 'assistant', 1);
    expect(small.violations).toEqual([]);
  });

  it('checks: false skips the rule checks only; result: false drops a successful result, never an error', async () => {
    const env = await open();
    const unchecked = await env.call(call('pay', { customer_id: 'C1', amount: 70 }), 'assistant', 0, { checks: false });
    expect(unchecked).toMatchObject({ content: 'paid 70', error: false, violations: [] });
    expect(unchecked.writes.map((w) => `${w.table}.${w.column}`)).toEqual([
      'customers.balance',
      'payments.id',
      'payments.customer_id',
      'payments.amount',
      'payments.note',
    ]);
    const discarded = { result: false } as const;
    // A tool that ignores resultDiscarded still has its string result kept; an object is not serialized.
    expect(
      (await env.call(call('remove_tag', { customer_id: 'C1', tag: 'new' }), 'assistant', 1, discarded)).content,
    ).toBe('');
    const failed = await env.call(call('pay', { customer_id: 'C1', amount: 500 }), 'assistant', 2, discarded);
    expect(failed).toEqual({
      content: 'Error: insufficient balance for 500',
      error: true,
      kind: 'write',
      violations: [],
      writes: [],
    });
  });

  it('snapshot and restore bring back both the rows and the write log', async () => {
    const env = await open();
    await env.call(call('pay', { customer_id: 'C1', amount: 30 }), 'assistant', 1);
    const snap = await env.snapshot();
    const stateAtSnap = await env.exportState();
    const writesAtSnap = env.writes.map((w) => ({ ...w }));
    expect(writesAtSnap).toHaveLength(5);

    await env.call(call('remove_tag', { customer_id: 'C1', tag: 'email' }), 'assistant', 2);
    await env.call(call('pay', { customer_id: 'C2', amount: 50 }), 'assistant', 3);
    expect(env.writes).toHaveLength(12);

    await env.restore(snap);
    expect(await env.exportState()).toEqual(stateAtSnap);
    expect(stateAtSnap).toEqual({
      customers: [
        { id: 'C1', name: 'Ann', balance: 70, vip: 1 },
        { id: 'C2', name: 'Bob', balance: 50, vip: 0 },
      ],
      payments: [{ id: 1, customer_id: 'C1', amount: 30, note: null }],
      tags: SEED_TAGS,
    });
    expect(env.writes).toEqual(writesAtSnap);

    // After a restore the log continues from the snapshot, and the snapshot can be used again.
    const next = await env.call(call('remove_tag', { customer_id: 'C1', tag: 'new' }), 'assistant', 9);
    expect(next.writes.map((w) => [w.seq, w.turn, w.column, w.before])).toEqual([
      [6, 9, 'customer_id', 'C1'],
      [7, 9, 'tag', 'new'],
    ]);
    await env.restore(snap);
    expect(await env.exportState()).toEqual(stateAtSnap);
    expect(env.writes).toEqual(writesAtSnap);
  });

  it("a runtime on another runtime's built database (structured-cloned, as a rollout thread gets it) reads, writes and snapshots the same; another schema is refused", async () => {
    const built = structuredClone(runtime.built());
    expect(built.schema).toBe(SCHEMA);
    expect(built.wholeTables).toEqual([]);
    const copy = DomainRuntime.fromBuilt(wallet(), built, factory);
    try {
      expect(copy.tables).toEqual(runtime.tables);
      expect(copy.replayable).toBe(true);
      expect(copy.wholeTables).toEqual(new Set());
      const env = await copy.open();
      expect(await env.exportState()).toEqual({ customers: SEED_CUSTOMERS, payments: [], tags: SEED_TAGS });
      const out = await env.call(call('pay', { customer_id: 'C2', amount: 20, note: 'x' }), 'assistant', 2);
      expect(out.writes.map((w) => [w.seq, w.table, w.op, w.column, w.before, w.after])).toEqual([
        [1, 'customers', 'update', 'balance', 50, 30],
        [2, 'payments', 'insert', 'id', null, 1],
        [3, 'payments', 'insert', 'customer_id', null, 'C2'],
        [4, 'payments', 'insert', 'amount', null, 20],
        [5, 'payments', 'insert', 'note', null, 'x'],
      ]);
      const snap = await env.snapshot();
      const restored = await copy.open();
      await restored.restore(snap);
      expect((await restored.exportState()).payments).toEqual([{ id: 1, customer_id: 'C2', amount: 20, note: 'x' }]);
      await restored.close();
      await env.close();
      // Closed environments went back as pristine databases.
      expect((await (await copy.open()).exportState()).payments).toEqual([]);
    } finally {
      await copy.close();
    }
    const other = { ...wallet(), schema: `${SCHEMA}CREATE TABLE extra (id TEXT PRIMARY KEY);\n` };
    expect(() => DomainRuntime.fromBuilt(other, built, factory)).toThrow(
      'domain wallet: the built database is of another schema',
    );
  });

  it('upserts initial_state.rows without logging them', async () => {
    const env = await open('with-rows');
    expect((await env.exportState()).customers).toEqual([
      { id: 'C1', name: 'Ann', balance: 100, vip: 1 },
      { id: 'C2', name: 'Bob', balance: 5, vip: 1 },
      { id: 'C3', name: 'Cy', balance: 10, vip: 0 },
    ]);
    expect(env.writes).toEqual([]);
    const out = await env.call(call('pay', { customer_id: 'C3', amount: 4 }), 'assistant', 1);
    expect(out.writes[0]).toEqual({
      seq: 1,
      turn: 1,
      actor: 'assistant',
      tool: 'pay',
      table: 'customers',
      op: 'update',
      key: { id: 'C3' },
      column: 'balance',
      before: 10,
      after: 6,
    });
    expect(out.writes).toHaveLength(5);
    // Another episode of the same runtime starts from the pristine seed again.
    const plain = await open('plain');
    expect((await plain.exportState()).customers).toEqual(SEED_CUSTOMERS);
  });

  it('diff compares unordered tables as multisets without ignored columns', async () => {
    const a = await open();
    const b = await open();
    await a.call(call('pay', { customer_id: 'C1', amount: 10 }));
    await a.call(call('pay', { customer_id: 'C1', amount: 20 }));
    await b.call(call('pay', { customer_id: 'C1', amount: 20 }));
    await b.call(call('pay', { customer_id: 'C1', amount: 10 }));
    const sa = await a.exportState();
    const sb = await b.exportState();
    // Surrogate ids differ (1 ↔ 2) but the payments are the same multiset.
    expect(sa.payments!.map((p) => [p.id, p.amount])).toEqual([
      [1, 10],
      [2, 20],
    ]);
    expect(sb.payments!.map((p) => [p.id, p.amount])).toEqual([
      [1, 20],
      [2, 10],
    ]);
    expect(runtime.diff(sa, sb)).toEqual({ equal: true, lines: [] });

    await b.call(call('pay', { customer_id: 'C2', amount: 10 }));
    expect(runtime.diff(sa, await b.exportState())).toEqual({
      equal: false,
      lines: [
        'customers[C2].balance: expected 50, got 40',
        'payments: unexpected row {"amount":10,"customer_id":"C2","note":null}',
      ],
    });
    expect(runtime.diff(await b.exportState(), sa)).toEqual({
      equal: false,
      lines: [
        'customers[C2].balance: expected 40, got 50',
        'payments: missing row {"amount":10,"customer_id":"C2","note":null}',
      ],
    });
  });
});

describe('diffStates', () => {
  const tables = [
    { name: 'tags', columns: ['customer_id', 'tag'], primaryKey: ['customer_id', 'tag'] },
    { name: 'log', columns: ['id', 'msg', 'at'], primaryKey: ['id'] },
  ];

  it('pairs ordered rows by key and names missing, unexpected and changed rows', () => {
    const expected = {
      tags: [
        { customer_id: 'C1', tag: 'a' },
        { customer_id: 'C1', tag: 'b' },
      ],
      log: [{ id: 1, msg: 'x', at: 5 }],
    };
    const actual = {
      tags: [
        { customer_id: 'C1', tag: 'b' },
        { customer_id: 'C2', tag: 'a' },
      ],
      log: [{ id: 1, msg: 'y', at: 5 }],
    };
    expect(diffStates(expected, actual, tables)).toEqual({
      equal: false,
      lines: [
        'tags[C1,a]: missing row {"customer_id":"C1","tag":"a"}',
        'tags[C2,a]: unexpected row {"customer_id":"C2","tag":"a"}',
        'log[1].msg: expected "x", got "y"',
      ],
    });
  });

  it('counts duplicate rows of an unordered table', () => {
    const row = { id: 1, msg: 'x', at: 5 };
    const options = { log: { unordered: true, ignoreColumns: ['id', 'at'] } };
    const two = { log: [row, { ...row, id: 2, at: 9 }] };
    const one = { log: [row] };
    expect(diffStates(two, two, tables, options)).toEqual({ equal: true, lines: [] });
    expect(diffStates(two, one, tables, options)).toEqual({ equal: false, lines: ['log: missing row {"msg":"x"}'] });
    expect(diffStates(one, two, tables, options)).toEqual({ equal: false, lines: ['log: unexpected row {"msg":"x"}'] });
  });
});

describe('DomainFileError', () => {
  const fileError = (src: Partial<DomainSources>, files?: Parameters<typeof buildDomain>[2]): DomainFileError => {
    try {
      buildDomain(DEFINITION, { ...SOURCES, ...src }, files);
    } catch (e) {
      if (e instanceof DomainFileError) return e;
      throw e;
    }
    throw new Error('buildDomain accepted the sources');
  };

  it('names the tasks file and field of a malformed task', () => {
    const e = fileError({
      tasks: JSON.stringify([
        { id: 't1', user_scenario: { instructions: 'x' } },
        { id: 't2', user_scenario: {} },
      ]),
    });
    expect([e.file, e.field]).toEqual(['tasks.json', '[1].user_scenario.instructions']);
    expect(e.message).toMatch(/^tasks\.json: \[1\]\.user_scenario\.instructions: /);
  });

  it('names the tool of a reference solution that does not exist', () => {
    const tasks = JSON.stringify([
      { id: 't1', user_scenario: { instructions: 'x' }, evaluation_criteria: { actions: [{ name: 'refund' }] } },
    ]);
    const e = fileError({ tasks }, { tasks: 'domains/wallet/tasks.json' });
    expect([e.file, e.field, e.message]).toEqual([
      'domains/wallet/tasks.json',
      '[0].evaluation_criteria.actions[0].name',
      'domains/wallet/tasks.json: [0].evaluation_criteria.actions[0].name: unknown tool "refund" (task t1)',
    ]);
  });

  it('names the seed file and field of a malformed seed', () => {
    const e = fileError({
      seed: JSON.stringify({
        customers: [
          { id: 'C1', balance: 1 },
          { id: 'C2', balance: true },
        ],
      }),
    });
    expect([e.file, e.field]).toEqual(['seed.json', 'customers[1].balance']);
    expect(e.message).toMatch(/^seed\.json: customers\[1\]\.balance: /);
  });

  it('names the seed file of text that is not JSON', () => {
    const e = fileError({ seed: '{"customers": [' });
    expect([e.file, e.field]).toEqual(['seed.json', '']);
    expect(e.message).toMatch(/^seed\.json: not valid JSON \(/);
  });
});
