/**
 * Reads and payment updates of the tau2-bench airline tables shared by the airline tools
 * (`tools.ts`, `write-tools.ts`), with the policy clock and the fixed lists of new ids.
 *
 * Parameters compared with `=` in a query whose plan has choices to make (an `ORDER BY`, a join,
 * `max()`/`COUNT()`/`SUM()`, part of a composite key) are written `= +?` (the same value and
 * affinity: SQLite's parser itself turns `col IN (?)` into `col = +?`). With a bare `?` SQLite
 * re-prepares such a statement every time new values are bound. Measured with sql.js 1.17
 * (SQLite 3.54): `WHERE reservation_id = ? ORDER BY position` ~10 µs per execution, `= +?` under
 * 1 µs, with the same index search; `max(position) … WHERE user_id = ?` 6.4 µs vs 1.1 µs; a
 * two-table join 35 µs vs 4.6 µs. A lookup of one row by its whole key gains nothing.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { ToolError, type ToolDb } from '../../src/core/schema/domain.ts';
import { toolJson } from '../../src/core/tau2/common-tools.ts';
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

/** Cabin classes of tau2-bench's airline, as tool arguments and in `flight_cabins`. */
export const Cabin = z.enum(['basic_economy', 'economy', 'business']);
export type Cabin = z.infer<typeof Cabin>;

export async function userRow(db: ToolDb, userId: string): Promise<SqlRow> {
  const u = await db.one('SELECT * FROM users WHERE user_id = ?', [userId]);
  if (!u) throw new ToolError(`User ${userId} not found`);
  return u;
}

export async function userJson(db: ToolDb, u: SqlRow): Promise<RecordJson> {
  const id = u.user_id as string;
  const [pms, saved, res] = await Promise.all([
    db.all('SELECT * FROM user_payment_methods WHERE user_id = +? ORDER BY position', [id]),
    db.all('SELECT * FROM user_saved_passengers WHERE user_id = +? ORDER BY position', [id]),
    db.all('SELECT * FROM user_reservation_ids WHERE user_id = +? ORDER BY position', [id]),
  ]);
  return userRecord(u, pms, saved, res, 'model');
}

export async function reservationRow(db: ToolDb, reservationId: string): Promise<SqlRow> {
  const r = await db.one('SELECT * FROM reservations WHERE reservation_id = ?', [reservationId]);
  if (!r) throw new ToolError(`Reservation ${reservationId} not found`);
  return r;
}

export async function reservationFlights(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all('SELECT * FROM reservation_flights WHERE reservation_id = +? ORDER BY position', [reservationId]);
}

export async function reservationPassengers(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all('SELECT * FROM reservation_passengers WHERE reservation_id = +? ORDER BY position', [reservationId]);
}

/**
 * The reservation as tau2 returns it (after any change made by the calling tool).
 * @param known rows the calling tool already holds as they are now (its `reservations` row when
 *   it did not change it, the passengers it wrote, in position order): not read again.
 */
export async function reservationJson(
  db: ToolDb,
  reservationId: string,
  known: { row?: SqlRow; passengers?: SqlRow[] } = {},
): Promise<string> {
  const r = known.row ?? (await reservationRow(db, reservationId));
  const [flights, pax, pay] = await Promise.all([
    reservationFlights(db, reservationId),
    known.passengers ?? reservationPassengers(db, reservationId),
    db.all('SELECT * FROM reservation_payments WHERE reservation_id = +? ORDER BY position', [reservationId]),
  ]);
  return toolJson(reservationRecord(r, flights, pax, pay, 'model'));
}

export async function flightRow(db: ToolDb, flightNumber: string): Promise<SqlRow> {
  const f = await db.one('SELECT * FROM flights WHERE flight_number = ?', [flightNumber]);
  if (!f) throw new ToolError(`Flight ${flightNumber} not found`);
  return f;
}

/** A flight on a date (`_get_flight_instance`): errors when the flight or the date is unknown. */
export async function flightDateRow(db: ToolDb, flightNumber: string, date: string): Promise<SqlRow> {
  await flightRow(db, flightNumber);
  return dateOfFlight(db, flightNumber, date);
}

/** The date row of a flight known to exist; errors as {@link flightDateRow} when the date is unknown. */
async function dateOfFlight(db: ToolDb, flightNumber: string, date: string): Promise<SqlRow> {
  const d = await db.one('SELECT * FROM flight_dates WHERE flight_number = ? AND date = ?', [flightNumber, date]);
  if (!d) throw new ToolError(`Flight ${flightNumber} not found on date ${date}`);
  return d;
}

