/**
 * The tau2-bench airline tools that change the database (bookings, cancellations, updates,
 * certificates); quirks as listed in `tools.ts`.
 * `= +?` in queries with an `ORDER BY`, a join or an aggregate: see `queries.ts`.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { ToolError, defineTool } from '../../src/core/schema/domain.ts';
import {
  Cabin,
  NEW_CERTIFICATE_IDS,
  appendPayments,
  availableCabin,
  estTimestamp,
  FLIGHT_ROWS,
  PASSENGER_ROWS,
  PAYMENT_ROWS,
  insertRows,
  payForUpdate,
  reservationFlights,
  reservationSegments,
  reservationPayments,
  reservationJson,
  bookingStart,
  reservationForUpdate,
  reservationRow,
  TOLD,
  userNotFound,
} from './queries.ts';

const FlightInfo = z.object({
  flight_number: z.string().describe("Flight number, e.g. 'HAT001'."),
  date: z.string().describe("Flight date as 'YYYY-MM-DD', e.g. '2024-05-01'."),
});
const PassengerArg = z.object({
  first_name: z.string().describe("The passenger's first name."),
  last_name: z.string().describe("The passenger's last name."),
  dob: z.string().describe("Date of birth as 'YYYY-MM-DD'."),
});
const PaymentArg = z.object({
  payment_id: z.string().describe("A payment method id from the user's profile, e.g. 'credit_card_7815826'."),
  amount: z.number().int().describe('Amount charged to this payment method, in dollars.'),
});

const PAYMENT_ID_DESC =
  "A payment method id from the user's profile, e.g. 'credit_card_7815826', 'gift_card_7815826' or 'certificate_7815826'.";

export const bookReservation = defineTool({
  name: 'book_reservation',
  kind: 'write',
  spokenAs: 'book this reservation',
  description:
    'Book a new reservation for a user: flights, passengers, cabin, baggage and insurance, paid with methods from the user profile. The payments must add up to the total price.',
  params: z.strictObject({
    user_id: z.string().describe("The user booking the reservation, e.g. 'sara_doe_496'."),
    origin: z.string().describe("Trip origin airport code, e.g. 'SFO'."),
    destination: z.string().describe("Trip destination airport code, e.g. 'JFK'."),
    flight_type: z.enum(['round_trip', 'one_way']).describe("'one_way' or 'round_trip'."),
    cabin: Cabin.describe("'basic_economy', 'economy' or 'business'."),
    flights: z.array(FlightInfo).describe('Every flight segment of the trip.'),
    passengers: z.array(PassengerArg).describe('Every passenger travelling.'),
    payment_methods: z.array(PaymentArg).describe('How the total is paid, split over payment methods.'),
    total_baggages: z.number().int().describe('Total number of checked bags.'),
    nonfree_baggages: z.number().int().describe('Number of checked bags that are charged.'),
    insurance: z.enum(['yes', 'no']).describe("Travel insurance: 'yes' or 'no'."),
  }),
  async run({ db, now, resultDiscarded, tell }, args) {
    // The user's methods as they are now, read once (by id: in no order) with the new id and
    // position; the checks below see the methods before any payment.
    const { methods, reservationId, position, membership } = await bookingStart(db, args.user_id);
    const nPax = args.passengers.length;
    let total = 0;
    const legs: { info: z.infer<typeof FlightInfo>; origin: string; destination: string; price: number }[] = [];
    for (const info of args.flights) {
      const leg = await availableCabin(db, info.flight_number, info.date, args.cabin, nPax);
      legs.push({ info, ...leg });
      total += leg.price * nPax;
    }
    if (args.insurance === 'yes') total += 30 * nPax;
    total += 50 * args.nonfree_baggages;
    for (const pay of args.payment_methods) {
      const pm = methods.get(pay.payment_id);
      if (!pm) throw new ToolError(`Payment method ${pay.payment_id} not found`);
      if ((pm.source === 'gift_card' || pm.source === 'certificate') && (pm.amount as number) < pay.amount) {
        throw new ToolError(`Not enough balance in payment method ${pay.payment_id}`);
      }
    }
    const paid = args.payment_methods.reduce((sum, p) => sum + p.amount, 0);
    if (paid !== total)
      throw new ToolError(`Payment amount does not add up, total price is ${total}, but paid ${paid}`);
    // Each payment sees the ones before it (a gift card listed twice is charged twice).
    for (const pay of args.payment_methods) {
      const pm = methods.get(pay.payment_id);
      if (!pm) {
        // tau2 pops a certificate when it pays; listing it twice fails on the second pop.
        throw new ToolError(`Payment method ${pay.payment_id} was already used up in this booking`);
      }
      if (pm.source === 'gift_card') {
        const amount = (pm.amount as number) - pay.amount;
        await db.run('UPDATE user_payment_methods SET amount = ? WHERE user_id = ? AND payment_method_id = ?', [
          amount,
          args.user_id,
          pay.payment_id,
        ]);
        methods.set(pay.payment_id, { ...pm, amount });
      } else if (pm.source === 'certificate') {
        await db.run('DELETE FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
          args.user_id,
          pay.payment_id,
        ]);
        methods.delete(pay.payment_id);
      }
    }
    for (const leg of legs) {
      await db.run(
        'UPDATE flight_date_seats SET available_seats = available_seats - ? WHERE flight_number = ? AND date = ? AND cabin = ?',
        [nPax, leg.info.flight_number, leg.info.date, args.cabin],
      );
    }
    // The row as `SELECT *` gives it (columns in table order; no RETURNING: it costs ~2 µs a row).
    const row: SqlRow = {
      reservation_id: reservationId,
      position,
      user_id: args.user_id,
      origin: args.origin,
      destination: args.destination,
      flight_type: args.flight_type,
      cabin: args.cabin,
      created_at: estTimestamp(now()),
      total_baggages: args.total_baggages,
      nonfree_baggages: args.nonfree_baggages,
      insurance: args.insurance,
      status: null,
      absent_fields: null,
    };
    await db.run(
      `INSERT INTO reservations (reservation_id, position, user_id, origin, destination, flight_type, cabin, created_at,
         total_baggages, nonfree_baggages, insurance, status, absent_fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      Object.values(row),
    );
    const flights = await insertRows(
      db,
      FLIGHT_ROWS,
      legs.map((leg, i) => [
        reservationId,
        i,
        leg.info.flight_number,
        leg.origin,
        leg.destination,
        leg.info.date,
        leg.price,
      ]),
    );
    const passengers = await insertRows(
      db,
      PASSENGER_ROWS,
      args.passengers.map((p, i) => [reservationId, i, p.first_name, p.last_name, p.dob]),
    );
    const payments = await insertRows(
      db,
      PAYMENT_ROWS,
      args.payment_methods.map((p, i) => [reservationId, i, p.payment_id, p.amount]),
    );
    await db.run(
      `INSERT INTO user_reservation_ids (user_id, position, reservation_id)
       SELECT ?1, coalesce(max(position) + 1, 0), ?2 FROM user_reservation_ids WHERE user_id = +?1`,
      [args.user_id, reservationId],
    );
    if (tell) {
      // For the bag, passenger and payment checks.
      const { cabin, total_baggages, nonfree_baggages } = args;
      tell(TOLD.bags(reservationId), { cabin, total_baggages, nonfree_baggages, membership, pax: nPax });
      tell(TOLD.payments(reservationId), payments);
    }
    return resultDiscarded ? '' : reservationJson(db, reservationId, { row, flights, passengers, payments });
  },
});

export const cancelReservation = defineTool({
  name: 'cancel_reservation',
  kind: 'write',
  spokenAs: 'cancel the reservation',
  description: 'Cancel a whole reservation: every payment is refunded to its method and the status becomes cancelled.',
  params: z.strictObject({ reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'.") }),
  async run({ db, resultDiscarded, tell }, { reservation_id }) {
    const r = await reservationRow(db, reservation_id);
    const history = await reservationPayments(db, reservation_id);
    const payments = await appendPayments(
      db,
      reservation_id,
      history,
      history.map((p) => ({ paymentId: p.payment_id as string, amount: -(p.amount as number) })),
    );
    await db.run("UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", [reservation_id]);
    const row = { ...r, status: 'cancelled' };
    tell?.(TOLD.reservation(reservation_id), row);
    if (resultDiscarded) return '';
    // The segments with their flight dates' statuses, which the cancellation checks read.
    const flights = await reservationSegments(db, reservation_id);
    tell?.(TOLD.segments(reservation_id), flights);
    return reservationJson(db, reservation_id, { row, flights, payments });
  },
});

export const updateReservationBaggages = defineTool({
  name: 'update_reservation_baggages',
  kind: 'write',
  spokenAs: 'update the bags on the reservation',
  description:
    'Change the number of checked bags on a reservation; added charged bags are paid with a method from the user profile.',
  params: z.strictObject({
    reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'."),
    total_baggages: z.number().int().describe('The new total number of checked bags.'),
    nonfree_baggages: z.number().int().describe('The new number of charged checked bags.'),
    payment_id: z.string().describe(PAYMENT_ID_DESC),
  }),
  async run({ db, resultDiscarded, tell }, { reservation_id, total_baggages, nonfree_baggages, payment_id }) {
    const { row: r, pax, membership, method } = await reservationForUpdate(db, reservation_id, 'bags', payment_id);
    const total = 50 * Math.max(0, nonfree_baggages - (r.nonfree_baggages as number));
    const payments = (await payForUpdate(db, r.user_id as string, payment_id, method, total))
      ? await appendPayments(db, reservation_id, await reservationPayments(db, reservation_id), [
          { paymentId: payment_id, amount: total },
        ])
      : undefined;
    await db.run('UPDATE reservations SET total_baggages = ?, nonfree_baggages = ? WHERE reservation_id = ?', [
      total_baggages,
      nonfree_baggages,
      reservation_id,
    ]);
    // The row as read, with the columns just set (no RETURNING: it costs ~4 µs more).
    const row = { ...r, total_baggages, nonfree_baggages };
    tell?.(TOLD.bags(reservation_id), { cabin: r.cabin, total_baggages, nonfree_baggages, membership, pax });
    return resultDiscarded ? '' : reservationJson(db, reservation_id, { row, ...(payments ? { payments } : {}) });
  },
});

export const updateReservationFlights = defineTool({
  name: 'update_reservation_flights',
  kind: 'write',
  spokenAs: 'change the flights of the reservation',
  description:
    'Replace the flights (and cabin) of a reservation. List every flight of the new itinerary, unchanged ones included. The price difference is paid with, or refunded to, a method from the user profile.',
  params: z.strictObject({
    reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'."),
    cabin: Cabin.describe('The cabin class of the reservation after the change.'),
    flights: z.array(FlightInfo).describe('Every flight of the new itinerary, including the unchanged ones.'),
    payment_id: z.string().describe(PAYMENT_ID_DESC),
  }),
  async run({ db, resultDiscarded, tell }, { reservation_id, cabin, flights, payment_id }) {
    const found = await reservationForUpdate(db, reservation_id, 'flights', payment_id, cabin);
    const { row: r, pax: nPax, paid, flown, method } = found;
    // The segments now, for those kept: none when the cabin changes.
    const current = cabin === r.cabin ? await reservationFlights(db, reservation_id) : [];
    let total = 0;
    const next: (string | number)[][] = [];
    for (const info of flights) {
      const kept = current.find((f) => f.flight_number === info.flight_number && f.date === info.date);
      let leg: { origin: string; destination: string; price: number };
      if (kept)
        leg = { origin: kept.origin as string, destination: kept.destination as string, price: kept.price as number };
      else leg = await availableCabin(db, info.flight_number, info.date, cabin, nPax);
      total += leg.price * nPax;
      next.push([reservation_id, next.length, info.flight_number, leg.origin, leg.destination, info.date, leg.price]);
    }
    total -= paid! * nPax;
    const payments = (await payForUpdate(db, r.user_id as string, payment_id, method, total))
      ? await appendPayments(db, reservation_id, await reservationPayments(db, reservation_id), [
          { paymentId: payment_id, amount: total },
        ])
      : undefined;
    await db.run('DELETE FROM reservation_flights WHERE reservation_id = ?', [reservation_id]);
    const rows = await insertRows(db, FLIGHT_ROWS, next);
    // The same cabin is no change (the write log records none): no statement.
    if (cabin !== r.cabin)
      await db.run('UPDATE reservations SET cabin = ? WHERE reservation_id = ?', [cabin, reservation_id]);
    const row = { ...r, cabin };
    // For the route, basic-economy and cabin checks.
    tell?.(TOLD.reservation(reservation_id), row);
    tell?.(TOLD.route(reservation_id), rows);
    // A change of cabin: how many of the segments replaced (all, by the DELETE above) had taken off.
    if (flown != null) tell?.(TOLD.flown(reservation_id), flown);
    return resultDiscarded
      ? ''
      : reservationJson(db, reservation_id, { row, flights: rows, ...(payments ? { payments } : {}) });
  },
});

export const updateReservationPassengers = defineTool({
  name: 'update_reservation_passengers',
  kind: 'write',
  spokenAs: 'update the passengers of the reservation',
  description: 'Replace the passenger details of a reservation; the number of passengers cannot change.',
  params: z.strictObject({
    reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'."),
    passengers: z.array(PassengerArg).describe('Every passenger of the reservation, in order.'),
  }),
  async run({ db, resultDiscarded }, { reservation_id, passengers }) {
    const r = await reservationRow(db, reservation_id);
    // The count is checked on the rows deleted: when it does not match, the error fails the call,
    // which rolls the deletion back.
    const current = await db.all('DELETE FROM reservation_passengers WHERE reservation_id = ? RETURNING position', [
      reservation_id,
    ]);
    if (passengers.length !== current.length) throw new ToolError('Number of passengers does not match');
    const rows = await insertRows(
      db,
      PASSENGER_ROWS,
      passengers.map((p, i) => [reservation_id, i, p.first_name, p.last_name, p.dob]),
    );
    // The reservation row is unchanged; the passengers are the rows just inserted, in position order.
    return resultDiscarded ? '' : reservationJson(db, reservation_id, { row: r, passengers: rows });
  },
});

/**
 * What `send_certificate` reads first, for user `?1`: one row when the user exists, with `free`,
 * the index in {@link NEW_CERTIFICATE_IDS} of the first id none of its payment methods has (NULL
 * when it has all), and `position`, its last method's position + 1 (0 for none). Ints only: the
 * user's method ids and positions, read before, were ~4 texts sql.js decodes at ~0.4 µs each.
 * `+?1` where the plan has choices (see queries.ts).
 *
 * What a call spends, each statement timed inside 4,000 calls on fresh environments (session 15,
 * a slow spell: ~50 µs a call): the INSERT with its write-log trigger ~16 µs, this read ~15 µs
 * (~3 µs in a loop of its own: cold in a call), the env's read of the call's log rows ~7.6 µs,
 * its SAVEPOINT and RELEASE ~2.7 µs, the two rule checks ~2 µs; the rest is JavaScript (the
 * arguments' parse, the log rows' parse, the reply). Measured and not done: one `INSERT … SELECT
 * … FROM (this read) … RETURNING payment_method_id` (the read again only on failure, to tell the
 * two errors apart) ×1.249 and ×1.235 (20 pairs each, same process, calls alternating); `+?1`
 * for every `?1` here, no change in the read's time in a call.
 */
