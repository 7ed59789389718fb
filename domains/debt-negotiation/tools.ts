/**
 * Tools of the debt-negotiation domain: a consumer lender's outbound line for overdue credit
 * loans.
 *
 * Units as in the carrier domain: money is integer fen in `_fen` columns, yuan in tool arguments
 * and results; dates are China Standard Time from `ctx.now()`. The callee holds four user tools
 * (dual control): sharing their real monthly finances with the lender (the only way the agent
 * learns the callee's ability to pay), a look-up of their own bank records, signing a plan and
 * paying the debt from their own wallet.
 */
import { z } from 'zod';
import { ToolError, defineTool, type ToolDb, type ToolDefinition } from '../../src/core/schema/domain.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { localDate, localTimestamp, normalizePhone, num, str, toFen, toYuan } from '../carrier/tools.ts';
import { nextId } from '../insurance-renewal/tools.ts';

/** Ordinary instalment terms in months, shortest first (policy R3). */
export const TERMS = [3, 6, 12, 24] as const;

/** Months of the hardship plan: late fees waived, the rest over this many months (policy R3). */
export const HARDSHIP_MONTHS = 24;

/** Share of the disposable income a monthly instalment may take (policy R3): one half. */
export const AFFORDABLE_SHARE = 0.5;

/** Latest promise or callback date after today (policy R5, R7), days. */
export const WINDOW_DAYS = 7;

/** Hours of the day a callback may be set for (policy R7): from 08:00 up to and including 20:00. */
export const CALL_HOURS = { from: '08:00', to: '20:00' } as const;

/** An account's money, fen: principal, late fee, paid so far, and what is owed now. */
export interface Balance {
  principalFen: number;
  lateFeeFen: number;
  paidFen: number;
  owedFen: number;
}

/** A callee's monthly finances as shared (fen). */
export interface Finances {
  incomeFen: number;
  expensesFen: number;
  otherDebtsFen: number;
}

/** One instalment option: months, monthly amount (fen), and whether the callee can afford it. */
export interface PlanOption {
  months: number;
  monthlyFen: number;
  hardship: boolean;
  affordable: boolean;
}

/** What {@link affordability} computes for an account and the callee's finances. */
export interface Affordability {
  /** Income − expenses − other debts' monthly payments, fen (may be negative). */
  disposableFen: number;
  /** Most a monthly instalment may be: {@link AFFORDABLE_SHARE} of the disposable income, whole yuan down, at least 0. */
  affordableFen: number;
  /** The ordinary terms ({@link TERMS}) and then the hardship plan. */
  options: PlanOption[];
  /** Policy R3's plan: the shortest affordable ordinary term, else the hardship plan if affordable, else null. */
  recommended: PlanOption | null;
}

/** Monthly instalment of `fen` over `months`, rounded up to the whole yuan. */
export function monthlyFen(fen: number, months: number): number {
  return Math.ceil(fen / months / 100) * 100;
}

/**
 * The plan options of policy R3 for a balance and the callee's finances: each ordinary term's
 * monthly amount on the whole owed sum, the hardship plan's on the owed sum without late fees
 * over {@link HARDSHIP_MONTHS}; the recommended one is the shortest affordable ordinary term,
 * else the hardship plan when affordable, else none.
 */
export function affordability(b: Balance, f: Finances): Affordability {
  const disposableFen = f.incomeFen - f.expensesFen - f.otherDebtsFen;
  const affordableFen = Math.max(0, Math.floor((disposableFen * AFFORDABLE_SHARE) / 100) * 100);
  const option = (months: number, fen: number, hardship: boolean): PlanOption => {
    const m = monthlyFen(fen, months);
    return { months, monthlyFen: m, hardship, affordable: m <= affordableFen };
  };
  const ordinary = TERMS.map((months) => option(months, b.owedFen, false));
  const hardship = option(HARDSHIP_MONTHS, Math.max(0, b.owedFen - b.lateFeeFen), true);
  const recommended = ordinary.find((o) => o.affordable) ?? (hardship.affordable ? hardship : null);
  return { disposableFen, affordableFen, options: [...ordinary, hardship], recommended };
}

