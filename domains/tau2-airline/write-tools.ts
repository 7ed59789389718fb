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
  NEW_RESERVATION_IDS,
  appendPayment,
  availableCabin,
  estTimestamp,
  nextPosition,
  payForUpdate,
  reservationFlights,
  reservationJson,
  reservationPassengers,
  reservationRow,
  userRow,
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
  async run({ db, now }, args) {
    const user = await userRow(db, args.user_id);
    let reservationId: string | undefined;
    for (const id of NEW_RESERVATION_IDS) {
      if (!(await db.one('SELECT 1 AS x FROM reservations WHERE reservation_id = ?', [id]))) {
        reservationId = id;
        break;
      }
    }
    if (!reservationId) throw new ToolError('Too many reservations');
    const nPax = args.passengers.length;
    let total = 0;
    const legs: { info: z.infer<typeof FlightInfo>; flight: SqlRow; price: number }[] = [];
    for (const info of args.flights) {
      const { flight, price } = await availableCabin(db, info.flight_number, info.date, args.cabin, nPax);
      legs.push({ info, flight, price });
      total += price * nPax;
    }
    if (args.insurance === 'yes') total += 30 * nPax;
    total += 50 * args.nonfree_baggages;
    const methods = new Map<string, SqlRow>();
    for (const pay of args.payment_methods) {
      const pm = await db.one('SELECT * FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
        args.user_id,
        pay.payment_id,
      ]);
      if (!pm) throw new ToolError(`Payment method ${pay.payment_id} not found`);
      if ((pm.source === 'gift_card' || pm.source === 'certificate') && (pm.amount as number) < pay.amount) {
        throw new ToolError(`Not enough balance in payment method ${pay.payment_id}`);
      }
      methods.set(pay.payment_id, pm);
    }
    const paid = args.payment_methods.reduce((sum, p) => sum + p.amount, 0);
    if (paid !== total)
      throw new ToolError(`Payment amount does not add up, total price is ${total}, but paid ${paid}`);
    for (const pay of args.payment_methods) {
      const pm = await db.one('SELECT * FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
        args.user_id,
        pay.payment_id,
      ]);
      if (!pm) {
        // tau2 pops a certificate when it pays; listing it twice fails on the second pop.
        throw new ToolError(`Payment method ${pay.payment_id} was already used up in this booking`);
      }
      if (pm.source === 'gift_card') {
        await db.run('UPDATE user_payment_methods SET amount = ? WHERE user_id = ? AND payment_method_id = ?', [
          (pm.amount as number) - pay.amount,
          args.user_id,
          pay.payment_id,
        ]);
      } else if (pm.source === 'certificate') {
        await db.run('DELETE FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
          args.user_id,
          pay.payment_id,
        ]);
      }
    }
    for (const leg of legs) {
      await db.run(
        'UPDATE flight_date_seats SET available_seats = available_seats - ? WHERE flight_number = ? AND date = ? AND cabin = ?',
        [nPax, leg.info.flight_number, leg.info.date, args.cabin],
      );
    }
    const position = await nextPosition(db, 'SELECT max(position) AS p FROM reservations', []);
    await db.run(
      `INSERT INTO reservations (reservation_id, position, user_id, origin, destination, flight_type, cabin, created_at,
         total_baggages, nonfree_baggages, insurance, status, absent_fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
      [
        reservationId,
        position,
        args.user_id,
        args.origin,
        args.destination,
        args.flight_type,
        args.cabin,
        estTimestamp(now()),
        args.total_baggages,
        args.nonfree_baggages,
        args.insurance,
      ],
    );
    for (const [i, leg] of legs.entries()) {
      await db.run(
        'INSERT INTO reservation_flights (reservation_id, position, flight_number, origin, destination, date, price) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [
          reservationId,
          i,
          leg.info.flight_number,
          leg.flight.origin!,
          leg.flight.destination!,
          leg.info.date,
          leg.price,
        ],
      );
    }
    for (const [i, p] of args.passengers.entries()) {
      await db.run(
        'INSERT INTO reservation_passengers (reservation_id, position, first_name, last_name, dob) VALUES (?, ?, ?, ?, ?)',
        [reservationId, i, p.first_name, p.last_name, p.dob],
      );
    }
    for (const [i, p] of args.payment_methods.entries()) {
      await db.run(
        'INSERT INTO reservation_payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)',
        [reservationId, i, p.payment_id, p.amount],
      );
    }
    const userPosition = await nextPosition(
      db,
      'SELECT max(position) AS p FROM user_reservation_ids WHERE user_id = +?',
      [user.user_id as string],
    );
    await db.run('INSERT INTO user_reservation_ids (user_id, position, reservation_id) VALUES (?, ?, ?)', [
      user.user_id as string,
      userPosition,
      reservationId,
    ]);
    return reservationJson(db, reservationId);
  },
});

export const cancelReservation = defineTool({
  name: 'cancel_reservation',
  kind: 'write',
  spokenAs: 'cancel the reservation',
  description: 'Cancel a whole reservation: every payment is refunded to its method and the status becomes cancelled.',
  params: z.strictObject({ reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'.") }),
  async run({ db }, { reservation_id }) {
    await reservationRow(db, reservation_id);
    const payments = await db.all(
      'SELECT payment_id, amount FROM reservation_payments WHERE reservation_id = +? ORDER BY position',
      [reservation_id],
    );
    for (const p of payments) await appendPayment(db, reservation_id, p.payment_id as string, -(p.amount as number));
    await db.run("UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", [reservation_id]);
    return reservationJson(db, reservation_id);
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
  async run({ db }, { reservation_id, total_baggages, nonfree_baggages, payment_id }) {
    const r = await reservationRow(db, reservation_id);
    const user = await userRow(db, r.user_id as string);
    const total = 50 * Math.max(0, nonfree_baggages - (r.nonfree_baggages as number));
    if (await payForUpdate(db, user.user_id as string, payment_id, total))
      await appendPayment(db, reservation_id, payment_id, total);
    await db.run('UPDATE reservations SET total_baggages = ?, nonfree_baggages = ? WHERE reservation_id = ?', [
      total_baggages,
      nonfree_baggages,
      reservation_id,
    ]);
    return reservationJson(db, reservation_id);
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
  async run({ db }, { reservation_id, cabin, flights, payment_id }) {
    const r = await reservationRow(db, reservation_id);
    const user = await userRow(db, r.user_id as string);
    const current = await reservationFlights(db, reservation_id);
    const nPax = (await reservationPassengers(db, reservation_id)).length;
    let total = 0;
    const next: { flight_number: string; origin: string; destination: string; date: string; price: number }[] = [];
    for (const info of flights) {
      const kept =
        cabin === r.cabin
          ? current.find((f) => f.flight_number === info.flight_number && f.date === info.date)
          : undefined;
      if (kept) {
        total += (kept.price as number) * nPax;
        next.push({
          flight_number: kept.flight_number as string,
          origin: kept.origin as string,
          destination: kept.destination as string,
          date: kept.date as string,
          price: kept.price as number,
        });
        continue;
      }
      const { flight, price } = await availableCabin(db, info.flight_number, info.date, cabin, nPax);
      total += price * nPax;
      next.push({
        flight_number: info.flight_number,
        origin: flight.origin as string,
        destination: flight.destination as string,
        date: info.date,
        price,
      });
    }
    total -= current.reduce((sum, f) => sum + (f.price as number), 0) * nPax;
    if (await payForUpdate(db, user.user_id as string, payment_id, total))
      await appendPayment(db, reservation_id, payment_id, total);
    await db.run('DELETE FROM reservation_flights WHERE reservation_id = ?', [reservation_id]);
    for (const [i, f] of next.entries()) {
      await db.run(
        'INSERT INTO reservation_flights (reservation_id, position, flight_number, origin, destination, date, price) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [reservation_id, i, f.flight_number, f.origin, f.destination, f.date, f.price],
      );
    }
    await db.run('UPDATE reservations SET cabin = ? WHERE reservation_id = ?', [cabin, reservation_id]);
    return reservationJson(db, reservation_id);
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
  async run({ db }, { reservation_id, passengers }) {
    const r = await reservationRow(db, reservation_id);
    // The count is checked on the rows deleted: when it does not match, the error fails the call,
    // which rolls the deletion back.
    const current = await db.all('DELETE FROM reservation_passengers WHERE reservation_id = ? RETURNING position', [
      reservation_id,
    ]);
    if (passengers.length !== current.length) throw new ToolError('Number of passengers does not match');
    const rows: SqlRow[] = [];
    for (const [i, p] of passengers.entries()) {
      const [row] = await db.all(
        'INSERT INTO reservation_passengers (reservation_id, position, first_name, last_name, dob) VALUES (?, ?, ?, ?, ?) RETURNING *',
        [reservation_id, i, p.first_name, p.last_name, p.dob],
      );
      rows.push(row!);
    }
    // The reservation row is unchanged; the passengers are the rows just inserted, in position order.
    return reservationJson(db, reservation_id, { row: r, passengers: rows });
  },
});

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
    await userRow(db, user_id);
    for (const id of NEW_CERTIFICATE_IDS) {
      const taken = await db.one(
        'SELECT 1 AS x FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?',
        [user_id, id],
      );
      if (taken) continue;
      const position = await nextPosition(
        db,
        'SELECT max(position) AS p FROM user_payment_methods WHERE user_id = +?',
        [user_id],
      );
      await db.run(
        "INSERT INTO user_payment_methods (user_id, payment_method_id, position, source, brand, last_four, amount) VALUES (?, ?, ?, 'certificate', NULL, NULL, ?)",
        [user_id, id, position, amount],
      );
      return `Certificate ${id} added to user ${user_id} with amount ${amount}.`;
    }
    throw new ToolError('Too many certificates');
  },
});
