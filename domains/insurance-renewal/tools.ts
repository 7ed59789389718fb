/**
 * Tools of the insurance-renewal domain: an insurer's outbound renewal line for car insurance.
 *
 * Units as in the carrier domain: money is integer fen in `_fen` columns, yuan (at most 2
 * decimals) in tool arguments and results; dates are China Standard Time from `ctx.now()`.
 * The callee holds two user tools (dual control): a look-up of the quote another insurer gave
 * them and the payment of a renewal order from their own wallet.
 */
import { z } from 'zod';
import { ToolError, defineTool, type ToolDb, type ToolDefinition } from '../../src/core/schema/domain.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { localDate, localTimestamp, normalizePhone, num, str, toFen, toYuan } from '../carrier/tools.ts';

/** The three cover tiers, cheapest first. */
export const TIERS = ['basic', 'standard', 'full'] as const;

/**
 * The discount ladder (policy R3), released one step at a time in this order: cumulative percent
 * off the list price after `level` steps is `DISCOUNT_LADDER[level - 1].percentOff`.
 */
export const DISCOUNT_LADDER: readonly { name: string; percentOff: number }[] = [
  { name: '老客户续保优惠', percentOff: 5 },
  { name: '无出险优惠', percentOff: 10 },
  { name: '经理特批优惠', percentOff: 15 },
];

/** Price in fen of a tier listed at `listFen` after `level` ladder steps (rounded to the fen). */
export function priceAt(listFen: number, level: number): number {
  const off = level === 0 ? 0 : DISCOUNT_LADDER[level - 1]!.percentOff;
  return Math.round((listFen * (100 - off)) / 100);
}

/** Latest callback date allowed after today (policy R6), days. */
export const CALLBACK_WINDOW_DAYS = 7;

async function policyById(db: ToolDb, policyId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM policies WHERE policy_id = ?', [policyId]);
  if (!row) throw new ToolError(`policy ${policyId} not found`);
  return row;
}

async function orderById(db: ToolDb, orderId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM renewal_orders WHERE order_id = ?', [orderId]);
  if (!row) throw new ToolError(`order ${orderId} not found`);
  return row;
}

/**
 * Next id with `prefix` in `table.column` (`R0001`, `CB0002`): one more than the largest number
 * after the prefix, 4 digits. Shared by the outbound domains; `table` and `column` are the
 * domain's own names, never caller input.
 */
export async function nextId(db: ToolDb, table: string, column: string, prefix: string): Promise<string> {
  const row = await db.one(`SELECT MAX(CAST(SUBSTR(${column}, ${prefix.length + 1}) AS INTEGER)) AS n FROM ${table}`);
  return `${prefix}${String((row?.n == null ? 0 : Number(row.n)) + 1).padStart(4, '0')}`;
}

function orderView(o: SqlRow) {
  return {
    order_id: str(o, 'order_id'),
    policy_id: str(o, 'policy_id'),
    tier: str(o, 'tier'),
    price: toYuan(num(o, 'price_fen')),
    status: str(o, 'status'),
    paid_at: o.paid_at == null ? null : str(o, 'paid_at'),
  };
}

const Phone = z.string().describe('The 11-digit mobile number, e.g. "13812345678"');
const PolicyId = z.string().describe('Policy id, e.g. "P2001"');
const TierArg = z.enum(TIERS).describe('Cover tier: basic, standard or full');

export const findPolicyByPhone = defineTool({
  name: 'find_policy_by_phone',
  kind: 'read',
  description: "Look up the expiring car-insurance policy of the callee's 11-digit mobile number.",
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const p = await db.one('SELECT * FROM policies WHERE phone = ?', [normalizePhone(phone)]);
    if (!p) throw new ToolError(`no policy with phone ${normalizePhone(phone)}`);
    return {
      policy_id: str(p, 'policy_id'),
      holder_name: str(p, 'holder_name'),
      plate: str(p, 'plate'),
      expires_on: str(p, 'expires_on'),
      status: str(p, 'status'),
    };
  },
});

