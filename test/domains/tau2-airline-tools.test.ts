/**
 * tau2-airline tools on the real tau2 data: each tool's success path and error paths. Expected
 * records are written from db.json (users mia_li_3668 and lucas_hernandez_8985, reservations
 * NO6JO3 and 4G94T6, flights HAT021/HAT048/HAT089/HAT100/HAT276) in tau2's declared field order.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/core/env/environment.ts';
import type { ToolDb } from '../../src/core/schema/domain.ts';
import {
  reservationFlights,
  reservationForUpdate,
  reservationPassengers,
  reservationPayments,
} from '../../domains/tau2-airline/queries.ts';
import { call, callError, callJson, tau2Runtime } from './tau2-helpers.ts';

let env: Environment;
beforeEach(async () => {
  env = await (await tau2Runtime('tau2-airline')).runtime.open();
});
afterEach(async () => {
  await env.close();
});

const seats = async (flight: string, date: string, cabin: string) =>
  (
    await env.query(
      'SELECT available_seats FROM flight_date_seats WHERE flight_number = ? AND date = ? AND cabin = ?',
      [flight, date, cabin],
    )
  )[0]?.available_seats;
const paymentMethod = async (user: string, id: string) =>
  (
    await env.query('SELECT source, amount FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
      user,
      id,
    ])
  )[0];

const MIA = {
  user_id: 'mia_li_3668',
  name: { first_name: 'Mia', last_name: 'Li' },
  address: {
    address1: '975 Sunset Drive',
    address2: 'Suite 217',
    city: 'Austin',
    country: 'USA',
    state: 'TX',
    zip: '78750',
  },
  email: 'mia.li3818@example.com',
  dob: '1990-04-05',
  payment_methods: {
    credit_card_4421486: { source: 'credit_card', id: 'credit_card_4421486', brand: 'visa', last_four: '7447' },
    certificate_4856383: { source: 'certificate', id: 'certificate_4856383', amount: 100 },
    certificate_7504069: { source: 'certificate', id: 'certificate_7504069', amount: 250 },
    credit_card_1955700: { source: 'credit_card', id: 'credit_card_1955700', brand: 'visa', last_four: '1907' },
  },
  saved_passengers: [{ first_name: 'Amelia', last_name: 'Ahmed', dob: '1957-03-21' }],
  membership: 'gold',
  reservations: ['NO6JO3', 'AIXC49', 'HKEG34'],
};

const NO6JO3 = {
  reservation_id: 'NO6JO3',
  user_id: 'mia_li_3668',
  origin: 'JFK',
  destination: 'DFW',
  flight_type: 'one_way',
  cabin: 'business',
  flights: [
    { flight_number: 'HAT083', origin: 'JFK', destination: 'SEA', date: '2024-05-16', price: 483 },
    { flight_number: 'HAT221', origin: 'SEA', destination: 'DFW', date: '2024-05-16', price: 1991 },
  ],
  passengers: [{ first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' }],
  payment_history: [{ payment_id: 'credit_card_1955700', amount: 2504 }],
  created_at: '2024-05-09T16:15:57',
  total_baggages: 2,
  nonfree_baggages: 0,
  insurance: 'yes',
  status: null,
};

describe('reads', () => {
  it("the shared reads give a reservation's segments, passengers and payments with the columns used, in order", async () => {
    // Only what the records and tools use: each text selected costs a decode in sql.js.
    const db = env.reader as ToolDb;
    expect(await reservationFlights(db, 'NO6JO3')).toEqual([
      { flight_number: 'HAT083', origin: 'JFK', destination: 'SEA', date: '2024-05-16', price: 483 },
      { flight_number: 'HAT221', origin: 'SEA', destination: 'DFW', date: '2024-05-16', price: 1991 },
    ]);
    expect(await reservationPassengers(db, 'NO6JO3')).toEqual([
      { first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' },
    ]);
    expect(await reservationPayments(db, 'NO6JO3')).toEqual([
      { position: 0, payment_id: 'credit_card_1955700', amount: 2504 },
    ]);
    expect(await reservationFlights(db, 'NOSUCH')).toEqual([]);
  });

  it("reservationForUpdate gives the reservation with the argument as its key, its passenger count, the payment method named, for the flights what its segments cost and how many took off and for the bags its user's membership", async () => {
    const db = env.reader as ToolDb;
    const row = {
      reservation_id: 'NO6JO3',
      user_id: 'mia_li_3668',
      origin: 'JFK',
      destination: 'DFW',
      flight_type: 'one_way',
      cabin: 'business',
      created_at: '2024-05-09T16:15:57',
      total_baggages: 2,
      nonfree_baggages: 0,
      insurance: 'yes',
      status: null,
    };
    const card = { source: 'credit_card', amount: null };
    // Its two segments cost 483 and 1991; neither has taken off (counted for another cabin, or none given).
    expect(await reservationForUpdate(db, 'NO6JO3', 'flights', 'credit_card_4421486')).toEqual({
      row,
      pax: 1,
      paid: 2474,
      flown: 0,
      method: card,
    });
    expect((await reservationForUpdate(db, 'NO6JO3', 'flights', 'credit_card_4421486', 'business')).flown).toBeNull();
    expect((await reservationForUpdate(db, 'NO6JO3', 'flights', 'credit_card_4421486', 'economy')).flown).toBe(0);
    // QDGWHB (business): three segments landed, the fourth cancelled by the airline.
    expect((await reservationForUpdate(db, 'QDGWHB', 'flights', 'paypal_1', 'economy')).flown).toBe(3);
    expect((await reservationForUpdate(db, 'QDGWHB', 'flights', 'paypal_1', 'business')).flown).toBeNull();
    expect(await reservationForUpdate(db, 'NO6JO3', 'bags', 'credit_card_4421486')).toEqual({
      row,
      pax: 1,
      membership: 'gold',
      method: card,
    });
    // The user's certificate (an amount), a method the user lacks (null), another user's gift card (null).
    expect((await reservationForUpdate(db, 'NO6JO3', 'flights', 'certificate_4856383')).method).toEqual({
      source: 'certificate',
      amount: 100,
    });
    expect((await reservationForUpdate(db, 'NO6JO3', 'bags', 'paypal_1')).method).toBeNull();
    expect((await reservationForUpdate(db, 'NO6JO3', 'flights', 'gift_card_8525656')).method).toBeNull();
    expect((await reservationForUpdate(db, '4G94T6', 'bags', 'gift_card_8525656')).method).toEqual({
      source: 'gift_card',
      amount: 235,
    });
    await expect(reservationForUpdate(db, 'NOSUCH', 'flights', 'paypal_1')).rejects.toThrow(
      'Reservation NOSUCH not found',
    );
    await expect(reservationForUpdate(db, 'NOSUCH', 'bags', 'paypal_1')).rejects.toThrow(
      'Reservation NOSUCH not found',
    );
  });

  it('get_user_details returns the whole user, floats printed as floats, dicts in file order', async () => {
    const out = await call(env, 'get_user_details', { user_id: 'mia_li_3668' });
    expect(out.error).toBe(false);
    expect(JSON.parse(out.content)).toEqual(MIA);
    expect(out.content).toContain(
      '"certificate_4856383": {"source": "certificate", "id": "certificate_4856383", "amount": 100.0}',
    );
    expect(Object.keys(JSON.parse(out.content).payment_methods)).toEqual(Object.keys(MIA.payment_methods));
    expect(await callError(env, 'get_user_details', { user_id: 'mia_li_0000' })).toMatch(/mia_li_0000 not found/);
  });

  it('get_reservation_details returns the reservation with status null and tau2 field order', async () => {
    const out = await call(env, 'get_reservation_details', { reservation_id: 'NO6JO3' });
    const r = JSON.parse(out.content);
    expect(r).toEqual(NO6JO3);
    expect(Object.keys(r.flights[0])).toEqual(['flight_number', 'origin', 'destination', 'date', 'price']);
    expect(Object.keys(r).at(-1)).toBe('status');
    expect(await callError(env, 'get_reservation_details', { reservation_id: 'ZZZZZZ' })).toMatch(/ZZZZZZ not found/);
  });

  it('list_all_airports lists 20 airports', async () => {
    const list = (await callJson(env, 'list_all_airports')) as { iata: string; city: string }[];
    expect(list).toHaveLength(20);
    expect(list[0]).toEqual({ iata: 'SFO', city: 'San Francisco' });
    expect(list[19]).toEqual({ iata: 'LGA', city: 'LaGuardia' });
    expect(list.map((a) => a.iata)).toContain('SEA');
  });

  it('search_direct_flight returns available flights in file order with date null', async () => {
    const list = (await callJson(env, 'search_direct_flight', {
      origin: 'SEA',
      destination: 'JFK',
      date: '2024-05-20',
    })) as {
      flight_number: string;
    }[];
    expect(list.map((f) => f.flight_number)).toEqual(['HAT021', 'HAT089', 'HAT100', 'HAT276']);
    expect(list[0]).toEqual({
      flight_number: 'HAT021',
      origin: 'SEA',
      destination: 'JFK',
      status: 'available',
      scheduled_departure_time_est: '19:00:00',
      scheduled_arrival_time_est: '01:00:00+1',
      date: null,
      available_seats: { basic_economy: 1, economy: 0, business: 14 },
      prices: { basic_economy: 90, economy: 192, business: 262 },
    });
    // 2024-05-15 is the clock's day: HAT021 is "on time", not available, so nothing is found.
    expect(
      await callJson(env, 'search_direct_flight', { origin: 'SEA', destination: 'JFK', date: '2024-05-15' }),
    ).toEqual([]);
    expect(
      await callJson(env, 'search_direct_flight', { origin: 'SEA', destination: 'XXX', date: '2024-05-20' }),
    ).toEqual([]);
  });

  it('search_onestop_flight pairs legs by string time comparison, next-day legs included', async () => {
    const pairs = (await callJson(env, 'search_onestop_flight', {
      origin: 'SEA',
      destination: 'ATL',
      date: '2024-05-20',
    })) as {
      flight_number: string;
      date: string;
    }[][];
    expect(pairs.map(([a, b]) => `${a!.flight_number}@${a!.date}>${b!.flight_number}@${b!.date}`)).toEqual([
      'HAT018@2024-05-20>HAT070@2024-05-20',
      'HAT021@2024-05-20>HAT057@2024-05-21',
      'HAT021@2024-05-20>HAT136@2024-05-21',
      'HAT021@2024-05-20>HAT218@2024-05-21',
      'HAT021@2024-05-20>HAT268@2024-05-21',
      'HAT037@2024-05-20>HAT177@2024-05-20',
      'HAT055@2024-05-20>HAT177@2024-05-20',
      'HAT089@2024-05-20>HAT136@2024-05-20',
      'HAT089@2024-05-20>HAT218@2024-05-20',
      'HAT100@2024-05-20>HAT136@2024-05-20', // arrives 19:00:00, connects at 19:00:00
      'HAT117@2024-05-20>HAT177@2024-05-20',
      'HAT221@2024-05-20>HAT177@2024-05-20',
      'HAT276@2024-05-20>HAT057@2024-05-21',
      'HAT276@2024-05-20>HAT136@2024-05-21',
      'HAT276@2024-05-20>HAT218@2024-05-21',
      'HAT276@2024-05-20>HAT268@2024-05-21',
    ]);
    // The first leg of a pair is a DirectFlight with the search date set.
    expect(pairs[1]![0]).toMatchObject({
      flight_number: 'HAT021',
      scheduled_arrival_time_est: '01:00:00+1',
      date: '2024-05-20',
    });
  });

  it('get_flight_status returns the status string', async () => {
    expect((await call(env, 'get_flight_status', { flight_number: 'HAT001', date: '2024-05-01' })).content).toBe(
      'landed',
    );
    expect((await call(env, 'get_flight_status', { flight_number: 'HAT021', date: '2024-05-15' })).content).toBe(
      'on time',
    );
    expect((await call(env, 'get_flight_status', { flight_number: 'HAT089', date: '2024-05-15' })).content).toBe(
      'flying',
    );
    expect((await call(env, 'get_flight_status', { flight_number: 'HAT021', date: '2024-05-20' })).content).toBe(
      'available',
    );
    expect(await callError(env, 'get_flight_status', { flight_number: 'HAT999', date: '2024-05-20' })).toMatch(
      /HAT999 not found/,
    );
    expect(await callError(env, 'get_flight_status', { flight_number: 'HAT021', date: '2024-06-01' })).toMatch(
      /HAT021 not found on date 2024-06-01/,
    );
  });
});

describe('book_reservation', () => {
  const booking = {
    user_id: 'mia_li_3668',
    origin: 'SEA',
    destination: 'JFK',
    flight_type: 'one_way',
    cabin: 'economy',
    flights: [{ flight_number: 'HAT100', date: '2024-05-20' }],
    passengers: [
      { first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' },
      { first_name: 'Amelia', last_name: 'Ahmed', dob: '1957-03-21' },
    ],
    // 2 × 134 (economy fare) + 2 × 30 (insurance) + 1 × 50 (charged bag) = 378
    payment_methods: [
      { payment_id: 'certificate_4856383', amount: 100 },
      { payment_id: 'credit_card_4421486', amount: 278 },
    ],
    total_baggages: 2,
    nonfree_baggages: 1,
    insurance: 'yes',
  };

  it('books HATHAT: seats taken, certificate used up, reservation listed on the user', async () => {
    expect(await seats('HAT100', '2024-05-20', 'economy')).toBe(9);
    const r = await callJson(env, 'book_reservation', booking);
    expect(r).toEqual({
      reservation_id: 'HATHAT',
      user_id: 'mia_li_3668',
      origin: 'SEA',
      destination: 'JFK',
      flight_type: 'one_way',
      cabin: 'economy',
      flights: [{ flight_number: 'HAT100', origin: 'SEA', destination: 'JFK', date: '2024-05-20', price: 134 }],
      passengers: booking.passengers,
      payment_history: booking.payment_methods,
      created_at: '2024-05-15T15:00:00',
      total_baggages: 2,
      nonfree_baggages: 1,
      insurance: 'yes',
      status: null,
    });
    expect(await seats('HAT100', '2024-05-20', 'economy')).toBe(7);
    expect(await paymentMethod('mia_li_3668', 'certificate_4856383')).toBeUndefined();
    const user = (await callJson(env, 'get_user_details', { user_id: 'mia_li_3668' })) as typeof MIA;
    expect(user.reservations).toEqual(['NO6JO3', 'AIXC49', 'HKEG34', 'HATHAT']);
    expect(Object.keys(user.payment_methods)).toEqual([
      'credit_card_4421486',
      'certificate_7504069',
      'credit_card_1955700',
    ]);
  });

  /** A one-way basic economy booking of 93 dollars for a user with a 235-dollar gift card. */
  const lucasBooking = {
    ...booking,
    user_id: 'lucas_hernandez_8985',
    origin: 'MCO',
    destination: 'PHX',
    cabin: 'basic_economy',
    flights: [{ flight_number: 'HAT048', date: '2024-05-16' }],
    passengers: [{ first_name: 'Lucas', last_name: 'Hernandez', dob: '2000-03-10' }],
    total_baggages: 0,
    nonfree_baggages: 0,
    insurance: 'no',
  };

  it('takes a gift card share off its (float) amount', async () => {
    await callJson(env, 'book_reservation', {
      ...lucasBooking,
      payment_methods: [{ payment_id: 'gift_card_8525656', amount: 93 }],
    });
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_8525656')).toEqual({
      source: 'gift_card',
      amount: 142,
    });
    expect((await call(env, 'get_user_details', { user_id: 'lucas_hernandez_8985' })).content).toContain(
      '"amount": 142.0',
    );
    expect(await seats('HAT048', '2024-05-16', 'basic_economy')).toBe(3);
  });

  it('charges a gift card listed twice twice, each share off what the one before left', async () => {
    const r = await callJson(env, 'book_reservation', {
      ...lucasBooking,
      payment_methods: [
        { payment_id: 'gift_card_8525656', amount: 50 },
        { payment_id: 'gift_card_8525656', amount: 43 },
      ],
    });
    expect((r as { payment_history: unknown }).payment_history).toEqual([
      { payment_id: 'gift_card_8525656', amount: 50 },
      { payment_id: 'gift_card_8525656', amount: 43 },
    ]);
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_8525656')).toEqual({
      source: 'gift_card',
      amount: 142,
    });
  });

  it('hands out HATHAT, HATHAU, HATHAV, then refuses', async () => {
    const small = {
      ...booking,
      passengers: [booking.passengers[0]],
      payment_methods: [{ payment_id: 'credit_card_4421486', amount: 134 }],
      nonfree_baggages: 0,
      insurance: 'no',
    };
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push(((await callJson(env, 'book_reservation', small)) as { reservation_id: string }).reservation_id);
    expect(ids).toEqual(['HATHAT', 'HATHAU', 'HATHAV']);
    expect(await callError(env, 'book_reservation', small)).toMatch(/Too many reservations/);
  });

  it.each([
    [
      'payments that do not add up',
      { payment_methods: [{ payment_id: 'credit_card_4421486', amount: 377 }] },
      /total price is 378, but paid 377/,
    ],
    [
      'a certificate below its share',
      {
        payment_methods: [
          { payment_id: 'certificate_7504069', amount: 300 },
          { payment_id: 'credit_card_4421486', amount: 78 },
        ],
      },
      /Not enough balance in payment method certificate_7504069/,
    ],
    [
      'a payment method the user lacks',
      { payment_methods: [{ payment_id: 'gift_card_1', amount: 378 }] },
      /Payment method gift_card_1 not found/,
    ],
    [
      'a flight that is not available',
      { flights: [{ flight_number: 'HAT021', date: '2024-05-15' }] },
      /HAT021 not available on date 2024-05-15/,
    ],
    [
      'too few seats',
      { flights: [{ flight_number: 'HAT021', date: '2024-05-20' }] },
      /Not enough seats on flight HAT021/,
    ],
    ['an unknown flight', { flights: [{ flight_number: 'HAT999', date: '2024-05-20' }] }, /Flight HAT999 not found/],
    ['an unknown user', { user_id: 'nobody_1' }, /User nobody_1 not found/],
    [
      'a certificate listed twice (tau2 pops it at the first payment)',
      {
        payment_methods: [
          { payment_id: 'certificate_4856383', amount: 100 },
          { payment_id: 'certificate_4856383', amount: 100 },
          { payment_id: 'credit_card_4421486', amount: 178 },
        ],
      },
      /Payment method certificate_4856383 was already used up in this booking/,
    ],
  ])('fails for %s and changes nothing', async (_label, change, message) => {
    expect(await callError(env, 'book_reservation', { ...booking, ...change })).toMatch(message);
    expect(env.writes).toEqual([]);
    expect(await seats('HAT100', '2024-05-20', 'economy')).toBe(9);
  });
});