async function accountById(db: ToolDb, accountId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM accounts WHERE account_id = ?', [accountId]);
  if (!row) throw new ToolError(`account ${accountId} not found`);
  return row;
}

/** The money of an account (see {@link Balance}). @throws ToolError for an unknown account. */
export async function balanceOf(db: Pick<ToolDb, 'one'>, accountId: string): Promise<Balance> {
  const a = await db.one('SELECT principal_fen, late_fee_fen FROM accounts WHERE account_id = ?', [accountId]);
  if (!a) throw new ToolError(`account ${accountId} not found`);
  const p = await db.one('SELECT COALESCE(SUM(amount_fen), 0) AS paid FROM payments WHERE account_id = ?', [accountId]);
  const principalFen = num(a, 'principal_fen');
  const lateFeeFen = num(a, 'late_fee_fen');
  const paidFen = Number(p?.paid ?? 0);
  return { principalFen, lateFeeFen, paidFen, owedFen: Math.max(0, principalFen + lateFeeFen - paidFen) };
}

/** The finances the callee shared for an account, or null when they have not. */
export async function sharedFinances(db: Pick<ToolDb, 'one'>, accountId: string): Promise<Finances | null> {
  const r = await db.one('SELECT * FROM assessments WHERE account_id = ?', [accountId]);
  return r
    ? { incomeFen: num(r, 'income_fen'), expensesFen: num(r, 'expenses_fen'), otherDebtsFen: num(r, 'other_debts_fen') }
    : null;
}

const optionView = (o: PlanOption) => ({
  months: o.months,
  monthly_amount: toYuan(o.monthlyFen),
  hardship: o.hardship,
  affordable: o.affordable,
});

async function planById(db: ToolDb, planId: string): Promise<SqlRow> {
  const row = await db.one('SELECT * FROM plans WHERE plan_id = ?', [planId]);
  if (!row) throw new ToolError(`plan ${planId} not found`);
  return row;
}

function planView(p: SqlRow) {
  return {
    plan_id: str(p, 'plan_id'),
    account_id: str(p, 'account_id'),
    months: num(p, 'months'),
    monthly_amount: toYuan(num(p, 'monthly_fen')),
    hardship: num(p, 'hardship') === 1,
    status: str(p, 'status'),
  };
}

/** The account of a callee's phone (user tools act only on their own account). */
async function ownAccount(db: ToolDb, phone: string, accountId: string): Promise<SqlRow> {
  const digits = normalizePhone(phone);
  const a = await accountById(db, accountId);
  if (str(a, 'phone') !== digits) throw new ToolError(`account ${accountId} does not belong to phone ${digits}`);
  return a;
}

const Phone = z.string().describe('The 11-digit mobile number, e.g. "13800020001"');
const AccountId = z.string().describe('Account id, e.g. "D3001"');

export const findAccountByPhone = defineTool({
  name: 'find_account_by_phone',
  kind: 'read',
  description: "Look up the overdue loan account of the callee's 11-digit mobile number.",
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const a = await db.one('SELECT * FROM accounts WHERE phone = ?', [normalizePhone(phone)]);
    if (!a) throw new ToolError(`no account with phone ${normalizePhone(phone)}`);
    return {
      account_id: str(a, 'account_id'),
      debtor_name: str(a, 'debtor_name'),
      product: str(a, 'product'),
      overdue_since: str(a, 'overdue_since'),
      status: str(a, 'status'),
    };
  },
});

export const getBalance = defineTool({
  name: 'get_balance',
  kind: 'read',
  description:
    'What an account owes now (yuan): principal, late fee, paid so far, owed, and every payment received with its date.',
  params: z.object({ account_id: AccountId }),
  async run({ db }, { account_id }) {
    const a = await accountById(db, account_id);
    const b = await balanceOf(db, account_id);
    const payments = await db.all('SELECT * FROM payments WHERE account_id = ? ORDER BY payment_id', [account_id]);
    return {
      account_id,
      status: str(a, 'status'),
      principal: toYuan(b.principalFen),
      late_fee: toYuan(b.lateFeeFen),
      paid: toYuan(b.paidFen),
      owed: toYuan(b.owedFen),
      payments: payments.map((p) => ({
        payment_id: str(p, 'payment_id'),
        amount: toYuan(num(p, 'amount_fen')),
        paid_on: str(p, 'paid_on'),
        source: str(p, 'source'),
      })),
    };
  },
});

