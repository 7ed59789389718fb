/**
 * tau2-bench retail `db.json` (RetailDB: `{products, users, orders}`) ↔ the tables of
 * `schema.sql`, losslessly: exporting right after importing gives back the same document
 * (byte for byte when serialized like tau2's file, `pyJsonDumps(doc, {indent: 4})`).
 *
 * - Dict key order and list order → `position` columns; `options` dicts keep their order in
 *   their JSON text. Item and product ids are integer-like strings, so dicts are `Map`s: a
 *   JavaScript object would move such keys to the front.
 * - Optional `Order` fields a record leaves out → the `absent_fields` column.
 * - int vs float follows tau2's field types: every price, amount, balance and price difference
 *   is a float (REAL columns, exported as `PyFloat`).
 * - A dict key must equal its record's id field, item ids must be unique across products, and
 *   unknown fields are refused rather than dropped.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import type { DbState } from '../../src/core/env/state.ts';
import { DomainFileError, fieldPath } from '../../src/core/schema/domain.ts';
import type { PyDict, PyJsonObject } from '../../src/core/tau2/py-json.ts';
import {
  absentFieldsColumn,
  dictColumn,
  groupByParent,
  inPositionOrder,
  pyDocument,
  pyZod,
  requireTables,
  type ExportOptions,
} from '../../src/core/tau2/rows.ts';
import { ORDER_OPTIONAL_FIELDS, orderRecord, productRecord, userRecord } from './records.ts';

const str = z.string();
const { float } = pyZod;
const Options = pyZod.dict(str);
const Address = pyZod.record({ address1: str, address2: str, city: str, country: str, state: str, zip: str });

const Product = pyZod.record({
  name: str,
  product_id: str,
  variants: pyZod.dict(pyZod.record({ item_id: str, options: Options, available: z.boolean(), price: float })),
});

const PaymentMethod = pyZod.union('source', [
  z.strictObject({ source: z.literal('credit_card'), id: str, brand: str, last_four: str }),
  z.strictObject({ source: z.literal('gift_card'), id: str, balance: float }),
  z.strictObject({ source: z.literal('paypal'), id: str }),
]);

const User = pyZod.record({
  user_id: str,
  name: pyZod.record({ first_name: str, last_name: str }),
  address: Address,
  email: str,
  payment_methods: pyZod.dict(PaymentMethod),
  orders: z.array(str),
});

const Order = pyZod.record({
  order_id: str,
  user_id: str,
  address: Address,
  items: z.array(pyZod.record({ name: str, product_id: str, item_id: str, price: float, options: Options })),
  status: z.enum([
    'processed',
    'pending',
    'pending (item modified)',
    'delivered',
    'cancelled',
    'exchange requested',
    'return requested',
  ]),
  fulfillments: z.array(pyZod.record({ tracking_id: z.array(str), item_ids: z.array(str) })),
  payment_history: z.array(
    pyZod.record({ transaction_type: z.enum(['payment', 'refund']), amount: float, payment_method_id: str }),
  ),
  cancel_reason: z.enum(['no longer needed', 'ordered by mistake']).nullable().optional(),
  exchange_items: z.array(str).nullable().optional(),
  exchange_new_items: z.array(str).nullable().optional(),
  exchange_payment_method_id: str.nullable().optional(),
  exchange_price_difference: float.nullable().optional(),
  return_items: z.array(str).nullable().optional(),
  return_payment_method_id: str.nullable().optional(),
});

/** tau2's RetailDB document, validated (field names as in tau2-bench's retail data model). */
export const RetailDb = pyZod.record({
  products: pyZod.dict(Product),
  users: pyZod.dict(User),
  orders: pyZod.dict(Order),
});
export type RetailDb = z.output<typeof RetailDb>;

/** Tables of the retail schema, in dependency order. */
export const RETAIL_TABLES = [
  'products',
  'product_variants',
  'users',
  'user_payment_methods',
  'user_order_ids',
  'orders',
  'order_items',
  'order_fulfillments',
  'order_payment_history',
] as const;

function keyMustMatch(file: string, path: string, key: string, id: string, field: string): void {
  if (key !== id) throw new DomainFileError(file, `${path}.${field}`, `is "${id}" but its key is "${key}"`);
}

const listColumn = (v: readonly string[] | null | undefined): string | null => (v == null ? null : JSON.stringify(v));

/**
 * Validate a retail db.json document and turn it into table rows.
 *
 * @param source db.json as text (preferred: parsed with `parsePyJson`, so dict order is exact —
 *   item ids are integer-like strings that a `JSON.parse` object reorders) or as a parsed value.
 * @param file the file name used in errors.
 * @returns table name → rows, for `buildDomain`'s seed.
 * @throws DomainFileError naming `file` and the first bad field (e.g. `orders.#W0000000.status`).
 */
