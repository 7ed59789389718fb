/**
 * The insurance-renewal policy's rules that a write can break (policy.md R2, R6), as executable
 * rule checks run after every successful agent write.
 */
import type { RuleCheck, RuleCheckContext } from '../../src/core/schema/domain.ts';
import { insertedKeys } from '../carrier/rules.ts';
import { localDate, toYuan } from '../carrier/tools.ts';
import { CALLBACK_WINDOW_DAYS, priceAt } from './tools.ts';

const DAY_MS = 86_400_000;

/** R2: an order carries the system's current price of its tier (no made-up price). */
const orderAtQuotedPrice: RuleCheck = {
  rule: 'R2',
  description: 'A renewal order is created at the current system price of its tier.',
  policy: '写进续保订单的价格必须是系统当前的报价',
  async check({ db, writes }: RuleCheckContext) {
    for (const id of insertedKeys(writes, 'renewal_orders', 'order_id')) {
      const row = await db.one(
        `SELECT o.order_id, o.tier, o.price_fen, q.list_fen, p.discount_level FROM renewal_orders o
         JOIN quotes q ON q.policy_id = o.policy_id AND q.tier = o.tier
         JOIN policies p ON p.policy_id = o.policy_id WHERE o.order_id = ?`,
        [id],
      );
      if (!row) continue;
      const want = priceAt(Number(row.list_fen), Number(row.discount_level));
      if (Number(row.price_fen) !== want) {
        return `order ${id} (${String(row.tier)}) is priced ${toYuan(Number(row.price_fen))} yuan; the current price is ${toYuan(want)} yuan`;
      }
    }
    return null;
  },
};

/** R6: a callback is set after today and within the callback window. */
const callbackWindow: RuleCheck = {
  rule: 'R6',
  description: `A callback date is after today and at most ${CALLBACK_WINDOW_DAYS} days ahead.`,
  policy: '回访日期在今天之后的7天以内',
  async check({ db, writes, now }: RuleCheckContext) {
    const today = localDate(now());
    const last = localDate(now() + CALLBACK_WINDOW_DAYS * DAY_MS);
    for (const id of insertedKeys(writes, 'callbacks', 'callback_id')) {
      const row = await db.one('SELECT callback_on FROM callbacks WHERE callback_id = ?', [id]);
      const on = String(row?.callback_on);
      if (on <= today || on > last)
        return `callback ${id} is set for ${on}; it must be after ${today} and no later than ${last}`;
    }
    return null;
  },
};

/** Rule checks run after every successful agent write, each quoting the policy.md text it encodes. */
export const insuranceRuleChecks: readonly RuleCheck[] = [orderAtQuotedPrice, callbackWindow];