export const assessAffordability = defineTool({
  name: 'assess_affordability',
  kind: 'read',
  description: `The callee's ability to pay, from the finances they shared (share_finances): disposable and affordable monthly amount (yuan), each instalment option (${TERMS.join(', ')} months, then the hardship plan without late fees over ${HARDSHIP_MONTHS} months) and the recommended one (null when none is affordable).`,
  params: z.object({ account_id: AccountId }),
  async run({ db }, { account_id }) {
    await accountById(db, account_id);
    const f = await sharedFinances(db, account_id);
    if (!f) throw new ToolError(`the callee has not shared their finances for account ${account_id} yet`);
    const r = affordability(await balanceOf(db, account_id), f);
    return {
      account_id,
      disposable_monthly: toYuan(r.disposableFen),
      affordable_monthly: toYuan(r.affordableFen),
      options: r.options.map(optionView),
      recommended: r.recommended ? optionView(r.recommended) : null,
    };
  },
});

export const getReliefOptions = defineTool({
  name: 'get_relief_options',
  kind: 'read',
  description: `The standard instalment terms of an account without the callee's finances: each option's monthly amount (yuan), the hardship plan (late fees waived, ${HARDSHIP_MONTHS} months) included.`,
  params: z.object({ account_id: AccountId }),
  async run({ db }, { account_id }) {
    await accountById(db, account_id);
    const r = affordability(await balanceOf(db, account_id), { incomeFen: 0, expensesFen: 0, otherDebtsFen: 0 });
    return {
      account_id,
      options: r.options.map((o) => ({ months: o.months, monthly_amount: toYuan(o.monthlyFen), hardship: o.hardship })),
    };
  },
});

export const createInstalmentPlan = defineTool({
  name: 'create_instalment_plan',
  kind: 'write',
  description:
    'Create a pending instalment plan for an account (months, hardship flag, monthly amount in yuan as quoted to the callee). The callee then signs it on their phone.',
  spokenAs: '办理分期方案',
  params: z.object({
    account_id: AccountId,
    months: z.number().int().describe('Number of monthly instalments'),
    hardship: z.boolean().describe('True for the hardship plan (late fees waived)'),
    monthly_amount: z.number().describe('Monthly amount in yuan'),
  }),
  async run({ db, now }, { account_id, months, hardship, monthly_amount }) {
    const a = await accountById(db, account_id);
    if (str(a, 'status') !== 'overdue')
      throw new ToolError(`account ${account_id} is ${str(a, 'status')}, not overdue`);
    if (!(await sharedFinances(db, account_id)))
      throw new ToolError(`the callee has not shared their finances for account ${account_id} yet`);
    const allowed = hardship ? [HARDSHIP_MONTHS] : [...TERMS];
    if (!allowed.includes(months))
      throw new ToolError(`months must be one of ${allowed.join(', ')}${hardship ? ' for a hardship plan' : ''}`);
    const id = await nextId(db, 'plans', 'plan_id', 'PL');
    await db.run(
      "INSERT INTO plans (plan_id, account_id, months, monthly_fen, hardship, status, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)",
      [id, account_id, months, toFen(monthly_amount), hardship ? 1 : 0, localTimestamp(now())],
    );
    return planView(await planById(db, id));
  },
});

export const getPlan = defineTool({
  name: 'get_plan',
  kind: 'read',
  description: 'One instalment plan with its months, monthly amount (yuan) and status (pending, active).',
  params: z.object({ plan_id: z.string().describe('Plan id, e.g. "PL0001"') }),
  async run({ db }, { plan_id }) {
    return planView(await planById(db, plan_id));
  },
});

