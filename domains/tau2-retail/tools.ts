/**
 * tau2-bench retail tools over the tables of `schema.sql`: same names, parameters, kinds,
 * results (the pydantic records as JSON, see `records.ts`) and failure conditions as tau2-bench's
 * `RetailTools`, quirks included:
 * - `modify_pending_order_items`: every modified item takes the price and options of the *last*
 *   new variant of the call; the price difference is recorded unrounded (`abs(diff)`), a zero
 *   difference as a refund; only status `pending` qualifies (not `pending (item modified)`).
 * - `exchange_delivered_order_items` refuses an order that is not delivered, and a gift card
 *   with less balance than the (rounded) price difference.
 * - Gift-card balances are rounded to cents after each change; refunds are not rounded.
 * - Order lookups for address and payment changes accept any status containing "pending".
 *
 * `= +?` in queries with an `ORDER BY`, a join or an aggregate: the same comparison as `= ?`,
 * without SQLite re-preparing the statement at each new binding (see `../tau2-airline/queries.ts`).
 */
import { z } from 'zod';
import type { SqlRow, SqlValue } from '../../src/core/ports/sql-db.ts';
import { ToolError, defineTool, type ToolDb, type ToolDefinition } from '../../src/core/schema/domain.ts';
import { calculateTool, thinkTool, toolJson, transferToHumanAgentsTool } from '../../src/core/tau2/common-tools.ts';
import { pyJsonDumps, pyRound } from '../../src/core/tau2/py-json.ts';
import { byPosition } from '../../src/core/tau2/rows.ts';
import { orderModelJson, productRecord, userModelJson, variantRecord } from './records.ts';

const ORDER_ID_DESC = "The order id, e.g. '#W0000000'; note the '#' at the start.";
const PAYMENT_METHOD_DESC =
  "The payment method that pays or receives the price difference, e.g. 'gift_card_0000000' or 'credit_card_0000000'; see the user's or the order's details.";
const ITEM_IDS_DESC = "Item ids, each e.g. '1008292230'; the same id may appear more than once.";
const ADDRESS_PARAMS = {
  address1: z.string().describe("First address line, e.g. '123 Main St'."),
  address2: z.string().describe("Second address line, e.g. 'Apt 1', or ''."),
  city: z.string().describe("City, e.g. 'San Francisco'."),
  state: z.string().describe("State, e.g. 'CA'."),
  country: z.string().describe("Country, e.g. 'USA'."),
  zip: z.string().describe("Zip code, e.g. '12345'."),
};

/** The address columns an update sets (a constant: no caller-supplied text in the SQL). */
const ADDRESS_SET = 'address1 = ?, address2 = ?, city = ?, state = ?, country = ?, zip = ?';

/** The address parameters in {@link ADDRESS_SET} order. */
function addressValues(a: {
  address1: string;
  address2: string;
  city: string;
  state: string;
  country: string;
  zip: string;
}): string[] {
  return [a.address1, a.address2, a.city, a.state, a.country, a.zip];
}

// ---------------------------------------------------------------------------------------------
// Reads shared by the tools

/**
 * The reads a write tool shares with the rule checks run before it (`rules.ts`): the environment
 * hands a tool the rows of a read its `before` checks made with the same SQL and parameters
 * instead of reading them again (Environment.call). The order by id; its items in position order;
 * a variant by item id; a payment method of a user.
 *
 * Each reads only the columns its callers use (sql.js decodes every text value it gives back,
 * ~0.3-0.45 µs each): not the key already known (order id, item id, user and method ids), the
 * `position` of an order or variant, or an order's `absent_fields` (only the db.json export reads
 * it, with its own query). Updating the rows by the `rowid` read with them (no lookup of the key's
 * index) measured no gain in a call (x1.01 on each of the three tools, 500 blocks).
 */
export const ORDER = `SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason,
  exchange_items, exchange_new_items, exchange_payment_method_id, exchange_price_difference, return_items,
  return_payment_method_id FROM orders WHERE order_id = ?`;
export const ORDER_ITEMS =
  'SELECT position, name, product_id, item_id, price, options FROM order_items WHERE order_id = +? ORDER BY position';
export const VARIANT = 'SELECT product_id, available, price, options FROM product_variants WHERE item_id = ?';
export const PAYMENT_METHOD =
  'SELECT source, balance FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?';

async function orderRow(db: ToolDb, orderId: string): Promise<SqlRow> {
  const o = await db.one(ORDER, [orderId]);
  if (!o) throw new ToolError('Order not found');
  return o;
}