describe('cancel_reservation', () => {
  it('refunds every payment and sets the status; a second cancel refunds again; seats stay taken', async () => {
    const once = (await callJson(env, 'cancel_reservation', { reservation_id: 'NO6JO3' })) as typeof NO6JO3;
    expect(once).toEqual({
      ...NO6JO3,
      payment_history: [
        { payment_id: 'credit_card_1955700', amount: 2504 },
        { payment_id: 'credit_card_1955700', amount: -2504 },
      ],
      status: 'cancelled',
    });
    const twice = (await callJson(env, 'cancel_reservation', { reservation_id: 'NO6JO3' })) as typeof NO6JO3;
    expect(twice.payment_history.map((p) => p.amount)).toEqual([2504, -2504, -2504, 2504]);
    expect(await seats('HAT083', '2024-05-16', 'business')).toBe(3);
    expect(await callError(env, 'cancel_reservation', { reservation_id: 'ZZZZZZ' })).toMatch(/ZZZZZZ not found/);
  });
});

describe('update_reservation_baggages', () => {
  it('charges 50 per added charged bag', async () => {
    const r = (await callJson(env, 'update_reservation_baggages', {
      reservation_id: 'NO6JO3',
      total_baggages: 4,
      nonfree_baggages: 2,
      payment_id: 'credit_card_4421486',
    })) as typeof NO6JO3;
    expect(r.payment_history).toEqual([
      { payment_id: 'credit_card_1955700', amount: 2504 },
      { payment_id: 'credit_card_4421486', amount: 100 },
    ]);
    expect([r.total_baggages, r.nonfree_baggages]).toEqual([4, 2]);
  });

  it('records no payment for no added charged bag, takes gift cards, refuses certificates and thin gift cards', async () => {
    const r = (await callJson(env, 'update_reservation_baggages', {
      reservation_id: 'NO6JO3',
      total_baggages: 1,
      nonfree_baggages: 0,
      payment_id: 'credit_card_4421486',
    })) as typeof NO6JO3;
    expect(r.payment_history).toHaveLength(1);
    expect(
      await callError(env, 'update_reservation_baggages', {
        reservation_id: 'NO6JO3',
        total_baggages: 1,
        nonfree_baggages: 0,
        payment_id: 'certificate_4856383',
      }),
    ).toMatch(/Certificate cannot be used/);
    expect(
      await callError(env, 'update_reservation_baggages', {
        reservation_id: '4G94T6',
        total_baggages: 1,
        nonfree_baggages: 1,
        payment_id: 'gift_card_9443446',
      }),
    ).toMatch(/Gift card balance is not enough/); // 35.0 < 50
    await callJson(env, 'update_reservation_baggages', {
      reservation_id: '4G94T6',
      total_baggages: 1,
      nonfree_baggages: 1,
      payment_id: 'gift_card_8525656',
    });
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_8525656')).toEqual({
      source: 'gift_card',
      amount: 185,
    });
    expect(
      await callError(env, 'update_reservation_baggages', {
        reservation_id: 'NO6JO3',
        total_baggages: 1,
        nonfree_baggages: 1,
        payment_id: 'paypal_1',
      }),
    ).toMatch(/Payment method not found/);
  });

  it('leaves a gift card as it is when nothing is charged: no payment, no write to the card', async () => {
    // 4G94T6 (lucas_hernandez_8985) has 1 charged bag after this first call (gift card 235 -> 185).
    await callJson(env, 'update_reservation_baggages', {
      reservation_id: '4G94T6',
      total_baggages: 1,
      nonfree_baggages: 1,
      payment_id: 'gift_card_8525656',
    });
    // More free bags, no more charged ones: a total of 0 on a gift card (even the thin one).
    for (const card of ['gift_card_8525656', 'gift_card_9443446']) {
      const out = await call(env, 'update_reservation_baggages', {
        reservation_id: '4G94T6',
        total_baggages: 2,
        nonfree_baggages: 1,
        payment_id: card,
      });
      expect(out.error).toBe(false);
      expect(out.writes.map((w) => `${w.table}.${w.column} ${String(w.before)} -> ${String(w.after)}`)).toEqual(
        card === 'gift_card_8525656' ? ['reservations.total_baggages 1 -> 2'] : [],
      );
      expect((JSON.parse(out.content) as typeof NO6JO3).payment_history).toHaveLength(2);
    }
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_8525656')).toEqual({
      source: 'gift_card',
      amount: 185,
    });
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_9443446')).toEqual({
      source: 'gift_card',
      amount: 35,
    });
  });
});

