/**
 * Tools of the carrier domain: a mobile carrier's billing line.
 *
 * Units: the database stores money as integer fen (分, 1 yuan = 100 fen) in columns ending
 * `_fen`; tools take and return yuan as numbers with at most 2 decimals (`21.1` = ¥21.10).
 * Dates are China Standard Time (UTC+8): `YYYY-MM-DD`, timestamps `YYYY-MM-DDTHH:MM:SS+08:00`,
 * all derived from the policy clock `ctx.now()`.
 */
import { z } from 'zod';
import { ToolError, defineTool, type ToolDb, type ToolDefinition } from '../../src/core/schema/domain.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';

/** China Standard Time offset (no daylight saving), ms. */
const CST_OFFSET_MS = 8 * 3_600_000;
const DAY_MS = 86_400_000;

/** Disputes are accepted for charges dated within this many days of today (policy R4). */
export const DISPUTE_WINDOW_DAYS = 60;
/** Most a single bill may be paid from the prepaid balance per day, fen (policy R3: ¥200). */
export const PREPAID_DAILY_LIMIT_FEN = 20_000;

/** Local (UTC+8) calendar date of `ms`: `YYYY-MM-DD`. */
export function localDate(ms: number): string {
  return new Date(ms + CST_OFFSET_MS).toISOString().slice(0, 10);
}

/** Local (UTC+8) timestamp of `ms`, second precision: `YYYY-MM-DDTHH:MM:SS+08:00`. */
export function localTimestamp(ms: number): string {
  return `${new Date(ms + CST_OFFSET_MS).toISOString().slice(0, 19)}+08:00`;
}