export function importTau2Db(source: unknown, file = 'db.json'): Record<string, SqlRow[]> {
  const parsed = RetailDb.safeParse(pyDocument(source));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  const db = parsed.data;
  const t: Record<(typeof RETAIL_TABLES)[number], SqlRow[]> = Object.fromEntries(
    RETAIL_TABLES.map((n) => [n, []]),
  ) as never;
  const itemOwner = new Map<string, string>();
  [...db.products].forEach(([key, p], position) => {
    keyMustMatch(file, `products.${key}`, key, p.product_id, 'product_id');
    t.products.push({ product_id: key, position, name: p.name });
    [...p.variants].forEach(([itemId, v], i) => {
      keyMustMatch(file, `products.${key}.variants.${itemId}`, itemId, v.item_id, 'item_id');
      const owner = itemOwner.get(itemId);
      if (owner)
        throw new DomainFileError(file, `products.${key}.variants.${itemId}`, `item id also used by product ${owner}`);
      itemOwner.set(itemId, key);
      t.product_variants.push({
        item_id: itemId,
        product_id: key,
        position: i,
        options: dictColumn(v.options),
        available: v.available ? 1 : 0,
        price: v.price,
      });
    });
  });
  [...db.users].forEach(([key, u], position) => {
    keyMustMatch(file, `users.${key}`, key, u.user_id, 'user_id');
    t.users.push({
      user_id: key,
      position,
      first_name: u.name.first_name,
      last_name: u.name.last_name,
      ...u.address,
      email: u.email,
    });
    [...u.payment_methods].forEach(([pmKey, pm], i) => {
      keyMustMatch(file, `users.${key}.payment_methods.${pmKey}`, pmKey, pm.id, 'id');
      t.user_payment_methods.push({
        user_id: key,
        payment_method_id: pmKey,
        position: i,
        source: pm.source,
        brand: pm.source === 'credit_card' ? pm.brand : null,
        last_four: pm.source === 'credit_card' ? pm.last_four : null,
        balance: pm.source === 'gift_card' ? pm.balance : null,
      });
    });
    u.orders.forEach((o, i) => t.user_order_ids.push({ user_id: key, position: i, order_id: o }));
  });
  [...db.orders].forEach(([key, o], position) => {
    keyMustMatch(file, `orders.${key}`, key, o.order_id, 'order_id');
    t.orders.push({
      order_id: key,
      position,
      user_id: o.user_id,
      ...o.address,
      status: o.status,
      cancel_reason: o.cancel_reason ?? null,
      exchange_items: listColumn(o.exchange_items),
      exchange_new_items: listColumn(o.exchange_new_items),
      exchange_payment_method_id: o.exchange_payment_method_id ?? null,
      exchange_price_difference: o.exchange_price_difference ?? null,
      return_items: listColumn(o.return_items),
      return_payment_method_id: o.return_payment_method_id ?? null,
      absent_fields: absentFieldsColumn(o, ORDER_OPTIONAL_FIELDS),
    });
    o.items.forEach((it, i) =>
      t.order_items.push({
        order_id: key,
        position: i,
        name: it.name,
        product_id: it.product_id,
        item_id: it.item_id,
        price: it.price,
        options: dictColumn(it.options),
      }),
    );
    o.fulfillments.forEach((x, i) =>
      t.order_fulfillments.push({
        order_id: key,
        position: i,
        tracking_id: JSON.stringify(x.tracking_id),
        item_ids: JSON.stringify(x.item_ids),
      }),
    );
    o.payment_history.forEach((p, i) => t.order_payment_history.push({ order_id: key, position: i, ...p }));
  });
  return t;
}

/**
 * Turn an exported environment state back into a RetailDB document.
 *
 * @returns `{products, users, orders}` with dicts as `Map` (order kept) and floats as `PyFloat`.
 * @throws Error when a table of the schema is missing from `state`.
 */
export function exportTau2Db(state: DbState, options: ExportOptions = {}): PyJsonObject {
  const form = options.form ?? 'source';
  requireTables(state, RETAIL_TABLES);
  const variants = groupByParent(state.product_variants, 'product_id');
  const products: PyDict = new Map();
  for (const p of inPositionOrder(state.products)) {
    products.set(String(p.product_id), productRecord(p, variants.get(String(p.product_id)) ?? []));
  }
  const pms = groupByParent(state.user_payment_methods, 'user_id');
  const orderIds = groupByParent(state.user_order_ids, 'user_id');
  const users: PyDict = new Map();
  for (const u of inPositionOrder(state.users)) {
    const id = String(u.user_id);
    users.set(id, userRecord(u, pms.get(id) ?? [], orderIds.get(id) ?? []));
  }
  const items = groupByParent(state.order_items, 'order_id');
  const fulfillments = groupByParent(state.order_fulfillments, 'order_id');
  const payments = groupByParent(state.order_payment_history, 'order_id');
  const orders: PyDict = new Map();
  for (const o of inPositionOrder(state.orders)) {
    const id = String(o.order_id);
    orders.set(id, orderRecord(o, items.get(id) ?? [], fulfillments.get(id) ?? [], payments.get(id) ?? [], form));
  }
  return { products, users, orders };
}
