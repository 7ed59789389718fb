/**
 * tau2-bench airline tools over the tables of `schema.sql`: same names, parameters, kinds,
 * results (the pydantic records as JSON, see `records.ts`) and failure conditions as tau2-bench's
 * `AirlineTools`, quirks included:
 * - `cancel_reservation` does not check the status: cancelling twice appends the refunds twice;
 *   seats are not released; a cancelled reservation can still be updated.
 * - `update_reservation_flights` records a negative payment and credits a gift card when the new
 *   itinerary is cheaper; a certificate is refused even for a zero difference; seats are not
 *   taken from the new flights.
 * - `search_direct_flight` results carry `date: null`; `search_onestop_flight` compares times as
 *   strings (the `+1` suffix included) and builds the next day as `2024-05-<day + 1>` (unpadded).
 * - New ids come from fixed lists: reservations HATHAT, HATHAU, HATHAV; certificates
 *   certificate_3221322 … _3221324.
 *
 * Times are EST without offset (`2024-05-15T15:00:00`), derived from the policy clock.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { ToolError, defineTool, type ToolDb, type ToolDefinition } from '../../src/core/schema/domain.ts';
import { calculateTool, thinkTool, toolJson, transferToHumanAgentsTool } from '../../src/core/tau2/common-tools.ts';
import type { PyJson } from '../../src/core/tau2/py-json.ts';
import { directFlightRecord, reservationRecord, userRecord, type PyJson as RecordJson } from './records.ts';

/** EST (UTC-5, the policy's zone; no daylight saving in tau2's clock), ms. */
const EST_OFFSET_MS = -5 * 3_600_000;

/** The policy clock as tau2's `_get_datetime`: `YYYY-MM-DDTHH:MM:SS` in EST. */
export function estTimestamp(ms: number): string {
  return new Date(ms + EST_OFFSET_MS).toISOString().slice(0, 19);
}

/** Reservation ids handed out by `book_reservation`, first free one wins (tau2 allows three per task). */
export const NEW_RESERVATION_IDS = ['HATHAT', 'HATHAU', 'HATHAV'] as const;
/** Payment-method ids handed out by `send_certificate`, first free one wins. */
export const NEW_CERTIFICATE_IDS = ['certificate_3221322', 'certificate_3221323', 'certificate_3221324'] as const;

/** Airports of `list_all_airports`, in tau2's order. */
export const AIRPORTS: readonly { iata: string; city: string }[] = [
  { iata: 'SFO', city: 'San Francisco' },
  { iata: 'JFK', city: 'New York' },
  { iata: 'LAX', city: 'Los Angeles' },
  { iata: 'ORD', city: 'Chicago' },
  { iata: 'DFW', city: 'Dallas' },
  { iata: 'DEN', city: 'Denver' },
  { iata: 'SEA', city: 'Seattle' },
  { iata: 'ATL', city: 'Atlanta' },
  { iata: 'MIA', city: 'Miami' },
  { iata: 'BOS', city: 'Boston' },
  { iata: 'PHX', city: 'Phoenix' },
  { iata: 'IAH', city: 'Houston' },
  { iata: 'LAS', city: 'Las Vegas' },
  { iata: 'MCO', city: 'Orlando' },
  { iata: 'EWR', city: 'Newark' },
  { iata: 'CLT', city: 'Charlotte' },
  { iata: 'MSP', city: 'Minneapolis' },
  { iata: 'DTW', city: 'Detroit' },
  { iata: 'PHL', city: 'Philadelphia' },
  { iata: 'LGA', city: 'LaGuardia' },
];

const Cabin = z.enum(['basic_economy', 'economy', 'business']);
type Cabin = z.infer<typeof Cabin>;

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

// ---------------------------------------------------------------------------------------------
// Reads shared by the tools

async function userRow(db: ToolDb, userId: string): Promise<SqlRow> {
  const u = await db.one('SELECT * FROM users WHERE user_id = ?', [userId]);
  if (!u) throw new ToolError(`User ${userId} not found`);
  return u;
}

async function userJson(db: ToolDb, u: SqlRow): Promise<RecordJson> {
  const id = u.user_id as string;
  const [pms, saved, res] = await Promise.all([
    db.all('SELECT * FROM user_payment_methods WHERE user_id = ? ORDER BY position', [id]),
    db.all('SELECT * FROM user_saved_passengers WHERE user_id = ? ORDER BY position', [id]),
    db.all('SELECT * FROM user_reservation_ids WHERE user_id = ? ORDER BY position', [id]),
  ]);
  return userRecord(u, pms, saved, res, 'model');
}

