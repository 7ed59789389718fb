import { mkdtemp, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtinDomainDir,
  builtinDomains,
  loadBuiltinDomain,
  loadDomainDir,
} from '../../src/adapters/node/load-domain.ts';
import type { DbState, DomainRuntime, Environment, RuleViolation } from '../../src/core/env/index.ts';
import {
  DomainFileError,
  toolSchema,
  toolsFor,
  type Action,
  type Domain,
  type Task,
  type WhitelistEntry,
  type WriteEntry,
} from '../../src/core/schema/index.ts';
import { carrier } from '../../domains/carrier/domain.ts';
import { debtNegotiation } from '../../domains/debt-negotiation/domain.ts';
import { insuranceRenewal } from '../../domains/insurance-renewal/domain.ts';
import { call, carrierRuntime } from './carrier-helpers.ts';

let domain: Domain;
let runtime: DomainRuntime;

beforeAll(async () => {
  ({ domain, runtime } = await carrierRuntime());
});

const NOW_DATE = '2025-03-15';
const WRITE_KINDS = new Set(['write']);

function actionsOf(task: Task): Action[] {
  return task.evaluation_criteria?.actions ?? [];
}

function kindOf(a: Action): string | undefined {
  return toolsFor(domain, a.requestor).find((t) => t.name === a.name)?.kind;
}

function isWrite(a: Action): boolean {
  return WRITE_KINDS.has(kindOf(a) ?? '');
}

/** Every value of `obj` (deeply equal) is in `args`. */
function argsInclude(args: Record<string, unknown>, sub: Record<string, unknown> | undefined): boolean {
  return Object.entries(sub ?? {}).every(([k, v]) => JSON.stringify(args[k]) === JSON.stringify(v));
}

/** The replay of one task's reference solution on a fresh environment. */
interface Replay {
  errors: string[];
  violations: RuleViolation[];
  writes: readonly WriteEntry[];
  initial: DbState;
  final: DbState;
  env: Environment;
}

async function replay(task: Task): Promise<Replay> {
  const env = await runtime.open(task);
  const initial = await env.exportState();
  const errors: string[] = [];
  const violations: RuleViolation[] = [];
  for (const a of actionsOf(task)) {
    const out = await call(env, a.name, a.arguments, a.requestor);
    if (out.error) errors.push(`${a.name}: ${out.content}`);
    violations.push(...out.violations);
  }
  return { errors, violations, writes: env.writes, initial, final: await env.exportState(), env };
}

/** Whether a whitelist allows one write, judged on the final state of the written row. */
function allowed(entries: readonly WhitelistEntry[], write: WriteEntry, final: DbState): boolean {
  const row =
    (final[write.table] ?? []).find((r) => Object.entries(write.key).every(([k, v]) => r[k] === v)) ?? write.key;
  return entries.some(
    (e) =>
      e.table === write.table &&
      (!e.ops || e.ops.includes(write.op)) &&
      (write.op !== 'update' || !e.columns || e.columns.includes(write.column)) &&
      Object.entries(e.where ?? {}).every(([k, v]) => row[k] === v),
  );
}