export const getRenewalQuote = defineTool({
  name: 'get_renewal_quote',
  kind: 'read',
  description:
    'The renewal quote of a policy: each tier with its list price and its price at the discount level released so far (yuan), and the next discount of the ladder that may still be released (null when all are).',
  params: z.object({ policy_id: PolicyId }),
  async run({ db }, { policy_id }) {
    const p = await policyById(db, policy_id);
    const level = num(p, 'discount_level');
    const rows = await db.all('SELECT * FROM quotes WHERE policy_id = ?', [policy_id]);
    const byTier = new Map(rows.map((r) => [str(r, 'tier'), num(r, 'list_fen')]));
    const next = DISCOUNT_LADDER[level];
    return {
      policy_id,
      discount_level: level,
      discounts_released: DISCOUNT_LADDER.slice(0, level).map((d) => d.name),
      tiers: TIERS.filter((t) => byTier.has(t)).map((t) => ({
        tier: t,
        list_price: toYuan(byTier.get(t)!),
        price: toYuan(priceAt(byTier.get(t)!, level)),
      })),
      next_discount: next ? { name: next.name, percent_off: next.percentOff } : null,
    };
  },
});

export const releaseNextDiscount = defineTool({
  name: 'release_next_discount',
  kind: 'write',
  description:
    'Release the next step of the discount ladder for a policy (one step per call, in the fixed order). Returns the new level and prices.',
  spokenAs: '申请下一档续保优惠',
  params: z.object({ policy_id: PolicyId }),
  async run({ db }, { policy_id }) {
    const p = await policyById(db, policy_id);
    const level = num(p, 'discount_level');
    if (str(p, 'status') !== 'expiring') throw new ToolError(`policy ${policy_id} is already renewed`);
    if (level >= DISCOUNT_LADDER.length)
      throw new ToolError(`every discount of policy ${policy_id} is already released`);
    await db.run('UPDATE policies SET discount_level = ? WHERE policy_id = ?', [level + 1, policy_id]);
    const rows = await db.all('SELECT * FROM quotes WHERE policy_id = ? ORDER BY list_fen', [policy_id]);
    return {
      policy_id,
      released: DISCOUNT_LADDER[level]!.name,
      discount_level: level + 1,
      prices: rows.map((r) => ({ tier: str(r, 'tier'), price: toYuan(priceAt(num(r, 'list_fen'), level + 1)) })),
    };
  },
});

export const createRenewalOrder = defineTool({
  name: 'create_renewal_order',
  kind: 'write',
  description:
    'Create an unpaid renewal order for a tier at the price the agent quoted to the callee (yuan). The callee then pays it with their own wallet.',
  spokenAs: '生成续保订单',
  spokenValues: { basic: '基础保障', standard: '标准保障', full: '全面保障' },
  params: z.object({ policy_id: PolicyId, tier: TierArg, price: z.number().describe('Quoted price in yuan') }),
  async run({ db, now }, { policy_id, tier, price }) {
    const p = await policyById(db, policy_id);
    if (str(p, 'status') !== 'expiring') throw new ToolError(`policy ${policy_id} is already renewed`);
    const q = await db.one('SELECT list_fen FROM quotes WHERE policy_id = ? AND tier = ?', [policy_id, tier]);
    if (!q) throw new ToolError(`policy ${policy_id} has no ${tier} quote`);
    const open = await db.one("SELECT order_id FROM renewal_orders WHERE policy_id = ? AND status = 'unpaid'", [
      policy_id,
    ]);
    if (open) throw new ToolError(`policy ${policy_id} already has the unpaid order ${str(open, 'order_id')}`);
    const id = await nextId(db, 'renewal_orders', 'order_id', 'R');
    await db.run(
      "INSERT INTO renewal_orders (order_id, policy_id, tier, price_fen, status, created_at, paid_at) VALUES (?, ?, ?, ?, 'unpaid', ?, NULL)",
      [id, policy_id, tier, toFen(price), localTimestamp(now())],
    );
    return orderView((await orderById(db, id))!);
  },
});