/** First day of the billing cycle after the one containing `ms` (cycles are calendar months): `YYYY-MM-01`. */
export function nextCycleStart(ms: number): string {
  const d = new Date(ms + CST_OFFSET_MS);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

/** Earliest charge date (`YYYY-MM-DD`) still inside the dispute window at `ms` (inclusive). */
export function disputeCutoff(ms: number): string {
  return localDate(ms - DISPUTE_WINDOW_DAYS * DAY_MS);
}

/**
 * Yuan → fen. Throws {@link ToolError} unless `yuan` is positive with at most 2 decimals.
 * @returns integer fen
 */
export function toFen(yuan: number): number {
  if (!(yuan > 0)) throw new ToolError(`amount must be greater than 0, got ${yuan}`);
  const fen = Math.round(yuan * 100);
  if (Math.abs(yuan * 100 - fen) > 1e-6) throw new ToolError(`amount must have at most 2 decimal places, got ${yuan}`);
  return fen;
}

/** Fen (integer) → yuan (number with at most 2 decimals). */
export function toYuan(fen: number): number {
  return fen / 100;
}

/** Validate a spoken phone number: spaces and dashes are dropped, then exactly 11 digits. */
export function normalizePhone(phone: string): string {
  const digits = phone.replace(/[\s-]/g, '');
  if (!/^\d{11}$/.test(digits)) throw new ToolError(`phone must be 11 digits, got "${phone}"`);
  return digits;
}

/** A column of a row as a string. */
export const str = (row: SqlRow, col: string): string => String(row[col]);
/** A column of a row as a number. */
export const num = (row: SqlRow, col: string): number => Number(row[col]);

async function customerById(db: ToolDb, customerId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM customers WHERE customer_id = ?', [customerId]);
  if (!row) throw new ToolError(`customer ${customerId} not found`);
  return row;
}

async function billById(db: ToolDb, billId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM bills WHERE bill_id = ?', [billId]);
  if (!row) throw new ToolError(`bill ${billId} not found`);
  return row;
}

/** A bill as tools show it: yuan amounts. */
function billView(b: SqlRow) {
  return {
    bill_id: str(b, 'bill_id'),
    period: str(b, 'period'),
    amount: toYuan(num(b, 'amount_fen')),
    paid: toYuan(num(b, 'paid_fen')),
    outstanding: toYuan(num(b, 'amount_fen') - num(b, 'paid_fen')),
    due_date: str(b, 'due_date'),
    status: str(b, 'status'),
  };
}

const ID_QUERIES = {
  P: 'SELECT MAX(CAST(SUBSTR(payment_id, 2) AS INTEGER)) AS n FROM payments',
  D: 'SELECT MAX(CAST(SUBSTR(dispute_id, 2) AS INTEGER)) AS n FROM disputes',
} as const;

/** Next payment (`P0090`) or dispute (`D0003`) id: one more than the largest existing number. */
async function nextId(db: ToolDb, prefix: keyof typeof ID_QUERIES): Promise<string> {
  const row = await db.one(ID_QUERIES[prefix]);
  const n = row?.n == null ? 0 : Number(row.n);
  return `${prefix}${String(n + 1).padStart(4, '0')}`;
}

/** Throws when `bill` is settled or `fen` is more than its outstanding amount. */
function checkPayable(bill: SqlRow, fen: number): void {
  const outstanding = num(bill, 'amount_fen') - num(bill, 'paid_fen');
  const billId = str(bill, 'bill_id');
  if (outstanding === 0) throw new ToolError(`bill ${billId} is already paid`);
  if (fen > outstanding) {
    throw new ToolError(
      `amount ${toYuan(fen)} yuan exceeds the outstanding ${toYuan(outstanding)} yuan of bill ${billId}`,
    );
  }
}

/**
 * Record a payment of `fen` on `bill` (already checked with {@link checkPayable}): insert a
 * payments row stamped `nowMs` and raise the bill's `paid_fen`; the status becomes `paid` when
 * nothing is outstanding.
 */
async function applyPayment(
  db: ToolDb,
  bill: SqlRow,
  fen: number,
  method: 'prepaid_balance' | 'wallet',
  nowMs: number,
): Promise<{ payment_id: string; bill_status: string; bill_outstanding: number }> {
  const billId = str(bill, 'bill_id');
  const paymentId = await nextId(db, 'P');
  await db.run(
    'INSERT INTO payments (payment_id, customer_id, bill_id, amount_fen, method, paid_at) VALUES (?, ?, ?, ?, ?, ?)',
    [paymentId, str(bill, 'customer_id'), billId, fen, method, localTimestamp(nowMs)],
  );
  const paidFen = num(bill, 'paid_fen') + fen;
  const status = paidFen === num(bill, 'amount_fen') ? 'paid' : str(bill, 'status');
  await db.run('UPDATE bills SET paid_fen = ?, status = ? WHERE bill_id = ?', [paidFen, status, billId]);
  return { payment_id: paymentId, bill_status: status, bill_outstanding: toYuan(num(bill, 'amount_fen') - paidFen) };
}

const Phone = z.string().describe('The 11-digit mobile number, e.g. "13812345678"');
const CustomerId = z.string().describe('Customer id, e.g. "C1001"');
const BillId = z.string().describe('Bill id, e.g. "B10004"');
const Amount = z.number().describe('Amount in yuan (CNY), positive, at most 2 decimals, e.g. 21.1');

/** Reasons a charge can be disputed. */
export const DISPUTE_REASONS = ['not_subscribed', 'service_not_received', 'wrong_amount', 'duplicate_charge'] as const;

export const findCustomerByPhone = defineTool({
  name: 'find_customer_by_phone',
  kind: 'read',
  description:
    'Look up a customer account by its 11-digit mobile number. Returns the account with its plan and prepaid balance (yuan).',
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const digits = normalizePhone(phone);
    const c = await db.one(
      'SELECT c.*, p.name AS plan_name FROM customers c JOIN plans p ON p.plan_id = c.plan_id WHERE c.phone = ?',
      [digits],
    );
    if (!c) throw new ToolError(`no customer with phone ${digits}`);
    return {
      customer_id: str(c, 'customer_id'),
      name: str(c, 'name'),
      phone: str(c, 'phone'),
      status: str(c, 'status'),
      plan_id: str(c, 'plan_id'),
      plan_name: str(c, 'plan_name'),
      next_plan_id: c.next_plan_id == null ? null : str(c, 'next_plan_id'),
      prepaid_balance: toYuan(num(c, 'prepaid_balance_fen')),
    };
  },
});

export const getBills = defineTool({
  name: 'get_bills',
  kind: 'read',
  description:
    'List all bills of a customer, oldest period first, with amount, paid and outstanding in yuan and status (unpaid, paid, overdue).',
  params: z.object({ customer_id: CustomerId }),
  async run({ db }, { customer_id }) {
    await customerById(db, customer_id);
    const rows = await db.all('SELECT * FROM bills WHERE customer_id = ? ORDER BY period, bill_id', [customer_id]);
    return { customer_id, bills: rows.map(billView) };
  },
});

export const getBillDetails = defineTool({
  name: 'get_bill_details',
  kind: 'read',
  description: 'One bill with its itemized charges (yuan), each with its date and whether it has been disputed.',
  params: z.object({ bill_id: BillId }),
  async run({ db }, { bill_id }) {
    const bill = await billById(db, bill_id);
    const charges = await db.all(
      `SELECT c.*, (SELECT MAX(d.dispute_id) FROM disputes d WHERE d.charge_id = c.charge_id) AS dispute_id
       FROM charges c WHERE c.bill_id = ? ORDER BY c.charge_date, c.charge_id`,
      [bill_id],
    );
    return {
      ...billView(bill),
      customer_id: str(bill, 'customer_id'),
      charges: charges.map((c) => ({
        charge_id: str(c, 'charge_id'),
        description: str(c, 'description'),
        amount: toYuan(num(c, 'amount_fen')),
        charge_date: str(c, 'charge_date'),
        disputed: num(c, 'disputed') === 1,
        dispute_id: c.dispute_id == null ? null : str(c, 'dispute_id'),
      })),
    };
  },
});

