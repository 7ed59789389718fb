/**
 * The insurance-renewal domain: an insurer's outbound car-insurance renewal calls (Mandarin,
 * zh-CN). Code half only; policy.md, schema.sql, seed.json and tasks.json are read by the
 * platform loader (`src/adapters/node/load-domain.ts`) and joined with `buildDomain`.
 */
import { defineDomain, type EnvFunction } from '../../src/core/schema/domain.ts';
import { toYuan } from '../carrier/tools.ts';
import { insuranceRuleChecks } from './rules.ts';
import { tools, userTools } from './tools.ts';

/** The policy clock: Saturday 2025-03-15 10:00 China Standard Time, ms since the epoch. */
export const INSURANCE_NOW_MS = Date.parse('2025-03-15T10:00:00+08:00');

function policyIdArg(fn: string, args: Record<string, unknown>): string {
  const v = args.policy_id;
  if (typeof v !== 'string') throw new Error(`${fn}: argument "policy_id" must be a string`);
  return v;
}

/**
 * Functions for env assertions on the final state:
 * - `policy_status({policy_id})` → `expiring` | `renewed`, `null` for an unknown policy;
 * - `paid_price({policy_id})` → the paid renewal price in yuan, `null` when none is paid;
 * - `callback_count({policy_id})` → number of callbacks registered.
 */
export const insuranceEnvFunctions: Readonly<Record<string, EnvFunction>> = {
  async policy_status(db, args) {
    const p = await db.one('SELECT status FROM policies WHERE policy_id = ?', [policyIdArg('policy_status', args)]);
    return p ? String(p.status) : null;
  },
  async paid_price(db, args) {
    const o = await db.one("SELECT price_fen FROM renewal_orders WHERE policy_id = ? AND status = 'paid'", [
      policyIdArg('paid_price', args),
    ]);
    return o ? toYuan(Number(o.price_fen)) : null;
  },
  async callback_count(db, args) {
    const r = await db.one('SELECT COUNT(*) AS n FROM callbacks WHERE policy_id = ?', [
      policyIdArg('callback_count', args),
    ]);
    return Number(r?.n ?? 0);
  },
};

/** The insurance-renewal domain definition (code half). */
export const insuranceRenewal = defineDomain({
  name: 'insurance-renewal',
  language: 'zh-CN',
  roles: ['outbound'],
  now: INSURANCE_NOW_MS,
  greeting: '您好，我是安达保险的续保专员。',
  tools,
  userTools,
  tables: {
    renewal_orders: { unordered: true },
    callbacks: { unordered: true, ignoreColumns: ['callback_id', 'note'] },
    wallet: { userSide: true },
    competitor_quotes: { userSide: true },
  },
  ruleChecks: insuranceRuleChecks,
  envFunctions: insuranceEnvFunctions,
  allowedConsequences: [{ id: 'expiry', text: '保单到期后就不再有保障', cues: ['到期', '保障'] }],
});