export async function cabinRows(
  db: ToolDb,
  flightNumber: string,
  date: string,
): Promise<{ seats: SqlRow[]; prices: SqlRow[] }> {
  const [seats, prices] = await Promise.all([
    db.all(
      'SELECT cabin, available_seats FROM flight_date_seats WHERE flight_number = +? AND date = +? ORDER BY position',
      [flightNumber, date],
    ),
    db.all('SELECT cabin, price FROM flight_date_prices WHERE flight_number = +? AND date = +? ORDER BY position', [
      flightNumber,
      date,
    ]),
  ]);
  return { seats, prices };
}

/** An available flight date's seats and price in `cabin`; errors as tau2's checks do. */
export async function availableCabin(
  db: ToolDb,
  flightNumber: string,
  date: string,
  cabin: Cabin,
  passengers: number,
): Promise<{ flight: SqlRow; price: number }> {
  const flight = await flightRow(db, flightNumber);
  const d = await dateOfFlight(db, flightNumber, date);
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
export async function searchDirect(
  db: ToolDb,
  date: string,
  origin: string | null,
  destination: string | null,
  leaveAfter: string | null,
  resultDate: string | null,
): Promise<RecordJson[]> {
  // Only the filters given, so that SQLite can use flights_by_origin; named parameters (those a
  // statement lacks are ignored), each written `+:name` as the header says (with a bare `:name`
  // each of the three statements cost ~40 µs more per call: tau2's task 44 makes 10 searches).
  const where = [
    "d.status = 'available'",
    ...(origin === null ? [] : ['f.origin = +:origin']),
    ...(destination === null ? [] : ['f.destination = +:destination']),
    ...(leaveAfter === null ? [] : ['f.scheduled_departure_time_est >= +:after']),
  ].join(' AND ');
  // With an origin, CROSS JOIN makes SQLite walk the origin's flights (flights_by_origin) and look
  // each date up by key; left to itself it scans every flight of the date (~300).
  const join = origin === null ? 'JOIN' : 'CROSS JOIN';
  const from = `FROM flights f ${join} flight_dates d ON d.flight_number = f.flight_number AND d.date = +:date`;
  const params = { ':date': date, ':origin': origin, ':destination': destination, ':after': leaveAfter };
  // The flights, then the seats and prices of all of them in one query each (not two per flight).
  const [flights, seats, prices] = await Promise.all([
    db.all(`SELECT f.* ${from} WHERE ${where} ORDER BY f.position`, params),
    db.all(
      `SELECT s.flight_number, s.cabin, s.available_seats ${from}
       JOIN flight_date_seats s ON s.flight_number = f.flight_number AND s.date = +:date
       WHERE ${where} ORDER BY s.flight_number, s.position`,
      params,
    ),
    db.all(
      `SELECT p.flight_number, p.cabin, p.price ${from}
       JOIN flight_date_prices p ON p.flight_number = f.flight_number AND p.date = +:date
       WHERE ${where} ORDER BY p.flight_number, p.position`,
      params,
    ),
  ]);
  const seatsOf = groupByFlight(seats);
  const pricesOf = groupByFlight(prices);
  return flights.map((f) =>
    directFlightRecord(
      f,
      resultDate,
      seatsOf.get(f.flight_number as string) ?? [],
      pricesOf.get(f.flight_number as string) ?? [],
    ),
  );
}

/** Rows by their `flight_number` (which is left out of each row), in order. */
function groupByFlight(rows: readonly SqlRow[]): Map<string, SqlRow[]> {
  const out = new Map<string, SqlRow[]>();
  for (const { flight_number, ...rest } of rows) {
    const list = out.get(flight_number as string);
    if (list) list.push(rest);
    else out.set(flight_number as string, [rest]);
  }
  return out;
}

export async function nextPosition(db: ToolDb, sql: string, params: (string | number)[]): Promise<number> {
  const r = await db.one(sql, params);
  return r?.p == null ? 0 : (r.p as number) + 1;
}

/**
 * tau2's `_payment_for_update`: checks the method, takes a gift card's amount (a negative total
 * credits it) and returns whether a payment row is due (`total !== 0`).
 */
export async function payForUpdate(db: ToolDb, userId: string, paymentId: string, total: number): Promise<boolean> {
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

export async function appendPayment(
  db: ToolDb,
  reservationId: string,
  paymentId: string,
  amount: number,
): Promise<void> {
  const position = await nextPosition(
    db,
    'SELECT max(position) AS p FROM reservation_payments WHERE reservation_id = +?',
    [reservationId],
  );
  await db.run('INSERT INTO reservation_payments (reservation_id, position, payment_id, amount) VALUES (?, ?, ?, ?)', [
    reservationId,
    position,
    paymentId,
    amount,
  ]);
}