async function reservationRow(db: ToolDb, reservationId: string): Promise<SqlRow> {
  const r = await db.one('SELECT * FROM reservations WHERE reservation_id = ?', [reservationId]);
  if (!r) throw new ToolError(`Reservation ${reservationId} not found`);
  return r;
}

async function reservationFlights(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all('SELECT * FROM reservation_flights WHERE reservation_id = ? ORDER BY position', [reservationId]);
}

async function reservationPassengers(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all('SELECT * FROM reservation_passengers WHERE reservation_id = ? ORDER BY position', [reservationId]);
}

/** The reservation as tau2 returns it (after any change made by the calling tool). */
async function reservationJson(db: ToolDb, reservationId: string): Promise<string> {
  const r = await reservationRow(db, reservationId);
  const [flights, pax, pay] = await Promise.all([
    reservationFlights(db, reservationId),
    reservationPassengers(db, reservationId),
    db.all('SELECT * FROM reservation_payments WHERE reservation_id = ? ORDER BY position', [reservationId]),
  ]);
  return toolJson(reservationRecord(r, flights, pax, pay, 'model'));
}

async function flightRow(db: ToolDb, flightNumber: string): Promise<SqlRow> {
  const f = await db.one('SELECT * FROM flights WHERE flight_number = ?', [flightNumber]);
  if (!f) throw new ToolError(`Flight ${flightNumber} not found`);
  return f;
}

/** A flight on a date (`_get_flight_instance`): errors when the flight or the date is unknown. */
async function flightDateRow(db: ToolDb, flightNumber: string, date: string): Promise<SqlRow> {
  await flightRow(db, flightNumber);
  const d = await db.one('SELECT * FROM flight_dates WHERE flight_number = ? AND date = ?', [flightNumber, date]);
  if (!d) throw new ToolError(`Flight ${flightNumber} not found on date ${date}`);
  return d;
}

async function cabinRows(
  db: ToolDb,
  flightNumber: string,
  date: string,
): Promise<{ seats: SqlRow[]; prices: SqlRow[] }> {
  const [seats, prices] = await Promise.all([
    db.all(
      'SELECT cabin, available_seats FROM flight_date_seats WHERE flight_number = ? AND date = ? ORDER BY position',
      [flightNumber, date],
    ),
    db.all('SELECT cabin, price FROM flight_date_prices WHERE flight_number = ? AND date = ? ORDER BY position', [
      flightNumber,
      date,
    ]),
  ]);
  return { seats, prices };
}

/** An available flight date's seats and price in `cabin`; errors as tau2's checks do. */
async function availableCabin(
  db: ToolDb,
  flightNumber: string,
  date: string,
  cabin: Cabin,
  passengers: number,
): Promise<{ flight: SqlRow; price: number }> {
  const flight = await flightRow(db, flightNumber);
  const d = await flightDateRow(db, flightNumber, date);
  if (d.status !== 'available') throw new ToolError(`Flight ${flightNumber} not available on date ${date}`);
  const { seats, prices } = await cabinRows(db, flightNumber, date);
  const seat = seats.find((r) => r.cabin === cabin);
  // tau2 indexes the dicts by cabin: a missing cabin is a KeyError, i.e. a failed call.
  if (!seat) throw new ToolError(`Flight ${flightNumber} on ${date} has no ${cabin} seats`);
  if ((seat.available_seats as number) < passengers) throw new ToolError(`Not enough seats on flight ${flightNumber}`);
  const price = prices.find((r) => r.cabin === cabin);
  if (!price) throw new ToolError(`Flight ${flightNumber} on ${date} has no ${cabin} price`);
  return { flight, price: price.price as number };
}

/**
 * tau2's `_search_direct_flight`: available flights on `date`, in flight order, optionally from
 * `origin`, to `destination`, departing at or after `leaveAfter` (string comparison).
 */
async function searchDirect(
  db: ToolDb,
  date: string,
  origin: string | null,
  destination: string | null,
  leaveAfter: string | null,
  resultDate: string | null,
): Promise<RecordJson[]> {
  const flights = await db.all(
    `SELECT f.* FROM flights f JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = ?1
     WHERE d.status = 'available' AND (?2 IS NULL OR f.origin = ?2) AND (?3 IS NULL OR f.destination = ?3)
       AND (?4 IS NULL OR f.scheduled_departure_time_est >= ?4)
     ORDER BY f.position`,
    [date, origin, destination, leaveAfter],
  );
  const out: RecordJson[] = [];
  for (const f of flights) {
    const { seats, prices } = await cabinRows(db, f.flight_number as string, date);
    out.push(directFlightRecord(f, resultDate, seats, prices));
  }
  return out;
}

