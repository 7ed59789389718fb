/**
 * tau2-bench's telecom policy (main_policy.md at the data commit) as executable rule checks over
 * the carrier's database, run before each agent write. Each check quotes the policy text it
 * encodes (`policy`); the gate reports a quote the loaded policy lacks. The rules the tools
 * already enforce (one bill awaiting payment at a time) and the ones state cannot show (checking
 * the bill is paid before saying so, confirming a price) are listed in README.md ("Executable
 * policy").
 */
import type { RuleCheck } from '../../src/core/schema/domain.ts';
import { TAU2_TELECOM_NOW_MS } from './env.ts';

const str = (v: unknown) => String(v);

/** The most data one refuel may add (main_policy.md, "Data Refueling"), GB. */
export const MAX_REFUEL_GB = 2;

/** The policy's date today (2025-02-25, the clock's US Eastern date), `YYYY-MM-DD`. */
const TODAY = new Date(TAU2_TELECOM_NOW_MS - 5 * 3_600_000).toISOString().slice(0, 10);

const paymentRequestOverdueOnly: RuleCheck = {
  rule: 'payment-request-overdue-only',
  description: "A payment request is sent only for a bill whose status is 'Overdue'.",
  policy: 'You should always check that the bill is overdue before sending a payment request.',
  tools: ['send_payment_request'],
  when: 'before',
  async check({ db, args }) {
    const b = await db.one('SELECT status FROM bills WHERE bill_id = ?', [str(args.bill_id)]);
    if (!b || b.status === 'Overdue') return null;
    return `payment request for bill ${str(args.bill_id)} with status '${str(b.status)}'`;
  },
};

const resumeAfterOverduePaid: RuleCheck = {
  rule: 'resume-after-overdue-paid',
  description:
    "A suspended line is resumed only when none of the customer's bills is overdue or awaiting a payment the caller has not made.",
  policy: 'You are allowed to lift the suspension after the user has paid all their overdue bills.',
  tools: ['resume_line'],
  when: 'before',
  async check({ db, args }) {
    // A bill the caller has paid on their phone counts as paid: tau2's state sync marks it 'Paid'
    // after the call, and tau2's evaluator replays the reference solution without syncing.
    const open = await db.all(
      `SELECT bill_id, status FROM bills WHERE customer_id = ? AND status IN ('Overdue', 'Awaiting Payment')
       AND bill_id NOT IN (SELECT payment_bill_id FROM user_surroundings WHERE payment_paid = 1 AND payment_bill_id IS NOT NULL)
       ORDER BY position`,
      [str(args.customer_id)],
    );
    if (open.length === 0) return null;
    const list = open.map((b) => `${str(b.bill_id)} (${str(b.status)})`).join(', ');
    return `line ${str(args.line_id)} resumed while customer ${str(args.customer_id)} has unpaid bills ${list}`;
  },
};

const resumeContractNotEnded: RuleCheck = {
  rule: 'resume-contract-not-ended',
  description: 'A line whose contract end date is in the past is never resumed.',
  policy:
    "You are not allowed to lift the suspension if the line's contract end date is in the past, even if the user has paid all their overdue bills.",
  tools: ['resume_line'],
  when: 'before',
  async check({ db, args }) {
    const l = await db.one('SELECT contract_end_date FROM lines WHERE line_id = ?', [str(args.line_id)]);
    const end = l?.contract_end_date == null ? null : str(l.contract_end_date);
    if (end === null || end >= TODAY) return null;
    return `line ${str(args.line_id)} resumed with its contract ended on ${end} (today is ${TODAY})`;
  },
};

const refuelAtMost: RuleCheck = {
  rule: 'refuel-max-2gb',
  description: `One refuel adds at most ${MAX_REFUEL_GB} GB.`,
  policy: 'The maximum amount of data that can be refueled is 2GB.',
  tools: ['refuel_data'],
  when: 'before',
  async check({ args }) {
    const gb = Number(args.gb_amount);
    return gb > MAX_REFUEL_GB ? `refuel of ${str(args.gb_amount)} GB on line ${str(args.line_id)}` : null;
  },
};

/** The telecom policy's rule checks, in policy order. */
export const telecomRuleChecks: readonly RuleCheck[] = [
  paymentRequestOverdueOnly,
  resumeAfterOverduePaid,
  resumeContractNotEnded,
  refuelAtMost,
];