describe('loading', () => {
  it('loads the built-in carrier domain with its code half', () => {
    expect(builtinDomains).toEqual({
      carrier,
      'insurance-renewal': insuranceRenewal,
      'debt-negotiation': debtNegotiation,
    });
    expect([domain.name, domain.language, domain.roles, domain.now]).toEqual([
      'carrier',
      'zh-CN',
      ['inbound', 'outbound'],
      Date.parse('2025-03-15T10:00:00+08:00'),
    ]);
    expect(domain.greeting).toBe('您好，这里是畅联通信客服，请问有什么可以帮您？');
  });

  it('names known domains for an unknown one', async () => {
    await expect(loadBuiltinDomain('airline')).rejects.toThrow(
      'unknown domain "airline"; known domains: carrier, debt-negotiation, insurance-renewal',
    );
    await expect(loadBuiltinDomain('constructor')).rejects.toThrow(
      'unknown domain "constructor"; known domains: carrier, debt-negotiation, insurance-renewal',
    );
  });

  describe('errors name the file path', () => {
    let dir: string;
    const src = builtinDomainDir('carrier');
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'carrier-'));
      for (const f of ['policy.md', 'schema.sql', 'seed.json', 'tasks.json'])
        await copyFile(join(src, f), join(dir, f));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('for a missing file', async () => {
      await expect(loadDomainDir(join(dir, 'nowhere'), carrier)).rejects.toThrow(
        `${join(dir, 'nowhere', 'policy.md')}: cannot read (`,
      );
    });

    it('for a malformed task', async () => {
      const tasks = JSON.parse(await readFile(join(src, 'tasks.json'), 'utf8')) as Record<string, unknown>[];
      delete tasks[2]!.user_scenario;
      await writeFile(join(dir, 'tasks.json'), JSON.stringify(tasks));
      const e = await loadDomainDir(dir, carrier).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DomainFileError);
      expect([(e as DomainFileError).file, (e as DomainFileError).field]).toEqual([
        join(dir, 'tasks.json'),
        '[2].user_scenario',
      ]);
      await copyFile(join(src, 'tasks.json'), join(dir, 'tasks.json'));
    });

    it('for a policy with a rule defined twice', async () => {
      await writeFile(join(dir, 'policy.md'), '- **R1** 一\n- **R1** 二\n');
      await expect(loadDomainDir(dir, carrier)).rejects.toThrow(`${join(dir, 'policy.md')}: rule R1 is defined twice`);
      await copyFile(join(src, 'policy.md'), join(dir, 'policy.md'));
      await expect(loadDomainDir(dir, carrier)).resolves.toMatchObject({ name: 'carrier' });
    });
  });
});

describe('policy and tools', () => {
  it('has rules R1 to R9', () => {
    expect(domain.rules.map((r) => r.id)).toEqual(['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9', 'R10', 'R11']);
  });

  it('has 10 agent tools and 2 user tools, with spokenAs on every write and user tool', () => {
    expect(domain.tools.map((t) => `${t.name}:${t.kind}`)).toEqual([
      'find_customer_by_phone:read',
      'get_bills:read',
      'get_bill_details:read',
      'get_payments:read',
      'list_plans:read',
      'change_plan:write',
      'pay_bill_from_balance:write',
      'file_dispute:write',
      'transfer_to_human_agents:generic',
      'think:think',
    ]);
    expect((domain.userTools ?? []).map((t) => `${t.name}:${t.kind}`)).toEqual([
      'check_wallet_balance:read',
      'pay_bill_with_wallet:write',
    ]);
    const needSpoken = [...domain.tools.filter((t) => t.kind === 'write'), ...(domain.userTools ?? [])];
    expect(needSpoken.filter((t) => !t.spokenAs).map((t) => t.name)).toEqual([]);
  });

  it('exports every tool as an OpenAI tool schema', () => {
    const schema = toolSchema(domain.tools.find((t) => t.name === 'pay_bill_from_balance')!);
    expect(schema.function.parameters).toMatchObject({
      type: 'object',
      required: ['customer_id', 'bill_id', 'amount'],
      properties: { amount: { type: 'number' } },
    });
    for (const t of [...domain.tools, ...(domain.userTools ?? [])]) expect(toolSchema(t).function.name).toBe(t.name);
  });
});