export const recordPromiseToPay = defineTool({
  name: 'record_promise_to_pay',
  kind: 'write',
  description: `Record the callee's promise to pay an amount (yuan) by a date (YYYY-MM-DD, after today and within ${WINDOW_DAYS} days).`,
  spokenAs: '记录还款承诺',
  params: z.object({
    account_id: AccountId,
    amount: z.number().describe('Promised amount in yuan'),
    due_on: z.string().describe('Date by which the callee pays, YYYY-MM-DD'),
  }),
  async run({ db, now }, { account_id, amount, due_on }) {
    await accountById(db, account_id);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(due_on)) throw new ToolError(`due_on must be YYYY-MM-DD, got "${due_on}"`);
    const id = await nextId(db, 'promises', 'promise_id', 'PR');
    await db.run(
      'INSERT INTO promises (promise_id, account_id, amount_fen, due_on, created_at) VALUES (?, ?, ?, ?, ?)',
      [id, account_id, toFen(amount), due_on, localTimestamp(now())],
    );
    return { promise_id: id, account_id, amount, due_on };
  },
});

export const openDispute = defineTool({
  name: 'open_dispute',
  kind: 'write',
  description:
    "Register the callee's dispute of the amount owed; the account is marked disputed and collection stops until it is reviewed.",
  spokenAs: '登记金额争议',
  params: z.object({ account_id: AccountId, reason: z.string().describe('What the callee disputes, one sentence') }),
  async run({ db, now }, { account_id, reason }) {
    const a = await accountById(db, account_id);
    if (str(a, 'status') === 'settled') throw new ToolError(`account ${account_id} is settled`);
    const id = await nextId(db, 'disputes', 'dispute_id', 'DS');
    await db.run('INSERT INTO disputes (dispute_id, account_id, reason, created_at) VALUES (?, ?, ?, ?)', [
      id,
      account_id,
      reason,
      localTimestamp(now()),
    ]);
    await db.run("UPDATE accounts SET status = 'disputed' WHERE account_id = ?", [account_id]);
    return { dispute_id: id, account_id, status: 'disputed' };
  },
});

export const markSettled = defineTool({
  name: 'mark_settled',
  kind: 'write',
  description: 'Close an account whose payments cover everything owed (fails while anything is owed).',
  spokenAs: '办理结清',
  params: z.object({ account_id: AccountId }),
  async run({ db }, { account_id }) {
    await accountById(db, account_id);
    const b = await balanceOf(db, account_id);
    if (b.owedFen > 0) throw new ToolError(`account ${account_id} still owes ${toYuan(b.owedFen)} yuan`);
    await db.run("UPDATE accounts SET status = 'settled' WHERE account_id = ?", [account_id]);
    return { account_id, status: 'settled', paid: toYuan(b.paidFen) };
  },
});

export const registerCallback = defineTool({
  name: 'register_callback',
  kind: 'write',
  description: `Register a callback at a time (YYYY-MM-DD HH:MM, after today, within ${WINDOW_DAYS} days, between ${CALL_HOURS.from} and ${CALL_HOURS.to}) with a short note of where the talk stopped.`,
  spokenAs: '登记回访',
  params: z.object({
    account_id: AccountId,
    callback_at: z.string().describe('Time of the callback, YYYY-MM-DD HH:MM'),
    note: z.string().describe('Where the talk stopped, one sentence'),
  }),
  async run({ db }, { account_id, callback_at, note }) {
    await accountById(db, account_id);
    if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(callback_at))
      throw new ToolError(`callback_at must be YYYY-MM-DD HH:MM, got "${callback_at}"`);
    const id = await nextId(db, 'callbacks', 'callback_id', 'CB');
    await db.run('INSERT INTO callbacks (callback_id, account_id, callback_at, note) VALUES (?, ?, ?, ?)', [
      id,
      account_id,
      callback_at,
      note,
    ]);
    return { callback_id: id, account_id, callback_at };
  },
});

export const shareFinances = defineTool({
  name: 'share_finances',
  kind: 'write',
  description:
    "The callee authorizes the lender to see their monthly income, essential expenses and other debts' monthly payments (their real figures) for an affordability check.",
  spokenAs: '在手机上授权查询您的收支情况',
  params: z.object({ phone: Phone, account_id: AccountId }),
  async run({ db, now }, { phone, account_id }) {
    await ownAccount(db, phone, account_id);
    const f = await db.one('SELECT * FROM finances WHERE phone = ?', [normalizePhone(phone)]);
    if (!f) throw new ToolError('no finances on record for this phone');
    await db.run('DELETE FROM assessments WHERE account_id = ?', [account_id]);
    await db.run(
      'INSERT INTO assessments (account_id, income_fen, expenses_fen, other_debts_fen, shared_at) VALUES (?, ?, ?, ?, ?)',
      [account_id, num(f, 'income_fen'), num(f, 'expenses_fen'), num(f, 'other_debts_fen'), localTimestamp(now())],
    );
    return {
      shared: true,
      monthly_income: toYuan(num(f, 'income_fen')),
      monthly_expenses: toYuan(num(f, 'expenses_fen')),
      other_debts_monthly: toYuan(num(f, 'other_debts_fen')),
    };
  },
});

