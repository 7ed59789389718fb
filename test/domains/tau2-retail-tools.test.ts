/**
 * tau2-retail tools on the real tau2 data: each tool's success path and error paths. Expected
 * records are written from db.json (user emma_santos_9753, orders #W3113816, #W8367380,
 * #W6779827, #W7678072, products 7765186836 and 4768869376) in tau2's declared field order;
 * float results are Python's (e.g. 321.18 - 315.2 + 534.14 - 534.84 = 5.279999999999973).
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/core/env/environment.ts';
import { call, callError, callJson, tau2Runtime } from './tau2-helpers.ts';

let env: Environment;
beforeEach(async () => {
  env = await (await tau2Runtime('tau2-retail')).runtime.open();
});
afterEach(async () => {
  await env.close();
});

const balance = async (user: string, id: string) =>
  (
    await env.query('SELECT balance FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [user, id])
  )[0]?.balance;

type Order = Record<string, unknown> & {
  payment_history: { transaction_type: string; amount: number; payment_method_id: string }[];
};

const EMMA = {
  user_id: 'emma_santos_9753',
  name: { first_name: 'Emma', last_name: 'Santos' },
  address: {
    address1: '463 Pine Lane',
    address2: 'Suite 570',
    city: 'San Antonio',
    country: 'USA',
    state: 'TX',
    zip: '78228',
  },
  email: 'emma.santos7683@example.com',
  payment_methods: {
    credit_card_5869505: { source: 'credit_card', id: 'credit_card_5869505', brand: 'mastercard', last_four: '6380' },
    gift_card_6023546: { source: 'gift_card', id: 'gift_card_6023546', balance: 36 },
  },
  orders: ['#W3113816', '#W9903153', '#W1620235', '#W2918688', '#W8160318', '#W1539823', '#W9655299'],
};

const W3113816 = {
  order_id: '#W3113816',
  user_id: 'emma_santos_9753',
  address: {
    address1: '463 Pine Lane',
    address2: 'Suite 570',
    city: 'San Antonio',
    country: 'USA',
    state: 'TX',
    zip: '78228',
  },
  items: [
    {
      name: 'Cycling Helmet',
      product_id: '7765186836',
      item_id: '2206116040',
      price: 209.91,
      options: { size: 'L', color: 'blue', ventilation: 'high' },
    },
    {
      name: 'Dumbbell Set',
      product_id: '7233192239',
      item_id: '4422467033',
      price: 483.47,
      options: { 'weight range': '30-50 lbs', material: 'urethane', 'set type': 'adjustable' },
    },
    {
      name: 'Smart Thermostat',
      product_id: '4896585277',
      item_id: '6243148452',
      price: 247.0,
      options: { compatibility: 'Amazon Alexa', color: 'stainless steel' },
    },
    {
      name: 'Office Chair',
      product_id: '4794339885',
      item_id: '4274709903',
      price: 544.29,
      options: { material: 'mesh', color: 'red', armrest: 'none', 'backrest height': 'standard' },
    },
    {
      name: 'Mechanical Keyboard',
      product_id: '1656367028',
      item_id: '4843487907',
      price: 254.84,
      options: { 'switch type': 'clicky', backlight: 'white', size: '80%' },
    },
  ],
  status: 'delivered',
  fulfillments: [
    { tracking_id: ['443521489581'], item_ids: ['2206116040', '4422467033', '6243148452', '4274709903', '4843487907'] },
  ],
  payment_history: [{ transaction_type: 'payment', amount: 1739.51, payment_method_id: 'credit_card_5869505' }],
  cancel_reason: null,
  exchange_items: null,
  exchange_new_items: null,
  exchange_payment_method_id: null,
  exchange_price_difference: null,
  return_items: null,
  return_payment_method_id: null,
};

describe('reads', () => {
  it('find_user_id_by_email matches regardless of case', async () => {
    expect((await call(env, 'find_user_id_by_email', { email: 'Emma.Santos7683@EXAMPLE.com' })).content).toBe(
      'emma_santos_9753',
    );
    expect(await callError(env, 'find_user_id_by_email', { email: 'emma.santos@example.com' })).toBe('User not found');
  });

  it('find_user_id_by_email: non-ASCII emails are lower-cased as JavaScript does, the first user in file order wins', async () => {
    const users = (await env.query('SELECT user_id FROM users ORDER BY position LIMIT 4')).map((r) => r.user_id);
    const setEmail = (i: number, email: string) =>
      env.query('UPDATE users SET email = ? WHERE user_id = ?', [email, users[i]!]);
    // KELVIN SIGN lower-cases to ASCII "k"; SQLite's lower() leaves it alone.
    await setEmail(0, '\u212Aim@example.com');
    await setEmail(1, 'kim@example.com');
    await setEmail(2, 'ÉLISE@example.com');
    await setEmail(3, 'Élise@Example.com');
    expect((await call(env, 'find_user_id_by_email', { email: 'KIM@example.com' })).content).toBe(users[0]);
    expect((await call(env, 'find_user_id_by_email', { email: 'élise@example.com' })).content).toBe(users[2]);
    await setEmail(0, 'nobody@example.com');
    expect((await call(env, 'find_user_id_by_email', { email: 'Kim@Example.COM' })).content).toBe(users[1]);
    expect(await callError(env, 'find_user_id_by_email', { email: 'elise@example.com' })).toBe('User not found');
  });

  it('find_user_id_by_name_zip matches names regardless of case and the zip exactly', async () => {
    expect(
      (await call(env, 'find_user_id_by_name_zip', { first_name: 'emma', last_name: 'SANTOS', zip: '78228' })).content,
    ).toBe('emma_santos_9753');
    expect(
      await callError(env, 'find_user_id_by_name_zip', { first_name: 'Emma', last_name: 'Santos', zip: '78229' }),
    ).toBe('User not found');
  });

  it('get_user_details returns the whole user with the gift-card balance as a float', async () => {
    const out = await call(env, 'get_user_details', { user_id: 'emma_santos_9753' });
    expect(JSON.parse(out.content)).toEqual(EMMA);
    expect(out.content).toContain(
      '"gift_card_6023546": {"source": "gift_card", "id": "gift_card_6023546", "balance": 36.0}',
    );
    expect(await callError(env, 'get_user_details', { user_id: 'emma_santos_0000' })).toBe('User not found');
  });

  it('get_order_details returns every Order field, unset optional ones as null', async () => {
    const out = await call(env, 'get_order_details', { order_id: '#W3113816' });
    const order = JSON.parse(out.content);
    expect(order).toEqual(W3113816);
    expect(Object.keys(order)).toEqual(Object.keys(W3113816));
    expect(out.content).toContain('"price": 247.0');
    expect(await callError(env, 'get_order_details', { order_id: 'W3113816' })).toBe('Order not found');
  });

  it('get_product_details keeps the variants in file order (integer-like ids included)', async () => {
    const out = await call(env, 'get_product_details', { product_id: '7765186836' });
    const ids = [...out.content.matchAll(/"(\d{10})": \{"item_id"/g)].map((m) => m[1]);
    expect(ids.slice(0, 6)).toEqual([
      '3358616356',
      '8573379326',
      '1676105083',
      '7811981098',
      '8591113813',
      '5537798301',
    ]);
    expect(ids).toHaveLength(20);
    const product = JSON.parse(out.content);
    expect(product.name).toBe('Cycling Helmet');
    expect(product.product_id).toBe('7765186836');
    expect(product.variants['9013366374']).toEqual({
      item_id: '9013366374',
      options: { size: 'M', color: 'blue', ventilation: 'high' },
      available: true,
      price: 219.88,
    });
    expect(await callError(env, 'get_product_details', { product_id: '2206116040' })).toBe('Product not found'); // an item id
  });

  it('get_item_details finds a variant by item id', async () => {
    expect(await callJson(env, 'get_item_details', { item_id: '1689914594' })).toEqual({
      item_id: '1689914594',
      options: { color: 'red', 'battery life': '10 hours', 'water resistance': 'no' },
      available: true,
      price: 315.2,
    });
    expect(await callError(env, 'get_item_details', { item_id: '7765186836' })).toBe('Item not found'); // a product id
  });

  it('list_all_product_types returns JSON text sorted by name', async () => {
    const out = await call(env, 'list_all_product_types');
    expect(
      out.content.startsWith(
        '{"Action Camera": "3377618313", "Air Purifier": "3821016478", "Backpack": "2524789262", ',
      ),
    ).toBe(true);
    expect(out.content.endsWith('"Yoga Mat": "4635925001"}')).toBe(true);
    expect(Object.keys(JSON.parse(out.content))).toHaveLength(50);
  });
});

describe('cancel_pending_order', () => {
  it('cancels, refunds each payment and credits a gift card at once (rounded to cents)', async () => {
    const order = (await callJson(env, 'cancel_pending_order', {
      order_id: '#W6779827',
      reason: 'no longer needed',
    })) as Order;
    expect(order.status).toBe('cancelled');
    expect(order.cancel_reason).toBe('no longer needed');
    expect(order.payment_history).toEqual([
      { transaction_type: 'payment', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
      { transaction_type: 'refund', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
    ]);
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(4128.45); // round(49.0 + 4079.45, 2)
  });

  it('credits a gift card paid twice from its new balance; refunds every payment in order', async () => {
    const addPayment = (position: number, amount: number, method: string) =>
      env.db.run(
        "INSERT INTO order_payment_history (order_id, position, transaction_type, amount, payment_method_id) VALUES ('#W6779827', ?, 'payment', ?, ?)",
        [position, amount, method],
      );
    await addPayment(1, 10.5, 'credit_card_9789590');
    await addPayment(2, 0.105, 'gift_card_7219486');
    const order = (await callJson(env, 'cancel_pending_order', {
      order_id: '#W6779827',
      reason: 'ordered by mistake',
    })) as Order;
    expect(order.payment_history).toEqual([
      { transaction_type: 'payment', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
      { transaction_type: 'payment', amount: 10.5, payment_method_id: 'credit_card_9789590' },
      { transaction_type: 'payment', amount: 0.105, payment_method_id: 'gift_card_7219486' },
      { transaction_type: 'refund', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
      { transaction_type: 'refund', amount: 10.5, payment_method_id: 'credit_card_9789590' },
      { transaction_type: 'refund', amount: 0.105, payment_method_id: 'gift_card_7219486' },
    ]);
    expect(order.items).toHaveLength(4);
    expect(order.fulfillments).toEqual([]);
    // Python: round(round(49.0 + 4079.45, 2) + 0.105, 2) == 4128.55 (from 49.0 alone: 49.1).
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(4128.55);
  });

  it('refuses to refund to a method the user does not have, changing nothing', async () => {
    await env.db.run(
      "INSERT INTO order_payment_history (order_id, position, transaction_type, amount, payment_method_id) VALUES ('#W6779827', 1, 'payment', 5.0, 'paypal_0000000')",
    );
    expect(await callError(env, 'cancel_pending_order', { order_id: '#W6779827', reason: 'no longer needed' })).toBe(
      'Payment method not found',
    );
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(49);
    expect((await env.query("SELECT status FROM orders WHERE order_id = '#W6779827'"))[0]?.status).toBe('pending');
  });

  it('refuses a bad reason, a non-pending order and an unknown order', async () => {
    expect(await callError(env, 'cancel_pending_order', { order_id: '#W6779827', reason: 'changed my mind' })).toBe(
      'Invalid reason',
    );
    expect(await callError(env, 'cancel_pending_order', { order_id: '#W3113816', reason: 'no longer needed' })).toBe(
      'Non-pending order cannot be cancelled',
    );
    expect(await callError(env, 'cancel_pending_order', { order_id: '#W0000000', reason: 'no longer needed' })).toBe(
      'Order not found',
    );
    expect(env.writes).toEqual([]);
  });
});

describe('modify_pending_order_items', () => {
  it('gives every changed item the last new variant’s price and options, records the unrounded difference', async () => {
    const order = (await callJson(env, 'modify_pending_order_items', {
      order_id: '#W8367380',
      item_ids: ['2444431651', '1689914594'],
      new_item_ids: ['3333391894', '7751905257'],
      payment_method_id: 'credit_card_5683823',
    })) as Order & { items: unknown[] };
    const speaker = { color: 'red', 'battery life': '10 hours', 'water resistance': 'yes' };
    expect(order.items).toEqual([
      { name: 'Dumbbell Set', product_id: '7233192239', item_id: '3333391894', price: 321.18, options: speaker },
      { name: 'Bluetooth Speaker', product_id: '4768869376', item_id: '7751905257', price: 321.18, options: speaker },
      {
        name: 'Fleece Jacket',
        product_id: '8560156827',
        item_id: '8733974883',
        price: 153.18,
        options: { size: 'L', color: 'red', zipper: 'half' },
      },
    ]);
    expect(order.status).toBe('pending (item modified)');
    expect(order.payment_history[1]).toEqual({
      transaction_type: 'payment',
      amount: 5.279999999999973,
      payment_method_id: 'credit_card_5683823',
    });
    // Once modified, the order can no longer be cancelled or modified again, but its address can change.
    expect(await callError(env, 'cancel_pending_order', { order_id: '#W8367380', reason: 'no longer needed' })).toBe(
      'Non-pending order cannot be cancelled',
    );
    expect(
      await callError(env, 'modify_pending_order_items', {
        order_id: '#W8367380',
        item_ids: ['8733974883'],
        new_item_ids: ['8733974884'],
        payment_method_id: 'credit_card_5683823',
      }),
    ).toBe('Non-pending order cannot be modified');
    expect(
      await callError(env, 'modify_pending_order_payment', {
        order_id: '#W8367380',
        payment_method_id: 'gift_card_1994993',
      }),
    ).toBe('There should be exactly one payment for a pending order');
  });

  it('takes the difference off a gift card, rounding the balance to cents', async () => {
    await callJson(env, 'modify_pending_order_items', {
      order_id: '#W6779827',
      item_ids: ['7896397433'],
      new_item_ids: ['6585768447'],
      payment_method_id: 'gift_card_7219486',
    });
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(39.12); // round(49.0 - 9.879999999999995, 2)
    const order = (await callJson(env, 'get_order_details', { order_id: '#W6779827' })) as Order;
    expect(order.payment_history[1]).toEqual({
      transaction_type: 'payment',
      amount: 9.879999999999995,
      payment_method_id: 'gift_card_7219486',
    });
  });

  it.each([
    [
      { item_ids: ['2444431651'], new_item_ids: ['2444431651'] },
      'The new item id should be different from the old item id',
    ],
    [{ item_ids: ['2444431651', '2444431651'], new_item_ids: ['3333391894', '3333391894'] }, '2444431651 not found'],
    [
      { item_ids: ['2444431651'], new_item_ids: ['3333391894', '7751905257'] },
      'The number of items to be exchanged should match',
    ],
    [{ item_ids: ['2444431651'], new_item_ids: ['8140269513'] }, 'New item 8140269513 not found or available'],
    [{ item_ids: ['2444431651'], new_item_ids: ['7751905257'] }, 'Variant not found'],
    // #W6779827: 7896397433 (457.81) → 3877338112 (545.68) costs 87.87, above the gift card's 49.0
    [
      {
        order_id: '#W6779827',
        item_ids: ['7896397433'],
        new_item_ids: ['3877338112'],
        payment_method_id: 'gift_card_7219486',
      },
      'Insufficient gift card balance to pay for the new item',
    ],
    [
      { item_ids: ['2444431651'], new_item_ids: ['3333391894'], payment_method_id: 'paypal_0' },
      'Payment method not found',
    ],
  ])('fails: %o', async (change, message) => {
    const args = { order_id: '#W8367380', payment_method_id: 'credit_card_5683823', ...change };
    expect(await callError(env, 'modify_pending_order_items', args)).toBe(message);
    expect(env.writes).toEqual([]);
  });
});

describe('modify_pending_order_payment', () => {
  it('pays with the new method, refunds the old one and credits the old gift card', async () => {
    const order = (await callJson(env, 'modify_pending_order_payment', {
      order_id: '#W6779827',
      payment_method_id: 'credit_card_9789590',
    })) as Order;
    expect(order.payment_history).toEqual([
      { transaction_type: 'payment', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
      { transaction_type: 'payment', amount: 4079.45, payment_method_id: 'credit_card_9789590' },
      { transaction_type: 'refund', amount: 4079.45, payment_method_id: 'gift_card_7219486' },
    ]);
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(4128.45);
  });

  it('replies with the order as get_order_details then shows it, items and fulfillments included', async () => {
    const out = await call(env, 'modify_pending_order_payment', {
      order_id: '#W6779827',
      payment_method_id: 'credit_card_9789590',
    });
    const details = await call(env, 'get_order_details', { order_id: '#W6779827' });
    expect(out.error).toBe(false);
    expect(out.content).toBe(details.content);
    expect((JSON.parse(out.content) as { items: unknown[] }).items).toHaveLength(4);
  });

  it('refuses to refund a method the user does not have, changing nothing', async () => {
    await env.db.run(
      "UPDATE order_payment_history SET payment_method_id = 'paypal_0000000' WHERE order_id = '#W6779827'",
    );
    expect(
      await callError(env, 'modify_pending_order_payment', {
        order_id: '#W6779827',
        payment_method_id: 'credit_card_9789590',
      }),
    ).toBe('Payment method not found');
    expect(
      await env.query("SELECT position, payment_method_id FROM order_payment_history WHERE order_id = '#W6779827'"),
    ).toEqual([{ position: 0, payment_method_id: 'paypal_0000000' }]);
    expect(await balance('ethan_lopez_6291', 'gift_card_7219486')).toBe(49);
  });

  it('refuses the same method, a thin gift card, a non-pending order', async () => {
    expect(
      await callError(env, 'modify_pending_order_payment', {
        order_id: '#W8367380',
        payment_method_id: 'credit_card_5683823',
      }),
    ).toBe('The new payment method should be different from the current one');
    expect(
      await callError(env, 'modify_pending_order_payment', {
        order_id: '#W8367380',
        payment_method_id: 'gift_card_1994993',
      }),
    ).toBe('Insufficient gift card balance to pay for the order');
    expect(
      await callError(env, 'modify_pending_order_payment', {
        order_id: '#W3113816',
        payment_method_id: 'gift_card_6023546',
      }),
    ).toBe('Non-pending order cannot be modified');
  });
});

describe('address changes', () => {
  const address = { address1: '1 Main St', address2: '', city: 'Reno', state: 'NV', country: 'USA', zip: '89501' };
  const asRecord = { address1: '1 Main St', address2: '', city: 'Reno', country: 'USA', state: 'NV', zip: '89501' };

  it('modify_pending_order_address changes a pending order only', async () => {
    const order = (await callJson(env, 'modify_pending_order_address', { order_id: '#W8367380', ...address })) as Order;
    expect(order.address).toEqual(asRecord);
    expect(Object.keys(order.address as object)).toEqual(['address1', 'address2', 'city', 'country', 'state', 'zip']);
    expect(await callError(env, 'modify_pending_order_address', { order_id: '#W3113816', ...address })).toBe(
      'Non-pending order cannot be modified',
    );
  });

  it('modify_user_address changes the default address', async () => {
    const user = (await callJson(env, 'modify_user_address', {
      user_id: 'emma_santos_9753',
      ...address,
    })) as typeof EMMA;
    expect(user).toEqual({ ...EMMA, address: asRecord });
    expect(await callError(env, 'modify_user_address', { user_id: 'nobody_1', ...address })).toBe('User not found');
  });
});

describe('return_delivered_order_items', () => {
  it('requests a return with sorted item ids, to a gift card or the original method', async () => {
    const order = (await callJson(env, 'return_delivered_order_items', {
      order_id: '#W3113816',
      item_ids: ['4843487907', '2206116040'],
      payment_method_id: 'gift_card_6023546',
    })) as Order;
    expect(order).toEqual({
      ...W3113816,
      status: 'return requested',
      return_items: ['2206116040', '4843487907'],
      return_payment_method_id: 'gift_card_6023546',
    });
    expect(await balance('emma_santos_9753', 'gift_card_6023546')).toBe(36); // no refund until the items come back
  });

  it('refuses another method, items not in the order and undelivered orders', async () => {
    expect(
      await callError(env, 'return_delivered_order_items', {
        order_id: '#W7678072',
        item_ids: ['2323972008'],
        payment_method_id: 'credit_card_7815826',
      }),
    ).toBe('Payment method should be the original payment method');
    expect(
      await callError(env, 'return_delivered_order_items', {
        order_id: '#W3113816',
        item_ids: ['2206116040', '2206116040'],
        payment_method_id: 'credit_card_5869505',
      }),
    ).toBe('Some item not found');
    expect(
      await callError(env, 'return_delivered_order_items', {
        order_id: '#W8367380',
        item_ids: ['2444431651'],
        payment_method_id: 'credit_card_5683823',
      }),
    ).toBe('Non-delivered order cannot be returned');
  });
});

describe('exchange_delivered_order_items', () => {
  it('requests an exchange with the price difference rounded to cents; nothing is charged yet', async () => {
    const out = await call(env, 'exchange_delivered_order_items', {
      order_id: '#W3113816',
      item_ids: ['2206116040'],
      new_item_ids: ['9013366374'],
      payment_method_id: 'gift_card_6023546',
    });
    expect(JSON.parse(out.content)).toEqual({
      ...W3113816,
      status: 'exchange requested',
      exchange_items: ['2206116040'],
      exchange_new_items: ['9013366374'],
      exchange_payment_method_id: 'gift_card_6023546',
      exchange_price_difference: 9.97, // round(219.88 - 209.91, 2)
    });
    expect(out.content).toContain('"exchange_price_difference": 9.97');
    expect(await balance('emma_santos_9753', 'gift_card_6023546')).toBe(36);
  });

  it.each([
    [
      { order_id: '#W8367380', item_ids: ['2444431651'], new_item_ids: ['3333391894'] },
      'Non-delivered order cannot be exchanged',
    ],
    [
      { item_ids: ['2206116040'], new_item_ids: ['9013366374', '8573379326'] },
      'The number of items to be exchanged should match.',
    ],
    [{ item_ids: ['9013366374'], new_item_ids: ['2206116040'] }, 'Number of 9013366374 not found.'],
    [{ item_ids: ['2206116040'], new_item_ids: ['1676105083'] }, 'New item 1676105083 not found or available'],
    [{ item_ids: ['2206116040'], new_item_ids: ['1689914594'] }, 'Variant not found'],
    // 4422467033 (483.47) → 3877338112 (545.68): 62.21 more than the 36.0 on the gift card
    [
      { item_ids: ['4422467033'], new_item_ids: ['3877338112'] },
      'Insufficient gift card balance to pay for the price difference',
    ],
  ])('fails: %o', async (change, message) => {
    const args = { order_id: '#W3113816', payment_method_id: 'gift_card_6023546', ...change };
    expect(await callError(env, 'exchange_delivered_order_items', args)).toBe(message);
    expect(env.writes).toEqual([]);
  });
});

describe('generic and think tools', () => {
  it('calculate, transfer_to_human_agents and think', async () => {
    expect((await call(env, 'calculate', { expression: '219.88 - 209.91' })).content).toBe('9.97');
    expect((await call(env, 'transfer_to_human_agents', { summary: 'x' })).content).toBe('Transfer successful');
    expect((await call(env, 'think', { thought: 'x' })).content).toBe('');
  });
});