export const getRenewalOrder = defineTool({
  name: 'get_renewal_order',
  kind: 'read',
  description: 'One renewal order with its price (yuan) and status (unpaid, paid).',
  params: z.object({ order_id: z.string().describe('Order id, e.g. "R0001"') }),
  async run({ db }, { order_id }) {
    return orderView(await orderById(db, order_id));
  },
});

export const registerCallback = defineTool({
  name: 'register_callback',
  kind: 'write',
  description: `Register a callback for a policy on a date (YYYY-MM-DD, after today and within ${CALLBACK_WINDOW_DAYS} days) with a short note of where the talk stopped.`,
  spokenAs: '登记回访',
  params: z.object({
    policy_id: PolicyId,
    callback_on: z.string().describe('Date of the callback, YYYY-MM-DD'),
    note: z.string().describe('Where the talk stopped, one sentence'),
  }),
  async run({ db }, { policy_id, callback_on, note }) {
    await policyById(db, policy_id);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(callback_on))
      throw new ToolError(`callback_on must be YYYY-MM-DD, got "${callback_on}"`);
    const id = await nextId(db, 'callbacks', 'callback_id', 'CB');
    await db.run('INSERT INTO callbacks (callback_id, policy_id, callback_on, note) VALUES (?, ?, ?, ?)', [
      id,
      policy_id,
      callback_on,
      note,
    ]);
    return { callback_id: id, policy_id, callback_on };
  },
});

export const checkCompetitorQuote = defineTool({
  name: 'check_competitor_quote',
  kind: 'read',
  description: 'The callee looks up the renewal quote another insurer gave them (yuan).',
  spokenAs: '查一下别家保险公司给您的报价',
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const c = await db.one('SELECT * FROM competitor_quotes WHERE phone = ?', [normalizePhone(phone)]);
    if (!c) throw new ToolError('no quote from another insurer');
    return { company: str(c, 'company'), tier: str(c, 'tier'), price: toYuan(num(c, 'price_fen')) };
  },
});

export const payRenewalOrder = defineTool({
  name: 'pay_renewal_order',
  kind: 'write',
  description: 'The callee pays a renewal order of their own policy in full from their wallet (yuan).',
  spokenAs: '在手机上支付续保订单',
  params: z.object({ phone: Phone, order_id: z.string(), amount: z.number() }),
  async run({ db, now }, { phone, order_id, amount }) {
    const digits = normalizePhone(phone);
    const o = await orderById(db, order_id);
    const p = await policyById(db, str(o, 'policy_id'));
    if (str(p, 'phone') !== digits) throw new ToolError(`order ${order_id} does not belong to phone ${digits}`);
    if (str(o, 'status') === 'paid') throw new ToolError(`order ${order_id} is already paid`);
    const fen = toFen(amount);
    if (fen !== num(o, 'price_fen'))
      throw new ToolError(`amount ${amount} yuan does not match the order price ${toYuan(num(o, 'price_fen'))} yuan`);
    const w = await db.one('SELECT balance_fen FROM wallet WHERE phone = ?', [digits]);
    const balance = w ? num(w, 'balance_fen') : 0;
    if (fen > balance)
      throw new ToolError(`insufficient wallet balance: ${toYuan(balance)} yuan available, ${amount} yuan requested`);
    await db.run('UPDATE wallet SET balance_fen = ? WHERE phone = ?', [balance - fen, digits]);
    await db.run("UPDATE renewal_orders SET status = 'paid', paid_at = ? WHERE order_id = ?", [
      localTimestamp(now()),
      order_id,
    ]);
    await db.run("UPDATE policies SET status = 'renewed' WHERE policy_id = ?", [str(p, 'policy_id')]);
    return { order_id, amount, status: 'paid', paid_on: localDate(now()) };
  },
});

/** The agent's tools, in the order models see them. */
export const tools: readonly ToolDefinition[] = [
  findPolicyByPhone,
  getRenewalQuote,
  releaseNextDiscount,
  createRenewalOrder,
  getRenewalOrder,
  registerCallback,
];

/** The callee's tools (dual control): the competitor quote and their own wallet. */
export const userTools: readonly ToolDefinition[] = [checkCompetitorQuote, payRenewalOrder];