export const checkMyPayments = defineTool({
  name: 'check_my_payments',
  kind: 'read',
  description: 'The callee looks up their own bank records of payments to the lender (yuan).',
  spokenAs: '查一下您自己银行卡的还款记录',
  params: z.object({ phone: Phone }),
  async run({ db }, { phone }) {
    const rows = await db.all('SELECT * FROM bank_records WHERE phone = ? ORDER BY paid_on', [normalizePhone(phone)]);
    return rows.map((r) => ({
      amount: toYuan(num(r, 'amount_fen')),
      paid_on: str(r, 'paid_on'),
      payee: str(r, 'payee'),
    }));
  },
});

export const signPlan = defineTool({
  name: 'sign_plan',
  kind: 'write',
  description:
    'The callee signs a pending instalment plan of their own account on their phone; the plan becomes active.',
  spokenAs: '在手机上签署分期方案',
  params: z.object({ phone: Phone, plan_id: z.string() }),
  async run({ db }, { phone, plan_id }) {
    const p = await planById(db, plan_id);
    await ownAccount(db, phone, str(p, 'account_id'));
    if (str(p, 'status') !== 'pending') throw new ToolError(`plan ${plan_id} is already ${str(p, 'status')}`);
    await db.run("UPDATE plans SET status = 'active' WHERE plan_id = ?", [plan_id]);
    await db.run("UPDATE accounts SET status = 'plan' WHERE account_id = ?", [str(p, 'account_id')]);
    return { plan_id, status: 'active' };
  },
});

export const payDebt = defineTool({
  name: 'pay_debt',
  kind: 'write',
  description: 'The callee pays everything their account owes from their wallet (yuan); the account is settled.',
  spokenAs: '在手机上还款',
  params: z.object({ phone: Phone, account_id: AccountId, amount: z.number() }),
  async run({ db, now }, { phone, account_id, amount }) {
    const digits = normalizePhone(phone);
    await ownAccount(db, phone, account_id);
    const b = await balanceOf(db, account_id);
    const fen = toFen(amount);
    if (b.owedFen === 0) throw new ToolError(`account ${account_id} owes nothing`);
    if (fen !== b.owedFen)
      throw new ToolError(`amount ${amount} yuan does not match the ${toYuan(b.owedFen)} yuan owed`);
    const w = await db.one('SELECT balance_fen FROM wallet WHERE phone = ?', [digits]);
    const balance = w ? num(w, 'balance_fen') : 0;
    if (fen > balance)
      throw new ToolError(`insufficient wallet balance: ${toYuan(balance)} yuan available, ${amount} yuan requested`);
    const id = await nextId(db, 'payments', 'payment_id', 'PM');
    await db.run('UPDATE wallet SET balance_fen = ? WHERE phone = ?', [balance - fen, digits]);
    await db.run(
      "INSERT INTO payments (payment_id, account_id, amount_fen, paid_on, source) VALUES (?, ?, ?, ?, 'app')",
      [id, account_id, fen, localDate(now())],
    );
    await db.run("UPDATE accounts SET status = 'settled' WHERE account_id = ?", [account_id]);
    return { payment_id: id, amount, status: 'settled', paid_on: localDate(now()) };
  },
});

/** The agent's tools, in the order models see them. */
export const tools: readonly ToolDefinition[] = [
  findAccountByPhone,
  getBalance,
  assessAffordability,
  getReliefOptions,
  createInstalmentPlan,
  getPlan,
  recordPromiseToPay,
  openDispute,
  markSettled,
  registerCallback,
];

/** The callee's tools (dual control): their finances, bank records, signature and wallet. */
export const userTools: readonly ToolDefinition[] = [shareFinances, checkMyPayments, signPlan, payDebt];
