/**
 * db.json ↔ tables, for both tau2 domains: the round trip through a real environment is lossless
 * (values, int vs float, absent vs null, dict and list order), the model form hashes like tau2,
 * and malformed documents are refused with the field named.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainFileError } from '../../src/core/schema/domain.ts';
import {
  PyFloat,
  parsePyJson,
  pyJsonDumps,
  type PyDict,
  type PyJson,
  type PyJsonObject,
} from '../../src/core/tau2/py-json.ts';
import { tau2DbHash } from '../../src/core/tau2/db-hash.ts';
import * as airline from '../../domains/tau2-airline/db-json.ts';
import * as retail from '../../domains/tau2-retail/db-json.ts';
import type { DbState } from '../../src/core/env/state.ts';
import { call, tau2File, tau2Runtime } from './tau2-helpers.ts';

/** Maps → plain objects (toStrictEqual ignores key order; PyFloat stays a class instance). */
function unordered(v: PyJson): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, unordered(x)]));
  if (Array.isArray(v)) return v.map(unordered);
  if (v !== null && typeof v === 'object' && !(v instanceof PyFloat)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unordered(x)]));
  }
  return v;
}

/** Every dict (Map) of `actual` has its keys in the order of the same dict in `expected`. */
function dictOrderMismatches(actual: PyJson, expected: PyJson, path = ''): string[] {
  const out: string[] = [];
  if (actual instanceof Map) {
    const exp = expected as PyDict;
    if (!(exp instanceof Map)) return [`${path}: not a dict in the file`];
    if ([...actual.keys()].join('\u0000') !== [...exp.keys()].join('\u0000')) out.push(`${path}: key order differs`);
    for (const [k, v] of actual) out.push(...dictOrderMismatches(v, exp.get(k) ?? null, `${path}.${k}`));
  } else if (Array.isArray(actual)) {
    actual.forEach((v, i) => out.push(...dictOrderMismatches(v, (expected as PyJson[])[i] ?? null, `${path}[${i}]`)));
  } else if (actual !== null && typeof actual === 'object' && !(actual instanceof PyFloat)) {
    const exp = expected instanceof Map ? expected : new Map(Object.entries(expected as PyJsonObject));
    for (const [k, v] of Object.entries(actual))
      out.push(...dictOrderMismatches(v, exp.get(k) ?? null, `${path}.${k}`));
  }
  return out;
}

const dict = (v: PyJson | undefined): PyDict => v as PyDict;
const rec = (v: PyJson | undefined): PyJsonObject => v as PyJsonObject;

