/**
 * The carrier domain: a mobile carrier's billing line (conversation in Mandarin, zh-CN).
 * Code half only; policy.md, schema.sql, seed.json and tasks.json are read by a platform loader
 * (`src/adapters/node/load-domain.ts`) and joined with `buildDomain`.
 */
import { defineDomain, type RuleCheck, type RuleCheckContext, type EnvFunction } from '../../src/core/schema/domain.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { PREPAID_DAILY_LIMIT_FEN, disputeCutoff, localDate, toYuan, tools, userTools } from './tools.ts';

/** The policy clock: Saturday 2025-03-15 10:00 China Standard Time, ms since the epoch. */
export const CARRIER_NOW_MS = Date.parse('2025-03-15T10:00:00+08:00');

/** Key values (`key[keyColumn]`) of the rows of `table` that `writes` inserted. */
function insertedKeys(writes: readonly WriteEntry[], table: string, keyColumn: string): string[] {
  const out = new Set<string>();
  for (const w of writes) if (w.table === table && w.op === 'insert') out.add(String(w.key[keyColumn]));
  return [...out];
}

/** R3: one bill may receive at most ¥200 per (local) day from the prepaid balance. */
const prepaidDailyLimit: RuleCheck = {
  rule: 'R3',
  description: 'Payments from the prepaid balance to one bill total at most 200 yuan per day.',
  async check({ db, writes, now }: RuleCheckContext) {
    const today = localDate(now());
    for (const id of insertedKeys(writes, 'payments', 'payment_id')) {
      const p = await db.one("SELECT bill_id FROM payments WHERE payment_id = ? AND method = 'prepaid_balance'", [id]);
      if (!p) continue;
      const sum = await db.one(
        "SELECT SUM(amount_fen) AS fen FROM payments WHERE bill_id = ? AND method = 'prepaid_balance' AND substr(paid_at, 1, 10) = ?",
        [p.bill_id as string, today],
      );
      const fen = Number(sum?.fen ?? 0);
      if (fen > PREPAID_DAILY_LIMIT_FEN) {
        return `bill ${String(p.bill_id)} received ${toYuan(fen)} yuan from the prepaid balance on ${today}, above the ${toYuan(PREPAID_DAILY_LIMIT_FEN)} yuan daily limit`;
      }
    }
    return null;
  },
};

/** R4: only charges dated within the last 60 days may be disputed. */
const disputeWindow: RuleCheck = {
  rule: 'R4',
  description: 'A dispute is filed only for a charge dated within 60 days of today.',
  async check({ db, writes, now }: RuleCheckContext) {
    const cutoff = disputeCutoff(now());
    for (const id of insertedKeys(writes, 'disputes', 'dispute_id')) {
      const row = await db.one(
        'SELECT c.charge_id, c.charge_date FROM disputes d JOIN charges c ON c.charge_id = d.charge_id WHERE d.dispute_id = ?',
        [id],
      );
      if (row && String(row.charge_date) < cutoff) {
        return `charge ${String(row.charge_id)} dated ${String(row.charge_date)} is outside the 60-day dispute window (earliest ${cutoff})`;
      }
    }
    return null;
  },
};

/** R4: at most one dispute per charge. */
const oneDisputePerCharge: RuleCheck = {
  rule: 'R4',
  description: 'A charge is disputed at most once.',
  async check({ db, writes }: RuleCheckContext) {
    for (const id of insertedKeys(writes, 'disputes', 'dispute_id')) {
      const row = await db.one(
        'SELECT d.charge_id, (SELECT COUNT(*) FROM disputes x WHERE x.charge_id = d.charge_id) AS n FROM disputes d WHERE d.dispute_id = ?',
        [id],
      );
      if (row && Number(row.n) > 1)
        return `charge ${String(row.charge_id)} now has ${Number(row.n)} disputes; at most one is allowed`;
    }
    return null;
  },
};

/** R5: no plan change while the customer has an overdue bill. */
const noPlanChangeWhenOverdue: RuleCheck = {
  rule: 'R5',
  description: 'A plan change is not scheduled while the customer has an overdue bill.',
  async check({ db, writes }: RuleCheckContext) {
    const changed = writes.filter((w) => w.table === 'customers' && w.column === 'next_plan_id' && w.after !== null);
    for (const w of changed) {
      const customerId = String(w.key.customer_id);
      const overdue = await db.all(
        "SELECT bill_id FROM bills WHERE customer_id = ? AND status = 'overdue' ORDER BY bill_id",
        [customerId],
      );
      if (overdue.length > 0) {
        return `plan change scheduled for customer ${customerId} while bills ${overdue.map((b) => String(b.bill_id)).join(', ')} are overdue`;
      }
    }
    return null;
  },
};

/** Rule checks run after every successful agent write. */
export const carrierRuleChecks: readonly RuleCheck[] = [
  prepaidDailyLimit,
  disputeWindow,
  oneDisputePerCharge,
  noPlanChangeWhenOverdue,
];

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