async function orderItems(db: ToolDb, orderId: string): Promise<SqlRow[]> {
  return db.all(ORDER_ITEMS, [orderId]);
}

/** An order's payment history in position order: the columns of a record and `position`. */
async function orderPayments(db: ToolDb, orderId: string): Promise<SqlRow[]> {
  return db.all(
    'SELECT position, transaction_type, amount, payment_method_id FROM order_payment_history WHERE order_id = +? ORDER BY position',
    [orderId],
  );
}

/** An order's fulfillments in position order: the columns of a record. */
async function orderFulfillments(db: ToolDb, orderId: string): Promise<SqlRow[]> {
  return db.all('SELECT tracking_id, item_ids FROM order_fulfillments WHERE order_id = +? ORDER BY position', [
    orderId,
  ]);
}

/**
 * An order's items, fulfillments, and payment history with the `source` and `balance` of each
 * payment's method among the user's (NULL: the user has no such method), in one statement
 * (`?1` the order id, `?2` the user id): the reads of cancel_pending_order and
 * modify_pending_order_payment, three statements fewer than one per table and per method. Every branch gives `part` (0 items, 1 fulfillments, 2
 * payments), `position` and six value columns, which {@link orderParts} names and sorts by
 * position (a compound SELECT promises no row order; an ORDER BY over the branches cost SQLite a
 * temporary b-tree per branch, ~3 µs more than the statements it saves). The same merge of the
 * fulfillments and payments alone (one statement fewer) for exchange_delivered_order_items and
 * modify_pending_order_items measured x0.99 and x1.02: not done; nor did the three tables
 * without the methods' join pay for the replies of modify_pending_order_address (x1.04) and
 * return_delivered_order_items (x1.00), which read those tables with three statements.
 */
const ITEMS_FULFILLMENTS_PAYMENT_METHODS = `SELECT 0 AS part, position, name AS a, product_id AS b, item_id AS c, options AS d, price AS x, NULL AS y FROM order_items WHERE order_id = +?1
  UNION ALL SELECT 1, position, tracking_id, item_ids, NULL, NULL, NULL, NULL FROM order_fulfillments WHERE order_id = +?1
  UNION ALL SELECT 2, h.position, h.transaction_type, h.payment_method_id, m.source, NULL, h.amount, m.balance
    FROM order_payment_history h
    LEFT JOIN user_payment_methods m ON m.user_id = +?2 AND m.payment_method_id = h.payment_method_id
    WHERE h.order_id = +?1`;

/** An order's child rows, each list in position order, with the columns the tools read. */
interface OrderParts {
  /** `position, name, product_id, item_id, price, options`. */
  items: SqlRow[];
  /** `position, tracking_id, item_ids`. */
  fulfillments: SqlRow[];
  /** `position, transaction_type, amount, payment_method_id` (and `source, balance` when read). */
  payments: SqlRow[];
}

/** The rows of {@link ITEMS_FULFILLMENTS_PAYMENT_METHODS} as {@link OrderParts}. */
function orderParts(rows: readonly SqlRow[]): OrderParts {
  const out: OrderParts = { items: [], fulfillments: [], payments: [] };
  for (const r of rows) {
    const { position } = r;
    if (r.part === 0)
      out.items.push({ position, name: r.a, product_id: r.b, item_id: r.c, price: r.x, options: r.d } as SqlRow);
    else if (r.part === 1) out.fulfillments.push({ position, tracking_id: r.a, item_ids: r.b } as SqlRow);
    else
      out.payments.push({
        position,
        transaction_type: r.a,
        amount: r.x,
        payment_method_id: r.b,
        source: r.c,
        balance: r.y,
      } as SqlRow);
  }
  out.items.sort(byPosition);
  out.fulfillments.sort(byPosition);
  out.payments.sort(byPosition);
  return out;
}

/**
 * The order as tau2 returns it (after any change made by the calling tool).
 *
 * The lists it still has to read are read together (`Promise.all`: a database in another thread
 * answers them in one round trip) only when there are two or three; at most one is awaited as it
 * is. A `Promise.all` over values held and at most one read cost the tools that know all but one
 * list, or all of them, 1.5-2.5% of a call (same process, this against it alternating, medians
 * of per-block ratios, 80-100 pairs of 58-call blocks, load 2.5-2.8 on 2 vCPUs):
 * modify_pending_order_items x0.985, x0.985; cancel_pending_order x0.974, x0.981;
 * return_delivered_order_items x0.978; modify_pending_order_payment x0.981; and
 * modify_pending_order_address, which reads all three either way, x1.000.
 * @param known rows the calling tool holds as they are now (the `orders` row, the items, the
 *   fulfillments or the payment history, each list in position order): not read again.
 */
