/**
 * The carrier domain: a mobile carrier's billing line (conversation in Mandarin, zh-CN).
 * Code half only; policy.md, schema.sql, seed.json and tasks.json are read by a platform loader
 * (`src/adapters/node/load-domain.ts`) and joined with `buildDomain`.
 */
import { defineDomain, type EnvFunction } from '../../src/core/schema/domain.ts';
import { carrierRuleChecks } from './rules.ts';
import { toYuan, tools, userTools } from './tools.ts';

/** The policy clock: Saturday 2025-03-15 10:00 China Standard Time, ms since the epoch. */
export const CARRIER_NOW_MS = Date.parse('2025-03-15T10:00:00+08:00');

function stringArg(fn: string, args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new Error(`${fn}: argument "${name}" must be a string`);
  return v;
}

/**
 * Functions for env assertions on the final state:
 * - `bill_outstanding({bill_id})` → outstanding amount in yuan (number), `null` for an unknown bill;
 * - `bill_status({bill_id})` → `unpaid` | `paid` | `overdue`, `null` for an unknown bill;
 * - `pending_plan({customer_id})` → the scheduled plan id or `null`;
 * - `dispute_count({charge_id})` → number of disputes on the charge.
 */
export const carrierEnvFunctions: Readonly<Record<string, EnvFunction>> = {
  async bill_outstanding(db, args) {
    const b = await db.one('SELECT amount_fen - paid_fen AS fen FROM bills WHERE bill_id = ?', [
      stringArg('bill_outstanding', args, 'bill_id'),
    ]);
    return b ? toYuan(Number(b.fen)) : null;
  },
  async bill_status(db, args) {
    const b = await db.one('SELECT status FROM bills WHERE bill_id = ?', [stringArg('bill_status', args, 'bill_id')]);
    return b ? String(b.status) : null;
  },
  async pending_plan(db, args) {
    const c = await db.one('SELECT next_plan_id FROM customers WHERE customer_id = ?', [
      stringArg('pending_plan', args, 'customer_id'),
    ]);
    return c?.next_plan_id == null ? null : String(c.next_plan_id);
  },
  async dispute_count(db, args) {
    const r = await db.one('SELECT COUNT(*) AS n FROM disputes WHERE charge_id = ?', [
      stringArg('dispute_count', args, 'charge_id'),
    ]);
    return Number(r?.n ?? 0);
  },
};

/** The carrier domain definition (code half). */
export const carrier = defineDomain({
  name: 'carrier',
  language: 'zh-CN',
  roles: ['inbound', 'outbound'],
  now: CARRIER_NOW_MS,
  greeting: '您好，这里是畅联通信客服，请问有什么可以帮您？',
  tools,
  userTools,
  tables: {
    payments: { unordered: true, ignoreColumns: ['payment_id'] },
    disputes: { unordered: true, ignoreColumns: ['dispute_id'] },
    wallet: { userSide: true },
  },
  ruleChecks: carrierRuleChecks,
  // R10 / R11: reactions to a caller cut off by a dropout and to a barge-in (channel runs).
  channelRules: { dropout: 'R10', bargeIn: 'R11' },
  envFunctions: carrierEnvFunctions,
});