describe('seed', () => {
  let env: Environment;
  let state: DbState;
  beforeAll(async () => {
    env = await runtime.open();
    state = await env.exportState();
  });
  afterAll(async () => {
    await env.close();
  });

  it('has 30 customers with unique 11-digit 13x/15x/18x numbers', () => {
    const customers = state.customers!;
    expect(customers).toHaveLength(30);
    expect(customers.filter((c) => !/^1[358]\d{9}$/.test(String(c.phone)))).toEqual([]);
    expect(new Set(customers.map((c) => c.phone)).size).toBe(30);
  });

  it('has four months of bills whose amounts are the sums of their charges', async () => {
    expect(await env.query('SELECT DISTINCT period FROM bills ORDER BY period')).toEqual(
      ['2024-11', '2024-12', '2025-01', '2025-02'].map((period) => ({ period })),
    );
    expect(
      await env.query(
        'SELECT b.bill_id FROM bills b WHERE b.amount_fen != (SELECT COALESCE(SUM(amount_fen), 0) FROM charges c WHERE c.bill_id = b.bill_id)',
      ),
    ).toEqual([]);
  });

  it('has paid amounts equal to the recorded payments, and statuses that follow from them and the due date', async () => {
    expect(
      await env.query(
        'SELECT b.bill_id FROM bills b WHERE b.paid_fen != (SELECT COALESCE(SUM(amount_fen), 0) FROM payments p WHERE p.bill_id = b.bill_id)',
      ),
    ).toEqual([]);
    const wrong = state.bills!.filter((b) => {
      const expected = b.paid_fen === b.amount_fen ? 'paid' : String(b.due_date) < NOW_DATE ? 'overdue' : 'unpaid';
      return b.status !== expected;
    });
    expect(wrong).toEqual([]);
    const counts = await env.query('SELECT status, COUNT(*) AS n FROM bills GROUP BY status ORDER BY status');
    expect(counts).toEqual([
      { status: 'overdue', n: 12 },
      { status: 'paid', n: 88 },
      { status: 'unpaid', n: 20 },
    ]);
  });

  it('has payments before now and from the bill owner', async () => {
    expect(state.payments!.filter((p) => String(p.paid_at) >= '2025-03-15T10:00:00+08:00')).toEqual([]);
    expect(
      await env.query(
        'SELECT p.payment_id FROM payments p JOIN bills b ON b.bill_id = p.bill_id WHERE p.customer_id != b.customer_id',
      ),
    ).toEqual([]);
  });

  it('has charges both older and younger than 60 days', async () => {
    const [row] = await env.query(
      "SELECT SUM(charge_date < '2025-01-14') AS old, SUM(charge_date >= '2025-01-14') AS recent FROM charges",
    );
    expect(Number(row!.old)).toBeGreaterThan(50);
    expect(Number(row!.recent)).toBeGreaterThan(50);
  });

  it('flags exactly the disputed charges', async () => {
    expect(await env.query('SELECT charge_id FROM charges WHERE disputed = 1 ORDER BY charge_id')).toEqual(
      await env.query('SELECT DISTINCT charge_id FROM disputes ORDER BY charge_id'),
    );
  });
});

