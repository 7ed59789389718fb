/**
 * The debt-negotiation domain: a consumer lender's outbound calls about overdue credit loans
 * (Mandarin, zh-CN). Code half only; policy.md, schema.sql, seed.json and tasks.json are read by
 * the platform loader (`src/adapters/node/load-domain.ts`) and joined with `buildDomain`.
 */
import { defineDomain, type EnvFunction } from '../../src/core/schema/domain.ts';
import { toYuan } from '../carrier/tools.ts';
import { debtRuleChecks } from './rules.ts';
import { balanceOf, tools, userTools } from './tools.ts';

/** The policy clock: Monday 2025-03-17 10:00 China Standard Time, ms since the epoch. */
export const DEBT_NOW_MS = Date.parse('2025-03-17T10:00:00+08:00');

function accountIdArg(fn: string, args: Record<string, unknown>): string {
  const v = args.account_id;
  if (typeof v !== 'string') throw new Error(`${fn}: argument "account_id" must be a string`);
  return v;
}

async function count(db: Parameters<EnvFunction>[0], table: string, accountId: string): Promise<number> {
  const r = await db.one(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ?`, [accountId]);
  return Number(r?.n ?? 0);
}

/**
 * Functions for env assertions on the final state:
 * - `account_status({account_id})` → `overdue` | `plan` | `settled` | `disputed`, `null` when unknown;
 * - `owed({account_id})` → yuan still owed, `null` when unknown;
 * - `active_plan({account_id})` → `"<months>x<monthly yuan>"` of the signed plan (`"24x280h"` for
 *   a hardship plan), `null` when none is active;
 * - `promise_count`, `callback_count`, `dispute_count` ({account_id}) → rows registered.
 */
export const debtEnvFunctions: Readonly<Record<string, EnvFunction>> = {
  async account_status(db, args) {
    const a = await db.one('SELECT status FROM accounts WHERE account_id = ?', [accountIdArg('account_status', args)]);
    return a ? String(a.status) : null;
  },
  async owed(db, args) {
    const id = accountIdArg('owed', args);
    if (!(await db.one('SELECT 1 AS x FROM accounts WHERE account_id = ?', [id]))) return null;
    return toYuan((await balanceOf(db, id)).owedFen);
  },
  async active_plan(db, args) {
    const p = await db.one("SELECT * FROM plans WHERE account_id = ? AND status = 'active'", [
      accountIdArg('active_plan', args),
    ]);
    return p ? `${Number(p.months)}x${toYuan(Number(p.monthly_fen))}${Number(p.hardship) ? 'h' : ''}` : null;
  },
  promise_count: (db, args) => count(db, 'promises', accountIdArg('promise_count', args)),
  callback_count: (db, args) => count(db, 'callbacks', accountIdArg('callback_count', args)),
  dispute_count: (db, args) => count(db, 'disputes', accountIdArg('dispute_count', args)),
};

/** The debt-negotiation domain definition (code half). */
export const debtNegotiation = defineDomain({
  name: 'debt-negotiation',
  language: 'zh-CN',
  roles: ['outbound'],
  now: DEBT_NOW_MS,
  greeting: '您好，我是恒信消费金融的协商专员。',
  tools,
  userTools,
  tables: {
    plans: { unordered: true, ignoreColumns: ['created_at'] },
    promises: { unordered: true },
    disputes: { unordered: true, ignoreColumns: ['dispute_id', 'reason'] },
    callbacks: { unordered: true, ignoreColumns: ['callback_id', 'note'] },
    assessments: { unordered: true },
    finances: { userSide: true },
    wallet: { userSide: true },
    bank_records: { userSide: true },
  },
  ruleChecks: debtRuleChecks,
  envFunctions: debtEnvFunctions,
  allowedConsequences: [
    { id: 'late-fee', text: '按合同继续计收滞纳金', cues: ['合同', '滞纳金'] },
    { id: 'credit-report', text: '逾期记录按规定如实报送征信系统', cues: ['如实', '征信'] },
  ],
});
