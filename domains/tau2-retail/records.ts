/**
 * Retail rows → tau2-bench records (pydantic `model_dump` shapes, fields in declared order).
 * Used both by the tools (what the agent sees) and by the state export (db.json).
 *
 * `form`: `model` = every field present, unset optional fields as `null` (tau2's model_dump, what
 * tools return and what tau2 hashes); `source` = optional fields the source file left out stay
 * out while still unset (a lossless round trip of db.json).
 */
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import {
  PyFloat,
  pyFloat,
  pyJsonDumps,
  pyJsonFloat,
  pyJsonText,
  type PyDict,
  type PyJsonObject,
} from '../../src/core/tau2/py-json.ts';
import { absentFields, jsonDict, jsonList, type RecordForm } from '../../src/core/tau2/rows.ts';

const s = (v: unknown): string => v as string;
const f = (v: unknown): PyFloat => new PyFloat(v as number);

/** `Variant` from a `product_variants` row. */
export function variantRecord(v: SqlRow): PyJsonObject {
  return { item_id: s(v.item_id), options: jsonDict(v.options), available: v.available === 1, price: f(v.price) };
}

/** `Product` from its row and its variant rows (position order). */
export function productRecord(p: SqlRow, variants: readonly SqlRow[]): PyJsonObject {
  const byId: PyDict = new Map();
  for (const v of variants) byId.set(s(v.item_id), variantRecord(v));
  return { name: s(p.name), product_id: s(p.product_id), variants: byId };
}

/** `UserAddress` from the address columns of a user or order row. */
export function addressRecord(r: SqlRow): PyJsonObject {
  return {
    address1: s(r.address1),
    address2: s(r.address2),
    city: s(r.city),
    country: s(r.country),
    state: s(r.state),
    zip: s(r.zip),
  };
}

/** `PaymentMethod` (CreditCard | GiftCard | Paypal) from a `user_payment_methods` row. */
export function paymentMethodRecord(r: SqlRow): PyJsonObject {
  if (r.source === 'credit_card') {
    return { source: 'credit_card', id: s(r.payment_method_id), brand: s(r.brand), last_four: s(r.last_four) };
  }
  if (r.source === 'gift_card') return { source: 'gift_card', id: s(r.payment_method_id), balance: f(r.balance) };
  return { source: s(r.source), id: s(r.payment_method_id) };
}

/** `User` from its row and child rows (position order). */
export function userRecord(u: SqlRow, paymentMethods: readonly SqlRow[], orderIds: readonly SqlRow[]): PyJsonObject {
  const pms: PyDict = new Map();
  for (const pm of paymentMethods) pms.set(s(pm.payment_method_id), paymentMethodRecord(pm));
  return {
    user_id: s(u.user_id),
    name: { first_name: s(u.first_name), last_name: s(u.last_name) },
    address: addressRecord(u),
    email: s(u.email),
    payment_methods: pms,
    orders: orderIds.map((o) => s(o.order_id)),
  };
}

/** `OrderItem` from an `order_items` row. */
export function orderItemRecord(i: SqlRow): PyJsonObject {
  return {
    name: s(i.name),
    product_id: s(i.product_id),
    item_id: s(i.item_id),
    price: f(i.price),
    options: jsonDict(i.options),
  };
}

/** Optional fields of `Order`, in declared order. */
export const ORDER_OPTIONAL_FIELDS = [
  'cancel_reason',
  'exchange_items',
  'exchange_new_items',
  'exchange_payment_method_id',
  'exchange_price_difference',
  'return_items',
  'return_payment_method_id',
] as const;

/** `Order` from its row and child rows (position order). */
export function orderRecord(
  o: SqlRow,
  items: readonly SqlRow[],
  fulfillments: readonly SqlRow[],
  payments: readonly SqlRow[],
  form: RecordForm,
): PyJsonObject {
  const out: PyJsonObject = {
    order_id: s(o.order_id),
    user_id: s(o.user_id),
    address: addressRecord(o),
    items: items.map(orderItemRecord),
    status: s(o.status),
    fulfillments: fulfillments.map((x) => ({ tracking_id: jsonList(x.tracking_id)!, item_ids: jsonList(x.item_ids)! })),
    payment_history: payments.map((p) => ({
      transaction_type: s(p.transaction_type),
      amount: f(p.amount),
      payment_method_id: s(p.payment_method_id),
    })),
    cancel_reason: o.cancel_reason as string | null,
    exchange_items: jsonList(o.exchange_items),
    exchange_new_items: jsonList(o.exchange_new_items),
    exchange_payment_method_id: o.exchange_payment_method_id as string | null,
    exchange_price_difference: pyFloat(o.exchange_price_difference as number | null),
    return_items: jsonList(o.return_items),
    return_payment_method_id: o.return_payment_method_id as string | null,
  };
  if (form === 'source') for (const field of absentFields(o.absent_fields)) if (out[field] === null) delete out[field];
  return out;
}

/** `json.dumps` of an options column's dict by the column's text (the first 4,096 distinct texts). */
const optionsTexts = new Map<string, string>();

/**
 * `json.dumps(jsonDict(v))`, cached by the column's text: an order's items carry the options of
 * one of the catalogue's variants (591 distinct texts in tau2-bench's retail data), so the same
 * few hundred are parsed and written again on every call otherwise.
 */