describe('tau2-retail db.json round trip', () => {
  let text = '';
  let exported: PyJsonObject;
  let state: DbState;
  beforeAll(async () => {
    text = tau2File('retail', 'db.json');
    const { runtime } = await tau2Runtime('tau2-retail');
    const env = await runtime.open();
    state = await env.exportState();
    exported = retail.exportTau2Db(state);
    await env.close();
  });

  it('re-serializes byte for byte as tau2 wrote db.json (indent 4)', () => {
    const out = pyJsonDumps(exported, { indent: 4 });
    expect(out.length).toBe(text.length);
    expect(out === text).toBe(true);
  });

  it('is deep-equal to db.json parsed with floats kept as floats', () => {
    expect(unordered(exported)).toStrictEqual(unordered(parsePyJson(text)));
    expect(dictOrderMismatches(exported, parsePyJson(text))).toEqual([]);
  });

  it('keeps the order of integer-like dict keys (item ids) and float prices', () => {
    const tshirt = rec(dict(exported.products).get('9523456873'));
    expect([...dict(tshirt.variants).keys()].slice(0, 4)).toEqual([
      '9612497925',
      '8124970213',
      '9354168549',
      '5253880258',
    ]);
    expect(rec(dict(tshirt.variants).get('9612497925'))).toStrictEqual({
      item_id: '9612497925',
      options: new Map([
        ['color', 'blue'],
        ['size', 'M'],
        ['material', 'cotton'],
        ['style', 'crew neck'],
      ]),
      available: true,
      price: new PyFloat(50.88),
    });
  });

  it('leaves out the optional order fields the file leaves out; the model form has them as null', () => {
    const order = rec(dict(exported.orders).get('#W4316152'));
    expect(Object.keys(order)).toEqual([
      'order_id',
      'user_id',
      'address',
      'items',
      'status',
      'fulfillments',
      'payment_history',
    ]);
    const model = rec(dict(retail.exportTau2Db(state, { form: 'model' }).orders).get('#W4316152'));
    expect(model.cancel_reason).toBeNull();
    expect(model.exchange_price_difference).toBeNull();
    expect(Object.keys(model).slice(7)).toEqual([
      'cancel_reason',
      'exchange_items',
      'exchange_new_items',
      'exchange_payment_method_id',
      'exchange_price_difference',
      'return_items',
      'return_payment_method_id',
    ]);
  });

  it('hashes the fresh database as tau2 does (RetailDB.get_hash on this data)', async () => {
    // Value computed by tau2-bench's own RetailDB (pydantic model_dump, json.dumps sort_keys) on db.json.
    expect(await tau2DbHash(retail.exportTau2Db(state, { form: 'model' }))).toBe(
      'b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c',
    );
  });

  it('makes an optional field appear once a tool sets it', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const env = await runtime.open();
    const out = await call(env, 'cancel_pending_order', { order_id: '#W4316152', reason: 'no longer needed' });
    expect(out.content).toMatch(/^Error: Non-pending/); // #W4316152 is delivered
    await call(env, 'return_delivered_order_items', {
      order_id: '#W4316152',
      item_ids: ['7292993796'],
      payment_method_id: 'gift_card_7245904',
    });
    const order = rec(dict(retail.exportTau2Db(await env.exportState()).orders).get('#W4316152'));
    expect(order.return_items).toEqual(['7292993796']);
    expect(order.return_payment_method_id).toBe('gift_card_7245904');
    expect('cancel_reason' in order).toBe(false);
    await env.close();
  });
});

