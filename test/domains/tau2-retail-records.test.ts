/**
 * tau2-retail's order and user replies written straight from the rows (`orderModelJson`,
 * `userModelJson`) against the record path they replace (`toolJson(orderRecord(…, 'model'))`,
 * `toolJson(userRecord(…))`): every order and user of tau2-bench's retail data and hand-made rows
 * with the values that need escaping or Python's float forms. The digests of the 1,000 orders'
 * and 500 users' replies were recorded with the record path (main 1beb7b5, 718f8e4).
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { toolJson } from '../../src/core/tau2/common-tools.ts';
import { PyFloat, pyJsonDumps, pyJsonFloat, pyJsonString } from '../../src/core/tau2/py-json.ts';
import { groupByParent } from '../../src/core/tau2/rows.ts';
import { orderModelJson, orderRecord, userModelJson, userRecord } from '../../domains/tau2-retail/records.ts';
import { tau2Runtime } from './tau2-helpers.ts';

const viaRecord = (o: SqlRow, items: SqlRow[], fulfillments: SqlRow[], payments: SqlRow[]) =>
  toolJson(orderRecord(o, items, fulfillments, payments, 'model'));

describe('orderModelJson', () => {
  it("gives every order of tau2-bench's retail data as the record path does", async () => {
    const env = await (await tau2Runtime('tau2-retail')).runtime.open();
    try {
      const orders = await env.query('SELECT * FROM orders ORDER BY position');
      const items = groupByParent(await env.query('SELECT * FROM order_items'), 'order_id');
      const fulfillments = groupByParent(await env.query('SELECT * FROM order_fulfillments'), 'order_id');
      const payments = groupByParent(await env.query('SELECT * FROM order_payment_history'), 'order_id');
      const hash = createHash('sha256');
      let differ = 0;
      // Twice: the second pass takes every item's options from the cache of the first.
      for (let pass = 0; pass < 2; pass++)
        for (const o of orders) {
          const id = o.order_id as string;
          const rows = [items.get(id) ?? [], fulfillments.get(id) ?? [], payments.get(id) ?? []] as const;
          const text = orderModelJson(o, ...rows);
          if (text !== viaRecord(o, ...rows)) differ++;
          if (pass === 0) hash.update(`${text}\n`);
        }
      expect(orders.length).toBe(1000);
      expect(differ).toBe(0);
      expect(hash.digest('hex')).toBe('92d7c63a07ea7104d011275e47baa8ad79af189a8b50e77585b24331015b7f24');
    } finally {
      await env.close();
    }
  });

  it('escapes text as json.dumps does and writes floats in Python form', () => {
    const order: SqlRow = {
      order_id: '#W1',
      user_id: 'zoë_"q"\\',
      address1: 'Straße 1\n',
      address2: '',
      city: '東京',
      country: 'USA',
      state: 'NY\t',
      zip: '\u0001\u007f',
      status: 'exchange requested',
      cancel_reason: null,
      exchange_items: '["1", "2"]',
      exchange_new_items: '[]',
      exchange_payment_method_id: 'gift_card_1',
      exchange_price_difference: -0.1,
      return_items: null,
      return_payment_method_id: null,
    };
    const items: SqlRow[] = [
      {
        position: 0,
        name: 'Café',
        product_id: 'p',
        item_id: 'i',
        price: 100,
        options: '{"10":"a","2":"b","ü":"\\"x\\""}',
      },
      { position: 1, name: 'n', product_id: 'p', item_id: 'j', price: 1e-5, options: '{}' },
      {
        position: 2,
        name: 'n',
        product_id: 'p',
        item_id: 'k',
        price: 1.5e16,
        options: '{"10":"a","2":"b","ü":"\\"x\\""}',
      },
    ];
    const fulfillments: SqlRow[] = [{ tracking_id: '["t1"]', item_ids: '["i", "j"]' }];
    const payments: SqlRow[] = [
      { position: 0, transaction_type: 'payment', amount: 0.30000000000000004, payment_method_id: 'c' },
      { position: 1, transaction_type: 'refund', amount: 0, payment_method_id: 'é' },
    ];
    const text = orderModelJson(order, items, fulfillments, payments);
    expect(text).toBe(viaRecord(order, items, fulfillments, payments));
    expect(text).toBe(
      '{"order_id": "#W1", "user_id": "zo\\u00eb_\\"q\\"\\\\", "address": {"address1": "Stra\\u00dfe 1\\n", "address2": "", "city": "\\u6771\\u4eac", "country": "USA", "state": "NY\\t", "zip": "\\u0001\\u007f"}, ' +
        '"items": [{"name": "Caf\\u00e9", "product_id": "p", "item_id": "i", "price": 100.0, "options": {"10": "a", "2": "b", "\\u00fc": "\\"x\\""}}, ' +
        '{"name": "n", "product_id": "p", "item_id": "j", "price": 1e-05, "options": {}}, ' +
        '{"name": "n", "product_id": "p", "item_id": "k", "price": 1.5e+16, "options": {"10": "a", "2": "b", "\\u00fc": "\\"x\\""}}], ' +
        '"status": "exchange requested", "fulfillments": [{"tracking_id": ["t1"], "item_ids": ["i", "j"]}], ' +
        '"payment_history": [{"transaction_type": "payment", "amount": 0.30000000000000004, "payment_method_id": "c"}, {"transaction_type": "refund", "amount": 0.0, "payment_method_id": "\\u00e9"}], ' +
        '"cancel_reason": null, "exchange_items": ["1", "2"], "exchange_new_items": [], "exchange_payment_method_id": "gift_card_1", "exchange_price_difference": -0.1, "return_items": null, "return_payment_method_id": null}',
    );
    // No items, fulfillments or payments; every optional field null.
    const bare = { ...order, exchange_items: null, exchange_new_items: null, exchange_price_difference: null };
    expect(orderModelJson(bare, [], [], [])).toBe(viaRecord(bare, [], [], []));
    expect(orderModelJson(bare, [], [], [])).toContain(
      '"items": [], "status": "exchange requested", "fulfillments": [], "payment_history": [], "cancel_reason": null, "exchange_items": null',
    );
  });

  it('pyJsonString and pyJsonFloat are json.dumps of a str and a float', () => {
    for (const s of ['', 'plain', 'q"b\\', 'é\u2028\ud83d\ude00', '\u0000\u001f\u007f'])
      expect(pyJsonString(s)).toBe(pyJsonDumps(s));
    expect(pyJsonString('é\ud83d\ude00')).toBe('"\\u00e9\\ud83d\\ude00"');
    for (const x of [0, -0, 1, 100, 0.1, -2.5, 1e-4, 9.99e-5, 1e16, 1.5e16, 123456789.125, Infinity, -Infinity, NaN])
      expect(pyJsonFloat(x)).toBe(pyJsonDumps(new PyFloat(x)));
    expect([1e-4, 9.99e-5, 1e16, -0].map(pyJsonFloat)).toEqual(['0.0001', '9.99e-05', '1e+16', '-0.0']);
  });
});

describe('userModelJson', () => {
  it("gives every user of tau2-bench's retail data as the record path does", async () => {
    const env = await (await tau2Runtime('tau2-retail')).runtime.open();
    try {
      const users = await env.query('SELECT * FROM users ORDER BY position');
      const methods = groupByParent(await env.query('SELECT * FROM user_payment_methods'), 'user_id');
      const orders = groupByParent(await env.query('SELECT * FROM user_order_ids'), 'user_id');
      const hash = createHash('sha256');
      let differ = 0;
      for (const u of users) {
        const id = u.user_id as string;
        const rows = [methods.get(id) ?? [], orders.get(id) ?? []] as const;
        const text = userModelJson(u, ...rows);
        if (text !== toolJson(userRecord(u, ...rows))) differ++;
        hash.update(`${text}\n`);
      }
      expect(users.length).toBe(500);
      expect(differ).toBe(0);
      expect(hash.digest('hex')).toBe('b76b9d1d340d3e6dcb50da8ac93e1ed8f574f7933c75b8a21ee8f8b5e06193fb');
    } finally {
      await env.close();
    }
  });

  it('writes each kind of payment method, escapes text and keeps the methods in row order', () => {
    const user: SqlRow = {
      user_id: 'zoë_1',
      first_name: 'Zoë',
      last_name: 'O"Neil\\',
      address1: '1 Main St',
      address2: '',
      city: 'Köln',
      country: 'DE',
      state: '\t',
      zip: '50667',
      email: 'z@example.com',
    };
    const methods: SqlRow[] = [
      { payment_method_id: 'paypal_9', source: 'paypal', brand: null, last_four: null, balance: null },
      { payment_method_id: 'gift_card_10', source: 'gift_card', brand: null, last_four: null, balance: 36 },
      { payment_method_id: 'credit_card_2', source: 'credit_card', brand: 'visa', last_four: '0042', balance: null },
      { payment_method_id: 'gift_card_1', source: 'gift_card', brand: null, last_four: null, balance: 1e-5 },
    ];
    const orders: SqlRow[] = [{ order_id: '#W2' }, { order_id: '#W10' }];
    const text = userModelJson(user, methods, orders);
    expect(text).toBe(toolJson(userRecord(user, methods, orders)));
    expect(text).toBe(
      '{"user_id": "zo\\u00eb_1", "name": {"first_name": "Zo\\u00eb", "last_name": "O\\"Neil\\\\"}, ' +
        '"address": {"address1": "1 Main St", "address2": "", "city": "K\\u00f6ln", "country": "DE", "state": "\\t", "zip": "50667"}, ' +
        '"email": "z@example.com", "payment_methods": {"paypal_9": {"source": "paypal", "id": "paypal_9"}, ' +
        '"gift_card_10": {"source": "gift_card", "id": "gift_card_10", "balance": 36.0}, ' +
        '"credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "visa", "last_four": "0042"}, ' +
        '"gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 1e-05}}, "orders": ["#W2", "#W10"]}',
    );
    expect(userModelJson(user, [], [])).toBe(toolJson(userRecord(user, [], [])));
    expect(userModelJson(user, [], [])).toMatch(/"payment_methods": \{\}, "orders": \[\]\}$/);
  });
});