async function nextPosition(db: ToolDb, sql: string, params: (string | number)[]): Promise<number> {
  const r = await db.one(sql, params);
  return r?.p == null ? 0 : (r.p as number) + 1;
}

/**
 * tau2's `_payment_for_update`: checks the method, takes a gift card's amount (a negative total
 * credits it) and returns whether a payment row is due (`total !== 0`).
 */
async function payForUpdate(db: ToolDb, userId: string, paymentId: string, total: number): Promise<boolean> {
  const pm = await db.one('SELECT * FROM user_payment_methods WHERE user_id = ? AND payment_method_id = ?', [
    userId,
    paymentId,
  ]);
  if (!pm) throw new ToolError('Payment method not found');
  if (pm.source === 'certificate') throw new ToolError('Certificate cannot be used to update reservation');
  if (pm.source === 'gift_card' && (pm.amount as number) < total)
    throw new ToolError('Gift card balance is not enough');
  if (pm.source === 'gift_card') {
    await db.run('UPDATE user_payment_methods SET amount = ? WHERE user_id = ? AND payment_method_id = ?', [
      (pm.amount as number) - total,
      userId,
      paymentId,
    ]);
  }
  return total !== 0;
}

async function appendPayment(db: ToolDb, reservationId: string, paymentId: string, amount: number): Promise<void> {
  const position = await nextPosition(
    db,
    'SELECT max(position) AS p FROM reservation_payments WHERE reservation_id = ?',
    [reservationId],
  );
  await db.run('INSERT INTO reservation_payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)', [
    reservationId,
    position,
    paymentId,
    amount,
  ]);
}

// ---------------------------------------------------------------------------------------------
// Tools

const getUserDetails = defineTool({
  name: 'get_user_details',
  kind: 'read',
  description:
    "Look up a user's profile: name, address, email, date of birth, payment methods, saved passengers, membership and reservation ids.",
  params: z.strictObject({ user_id: z.string().describe("The user id, e.g. 'sara_doe_496'.") }),
  async run({ db }, { user_id }) {
    return toolJson(await userJson(db, await userRow(db, user_id)));
  },
});

const getReservationDetails = defineTool({
  name: 'get_reservation_details',
  kind: 'read',
  description: 'Look up a reservation: trip, cabin, flights, passengers, payments, baggage, insurance and status.',
  params: z.strictObject({ reservation_id: z.string().describe("The reservation id, e.g. '8JX2WO'.") }),
  async run({ db }, { reservation_id }) {
    return reservationJson(db, reservation_id);
  },
});

const listAllAirports = defineTool({
  name: 'list_all_airports',
  kind: 'read',
  description: 'List every airport served, as IATA code and city.',
  params: z.strictObject({}),
  async run() {
    return toolJson(AIRPORTS.map((a) => ({ iata: a.iata, city: a.city })));
  },
});

const searchDirectFlight = defineTool({
  name: 'search_direct_flight',
  kind: 'read',
  description: 'Find nonstop flights bookable between two airports on a date, with seats left and prices per cabin.',
  params: z.strictObject({
    origin: z.string().describe("Origin airport code (three letters), e.g. 'JFK'."),
    destination: z.string().describe("Destination airport code (three letters), e.g. 'LAX'."),
    date: z.string().describe("Travel date as 'YYYY-MM-DD', e.g. '2024-01-01'."),
  }),
  async run({ db }, { origin, destination, date }) {
    return toolJson(await searchDirect(db, date, origin, destination, null, null));
  },
});

const searchOnestopFlight = defineTool({
  name: 'search_onestop_flight',
  kind: 'read',
  description: 'Find itineraries with one connection between two airports on a date: pairs of bookable flights.',
  params: z.strictObject({
    origin: z.string().describe("Origin airport code (three letters), e.g. 'JFK'."),
    destination: z.string().describe("Destination airport code (three letters), e.g. 'LAX'."),
    date: z.string().describe("Travel date as 'YYYY-MM-DD', e.g. '2024-05-01'."),
  }),
  async run({ db }, { origin, destination, date }) {
    const out: PyJson[] = [];
    for (const first of await searchDirect(db, date, origin, null, null, date)) {
      const f = first as { destination: string; scheduled_arrival_time_est: string };
      // tau2 builds the next day by adding 1 to the day number without zero padding.
      const date2 = f.scheduled_arrival_time_est.includes('+1')
        ? `2024-05-${Number.parseInt(date.slice(-2), 10) + 1}`
        : date;
      for (const second of await searchDirect(
        db,
        date2,
        f.destination,
        destination,
        f.scheduled_arrival_time_est,
        date2,
      )) {
        out.push([first, second]);
      }
    }
    return toolJson(out);
  },
});