function optionsJson(v: unknown): string {
  if (typeof v !== 'string') return pyJsonDumps(jsonDict(v as string));
  let out = optionsTexts.get(v);
  if (out === undefined) {
    out = pyJsonDumps(jsonDict(v));
    if (optionsTexts.size < 4096) optionsTexts.set(v, out);
  }
  return out;
}

/** `json.dumps` of {@link addressRecord}. */
function addressJson(r: SqlRow): string {
  return `{"address1": ${pyJsonText(r.address1)}, "address2": ${pyJsonText(r.address2)}, "city": ${pyJsonText(r.city)}, "country": ${pyJsonText(r.country)}, "state": ${pyJsonText(r.state)}, "zip": ${pyJsonText(r.zip)}}`;
}

/** `json.dumps` of {@link paymentMethodRecord}. */
function paymentMethodJson(r: SqlRow): string {
  const id = pyJsonText(r.payment_method_id);
  if (r.source === 'credit_card')
    return `{"source": "credit_card", "id": ${id}, "brand": ${pyJsonText(r.brand)}, "last_four": ${pyJsonText(r.last_four)}}`;
  if (r.source === 'gift_card')
    return `{"source": "gift_card", "id": ${id}, "balance": ${pyJsonFloat(r.balance as number)}}`;
  return `{"source": ${pyJsonText(r.source)}, "id": ${id}}`;
}

/**
 * What a tool shows for a user: `toolJson(userRecord(u, paymentMethods, orderIds))` (Python's
 * `json.dumps` of tau2's `User.model_dump()`), written straight from the rows as
 * {@link orderModelJson} is. The rows need the columns `userRecord` reads.
 */
export function userModelJson(u: SqlRow, paymentMethods: readonly SqlRow[], orderIds: readonly SqlRow[]): string {
  let out = `{"user_id": ${pyJsonText(u.user_id)}, "name": {"first_name": ${pyJsonText(u.first_name)}, "last_name": ${pyJsonText(u.last_name)}}, "address": ${addressJson(u)}, "email": ${pyJsonText(u.email)}, "payment_methods": {`;
  for (let i = 0; i < paymentMethods.length; i++) {
    const pm = paymentMethods[i]!;
    out += `${i ? ', ' : ''}${pyJsonText(pm.payment_method_id)}: ${paymentMethodJson(pm)}`;
  }
  out += '}, "orders": [';
  for (let i = 0; i < orderIds.length; i++) out += `${i ? ', ' : ''}${pyJsonText(orderIds[i]!.order_id)}`;
  return `${out}]}`;
}

/**
 * What a tool shows for an order: `toolJson(orderRecord(o, items, fulfillments, payments,
 * 'model'))` (Python's `json.dumps` of tau2's `Order.model_dump()`), written straight from the
 * rows without building the record (the fields, in declared order, are fixed; an order reply is
 * built on every order tool call). The rows need the columns `orderRecord` reads. Writing a plain
 * JSON-list column (fulfillments, exchange and return items) by adding a space after each comma
 * instead of parsing and dumping it measured no gain in an exchange call (x0.99-1.00).
 */
export function orderModelJson(
  o: SqlRow,
  items: readonly SqlRow[],
  fulfillments: readonly SqlRow[],
  payments: readonly SqlRow[],
): string {
  let out = `{"order_id": ${pyJsonText(o.order_id)}, "user_id": ${pyJsonText(o.user_id)}, "address": ${addressJson(o)}, "items": [`;
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    out += `${i ? ', ' : ''}{"name": ${pyJsonText(it.name)}, "product_id": ${pyJsonText(it.product_id)}, "item_id": ${pyJsonText(it.item_id)}, "price": ${pyJsonFloat(it.price as number)}, "options": ${optionsJson(it.options)}}`;
  }
  out += `], "status": ${pyJsonText(o.status)}, "fulfillments": [`;
  for (let i = 0; i < fulfillments.length; i++) {
    const x = fulfillments[i]!;
    out += `${i ? ', ' : ''}{"tracking_id": ${pyJsonDumps(jsonList(x.tracking_id))}, "item_ids": ${pyJsonDumps(jsonList(x.item_ids))}}`;
  }
  out += '], "payment_history": [';
  for (let i = 0; i < payments.length; i++) {
    const p = payments[i]!;
    out += `${i ? ', ' : ''}{"transaction_type": ${pyJsonText(p.transaction_type)}, "amount": ${pyJsonFloat(p.amount as number)}, "payment_method_id": ${pyJsonText(p.payment_method_id)}}`;
  }
  const difference = o.exchange_price_difference as number | null;
  return `${out}], "cancel_reason": ${pyJsonText(o.cancel_reason)}, "exchange_items": ${pyJsonDumps(jsonList(o.exchange_items))}, "exchange_new_items": ${pyJsonDumps(jsonList(o.exchange_new_items))}, "exchange_payment_method_id": ${pyJsonText(o.exchange_payment_method_id)}, "exchange_price_difference": ${difference === null ? 'null' : pyJsonFloat(difference)}, "return_items": ${pyJsonDumps(jsonList(o.return_items))}, "return_payment_method_id": ${pyJsonText(o.return_payment_method_id)}}`;
}