describe('tasks', () => {
  it('are 15 with unique carrier- ids, Mandarin scenarios and no NL assertions', () => {
    expect(domain.tasks.map((t) => t.id)).toEqual([
      'carrier-pay-balance-1',
      'carrier-wallet-pay-1',
      'carrier-pay-split-limit-1',
      'carrier-dispute-recent-1',
      'carrier-dispute-expired-1',
      'carrier-dispute-duplicate-1',
      'carrier-claimed-payment-1',
      'carrier-change-plan-1',
      'carrier-change-plan-overdue-1',
      'carrier-pay-then-change-1',
      'carrier-outbound-overdue-1',
      'carrier-transfer-human-1',
      'carrier-bill-inquiry-1',
      'carrier-misremember-phone-1',
      'carrier-withhold-false-claim-1',
    ]);
    for (const t of domain.tasks) {
      expect(t.evaluation_criteria?.reward_basis, t.id).not.toContain('NL_ASSERTION');
      expect(t.user_scenario.requests?.length, t.id).toBeGreaterThan(0);
      expect(t.evaluation_criteria?.write_whitelist, t.id).toBeDefined();
    }
  });

  it('cover the required kinds', () => {
    const byId = new Map(domain.tasks.map((t) => [t.id, t]));
    const outbound = domain.tasks.filter((t) => t.role === 'outbound');
    expect(outbound.map((t) => t.id)).toEqual(['carrier-outbound-overdue-1']);
    expect(outbound[0]!.opening).toMatch(/^您好，我是畅联通信客服/);
    expect(actionsOf(outbound[0]!).map((a) => `${a.requestor}:${a.name}`)).toEqual([
      'assistant:find_customer_by_phone',
      'assistant:get_bills',
      'user:pay_bill_with_wallet',
      'assistant:get_bills',
    ]);
    const twoIntents = byId.get('carrier-pay-then-change-1')!;
    expect(twoIntents.user_scenario.requests).toHaveLength(2);
    expect(actionsOf(twoIntents).map((a) => a.intent)).toEqual([0, 0, 0, 1, 1]);
    const dual = domain.tasks.filter((t) => actionsOf(t).some((a) => a.requestor === 'user')).map((t) => t.id);
    expect(dual).toEqual(['carrier-wallet-pay-1', 'carrier-pay-split-limit-1', 'carrier-outbound-overdue-1']);
    const refusal = byId.get('carrier-dispute-expired-1')!;
    expect(actionsOf(refusal).filter(isWrite)).toEqual([]);
    expect(
      refusal.evaluation_criteria?.assertions?.some(
        (a) => a.check?.kind === 'tool_not_called' && a.check.tool === 'file_dispute',
      ),
    ).toBe(true);
    expect(byId.get('carrier-claimed-payment-1')!.evaluation_criteria?.communicate_info).toEqual(['未查到']);
  });

  it('bind rules and assertions both ways', () => {
    const ruleIds = new Set(domain.rules.map((r) => r.id));
    // The channel reaction checks are the assertions of R10 (dropout) and R11 (barge-in).
    expect(domain.channelRules).toEqual({ dropout: 'R10', bargeIn: 'R11' });
    const cited = new Set<string>(Object.values(domain.channelRules ?? {}));
    for (const t of domain.tasks) {
      for (const a of t.evaluation_criteria?.assertions ?? []) {
        expect(ruleIds.has(a.rule), `${t.id}/${a.id} cites ${a.rule}`).toBe(true);
        cited.add(a.rule);
      }
    }
    expect([...ruleIds].filter((r) => !cited.has(r))).toEqual([]);
  });

  it('check agent writes for confirmation (R2) and identification (R1)', () => {
    for (const t of domain.tasks.filter((x) => actionsOf(x).some((a) => a.requestor === 'assistant' && isWrite(a)))) {
      const checks = (t.evaluation_criteria?.assertions ?? []).map(
        (a) => `${a.rule}:${a.check?.kind}:${a.check?.tool ?? ''}`,
      );
      expect(checks, t.id).toContain('R2:confirm_before_write:');
      expect(checks, t.id).toContain('R1:read_before_write:find_customer_by_phone');
    }
  });

  it('name existing tools in assertion checks, and the reference solution passes every check', () => {
    for (const t of domain.tasks) {
      const agent = actionsOf(t).filter((a) => a.requestor === 'assistant');
      const firstWrite = agent.findIndex(isWrite);
      for (const a of t.evaluation_criteria?.assertions ?? []) {
        const c = a.check;
        const label = `${t.id}/${a.id}`;
        if (c?.tool)
          expect(
            domain.tools.some((x) => x.name === c.tool),
            label,
          ).toBe(true);
        if (c?.kind === 'tool_called')
          expect(
            agent.some((x) => x.name === c.tool && argsInclude(x.arguments, c.args)),
            label,
          ).toBe(true);
        if (c?.kind === 'tool_not_called')
          expect(
            agent.some((x) => x.name === c.tool && argsInclude(x.arguments, c.args)),
            label,
          ).toBe(false);
        if (c?.kind === 'read_before_write') {
          expect(firstWrite, label).toBeGreaterThan(0);
          expect(
            agent.slice(0, firstWrite).some((x) => x.name === c.tool),
            label,
          ).toBe(true);
        }
      }
    }
  });

  it('fail a do-nothing agent: each has a reference write, something to communicate, or a tool_called assertion in the basis', () => {
    const opening = (t: Task) => `${t.opening ?? ''}${domain.greeting}`;
    for (const t of domain.tasks) {
      const ec = t.evaluation_criteria!;
      const writes = actionsOf(t).some(isWrite) && ec.reward_basis.includes('DB');
      const communicate = (ec.communicate_info ?? []).length > 0 && ec.reward_basis.includes('COMMUNICATE');
      const called =
        ec.reward_basis.includes('ASSERTIONS') && (ec.assertions ?? []).some((a) => a.check?.kind === 'tool_called');
      expect(writes || communicate || called, t.id).toBe(true);
      for (const s of ec.communicate_info ?? [])
        expect(opening(t).includes(s), `${t.id}: "${s}" is in the opening`).toBe(false);
    }
  });

  it('give the scripted caller facts the reference needs, with cues no other agent sentence contains', () => {
    const spoken = [...domain.tools, ...(domain.userTools ?? [])].map((t) => t.spokenAs ?? '');
    for (const t of domain.tasks) {
      const args = JSON.stringify(actionsOf(t).map((a) => a.arguments));
      const facts = t.user_scenario.facts ?? [];
      const others = [
        domain.greeting,
        t.opening ?? '',
        '还有什么可以帮您',
        ...spoken,
        ...(t.evaluation_criteria?.communicate_info ?? []),
      ];
      for (const f of facts) {
        expect(args.includes(f.value), `${t.id}: fact ${f.key} is used`).toBe(true);
        expect(
          f.cues.some((c) => (f.ask ?? f.cues[0]!).includes(c)),
          `${t.id}: ask of ${f.key} contains a cue`,
        ).toBe(true);
        for (const c of f.cues)
          expect(
            others.filter((s) => s.includes(c)),
            `${t.id}: cue ${c}`,
          ).toEqual([]);
      }
      if (t.role === 'inbound')
        expect(
          facts.map((f) => f.key),
          t.id,
        ).toContain('phone');
    }
  });
});