export const getPayments = defineTool({
  name: 'get_payments',
  kind: 'read',
  description: 'List all recorded payments of a customer, oldest first (amount in yuan, method, time).',
  params: z.object({ customer_id: CustomerId }),
  async run({ db }, { customer_id }) {
    await customerById(db, customer_id);
    const rows = await db.all('SELECT * FROM payments WHERE customer_id = ? ORDER BY paid_at, payment_id', [
      customer_id,
    ]);
    return {
      customer_id,
      payments: rows.map((p) => ({
        payment_id: str(p, 'payment_id'),
        bill_id: str(p, 'bill_id'),
        amount: toYuan(num(p, 'amount_fen')),
        method: str(p, 'method'),
        paid_at: str(p, 'paid_at'),
      })),
    };
  },
});

export const listPlans = defineTool({
  name: 'list_plans',
  kind: 'read',
  description: 'List the available plans with monthly fee (yuan), data (GB) and voice minutes.',
  params: z.object({}),
  async run({ db }) {
    const rows = await db.all('SELECT * FROM plans ORDER BY monthly_fee_fen, plan_id');
    return {
      plans: rows.map((p) => ({
        plan_id: str(p, 'plan_id'),
        name: str(p, 'name'),
        monthly_fee: toYuan(num(p, 'monthly_fee_fen')),
        data_gb: num(p, 'data_gb'),
        voice_minutes: num(p, 'voice_minutes'),
      })),
    };
  },
});

export const changePlan = defineTool({
  name: 'change_plan',
  kind: 'write',
  description:
    "Schedule a plan change. It takes effect on the first day of the next billing cycle; the current cycle's plan is unchanged.",
  spokenAs: '为您变更套餐，下个账期生效',
  operationCues: ['套餐', 'plan'],
  params: z.object({ customer_id: CustomerId, plan_id: z.string().describe('Target plan id, e.g. "PL58"') }),
  async run({ db, now }, { customer_id, plan_id }) {
    const c = await customerById(db, customer_id);
    const plan = await db.one('SELECT plan_id FROM plans WHERE plan_id = ?', [plan_id]);
    if (!plan) throw new ToolError(`plan ${plan_id} not found`);
    const effective = nextCycleStart(now());
    if (str(c, 'plan_id') === plan_id) throw new ToolError(`customer ${customer_id} is already on plan ${plan_id}`);
    if (c.next_plan_id === plan_id) {
      throw new ToolError(`plan ${plan_id} is already scheduled for customer ${customer_id} from ${effective}`);
    }
    await db.run('UPDATE customers SET next_plan_id = ? WHERE customer_id = ?', [plan_id, customer_id]);
    return { customer_id, plan_id: str(c, 'plan_id'), next_plan_id: plan_id, effective_from: effective };
  },
});

export const payBillFromBalance = defineTool({
  name: 'pay_bill_from_balance',
  kind: 'write',
  description: "Pay (part of) one of the customer's bills from the customer's prepaid balance. Amount in yuan.",
  spokenAs: '用话费余额缴纳账单',
  operationCues: ['缴', '交', '付', '扣', 'pay'],
  params: z.object({ customer_id: CustomerId, bill_id: BillId, amount: Amount }),
  async run({ db, now }, { customer_id, bill_id, amount }) {
    const fen = toFen(amount);
    const c = await customerById(db, customer_id);
    const bill = await billById(db, bill_id);
    if (str(bill, 'customer_id') !== customer_id) {
      throw new ToolError(`bill ${bill_id} does not belong to customer ${customer_id}`);
    }
    checkPayable(bill, fen);
    const balance = num(c, 'prepaid_balance_fen');
    if (fen > balance) {
      throw new ToolError(
        `insufficient prepaid balance: ${toYuan(balance)} yuan available, ${toYuan(fen)} yuan requested`,
      );
    }
    await db.run('UPDATE customers SET prepaid_balance_fen = ? WHERE customer_id = ?', [balance - fen, customer_id]);
    const paid = await applyPayment(db, bill, fen, 'prepaid_balance', now());
    return {
      payment_id: paid.payment_id,
      bill_id,
      amount: toYuan(fen),
      method: 'prepaid_balance',
      bill_status: paid.bill_status,
      bill_outstanding: paid.bill_outstanding,
      prepaid_balance: toYuan(balance - fen),
    };
  },
});