const getFlightStatus = defineTool({
  name: 'get_flight_status',
  kind: 'read',
  description: "Get a flight's status on a date (available, on time, delayed, flying, landed or cancelled).",
  params: z.strictObject({
    flight_number: z.string().describe("The flight number, e.g. 'HAT001'."),
    date: z.string().describe("The date as 'YYYY-MM-DD'."),
  }),
  async run({ db }, { flight_number, date }) {
    return (await flightDateRow(db, flight_number, date)).status as string;
  },
});

const bookReservation = defineTool({
  name: 'book_reservation',
  kind: 'write',
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
      'SELECT max(position) AS p FROM user_reservation_ids WHERE user_id = ?',
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

const cancelReservation = defineTool({
  name: 'cancel_reservation',
  kind: 'write',
  description: 'Cancel a whole reservation: every payment is refunded to its method and the status becomes cancelled.',
  params: z.strictObject({ reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'.") }),
  async run({ db }, { reservation_id }) {
    await reservationRow(db, reservation_id);
    const payments = await db.all(
      'SELECT payment_id, amount FROM reservation_payments WHERE reservation_id = ? ORDER BY position',
      [reservation_id],
    );
    for (const p of payments) await appendPayment(db, reservation_id, p.payment_id as string, -(p.amount as number));
    await db.run("UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", [reservation_id]);
    return reservationJson(db, reservation_id);
  },
});

const updateReservationBaggages = defineTool({
  name: 'update_reservation_baggages',
  kind: 'write',
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

const updateReservationFlights = defineTool({
  name: 'update_reservation_flights',
  kind: 'write',
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

const updateReservationPassengers = defineTool({
  name: 'update_reservation_passengers',
  kind: 'write',
  description: 'Replace the passenger details of a reservation; the number of passengers cannot change.',
  params: z.strictObject({
    reservation_id: z.string().describe("The reservation id, e.g. 'ZFA04Y'."),
    passengers: z.array(PassengerArg).describe('Every passenger of the reservation, in order.'),
  }),
  async run({ db }, { reservation_id, passengers }) {
    await reservationRow(db, reservation_id);
    const current = await reservationPassengers(db, reservation_id);
    if (passengers.length !== current.length) throw new ToolError('Number of passengers does not match');
    await db.run('DELETE FROM reservation_passengers WHERE reservation_id = ?', [reservation_id]);
    for (const [i, p] of passengers.entries()) {
      await db.run(
        'INSERT INTO reservation_passengers (reservation_id, position, first_name, last_name, dob) VALUES (?, ?, ?, ?, ?)',
        [reservation_id, i, p.first_name, p.last_name, p.dob],
      );
    }
    return reservationJson(db, reservation_id);
  },
});

const sendCertificate = defineTool({
  name: 'send_certificate',
  kind: 'write',
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
      const position = await nextPosition(db, 'SELECT max(position) AS p FROM user_payment_methods WHERE user_id = ?', [
        user_id,
      ]);
      await db.run(
        "INSERT INTO user_payment_methods (user_id, payment_method_id, position, source, brand, last_four, amount) VALUES (?, ?, ?, 'certificate', NULL, NULL, ?)",
        [user_id, id, position, amount],
      );
      return `Certificate ${id} added to user ${user_id} with amount ${amount}.`;
    }
    throw new ToolError('Too many certificates');
  },
});

/** Every airline tool, in tau2-bench's order of definition. */
export const tools: readonly ToolDefinition[] = [
  bookReservation,
  calculateTool,
  cancelReservation,
  getReservationDetails,
  getUserDetails,
  listAllAirports,
  searchDirectFlight,
  searchOnestopFlight,
  sendCertificate,
  thinkTool,
  transferToHumanAgentsTool,
  updateReservationBaggages,
  updateReservationFlights,
  updateReservationPassengers,
  getFlightStatus,
] as readonly ToolDefinition[];