describe('tau2-airline db.json round trip', () => {
  let text = '';
  let exported: PyJsonObject;
  let state: DbState;
  beforeAll(async () => {
    text = tau2File('airline', 'db.json');
    const { runtime } = await tau2Runtime('tau2-airline');
    const env = await runtime.open();
    state = await env.exportState();
    exported = airline.exportTau2Db(state);
    await env.close();
  });

  it('is deep-equal to db.json parsed with floats kept as floats, dict order included', () => {
    expect(unordered(exported)).toStrictEqual(unordered(parsePyJson(text)));
    expect(dictOrderMismatches(exported, parsePyJson(text))).toEqual([]);
  });

  it('re-serializes byte for byte once Flight and ReservationFlight fields take tau2’s declared order', () => {
    // The airline file comes from tau-bench, which wrote flights as origin, destination,
    // flight_number; tau2's models declare flight_number, origin, destination (FlightBase).
    const file = parsePyJson(text) as PyDict;
    const reorder = (m: PyDict, first: string[]) =>
      new Map([...first.map((k) => [k, m.get(k)!] as [string, PyJson]), ...[...m].filter(([k]) => !first.includes(k))]);
    for (const [k, f] of dict(file.get('flights')))
      dict(file.get('flights')).set(k, reorder(f as PyDict, ['flight_number', 'origin', 'destination']));
    for (const r of dict(file.get('reservations')).values()) {
      const flights = (r as PyDict).get('flights') as PyDict[];
      (r as PyDict).set(
        'flights',
        flights.map((f) => reorder(f, ['flight_number', 'origin', 'destination'])),
      );
    }
    const expected = pyJsonDumps(file, { separators: [',', ':'] });
    const out = pyJsonDumps(exported, { separators: [',', ':'] });
    expect(out.length).toBe(expected.length);
    expect(out === expected).toBe(true);
    // The users section needs no reordering: it is the file's text exactly.
    const users = pyJsonDumps(rec(exported).users!, { separators: [',', ':'] });
    expect(text.includes(`"users":${users},"reservations":`)).toBe(true);
  });

  it('keeps gift-card and certificate amounts floats and payments ints', () => {
    const mia = rec(dict(exported.users).get('mia_li_3668'));
    const cert = rec(dict(mia.payment_methods).get('certificate_4856383'));
    expect(cert).toStrictEqual({ source: 'certificate', id: 'certificate_4856383', amount: new PyFloat(100) });
    expect(pyJsonDumps(cert)).toBe('{"source": "certificate", "id": "certificate_4856383", "amount": 100.0}');
    expect(text).toContain('"certificate_4856383":{"source":"certificate","id":"certificate_4856383","amount":100.0}');
    const res = rec(dict(exported.reservations).get('NO6JO3'));
    expect(res.payment_history).toStrictEqual([{ payment_id: 'credit_card_1955700', amount: 2504 }]);
  });

  it('leaves out a reservation status the file leaves out; the model form has status null', () => {
    expect('status' in rec(dict(exported.reservations).get('NO6JO3'))).toBe(false);
    expect(rec(dict(airline.exportTau2Db(state, { form: 'model' }).reservations).get('NO6JO3')).status).toBeNull();
  });

  it('hashes the fresh database as tau2 does (FlightDB.get_hash on this data)', async () => {
    // Value computed by tau2-bench's own FlightDB (pydantic model_dump, json.dumps sort_keys) on db.json.
    expect(await tau2DbHash(airline.exportTau2Db(state, { form: 'model' }))).toBe(
      '8326ba61880ee4fdef3851d9e252cc095148faf6326713a7c8c3a31aaf1e3783',
    );
  });
});

describe('importTau2Db', () => {
  const minimalOrder = (extra: string) =>
    `{"products": {}, "users": {}, "orders": {"#W1": {"order_id": "#W1", "user_id": "u", "address": {"address1": "a", "address2": "", "city": "c", "country": "US", "state": "CA", "zip": "1"}, "items": [], "status": "pending", "fulfillments": [], "payment_history": [{"transaction_type": "payment", "amount": 10, "payment_method_id": "p"}]${extra}}}}`;

  it('keeps a field that is present and null apart from one that is absent', () => {
    const rows = retail.importTau2Db(minimalOrder(', "cancel_reason": null'));
    const order = rec(dict(retail.exportTau2Db(rows).orders).get('#W1'));
    expect('cancel_reason' in order).toBe(true);
    expect(order.cancel_reason).toBeNull();
    expect('exchange_items' in order).toBe(false);
    // A float field written as an int is a float, as pydantic makes it.
    expect(pyJsonDumps(order.payment_history!)).toBe(
      '[{"transaction_type": "payment", "amount": 10.0, "payment_method_id": "p"}]',
    );
  });

  it('names the file and field of a value that does not fit tau2’s model', () => {
    let err: unknown;
    try {
      retail.importTau2Db(minimalOrder(', "cancel_reason": "bored"'), 'x/db.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainFileError);
    expect((err as DomainFileError).file).toBe('x/db.json');
    expect((err as DomainFileError).field).toBe('orders.#W1.cancel_reason');
  });

  it('refuses unknown fields instead of dropping them, and keys that differ from ids', () => {
    expect(() => retail.importTau2Db(minimalOrder(', "gift_wrap": true'))).toThrow(/orders\.#W1/);
    expect(() => retail.importTau2Db(minimalOrder('').replace('"order_id": "#W1"', '"order_id": "#W2"'))).toThrow(
      /orders\.#W1\.order_id: is "#W2" but its key is "#W1"/,
    );
    expect(() => airline.importTau2Db('{"flights": {}, "users": {}}')).toThrow(/reservations/);
  });
});