describe('update_reservation_flights', () => {
  it('records a negative payment and credits the gift card when the new itinerary is cheaper; seats are not taken', async () => {
    // 4G94T6: HAT048 on 2024-05-16 in business at 1869; economy on that flight costs 115.
    const r = await callJson(env, 'update_reservation_flights', {
      reservation_id: '4G94T6',
      cabin: 'economy',
      flights: [{ flight_number: 'HAT048', date: '2024-05-16' }],
      payment_id: 'gift_card_9443446',
    });
    expect(r).toMatchObject({
      cabin: 'economy',
      flights: [{ flight_number: 'HAT048', origin: 'MCO', destination: 'PHX', date: '2024-05-16', price: 115 }],
      payment_history: [
        { payment_id: 'gift_card_9443446', amount: 1869 },
        { payment_id: 'gift_card_9443446', amount: -1754 },
      ],
    });
    expect(await paymentMethod('lucas_hernandez_8985', 'gift_card_9443446')).toEqual({
      source: 'gift_card',
      amount: 1789,
    });
    expect(await seats('HAT048', '2024-05-16', 'economy')).toBe(1);
  });

  it('keeps unchanged segments at their old price and refuses a certificate even for no difference', async () => {
    const same = {
      reservation_id: 'NO6JO3',
      cabin: 'business',
      flights: NO6JO3.flights.map(({ flight_number, date }) => ({ flight_number, date })),
    };
    expect(await callError(env, 'update_reservation_flights', { ...same, payment_id: 'certificate_4856383' })).toMatch(
      /Certificate cannot be used/,
    );
    const r = (await callJson(env, 'update_reservation_flights', {
      ...same,
      payment_id: 'credit_card_4421486',
    })) as typeof NO6JO3;
    expect(r.flights).toEqual(NO6JO3.flights); // 483 and 1991, not today's 468 and 380
    expect(r.payment_history).toHaveLength(1); // no difference, no payment
  });

  it('checks new segments like a booking', async () => {
    const args = { reservation_id: 'NO6JO3', cabin: 'economy', payment_id: 'credit_card_4421486' };
    expect(
      await callError(env, 'update_reservation_flights', {
        ...args,
        flights: [{ flight_number: 'HAT021', date: '2024-05-20' }],
      }),
    ).toMatch(/Not enough seats on flight HAT021/);
    expect(
      await callError(env, 'update_reservation_flights', {
        ...args,
        flights: [{ flight_number: 'HAT001', date: '2024-05-01' }],
      }),
    ).toMatch(/HAT001 not available on date 2024-05-01/);
  });
});

