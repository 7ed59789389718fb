/**
 * The carrier policy's rules that a write can break (policy.md R3–R5), as executable rule checks
 * run after every successful agent write; see README.md for what the tools refuse by themselves.
 */
import type { RuleCheck, RuleCheckContext } from '../../src/core/schema/domain.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { PREPAID_DAILY_LIMIT_FEN, disputeCutoff, localDate, toYuan } from './tools.ts';

/** Key values (`key[keyColumn]`) of the rows of `table` that `writes` inserted. */
export function insertedKeys(writes: readonly WriteEntry[], table: string, keyColumn: string): string[] {
  const out = new Set<string>();
  for (const w of writes) if (w.table === table && w.op === 'insert') out.add(String(w.key[keyColumn]));
  return [...out];
}

/** R3: one bill may receive at most ¥200 per (local) day from the prepaid balance. */
const prepaidDailyLimit: RuleCheck = {
  rule: 'R3',
  description: 'Payments from the prepaid balance to one bill total at most 200 yuan per day.',
  policy: '同一张账单每天从话费余额缴纳的合计金额不得超过200元',
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
  policy: '只能对费用发生日期在60天以内（含第60天）的单笔费用提交申诉',
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
  policy: '每笔费用最多申诉一次',
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
  policy: '客户有逾期账单时不得办理套餐变更',
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

/** Rule checks run after every successful agent write, each quoting the policy.md text it encodes. */
export const carrierRuleChecks: readonly RuleCheck[] = [
  prepaidDailyLimit,
  disputeWindow,
  oneDisputePerCharge,
  noPlanChangeWhenOverdue,
];
