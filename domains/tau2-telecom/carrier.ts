/**
 * The carrier's side of tau2-bench telecom: what its agent tools, helper functions and
 * assertions do to a `TelecomDB` document, with tau2's results and error texts
 * (`tau2/domains/telecom/tools.py` at commit a2c024725189, described in our words).
 *
 * Failures throw {@link ToolError} with the text of tau2's `ValueError`. The policy clock fixes
 * "today" (tau2: 2025-02-25).
 */
import { ToolError } from '../../src/core/schema/domain.ts';
import { pyFloatRepr, pyRound, type PyJson } from '../../src/core/tau2/py-json.ts';
import {
  billDump,
  lineDump,
  type AgentDb,
  type Bill,
  type Customer,
  type Line,
  type Plan,
  deviceDump,
  customerDump,
  planDump,
} from './model.ts';

/** `YYYY-MM-DD` ± days (proleptic Gregorian, UTC arithmetic). */
export function addDays(date: string, days: number): string {
  const t = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** The first day of the month after `date`. */
function nextMonthStart(date: string): string {
  const [y, m] = date.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

/** Python's `f"{x:.2f}"` for a float (correctly rounded, ties to even on the exact value; `inf`, `nan`). */
export function pyFixed2(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  return pyRound(x, 2).toFixed(2);
}

/** The carrier's records plus the policy's "today" (`YYYY-MM-DD`). */
export interface Carrier {
  db: AgentDb;
  today: string;
}

/** The first record whose `key` is `id`, or tau2's "… not found" error. */
function find<T, K extends keyof T>(list: readonly T[], key: K, id: T[K], notFound: string): T {
  const found = list.find((x) => x[key] === id);
  if (!found) throw new ToolError(notFound);
  return found;
}

export const customerById = (c: Carrier, id: string): Customer =>
  find(c.db.customers, 'customer_id', id, `Customer with ID ${id} not found`);
export const lineById = (c: Carrier, id: string): Line =>
  find(c.db.lines, 'line_id', id, `Line with ID ${id} not found`);
export const lineByPhone = (c: Carrier, phone: string): Line =>
  find(c.db.lines, 'phone_number', phone, `Line with phone number ${phone} not found`);
export const planById = (c: Carrier, id: string): Plan =>
  find(c.db.plans, 'plan_id', id, `Plan with ID ${id} not found`);
export const billById = (c: Carrier, id: string): Bill =>
  find(c.db.bills, 'bill_id', id, `Bill with ID ${id} not found`);
const deviceById = (c: Carrier, id: string) => find(c.db.devices, 'device_id', id, `Device with ID ${id} not found`);

/** A line the customer owns (by the customer's `line_ids`). */
export function targetLine(c: Carrier, customerId: string, lineId: string): Line {
  const customer = customerById(c, customerId);
  if (!customer.line_ids.includes(lineId)) throw new ToolError(`Line ${lineId} not found for customer ${customerId}`);
  return lineById(c, lineId);
}

/** The customer whose contact number, or one of whose lines' numbers, is `phone`; first match wins. */
export function customerByPhone(c: Carrier, phone: string): Customer {
  for (const customer of c.db.customers) {
    if (customer.phone_number === phone) return customer;
    for (const id of customer.line_ids) if (lineById(c, id).phone_number === phone) return customer;
  }
  throw new ToolError(`Customer with phone number ${phone} not found`);
}

/** The customer's bills in `Awaiting Payment`, in the order of `bill_ids`. */
export function billsAwaitingPayment(c: Carrier, customer: Customer): Bill[] {
  return customer.bill_ids.map((id) => billById(c, id)).filter((b) => b.status === 'Awaiting Payment');
}

// --- agent tools ---------------------------------------------------------------------------

export function getCustomerByName(c: Carrier, fullName: string, dob: string): PyJson {
  // Python's str.lower() and JavaScript's toLowerCase() agree on the names in tau2's data.
  return c.db.customers
    .filter((x) => x.full_name.toLowerCase() === fullName.toLowerCase() && x.date_of_birth === dob)
    .map(customerDump);
}

/** `get_details_by_id`: the record whose id starts with L, D, B, C or P. */
export function detailsById(c: Carrier, id: string): PyJson {
  if (id.startsWith('L')) return lineDump(lineById(c, id));
  if (id.startsWith('D')) return deviceDump(deviceById(c, id));
  if (id.startsWith('B')) return billDump(billById(c, id));
  if (id.startsWith('C')) return customerDump(customerById(c, id));
  if (id.startsWith('P')) return planDump(planById(c, id));
  throw new ToolError(`Unknown ID format or type: ${id}`);
}

export function suspendLine(c: Carrier, customerId: string, lineId: string): PyJson {
  const line = targetLine(c, customerId, lineId);
  if (line.status !== 'Active') throw new ToolError('Line must be active to suspend');
  line.status = 'Suspended';
  line.suspension_start_date = c.today;
  return { message: 'Line suspended successfully. $5/month holding fee will apply.', line: lineDump(line) };
}

export function resumeLine(c: Carrier, customerId: string, lineId: string): PyJson {
  const line = targetLine(c, customerId, lineId);
  if (line.status !== 'Suspended' && line.status !== 'Pending Activation')
    throw new ToolError('Line must be suspended to resume');
  line.status = 'Active';
  line.suspension_start_date = null;
  return { message: 'Line resumed successfully', line: lineDump(line) };
}

/** Python's `lst[:limit]` for an int `limit` (a negative one drops from the end). */
function pySliceTo<T>(list: readonly T[], limit: number): T[] {
  return list.slice(0, limit < 0 ? Math.max(0, list.length + limit) : limit);
}

/** Bills newest issue date first (a stable sort: equal dates keep their order), at most `limit`. */
export function billsForCustomer(c: Carrier, customerId: string, limit: number): PyJson {
  const customer = customerById(c, customerId);
  const bills = customer.bill_ids.map((id) => billById(c, id));
  const sorted = [...bills].sort((a, b) => (a.issue_date < b.issue_date ? 1 : a.issue_date > b.issue_date ? -1 : 0));
  return pySliceTo(sorted, limit).map(billDump);
}

export function sendPaymentRequest(c: Carrier, customerId: string, billId: string): string {
  const customer = customerById(c, customerId);
  if (billsAwaitingPayment(c, customer).length !== 0)
    throw new ToolError('A bill is already awaiting payment for this customer');
  if (!customer.bill_ids.includes(billId)) throw new ToolError(`Bill ${billId} not found for customer ${customerId}`);
  const bill = billById(c, billId);
  bill.status = 'Awaiting Payment';
  return `Payment request sent to the customer for bill ${bill.bill_id}`;
}

/**
 * The id of a draft bill the carrier opens for a one-time charge. tau2 draws `B` + 8 random hex
 * digits (uuid4), so such a state never hashes alike twice there; ours is derived from the
 * customer id and the number of bills (FNV-1a), so episodes replay identically.
 */
function newDraftBillId(c: Carrier, customerId: string): string {
  let h = 0x811c9dc5;
  for (const ch of `${customerId}#${c.db.bills.length}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `B${h.toString(16).padStart(8, '0')}`;
}

/** Add a charge (or a credit, when negative) to the customer's first draft bill, opening one if needed. */
function applyOneTimeCharge(c: Carrier, customerId: string, amount: number, description: string): void {
  const customer = customerById(c, customerId);
  let draft = customer.bill_ids.map((id) => billById(c, id)).find((b) => b.status === 'Draft');
  if (!draft) {
    const start = nextMonthStart(c.today);
    draft = {
      bill_id: newDraftBillId(c, customerId),
      customer_id: customerId,
      period_start: start,
      period_end: addDays(nextMonthStart(start), -1),
      issue_date: start,
      total_due: 0,
      due_date: addDays(start, 14),
      line_items: [],
      status: 'Draft',
    };
    c.db.bills.push(draft);
    customer.bill_ids.push(draft.bill_id);
  }
  draft.line_items.push({ description, amount, date: c.today, item_type: amount < 0 ? 'Credit' : 'Charge' });
  draft.total_due += amount;
}

/**
 * `refuel_data`: adds `gbAmount` GB to the line and charges it on the draft bill at the plan's
 * price per GB. `gbAmount` is a Python float (tau2's references pass `2.0`).
 */
export function refuelData(c: Carrier, customerId: string, lineId: string, gbAmount: number): PyJson {
  const line = targetLine(c, customerId, lineId);
  if (gbAmount <= 0) throw new ToolError('Refuel amount must be positive');
  const plan = planById(c, line.plan_id);
  const charge = gbAmount * plan.data_refueling_price_per_gb;
  line.data_refueling_gb += gbAmount;
  const gb = pyFloatRepr(gbAmount);
  applyOneTimeCharge(
    c,
    customerId,
    charge,
    `Data refueling: ${gb} GB at $${pyFloatRepr(plan.data_refueling_price_per_gb)}/GB`,
  );
  return {
    message: `Successfully added ${gb} GB of data for line ${lineId} for $${pyFixed2(charge)}`,
    new_data_refueling_gb: pyFloatRepr(line.data_refueling_gb),
    charge: pyFloatRepr(charge),
  };
}

export function dataUsage(c: Carrier, customerId: string, lineId: string): PyJson {
  const line = targetLine(c, customerId, lineId);
  const plan = planById(c, line.plan_id);
  return {
    line_id: lineId,
    data_used_gb: pyFloatRepr(line.data_used_gb),
    data_limit_gb: pyFloatRepr(plan.data_limit_gb),
    data_refueling_gb: pyFloatRepr(line.data_refueling_gb),
    cycle_end_date: addDays(nextMonthStart(c.today), -1),
  };
}

export function setRoaming(c: Carrier, customerId: string, lineId: string, on: boolean): string {
  const line = targetLine(c, customerId, lineId);
  if (line.roaming_enabled === on) return `Roaming was already ${on ? 'enabled' : 'disabled'}`;
  line.roaming_enabled = on;
  return `Roaming ${on ? 'enabled' : 'disabled'} successfully`;
}

// --- task setup helpers (not agent tools) --------------------------------------------------

/** `set_data_usage`: the line's data used this cycle. */
export function setDataUsage(c: Carrier, customerId: string, lineId: string, gb: number): string {
  const line = targetLine(c, customerId, lineId);
  line.data_used_gb = gb;
  return `Data usage set to ${pyFloatRepr(gb)} GB for line ${lineId}`;
}

/** `suspend_line_for_overdue_bill`: an overdue bill for last month's plan charge, the line suspended. */
export function suspendLineForOverdueBill(
  c: Carrier,
  customerId: string,
  lineId: string,
  newBillId: string,
  contractEnded: boolean,
): string {
  const line = lineById(c, lineId);
  if (line.status !== 'Active') throw new ToolError('Line must be active to suspend for unpaid bill');
  const plan = planById(c, line.plan_id);
  const amount = plan.price_per_month;
  if (amount <= 0) throw new ToolError('Amount must be positive for overdue bill');
  const customer = customerById(c, customerId);
  if (customer.bill_ids.some((id) => billById(c, id).status === 'Overdue'))
    throw new ToolError('Customer already has an overdue bill');
  const lastOfPrev = addDays(`${c.today.slice(0, 8)}01`, -1);
  const firstOfPrev = `${lastOfPrev.slice(0, 8)}01`;
  c.db.bills.push({
    bill_id: newBillId,
    customer_id: customerId,
    period_start: firstOfPrev,
    period_end: lastOfPrev,
    issue_date: firstOfPrev,
    total_due: amount,
    due_date: addDays(firstOfPrev, 14),
    line_items: [{ description: `Charge for line ${line.line_id}`, amount, date: c.today, item_type: 'Charge' }],
    status: 'Overdue',
  });
  customer.bill_ids.push(newBillId);
  line.status = 'Suspended';
  line.suspension_start_date = c.today;
  if (contractEnded) line.contract_end_date = lastOfPrev;
  return `Line ${lineId} suspended for unpaid bill ${newBillId}. Contract ended: ${contractEnded ? 'True' : 'False'}`;
}

// --- assertions ----------------------------------------------------------------------------

export function assertDataRefuelingAmount(c: Carrier, customerId: string, lineId: string, expected: number): boolean {
  return Math.abs(targetLine(c, customerId, lineId).data_refueling_gb - expected) < 1e-6;
}

export function assertLineStatus(c: Carrier, customerId: string, lineId: string, expected: string): boolean {
  return targetLine(c, customerId, lineId).status === expected;
}

export function assertOverdueBillExists(c: Carrier, customerId: string, billId: string): boolean {
  const customer = customerById(c, customerId);
  if (!customer.bill_ids.includes(billId)) throw new ToolError(`Overdue bill ${billId} not found`);
  if (billById(c, billId).status !== 'Overdue') throw new ToolError(`Overdue bill ${billId} is not overdue`);
  return true;
}

/** True when the bill is gone or paid. */
export function assertNoOverdueBill(c: Carrier, billId: string): boolean {
  const bill = c.db.bills.find((b) => b.bill_id === billId);
  return !bill || bill.status === 'Paid';
}
