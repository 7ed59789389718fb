/**
 * A tiny bank domain for scoring tests (accounts, payments; a `pay` write tool, a `get_account`
 * read, a caller-side `top_up`, rule R2 as code, env functions) and a recorder that builds real
 * trajectories by running tool calls on an environment.
 */
import { z } from 'zod';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import {
  buildDomain,
  defineDomain,
  defineTool,
  ToolError,
  type TableOptions,
} from '../../../src/core/schema/domain.ts';
import { Task, type TaskInput } from '../../../src/core/schema/task.ts';
import type { Requestor } from '../../../src/core/schema/task.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';

const schema = `
CREATE TABLE accounts (id TEXT PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL, nickname TEXT);
CREATE TABLE payments (id INTEGER PRIMARY KEY, account_id TEXT NOT NULL, payee TEXT NOT NULL, amount INTEGER NOT NULL);
`;
const seed = JSON.stringify({
  accounts: [
    { id: 'A1', owner: 'Li', balance: 100, nickname: null },
    { id: 'A2', owner: 'Wang', balance: 50, nickname: null },
  ],
});
const policy = [
  '- **R1** Confirm with the caller before any payment.',
  '- **R2** No single payment above 80.',
  '- **R3** Look the account up before changing it.',
].join('\n');

const getAccount = defineTool({
  name: 'get_account',
  kind: 'read',
  description: 'Look up an account.',
  params: z.object({ account_id: z.string() }),
  async run(ctx, { account_id }) {
    const row = await ctx.db.one('SELECT * FROM accounts WHERE id = ?', [account_id]);
    if (!row) throw new ToolError(`no account ${account_id}`);
    return row;
  },
});

const pay = defineTool({
  name: 'pay',
  kind: 'write',
  description: 'Pay a payee from an account.',
  params: z.object({ account_id: z.string(), payee: z.string(), amount: z.number().int().positive() }),
  async run(ctx, { account_id, payee, amount }) {
    const row = await ctx.db.one('SELECT balance FROM accounts WHERE id = ?', [account_id]);
    if (!row) throw new ToolError(`no account ${account_id}`);
    if ((row.balance as number) < amount) throw new ToolError('insufficient balance');
    await ctx.db.run('INSERT INTO payments (account_id, payee, amount) VALUES (?, ?, ?)', [account_id, payee, amount]);
    await ctx.db.run('UPDATE accounts SET balance = balance - ? WHERE id = ?', [amount, account_id]);
    return `paid ${amount} to ${payee}`;
  },
});

const setNickname = defineTool({
  name: 'set_nickname',
  kind: 'write',
  description: 'Set the nickname of an account.',
  params: z.object({ account_id: z.string(), nickname: z.string() }),
  async run(ctx, { account_id, nickname }) {
    const n = await ctx.db.run('UPDATE accounts SET nickname = ? WHERE id = ?', [nickname, account_id]);
    if (n === 0) throw new ToolError(`no account ${account_id}`);
    return 'ok';
  },
});

const topUp = defineTool({
  name: 'top_up',
  kind: 'write',
  description: 'The caller tops up their own account.',
  params: z.object({ account_id: z.string(), amount: z.number().int().positive() }),
  async run(ctx, { account_id, amount }) {
    await ctx.db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', [amount, account_id]);
    return 'topped up';
  },
});

/** Build the bank runtime; `tables` are the payments/accounts table options. */
export async function bankRuntime(
  tables: Record<string, TableOptions> = { payments: { unordered: true, ignoreColumns: ['id'] } },
) {
  const def = defineDomain({
    name: 'bank',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15),
    tools: [getAccount, pay, setNickname],
    userTools: [topUp],
    tables,
    ruleChecks: [
      {
        rule: 'R2',
        description: 'no single payment above 80',
        async check({ writes }) {
          const big = writes.find(
            (w) => w.table === 'payments' && w.op === 'insert' && w.column === 'amount' && (w.after as number) > 80,
          );
          return big ? `payment of ${big.after} exceeds the limit of 80` : null;
        },
      },
    ],
    envFunctions: {
      balance_of: async (db, args) =>
        (await db.one('SELECT balance FROM accounts WHERE id = ?', [args.account_id as string]))?.balance ?? null,
      payment_count: async (db, args) =>
        (await db.one('SELECT count(*) AS n FROM payments WHERE account_id = ?', [args.account_id as string]))?.n ?? 0,
    },
    greeting: 'Hello, this is the bank. How can I help you?',
  });
  const domain = buildDomain(def, { policy, schema, seed, tasks: '[]' });
  return DomainRuntime.create(domain, await sqlJsFactory());
}

/** A task with the bank's usual scenario and the given evaluation criteria. */
export function bankTask(evaluation_criteria: TaskInput['evaluation_criteria'], id = 't1'): Task {
  return Task.parse({ id, user_scenario: { instructions: 'Pay a bill.' }, evaluation_criteria });
}

type Call = [name: string, args: Record<string, unknown>];

/** Records a trajectory turn by turn, running tool calls on a live environment. */
export class Recorder {
  readonly turns: Turn[] = [];
  private calls = 0;
  private constructor(private readonly env: Environment) {}

  static async open(runtime: DomainRuntime, task: Task): Promise<Recorder> {
    return new Recorder(await runtime.open(task));
  }

  private get t(): number {
    return 1_000 * this.turns.length;
  }

  /** An assistant text turn. */
  agent(text: string): this {
    this.turns.push({ role: 'assistant', text, tool_calls: [], t_ms: this.t });
    return this;
  }

  /** A caller text turn. */
  user(text: string): this {
    this.turns.push({ role: 'user', text, tool_calls: [], t_ms: this.t });
    return this;
  }

  /** One assistant (or caller) turn with tool calls, followed by their tool turns. */
  async call(calls: Call[], text = '', requestor: Requestor = 'assistant'): Promise<this> {
    const tool_calls = calls.map(([name, args]) => ({ id: `c${++this.calls}`, name, arguments: args }));
    this.turns.push({ role: requestor, text, tool_calls, t_ms: this.t });
    for (const tc of tool_calls) {
      const index = this.turns.length;
      const out = await this.env.call(tc, requestor, index);
      this.turns.push({
        role: 'tool',
        requestor,
        tool_call_id: tc.id,
        name: tc.name,
        arguments: tc.arguments,
        content: out.content,
        error: out.error,
        writes: out.writes,
        t_ms: this.t,
      });
    }
    return this;
  }

  /** Close the environment and return the turns. */
  async done(): Promise<Turn[]> {
    await this.env.close();
    return this.turns;
  }
}