describe('update_reservation_passengers', () => {
  it('replaces the passengers when the count matches', async () => {
    const pax = [{ first_name: 'Amelia', last_name: 'Ahmed', dob: '1957-03-21' }];
    expect(
      (
        (await callJson(env, 'update_reservation_passengers', {
          reservation_id: 'NO6JO3',
          passengers: pax,
        })) as typeof NO6JO3
      ).passengers,
    ).toEqual(pax);
    const written = env.writes.length;
    expect(
      await callError(env, 'update_reservation_passengers', { reservation_id: 'NO6JO3', passengers: [...pax, ...pax] }),
    ).toMatch(/Number of passengers does not match/);
    // The refused call deleted the passengers before counting them: rolled back, nothing written.
    expect(env.writes.length).toBe(written);
    expect(
      ((await callJson(env, 'get_reservation_details', { reservation_id: 'NO6JO3' })) as typeof NO6JO3).passengers,
    ).toEqual(pax);
  });
});

describe('send_certificate', () => {
  it('adds certificate_3221322, then …23 and …24, then refuses', async () => {
    const out = await call(env, 'send_certificate', { user_id: 'mia_li_3668', amount: 150 });
    expect(out.content).toBe('Certificate certificate_3221322 added to user mia_li_3668 with amount 150.');
    const user = await call(env, 'get_user_details', { user_id: 'mia_li_3668' });
    expect(user.content).toContain(
      '"credit_card_1955700": {"source": "credit_card", "id": "credit_card_1955700", "brand": "visa", "last_four": "1907"}, "certificate_3221322": {"source": "certificate", "id": "certificate_3221322", "amount": 150.0}}',
    );
    expect((await call(env, 'send_certificate', { user_id: 'mia_li_3668', amount: 50 })).content).toMatch(
      /certificate_3221323/,
    );
    expect((await call(env, 'send_certificate', { user_id: 'mia_li_3668', amount: 50 })).content).toMatch(
      /certificate_3221324/,
    );
    expect(await callError(env, 'send_certificate', { user_id: 'mia_li_3668', amount: 50 })).toMatch(
      /Too many certificates/,
    );
    // Each after the user's last method (mia_li_3668 had four, at positions 0-3).
    expect(
      await env.query(
        "SELECT payment_method_id, position, amount FROM user_payment_methods WHERE user_id = ? AND source = 'certificate' ORDER BY position",
        ['mia_li_3668'],
      ),
    ).toEqual([
      { payment_method_id: 'certificate_4856383', position: 1, amount: 100 },
      { payment_method_id: 'certificate_7504069', position: 2, amount: 250 },
      { payment_method_id: 'certificate_3221322', position: 4, amount: 150 },
      { payment_method_id: 'certificate_3221323', position: 5, amount: 50 },
      { payment_method_id: 'certificate_3221324', position: 6, amount: 50 },
    ]);
    expect(await callError(env, 'send_certificate', { user_id: 'nobody_1', amount: 50 })).toMatch(/nobody_1 not found/);
  });
});

describe('generic and think tools', () => {
  it('calculate, transfer_to_human_agents and think', async () => {
    expect((await call(env, 'calculate', { expression: '(483 + 1991) * 2' })).content).toBe('4948.0');
    expect(await callError(env, 'calculate', { expression: '2e3' })).toMatch(/Invalid characters/);
    expect((await call(env, 'transfer_to_human_agents', { summary: 'wants a refund' })).content).toBe(
      'Transfer successful',
    );
    const think = await call(env, 'think', { thought: 'check the 24h rule' });
    expect([think.content, think.error, think.kind]).toEqual(['', false, 'think']);
    expect(env.writes).toEqual([]);
  });

  it('refuses arguments tau2 would not accept', async () => {
    expect(await callError(env, 'get_user_details', {})).toMatch(/user_id/);
    expect(await callError(env, 'get_user_details', { user_id: 'mia_li_3668', extra: 1 })).toMatch(/invalid arguments/);
    expect(await callError(env, 'book_reservation', { user_id: 'mia_li_3668' })).toMatch(/invalid arguments/);
  });
});
