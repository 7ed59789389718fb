/**
 * Retail rows → tau2-bench records (pydantic `model_dump` shapes, fields in declared order).
 * Used both by the tools (what the agent sees) and by the state export (db.json).
 *
 * `form`: `model` = every field present, unset optional fields as `null` (tau2's model_dump, what
 * tools return and what tau2 hashes); `source` = optional fields the source file left out stay
 * out while still unset (a lossless round trip of db.json).
 */
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { PyFloat, pyFloat, type PyDict, type PyJsonObject } from '../../src/core/tau2/py-json.ts';
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