async function orderJson(
  db: ToolDb,
  orderId: string,
  known: { row?: SqlRow; items?: SqlRow[]; fulfillments?: SqlRow[]; payments?: SqlRow[] } = {},
): Promise<string> {
  const o = known.row ?? (await orderRow(db, orderId));
  const missing = (known.items ? 0 : 1) + (known.fulfillments ? 0 : 1) + (known.payments ? 0 : 1);
  if (missing <= 1) {
    const items = known.items ?? (await orderItems(db, orderId));
    const fulfillments = known.fulfillments ?? (await orderFulfillments(db, orderId));
    const payments = known.payments ?? (await orderPayments(db, orderId));
    return orderModelJson(o, items, fulfillments, payments);
  }
  const [items, fulfillments, payments] = await Promise.all([
    known.items ?? orderItems(db, orderId),
    known.fulfillments ?? orderFulfillments(db, orderId),
    known.payments ?? orderPayments(db, orderId),
  ]);
  return orderModelJson(o, items, fulfillments, payments);
}

async function userRow(db: ToolDb, userId: string): Promise<SqlRow> {
  const u = await db.one('SELECT * FROM users WHERE user_id = ?', [userId]);
  if (!u) throw new ToolError('User not found');
  return u;
}

/** The user as tau2 returns it, from a `users` row the caller holds as it is now. */
async function userRowJson(db: ToolDb, u: SqlRow): Promise<string> {
  const userId = u.user_id as string;
  const [pms, orders] = await Promise.all([
    db.all(
      'SELECT payment_method_id, source, brand, last_four, balance FROM user_payment_methods WHERE user_id = +? ORDER BY position',
      [userId],
    ),
    db.all('SELECT order_id FROM user_order_ids WHERE user_id = +? ORDER BY position', [userId]),
  ]);
  return userModelJson(u, pms, orders);
}

/**
 * tau2's `_get_payment_method`: the user must exist ("User not found" first) and own the method.
 * The method is read first: a method's user exists (a foreign key), so the user is looked up only
 * when there is no such method, to tell the two errors apart (one statement on success, not two;
 * the method's read is often the one the `before` checks made).
 */
async function paymentMethodRow(db: ToolDb, userId: string, paymentMethodId: string): Promise<SqlRow> {
  const pm = await db.one(PAYMENT_METHOD, [userId, paymentMethodId]);
  if (pm) return pm;
  if (!(await db.one('SELECT 1 AS x FROM users WHERE user_id = ?', [userId]))) throw new ToolError('User not found');
  throw new ToolError('Payment method not found');
}

/**
 * tau2's `_get_variant`: the product must exist and list the item. The variant by its item id
 * (item ids are unique across products), which is the read the item-swap rule checks make before
 * the call (so the environment hands it over; see {@link VARIANT}); the product is looked up only
 * when the variant is missing or of another product, to tell the two errors apart (a variant's
 * product exists: a foreign key).
 */
async function variantRow(db: ToolDb, productId: string, itemId: string): Promise<SqlRow> {
  const v = await db.one(VARIANT, [itemId]);
  if (v && v.product_id === productId) return v;
  if (!(await db.one('SELECT 1 AS x FROM products WHERE product_id = ?', [productId])))
    throw new ToolError('Product not found');
  throw new ToolError('Variant not found');
}

async function setBalance(db: ToolDb, userId: string, paymentMethodId: string, balance: number): Promise<void> {
  await db.run('UPDATE user_payment_methods SET balance = ? WHERE user_id = ? AND payment_method_id = ?', [
    balance,
    userId,
    paymentMethodId,
  ]);
}

/** A payment or refund to append to an order's history. */
interface NewPayment {
  type: 'payment' | 'refund';
  amount: number;
  paymentMethodId: string;
}

/**
 * Append payments to an order's history, in order, each after the last (max(position) + 1, 0
 * for none), and give the history as {@link orderPayments} now would: the rows of `history`
 * and the new ones (written from the values inserted: each column's type matches them).
 * @param history the order's payment history as it is now, in position order.
 */
async function appendPayments(
  db: ToolDb,
  orderId: string,
  history: readonly SqlRow[],
  payments: readonly NewPayment[],
): Promise<SqlRow[]> {
  const out = [...history];
  let position = history.reduce((max, p) => Math.max(max, (p.position as number) + 1), 0);
  const values: SqlValue[] = [];
  for (const p of payments) {
    const row: SqlRow = {
      position: position++,
      transaction_type: p.type,
      amount: p.amount + 0, // -0 is bound (and read back) as the integer 0
      payment_method_id: p.paymentMethodId,
    };
    values.push(orderId, row.position!, p.type, p.amount, p.paymentMethodId);
    out.push(row);
  }
  // One statement for all of them: SQLite inserts the rows (and its triggers log them) in order.
  if (payments.length > 0) await db.run(insertPayments(payments.length), values);
  return out;
}