const SEND_START = `SELECT coalesce(${NEW_CERTIFICATE_IDS.map((c, i) => `(SELECT ${i} WHERE NOT EXISTS (SELECT 1 FROM user_payment_methods WHERE user_id = ?1 AND payment_method_id = '${c}'))`).join(', ')}) AS free,
  (SELECT coalesce(max(position) + 1, 0) FROM user_payment_methods WHERE user_id = +?1) AS position
  FROM users WHERE user_id = ?1`;

export const sendCertificate = defineTool({
  name: 'send_certificate',
  kind: 'write',
  spokenAs: 'send a certificate',
  description: "Add a travel certificate of the given amount to a user's payment methods. Use with care.",
  params: z.strictObject({
    user_id: z.string().describe("The user to receive the certificate, e.g. 'sara_doe_496'."),
    amount: z.number().int().describe('The certificate amount in dollars.'),
  }),
  async run({ db }, { user_id, amount }) {
    // The user (no row: not found), the first of the new certificate ids it lacks (its index,
    // NULL when it has all) and the position after its last method, in one read of ints.
    const found = await db.one(SEND_START, [user_id]);
    if (!found) throw userNotFound(user_id);
    if (found.free === null) throw new ToolError('Too many certificates');
    const id = NEW_CERTIFICATE_IDS[found.free as number]!;
    const position = found.position as number;
    // After the user's last method (max(position) + 1, 0 for none).
    await db.run(
      `INSERT INTO user_payment_methods (user_id, payment_method_id, position, source, brand, last_four, amount)
       VALUES (?, ?, ?, 'certificate', NULL, NULL, ?)`,
      [user_id, id, position, amount],
    );
    return `Certificate ${id} added to user ${user_id} with amount ${amount}.`;
  },
});