describe('reference solutions', () => {
  it('replay without errors or rule violations, inside the whitelist, and change the state iff they write', async () => {
    for (const t of domain.tasks) {
      const r = await replay(t);
      expect(r.errors, t.id).toEqual([]);
      expect(r.violations, t.id).toEqual([]);
      const writes = actionsOf(t).some(isWrite);
      expect(r.writes.length > 0, t.id).toBe(writes);
      expect(runtime.diff(r.initial, r.final).equal, t.id).toBe(!writes);
      const whitelist = t.evaluation_criteria?.write_whitelist ?? [];
      expect(
        r.writes.filter((x) => !allowed(whitelist, x, r.final)),
        t.id,
      ).toEqual([]);
      expect(
        r.writes.filter((x) => x.table === 'wallet' && x.actor !== 'user'),
        t.id,
      ).toEqual([]);
      await r.env.close();
    }
  });

  it('replay to the same gold state twice', async () => {
    for (const t of domain.tasks) {
      const a = await replay(t);
      const b = await replay(t);
      expect(runtime.diff(a.final, b.final), t.id).toEqual({ equal: true, lines: [] });
      await a.env.close();
      await b.env.close();
    }
  });

  it('compare payments as a multiset: the split payment in the other order gives the same gold state', async () => {
    const task = domain.tasks.find((t) => t.id === 'carrier-pay-split-limit-1')!;
    const gold = await replay(task);
    const env = await runtime.open(task);
    await call(env, 'pay_bill_with_wallet', { phone: '18655201934', bill_id: 'B10012', amount: 36.8 }, 'user');
    await call(env, 'pay_bill_from_balance', { customer_id: 'C1003', bill_id: 'B10012', amount: 200 });
    const other = await env.exportState();
    expect(other.payments!.slice(-2).map((p) => [p.payment_id, p.method])).toEqual([
      ['P0090', 'wallet'],
      ['P0091', 'prepaid_balance'],
    ]);
    expect(runtime.diff(gold.final, other)).toEqual({ equal: true, lines: [] });
    const short = await runtime.open(task);
    await call(short, 'pay_bill_from_balance', { customer_id: 'C1003', bill_id: 'B10012', amount: 200 });
    const diff = runtime.diff(gold.final, await short.exportState());
    expect(diff.lines).toEqual([
      'bills[B10012].paid_fen: expected 23680, got 20000',
      'bills[B10012].status: expected "paid", got "unpaid"',
      'payments: missing row {"amount_fen":3680,"bill_id":"B10012","customer_id":"C1003","method":"wallet","paid_at":"2025-03-15T10:00:00+08:00"}',
      'wallet[18655201934].balance_fen: expected 46320, got 50000',
    ]);
    for (const e of [gold.env, env, short]) await e.close();
  });
});