/** `INSERT INTO order_payment_history` of `n` rows (texts by `n`, made once). */
const insertPaymentsSql: string[] = [];
function insertPayments(n: number): string {
  let sql = insertPaymentsSql[n];
  if (sql === undefined) {
    const rows = Array.from({ length: n }, () => '(?, ?, ?, ?, ?)').join(', ');
    sql = `INSERT INTO order_payment_history (order_id, position, transaction_type, amount, payment_method_id) VALUES ${rows}`;
    insertPaymentsSql[n] = sql;
  }
  return sql;
}

/** Python's `list.count` check: each id may be asked for at most as often as the order holds it. */
function checkItemCounts(items: readonly SqlRow[], itemIds: readonly string[], message: (id: string) => string): void {
  const held = new Map<string, number>();
  for (const it of items) held.set(it.item_id as string, (held.get(it.item_id as string) ?? 0) + 1);
  const asked = new Map<string, number>();
  for (const id of itemIds) asked.set(id, (asked.get(id) ?? 0) + 1);
  for (const id of itemIds) if (asked.get(id)! > (held.get(id) ?? 0)) throw new ToolError(message(id));
}

/** Python's `sorted` on strings (code point order; ids are ASCII). */
function sortedIds(ids: readonly string[]): string[] {
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Tools

const findUserIdByNameZip = defineTool({
  name: 'find_user_id_by_name_zip',
  kind: 'read',
  description:
    "Find a user's id from first name, last name and zip code (names match regardless of case). Prefer looking the user up by email; use this when the email is unknown or not found.",
  params: z.strictObject({
    first_name: z.string().describe("The customer's first name, e.g. 'John'."),
    last_name: z.string().describe("The customer's last name, e.g. 'Doe'."),
    zip: z.string().describe("The customer's zip code, e.g. '12345'."),
  }),
  async run({ db }, { first_name, last_name, zip }) {
    const first = first_name.toLowerCase();
    const last = last_name.toLowerCase();
    const candidates = await db.all(
      'SELECT user_id, first_name, last_name FROM users WHERE zip = +? ORDER BY position',
      [zip],
    );
    const hit = candidates.find(
      (u) => (u.first_name as string).toLowerCase() === first && (u.last_name as string).toLowerCase() === last,
    );
    if (!hit) throw new ToolError('User not found');
    return hit.user_id as string;
  },
});

const findUserIdByEmail = defineTool({
  name: 'find_user_id_by_email',
  kind: 'read',
  description: "Find a user's id from their email address (matched regardless of case).",
  params: z.strictObject({ email: z.string().describe("The user's email, e.g. 'something@example.com'.") }),
  async run({ db }, { email }) {
    const wanted = email.toLowerCase();
    // The first user in file order whose lower-cased email is `wanted`. SQLite's lower() folds
    // ASCII only, which is what toLowerCase() does to an ASCII email; emails with any other
    // character (more bytes than characters) all come back and are compared here. Each half
    // has its index (schema.sql).
    const users = await db.all(
      `SELECT user_id, email FROM (
         SELECT user_id, email, position FROM users WHERE lower(email) = +?1
         UNION ALL SELECT user_id, email, position FROM users WHERE octet_length(email) <> length(email)
       ) ORDER BY position`,
      [wanted],
    );
    const hit = users.find((u) => (u.email as string).toLowerCase() === wanted);
    if (!hit) throw new ToolError('User not found');
    return hit.user_id as string;
  },
});

const getOrderDetails = defineTool({
  name: 'get_order_details',
  kind: 'read',
  description: 'Look up an order: items, status, shipping address, fulfillments and payment history.',
  params: z.strictObject({ order_id: z.string().describe(ORDER_ID_DESC) }),
  async run({ db, resultDiscarded }, { order_id }) {
    const row = await orderRow(db, order_id);
    return resultDiscarded ? '' : orderJson(db, order_id, { row });
  },
});

const getProductDetails = defineTool({
  name: 'get_product_details',
  kind: 'read',
  description:
    'Look up a product type and all its items (variants) with options, availability and price. A product id is not an item id.',
  params: z.strictObject({
    product_id: z.string().describe("The product id, e.g. '6086499569' (not an item id)."),
  }),
  async run({ db, resultDiscarded }, { product_id }) {
    const p = await db.one('SELECT * FROM products WHERE product_id = ?', [product_id]);
    if (!p) throw new ToolError('Product not found');
    if (resultDiscarded) return '';
    const variants = await db.all('SELECT * FROM product_variants WHERE product_id = +? ORDER BY position', [
      product_id,
    ]);
    return toolJson(productRecord(p, variants));
  },
});

const getItemDetails = defineTool({
  name: 'get_item_details',
  kind: 'read',
  description:
    'Look up one item (a product variant): its options, availability and price. An item id is not a product id.',
  params: z.strictObject({
    item_id: z.string().describe("The item id, e.g. '6086499569' (not a product id)."),
  }),
  async run({ db, resultDiscarded }, { item_id }) {
    const v = await db.one('SELECT * FROM product_variants WHERE item_id = ?', [item_id]);
    if (!v) throw new ToolError('Item not found');
    return resultDiscarded ? '' : toolJson(variantRecord(v));
  },
});

const getUserDetails = defineTool({
  name: 'get_user_details',
  kind: 'read',
  description: "Look up a user's profile: name, address, email, payment methods and order ids.",
  params: z.strictObject({ user_id: z.string().describe("The user id, e.g. 'sara_doe_496'.") }),
  async run({ db, resultDiscarded }, { user_id }) {
    const u = await userRow(db, user_id);
    return resultDiscarded ? '' : userRowJson(db, u);
  },
});

const listAllProductTypes = defineTool({
  name: 'list_all_product_types',
  kind: 'read',
  description:
    'List every product type (there are 50) as a JSON object from product name to product id, sorted by name.',
  params: z.strictObject({}),
  async run({ db, resultDiscarded }) {
    if (resultDiscarded) return '';
    const products = await db.all('SELECT name, product_id FROM products ORDER BY position');
    const byName = new Map<string, string>();
    for (const p of products) byName.set(p.name as string, p.product_id as string);
    return pyJsonDumps(byName, { sortKeys: true });
  },
});

const cancelPendingOrder = defineTool({
  name: 'cancel_pending_order',
  kind: 'write',
  spokenAs: 'cancel the pending order',
  description:
    "Cancel an order that is still pending. Every payment is refunded: at once to a gift card, otherwise within 5-7 business days. Explain the details and get the user's explicit yes first.",
  params: z.strictObject({
    order_id: z.string().describe(ORDER_ID_DESC),
    reason: z.string().describe("Why: 'no longer needed' or 'ordered by mistake'."),
  }),
  async run({ db, resultDiscarded }, { order_id, reason }) {
    const o = await orderRow(db, order_id);
    if (o.status !== 'pending') throw new ToolError('Non-pending order cannot be cancelled');
    if (reason !== 'no longer needed' && reason !== 'ordered by mistake') throw new ToolError('Invalid reason');
    const userId = o.user_id as string;
    // Items and fulfillments (unchanged here) for the reply, the payments with their methods.
    const { items, fulfillments, payments } = orderParts(
      await db.all(ITEMS_FULFILLMENTS_PAYMENT_METHODS, [order_id, userId]),
    );
    // Gift-card balances this call wrote: a card paid twice is credited from its new balance.
    const balances = new Map<string, number>();
    for (const p of payments) {
      const id = p.payment_method_id as string;
      // No method of the user's (source is NOT NULL): tau2's error for it.
      if (p.source === null) await paymentMethodRow(db, userId, id);
      if (p.source !== 'gift_card') continue;
      const balance = pyRound((balances.get(id) ?? (p.balance as number)) + (p.amount as number), 2);
      balances.set(id, balance);
      await setBalance(db, userId, id, balance);
    }
    await db.run("UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", [reason, order_id]);
    const history = await appendPayments(
      db,
      order_id,
      payments,
      payments.map((p) => ({
        type: 'refund',
        amount: p.amount as number,
        paymentMethodId: p.payment_method_id as string,
      })),
    );
    // The orders row as read, with the columns just set (no RETURNING: it costs ~4 µs more).
    return resultDiscarded
      ? ''
      : orderJson(db, order_id, {
          row: { ...o, status: 'cancelled', cancel_reason: reason },
          items,
          fulfillments,
          payments: history,
        });
  },
});

const modifyPendingOrderAddress = defineTool({
  name: 'modify_pending_order_address',
  kind: 'write',
  spokenAs: 'change the shipping address of the pending order',
  description:
    "Change the shipping address of a pending order. Explain the change and get the user's explicit yes first.",
  params: z.strictObject({ order_id: z.string().describe(ORDER_ID_DESC), ...ADDRESS_PARAMS }),
  async run({ db, resultDiscarded }, args) {
    const o = await orderRow(db, args.order_id);
    if (!(o.status as string).includes('pending')) throw new ToolError('Non-pending order cannot be modified');
    await db.run(`UPDATE orders SET ${ADDRESS_SET} WHERE order_id = ?`, [...addressValues(args), args.order_id]);
    const { address1, address2, city, state, country, zip } = args;
    return resultDiscarded
      ? ''
      : orderJson(db, args.order_id, { row: { ...o, address1, address2, city, state, country, zip } });
  },
});

/**
 * Where a call goes (session 15, issue 15 item 2; same process, the part left out against the
 * whole call alternating call by call, medians of per-block ratios, 60-80 pairs of 58-call blocks
 * over the 29 reference argument sets, load 2.5-3.1): the orders row's status UPDATE with its
 * write-log row ~20% (x0.803 without it; x0.924 without it when no table logs: its log row of 18
 * columns, the images built, read back and parsed, is ~12 points of it; the write log is
 * src/core/env's); the reply ~11% (x0.894 with `result: false`: building the JSON ~5%, the
 * fulfillments read ~1%); the rule checks ~13% (x0.866 with `checks: false`; without
 * gift-card-covers-difference x0.954, same-product-type x0.961, modify-pending-only and
 * different-option x0.979, one-user x0.978). Three rows are logged for a one-item swap (the
 * payment, the item, the order), each of them needed.
 *
 * Not done: one UPDATE for all the swapped items (`item_id = CASE position … END`, one price and
 * options): SQLite updates the rows a statement matches in key order, so the log (and the call's
 * writes) would keep the calls' order only when the positions rise in it, and two of the four
 * reference calls that swap several items list them in falling position order (2 of 29 argument
 * sets would gain). Updating the items read for the reply in place instead of copies, x0.995.
 */
const modifyPendingOrderItems = defineTool({
  name: 'modify_pending_order_items',
  kind: 'write',
  spokenAs: 'change the items of the pending order',
  description:
    "Swap items of a pending order for other items of the same product. Can be done only once per order. Explain the change and get the user's explicit yes first.",
  params: z.strictObject({
    order_id: z.string().describe(ORDER_ID_DESC),
    item_ids: z.array(z.string()).describe(`The items to change. ${ITEM_IDS_DESC}`),
    new_item_ids: z
      .array(z.string())
      .describe(`The new items, in the same positions as item_ids and of the same product. ${ITEM_IDS_DESC}`),
    payment_method_id: z.string().describe(PAYMENT_METHOD_DESC),
  }),
  async run({ db, resultDiscarded }, { order_id, item_ids, new_item_ids, payment_method_id }) {
    const o = await orderRow(db, order_id);
    if (o.status !== 'pending') throw new ToolError('Non-pending order cannot be modified');
    const items = await orderItems(db, order_id);
    checkItemCounts(items, item_ids, (id) => `${id} not found`);
    if (item_ids.length !== new_item_ids.length)
      throw new ToolError('The number of items to be exchanged should match');
    let diff = 0;
    let variant: SqlRow | undefined;
    for (const [i, itemId] of item_ids.entries()) {
      const newItemId = new_item_ids[i]!;
      if (itemId === newItemId) throw new ToolError('The new item id should be different from the old item id');
      const item = items.find((it) => it.item_id === itemId);
      if (!item) throw new ToolError(`Item ${itemId} not found`);
      variant = await variantRow(db, item.product_id as string, newItemId);
      if (variant.available !== 1) throw new ToolError(`New item ${newItemId} not found or available`);
      diff += (variant.price as number) - (item.price as number);
    }
    const pm = await paymentMethodRow(db, o.user_id as string, payment_method_id);
    if (pm.source === 'gift_card' && (pm.balance as number) < diff)
      throw new ToolError('Insufficient gift card balance to pay for the new item');
    const payments = await appendPayments(db, order_id, await orderPayments(db, order_id), [
      { type: diff > 0 ? 'payment' : 'refund', amount: Math.abs(diff), paymentMethodId: payment_method_id },
    ]);
    if (pm.source === 'gift_card')
      await setBalance(db, o.user_id as string, payment_method_id, pyRound((pm.balance as number) - diff, 2));
    // Items change one after another, each time the first item still carrying the old id; all
    // of them take the last new variant's price and options (tau2's behaviour).
    // The items are kept as they are now (the reply shows them) as each is written.
    const current = items.map((it) => ({ ...it }));
    for (const [i, itemId] of item_ids.entries()) {
      const target = current.find((it) => it.item_id === itemId)!;
      target.item_id = new_item_ids[i]!;
      target.price = variant!.price!;
      target.options = variant!.options!;
      await db.run('UPDATE order_items SET item_id = ?, price = ?, options = ? WHERE order_id = ? AND position = ?', [
        target.item_id,
        variant!.price as number,
        variant!.options as string,
        order_id,
        target.position as number,
      ]);
    }
    await db.run("UPDATE orders SET status = 'pending (item modified)' WHERE order_id = ?", [order_id]);
    return resultDiscarded
      ? ''
      : orderJson(db, order_id, {
          row: { ...o, status: 'pending (item modified)' },
          items: current,
          payments,
        });
  },
});

const modifyPendingOrderPayment = defineTool({
  name: 'modify_pending_order_payment',
  kind: 'write',
  spokenAs: 'change the payment method of the pending order',
  description:
    "Pay a pending order with a different payment method of the user. Explain the change and get the user's explicit yes first.",
  params: z.strictObject({
    order_id: z.string().describe(ORDER_ID_DESC),
    payment_method_id: z.string().describe(PAYMENT_METHOD_DESC),
  }),
  async run({ db, resultDiscarded }, { order_id, payment_method_id }) {
    const o = await orderRow(db, order_id);
    if (!(o.status as string).includes('pending')) throw new ToolError('Non-pending order cannot be modified');
    const userId = o.user_id as string;
    const pm = await paymentMethodRow(db, userId, payment_method_id);
    // Items and fulfillments (unchanged here) for the reply, the payments with their methods.
    const { items, fulfillments, payments } = orderParts(
      await db.all(ITEMS_FULFILLMENTS_PAYMENT_METHODS, [order_id, userId]),
    );
    const first = payments[0];
    if (payments.length !== 1 || first!.transaction_type !== 'payment') {
      throw new ToolError('There should be exactly one payment for a pending order');
    }
    const oldMethodId = first!.payment_method_id as string;
    if (oldMethodId === payment_method_id)
      throw new ToolError('The new payment method should be different from the current one');
    const amount = first!.amount as number;
    if (pm.source === 'gift_card' && (pm.balance as number) < amount)
      throw new ToolError('Insufficient gift card balance to pay for the order');
    const history = await appendPayments(db, order_id, payments, [
      { type: 'payment', amount, paymentMethodId: payment_method_id },
      { type: 'refund', amount, paymentMethodId: oldMethodId },
    ]);
    if (pm.source === 'gift_card')
      await setBalance(db, userId, payment_method_id, pyRound((pm.balance as number) - amount, 2));
    // The old method as read with the payments (another method than the one just charged). No
    // method of the user's (source is NOT NULL): tau2's error for it.
    if (first!.source === null) await paymentMethodRow(db, userId, oldMethodId);
    if (first!.source === 'gift_card')
      await setBalance(db, userId, oldMethodId, pyRound((first!.balance as number) + amount, 2));
    // The orders row is unchanged (only the payment history and balances changed).
    return resultDiscarded ? '' : orderJson(db, order_id, { row: o, items, fulfillments, payments: history });
  },
});

const modifyUserAddress = defineTool({
  name: 'modify_user_address',
  kind: 'write',
  spokenAs: 'change your default address',
  description: "Change a user's default address. Explain the change and get the user's explicit yes first.",
  params: z.strictObject({ user_id: z.string().describe("The user id, e.g. 'sara_doe_496'."), ...ADDRESS_PARAMS }),
  async run({ db, resultDiscarded }, args) {
    // One statement checks the user, writes the address and gives the row as it is now.
    const [u] = await db.all(`UPDATE users SET ${ADDRESS_SET} WHERE user_id = ? RETURNING *`, [
      ...addressValues(args),
      args.user_id,
    ]);
    if (!u) throw new ToolError('User not found');
    return resultDiscarded ? '' : userRowJson(db, u);
  },
});

const returnDeliveredOrderItems = defineTool({
  name: 'return_delivered_order_items',
  kind: 'write',
  spokenAs: 'return the delivered items',
  description:
    "Request a return of items of a delivered order; the status becomes 'return requested' and the user gets an email on how to send them back. The refund goes to the original payment method or a gift card. Explain the details and get the user's explicit yes first.",
  params: z.strictObject({
    order_id: z.string().describe(ORDER_ID_DESC),
    item_ids: z.array(z.string()).describe(`The items to return. ${ITEM_IDS_DESC}`),
    payment_method_id: z
      .string()
      .describe("Where the refund goes: the order's original payment method or a gift card, e.g. 'gift_card_0000000'."),
  }),
  async run({ db, resultDiscarded }, { order_id, item_ids, payment_method_id }) {
    const o = await orderRow(db, order_id);
    if (o.status !== 'delivered') throw new ToolError('Non-delivered order cannot be returned');
    const pm = await paymentMethodRow(db, o.user_id as string, payment_method_id);
    const payments = await orderPayments(db, order_id);
    if (pm.source !== 'gift_card' && payment_method_id !== payments[0]?.payment_method_id) {
      throw new ToolError('Payment method should be the original payment method');
    }
    const items = await orderItems(db, order_id);
    checkItemCounts(items, item_ids, () => 'Some item not found');
    const returnItems = JSON.stringify(sortedIds(item_ids));
    await db.run(
      "UPDATE orders SET status = 'return requested', return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
      [returnItems, payment_method_id, order_id],
    );
    // Items and payments are unchanged.
    const row = {
      ...o,
      status: 'return requested',
      return_items: returnItems,
      return_payment_method_id: payment_method_id,
    };
    return resultDiscarded ? '' : orderJson(db, order_id, { row, items, payments });
  },
});

const exchangeDeliveredOrderItems = defineTool({
  name: 'exchange_delivered_order_items',
  kind: 'write',
  spokenAs: 'exchange the delivered items',
  description:
    "Exchange items of a delivered order for other items of the same product. A delivered order allows one return or exchange. Explain the details and get the user's explicit yes first.",
  params: z.strictObject({
    order_id: z.string().describe(ORDER_ID_DESC),
    item_ids: z.array(z.string()).describe(`The items to exchange. ${ITEM_IDS_DESC}`),
    new_item_ids: z
      .array(z.string())
      .describe(`The items to receive, in the same positions as item_ids and of the same product. ${ITEM_IDS_DESC}`),
    payment_method_id: z.string().describe(PAYMENT_METHOD_DESC),
  }),
  async run({ db, resultDiscarded }, { order_id, item_ids, new_item_ids, payment_method_id }) {
    const o = await orderRow(db, order_id);
    if (o.status !== 'delivered') throw new ToolError('Non-delivered order cannot be exchanged');
    const items = await orderItems(db, order_id);
    checkItemCounts(items, item_ids, (id) => `Number of ${id} not found.`);
    if (item_ids.length !== new_item_ids.length)
      throw new ToolError('The number of items to be exchanged should match.');
    let diff = 0;
    for (const [i, itemId] of item_ids.entries()) {
      const newItemId = new_item_ids[i]!;
      const item = items.find((it) => it.item_id === itemId);
      if (!item) throw new ToolError(`Item ${itemId} not found`);
      const variant = await variantRow(db, item.product_id as string, newItemId);
      if (variant.available !== 1) throw new ToolError(`New item ${newItemId} not found or available`);
      diff += (variant.price as number) - (item.price as number);
    }
    diff = pyRound(diff, 2);
    const pm = await paymentMethodRow(db, o.user_id as string, payment_method_id);
    if (pm.source === 'gift_card' && (pm.balance as number) < diff) {
      throw new ToolError('Insufficient gift card balance to pay for the price difference');
    }
    const set = {
      status: 'exchange requested',
      exchange_items: JSON.stringify(sortedIds(item_ids)),
      exchange_new_items: JSON.stringify(sortedIds(new_item_ids)),
      exchange_payment_method_id: payment_method_id,
      // + 0: SQLite gives back -0.0 as 0 (sql.js binds it as the integer 0).
      exchange_price_difference: diff + 0,
    };
    await db.run(
      `UPDATE orders SET status = ?, exchange_items = ?, exchange_new_items = ?,
         exchange_payment_method_id = ?, exchange_price_difference = ? WHERE order_id = ?`,
      [...Object.values(set), order_id],
    );
    // Items are unchanged.
    return resultDiscarded ? '' : orderJson(db, order_id, { row: { ...o, ...set }, items });
  },
});

/** Every retail tool, in tau2-bench's order of definition. */
export const tools: readonly ToolDefinition[] = [
  calculateTool,
  cancelPendingOrder,
  exchangeDeliveredOrderItems,
  findUserIdByNameZip,
  findUserIdByEmail,
  getOrderDetails,
  getProductDetails,
  getItemDetails,
  getUserDetails,
  listAllProductTypes,
  modifyPendingOrderAddress,
  modifyPendingOrderItems,
  modifyPendingOrderPayment,
  modifyUserAddress,
  returnDeliveredOrderItems,
  thinkTool,
  transferToHumanAgentsTool,
] as readonly ToolDefinition[];
