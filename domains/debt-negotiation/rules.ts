/**
 * The debt-negotiation policy's rules that a write can break (policy.md R3, R5, R7), as
 * executable rule checks run after every successful agent write.
 */
import type { RuleCheck, RuleCheckContext } from '../../src/core/schema/domain.ts';
import { insertedKeys } from '../carrier/rules.ts';
import { localDate, toYuan } from '../carrier/tools.ts';
import { CALL_HOURS, WINDOW_DAYS, affordability, balanceOf, sharedFinances } from './tools.ts';

const DAY_MS = 86_400_000;

/** Today and the last day of the {@link WINDOW_DAYS} window, `YYYY-MM-DD`. */
function window(now: number): { today: string; last: string } {
  return { today: localDate(now), last: localDate(now + WINDOW_DAYS * DAY_MS) };
}

/**
 * R3: a plan is the system's recommended one for the finances the callee shared — the shortest
 * affordable term at its monthly amount, or the hardship plan only when no term is affordable —
 * so a made-up amount, a skipped term or a monthly amount beyond the callee's means fails.
 */
const planFromAbility: RuleCheck = {
  rule: 'R3',
  description:
    "An instalment plan is the recommended plan for the callee's shared finances (affordable, shortest term).",
  policy: '月供不超过客户每月可支配收入（收入减必要支出再减其他欠款月供）的一半，取能负担的最短期数',
  async check({ db, writes }: RuleCheckContext) {
    for (const id of insertedKeys(writes, 'plans', 'plan_id')) {
      const p = await db.one('SELECT * FROM plans WHERE plan_id = ?', [id]);
      if (!p) continue;
      const account = String(p.account_id);
      const f = await sharedFinances(db, account);
      if (!f) return `plan ${id} was made without the callee's finances`;
      const r = affordability(await balanceOf(db, account), f).recommended;
      const got = `${Number(p.months)} months at ${toYuan(Number(p.monthly_fen))} yuan${Number(p.hardship) ? ' (hardship)' : ''}`;
      if (!r) return `plan ${id} (${got}): no plan is affordable for the callee`;
      if (
        Number(p.months) !== r.months ||
        Number(p.monthly_fen) !== r.monthlyFen ||
        Boolean(Number(p.hardship)) !== r.hardship
      ) {
        return `plan ${id} is ${got}; the recommended plan is ${r.months} months at ${toYuan(r.monthlyFen)} yuan${r.hardship ? ' (hardship)' : ''}`;
      }
    }
    return null;
  },
};

/** R5: a promise to pay falls after today and within the window. */
const promiseWindow: RuleCheck = {
  rule: 'R5',
  description: `A promised payment date is after today and at most ${WINDOW_DAYS} days ahead.`,
  policy: '承诺还款日在今天之后的7天以内',
  async check({ db, writes, now }: RuleCheckContext) {
    const { today, last } = window(now());
    for (const id of insertedKeys(writes, 'promises', 'promise_id')) {
      const on = String((await db.one('SELECT due_on FROM promises WHERE promise_id = ?', [id]))?.due_on);
      if (on <= today || on > last)
        return `promise ${id} is due ${on}; it must be after ${today} and no later than ${last}`;
    }
    return null;
  },
};

/** R7: a callback falls after today, within the window, and inside calling hours. */
const callbackWindow: RuleCheck = {
  rule: 'R7',
  description: `A callback is after today, at most ${WINDOW_DAYS} days ahead, between ${CALL_HOURS.from} and ${CALL_HOURS.to}.`,
  policy: '回访时间在今天之后的7天以内，且在每天8:00到20:00之间',
  async check({ db, writes, now }: RuleCheckContext) {
    const { today, last } = window(now());
    for (const id of insertedKeys(writes, 'callbacks', 'callback_id')) {
      const at = String((await db.one('SELECT callback_at FROM callbacks WHERE callback_id = ?', [id]))?.callback_at);
      const [day = '', time = ''] = at.split(' ');
      if (day <= today || day > last)
        return `callback ${id} is set for ${at}; it must be after ${today} and no later than ${last}`;
      if (time < CALL_HOURS.from || time > CALL_HOURS.to)
        return `callback ${id} is set for ${at}; calls are allowed from ${CALL_HOURS.from} to ${CALL_HOURS.to}`;
    }
    return null;
  },
};

/** Rule checks run after every successful agent write, each quoting the policy.md text it encodes. */
export const debtRuleChecks: readonly RuleCheck[] = [planFromAbility, promiseWindow, callbackWindow];