export const fileDispute = defineTool({
  name: 'file_dispute',
  kind: 'write',
  description:
    'Open a dispute on one charge of a bill. reason: not_subscribed (never ordered the service), service_not_received, wrong_amount, duplicate_charge.',
  spokenAs: '对这笔费用提交争议申诉',
  spokenValues: {
    not_subscribed: '未开通该业务',
    service_not_received: '未收到服务',
    wrong_amount: '金额有误',
    duplicate_charge: '重复扣费',
  },
  operationCues: ['申诉', '争议', 'dispute'],
  params: z.object({ charge_id: z.string().describe('Charge id, e.g. "CH00020"'), reason: z.enum(DISPUTE_REASONS) }),
  async run({ db, now }, { charge_id, reason }) {
    const charge = await db.one('SELECT charge_id FROM charges WHERE charge_id = ?', [charge_id]);
    if (!charge) throw new ToolError(`charge ${charge_id} not found`);
    const disputeId = await nextId(db, 'D');
    const createdAt = localTimestamp(now());
    await db.run(
      "INSERT INTO disputes (dispute_id, charge_id, reason, status, created_at) VALUES (?, ?, ?, 'open', ?)",
      [disputeId, charge_id, reason, createdAt],
    );
    await db.run('UPDATE charges SET disputed = 1 WHERE charge_id = ?', [charge_id]);
    return { dispute_id: disputeId, charge_id, reason, status: 'open', created_at: createdAt };
  },
});

/** What {@link transferToHumanAgents} returns. */
export const TRANSFER_RESULT = 'Transferred to a human agent. Tell the caller they are being connected.';

export const transferToHumanAgents = defineTool({
  name: 'transfer_to_human_agents',
  kind: 'generic',
  description:
    'Hand the call to a human agent, with a one-sentence summary of what the caller needs. Use for requests the tools cannot handle.',
  params: z.object({ summary: z.string().min(1) }),
  async run() {
    return TRANSFER_RESULT;
  },
});

export const think = defineTool({
  name: 'think',
  kind: 'think',
  description: 'Think step by step in private. Changes nothing and returns nothing.',
  params: z.object({ thought: z.string() }),
  async run() {
    return '';
  },
});

/** The caller's wallet row, or a ToolError. */
async function walletOf(db: ToolDb, phone: string): Promise<{ phone: string; balanceFen: number }> {
  const digits = normalizePhone(phone);
  const w = await db.one('SELECT balance_fen FROM wallet WHERE phone = ?', [digits]);
  if (!w) throw new ToolError(`no wallet for phone ${digits}`);
  return { phone: digits, balanceFen: num(w, 'balance_fen') };
}

export const checkWalletBalance = defineTool({
  name: 'check_wallet_balance',
  kind: 'read',
  description: "Check the balance (yuan) of the caller's own mobile wallet.",
  spokenAs: '在手机钱包里查看一下余额',
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const w = await walletOf(db, phone);
    return { phone: w.phone, balance: toYuan(w.balanceFen) };
  },
});

export const payBillWithWallet = defineTool({
  name: 'pay_bill_with_wallet',
  kind: 'write',
  description: "Pay (part of) a bill of the caller's own number from the caller's mobile wallet. Amount in yuan.",
  spokenAs: '在手机钱包里缴纳这张账单',
  params: z.object({ phone: Phone, bill_id: BillId, amount: Amount }),
  async run({ db, now }, { phone, bill_id, amount }) {
    const fen = toFen(amount);
    const w = await walletOf(db, phone);
    const bill = await billById(db, bill_id);
    const owner = await db.one('SELECT phone FROM customers WHERE customer_id = ?', [str(bill, 'customer_id')]);
    if (owner?.phone !== w.phone) throw new ToolError(`bill ${bill_id} does not belong to phone ${w.phone}`);
    checkPayable(bill, fen);
    if (fen > w.balanceFen) {
      throw new ToolError(
        `insufficient wallet balance: ${toYuan(w.balanceFen)} yuan available, ${toYuan(fen)} yuan requested`,
      );
    }
    await db.run('UPDATE wallet SET balance_fen = ? WHERE phone = ?', [w.balanceFen - fen, w.phone]);
    const paid = await applyPayment(db, bill, fen, 'wallet', now());
    return {
      payment_id: paid.payment_id,
      bill_id,
      amount: toYuan(fen),
      method: 'wallet',
      bill_status: paid.bill_status,
      bill_outstanding: paid.bill_outstanding,
      wallet_balance: toYuan(w.balanceFen - fen),
    };
  },
});

/** The agent's tools, in the order models see them. */
export const tools: readonly ToolDefinition[] = [
  findCustomerByPhone,
  getBills,
  getBillDetails,
  getPayments,
  listPlans,
  changePlan,
  payBillFromBalance,
  fileDispute,
  transferToHumanAgents,
  think,
];

/** The caller's tools (dual control): the caller's own mobile wallet. */
export const userTools: readonly ToolDefinition[] = [checkWalletBalance, payBillWithWallet];
