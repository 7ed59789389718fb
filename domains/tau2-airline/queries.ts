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
 *
 * Measured and not done (issue 15 item 2, same-process A/B under load 5-8, medians of per-pair
 * ratios of 50-60-call blocks): `bookingStart` reading only the payment methods the booking names
 * (`AND m.payment_method_id IN (?2, …)` in its join, ~6.9 µs less in a loop for a 4-method user)
 * with the free id as an int: book_reservation x1.03 (41/100 pairs faster); the deleted
 * segments' statuses of the cabin rule in one VALUES-join statement instead of one lookup each:
 * the checks phase x1.02-1.03; a JS decoder for short ASCII texts in place of sql.js's
 * TextDecoder (installed before sql.js loads): x0.99-1.03 on the three slow write tools. In a
 * call a statement costs 2-3x what it does in a loop (its rows' pages and its program are cold),
 * so what pays is fewer rows and values read, not fewer statement texts. Session 14, likewise
 * (200-300 pairs of 18-20-call blocks, load 5-9): every leg's `availableCabin` in one UNION ALL
 * statement, flights x1.019 and book x1.002; the user's next reservation-id position read by
 * `BOOKING_START` (then a plain INSERT), book x1.019 / x0.996; the passengers read before the
 * writes (for the count and the reply) instead of counted by `reservationForUpdate`, flights
 * x0.99, bags x1.01; `DELETE … WHERE reservation_id = +?` (part of the key) for the flights' and
 * the passengers' deletes, x1.01 and x1.00 (a DELETE is not re-prepared with a bare `?`). Each
 * text parameter costs sql.js a malloc, an encoding and a free (`bind`): ~0.17 µs a text warm,
 * a hand-written bind into one buffer ~0.15 µs (10 texts, 1.67 vs 1.46 µs): not worth
 * bypassing sql.js.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { ToolError, type ToolDb } from '../../src/core/schema/domain.ts';
import { directFlightRecord, reservationModelJson, userRecord, type PyJson as RecordJson } from './records.ts';

/** EST (UTC-5, the policy's zone; no daylight saving in tau2's clock), ms. */
const EST_OFFSET_MS = -5 * 3_600_000;

/** The last {@link estTimestamp} made: the policy clock is fixed per episode, so calls repeat it. */
let lastStamp = { ms: Number.NaN, text: '' };

/**
 * The policy clock as tau2's `_get_datetime`: `YYYY-MM-DDTHH:MM:SS` in EST. The last answer is
 * kept (a `Date` and its ISO text cost ~0.6 µs, paid by every booking).
 */
export function estTimestamp(ms: number): string {
  if (ms !== lastStamp.ms) lastStamp = { ms, text: new Date(ms + EST_OFFSET_MS).toISOString().slice(0, 19) };
  return lastStamp.text;
}

/** Reservation ids handed out by `book_reservation`, first free one wins (tau2 allows three per task). */
export const NEW_RESERVATION_IDS = ['HATHAT', 'HATHAU', 'HATHAV'] as const;
/** Payment-method ids handed out by `send_certificate`, first free one wins. */
export const NEW_CERTIFICATE_IDS = ['certificate_3221322', 'certificate_3221323', 'certificate_3221324'] as const;

/**
 * Keys of the facts the airline's write tools tell their `after` rule checks (`ToolContext.tell`,
 * read by the checks in rules.ts through `RuleCheckContext.told`), by reservation id. A value
 * is what the check's own read of it would give right after the call (more columns are allowed);
 * a check that finds none reads the state itself.
 */
export const TOLD = {
  /**
   * The `reservations` row: `reservation_id`, `user_id`, `origin`, `destination`, `flight_type`,
   * `cabin`, `created_at`, `total_baggages`, `nonfree_baggages`, `insurance`, `status`.
   */
  reservation: (id: string) => `reservation ${id}`,
  /** The segments in position order: `flight_number`, `date`, `origin`, `destination`. */
  route: (id: string) => `route ${id}`,
  /** The segments in position order as {@link TOLD.route}, each with the `status` of its flight date. */
  segments: (id: string) => `segments ${id}`,
  /**
   * The reservation's `cabin`, `total_baggages` and `nonfree_baggages`, its user's `membership`
   * (NULL for an unknown user) and its passenger count (`pax`).
   */
  bags: (id: string) => `bags ${id}`,
  /** The payment rows in position order: `position`, `payment_id`, `amount`. */
  payments: (id: string) => `payments ${id}`,
  /**
   * How many segments of the reservation had taken off (flight-date status `landed` or `flying`)
   * before the call, told by a call that replaced them all and changed the cabin.
   */
  flown: (id: string) => `flown ${id}`,
} as const;

/** Cabin classes of tau2-bench's airline, as tool arguments and in `flight_cabins`. */
export const Cabin = z.enum(['basic_economy', 'economy', 'business']);
export type Cabin = z.infer<typeof Cabin>;

/** tau2's error for an unknown user id. */
export function userNotFound(userId: string): ToolError {
  return new ToolError(`User ${userId} not found`);
}

export async function userRow(db: ToolDb, userId: string): Promise<SqlRow> {
  const u = await db.one('SELECT * FROM users WHERE user_id = ?', [userId]);
  if (!u) throw userNotFound(userId);
  return u;
}

/**
 * What `book_reservation` reads before it books, in one statement: the user's payment methods
 * (`payment_method_id`, `source`, `amount`; one row of NULLs for a user without any, no row for an
 * unknown user), each row also carrying `free_id`, the first of {@link NEW_RESERVATION_IDS} no
 * reservation has (NULL when all are taken), and `next_position`, the position after the last
 * reservation (max(position) + 1, 0 for none; reservations_by_position), and the user's
 * `membership` (for the bag-allowance check: {@link TOLD.bags}). The two uncorrelated
 * subqueries run once per statement. Four statements before (measured ~3-5 µs each in-call).
 */
const BOOKING_START = `SELECT m.payment_method_id, m.source, m.amount, u.membership,
  coalesce(${NEW_RESERVATION_IDS.map((id) => `(SELECT '${id}' WHERE NOT EXISTS (SELECT 1 FROM reservations WHERE reservation_id = '${id}'))`).join(', ')}) AS free_id,
  (SELECT coalesce(max(position) + 1, 0) FROM reservations) AS next_position
  FROM users u LEFT JOIN user_payment_methods m ON m.user_id = u.user_id WHERE u.user_id = +?`;

/**
 * A booking's starting point: the user's payment methods by id (as they are now, in no order),
 * the new reservation's id and its position, and the user's membership (see {@link BOOKING_START}).
 * @throws ToolError when the user is unknown (first), or when every new reservation id is taken.
 */
export async function bookingStart(
  db: ToolDb,
  userId: string,
): Promise<{ methods: Map<string, SqlRow>; reservationId: string; position: number; membership: string }> {
  const rows = await db.all(BOOKING_START, [userId]);
  if (rows.length === 0) throw userNotFound(userId);
  const { free_id, next_position, membership } = rows[0]!;
  if (free_id === null) throw new ToolError('Too many reservations');
  const methods = new Map<string, SqlRow>();
  for (const pm of rows) if (pm.payment_method_id !== null) methods.set(pm.payment_method_id as string, pm);
  return {
    methods,
    reservationId: free_id as string,
    position: next_position as number,
    membership: membership as string,
  };
}

/**
 * {@link reservationForUpdate}'s statement: the reservation's columns a reply and the update
 * tools use (not its key, which is the argument, nor `position` and `absent_fields`: each value
 * selected is decoded by sql.js), its passenger count (`pax`), whether its user is known
 * (`user_known`) or, for the bags, its user's `membership` (NOT NULL in the schema: NULL for an
 * unknown user), which the bag-allowance check reads, and the `source` and `amount` of the user's
 * payment method `?2` (`pm_source` NOT NULL in the schema: NULL when the user has no such method),
 * which {@link payForUpdate} checks (its own read before, a statement of ~3-6 µs in a call); for
 * the flights, also the sum of the segments' prices (`paid`: a change of cabin keeps no segment,
 * so it reads them no further) and, unless the new cabin `?3` is the reservation's, how many
 * segments have taken off (`flown`: flight-date status `landed` or `flying`; NULL for the same
 * cabin), for the cabin check ({@link TOLD.flown}). That count costs the statement ~5 µs (15 ->
 * 10 µs in a loop for a two-segment reservation), where the check found each replaced segment's
 * status itself, told `available` for the flights the tool had just looked up (a key string per
 * flight) and read for the others: update_reservation_flights ×0.966 and ×0.960 against that
 * (191bbb2, same process, calls alternating, 20 pairs each, load 2.7; the check's side alone
 * ×0.944). Telling the check the set of flights found available instead of counting here (no
 * SQL; a read for each replaced segment not in it): ×1.013 and ×1.014 against the count, not done.
 */
const FOR_UPDATE = {
  flights: `EXISTS (SELECT 1 FROM users u WHERE u.user_id = r.user_id) AS user_known,
       (SELECT coalesce(sum(price), 0) FROM reservation_flights f WHERE f.reservation_id = r.reservation_id) AS paid,
       CASE WHEN r.cabin = ?3 THEN NULL ELSE (SELECT count(*) FROM reservation_flights f
         JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = f.date
         WHERE f.reservation_id = r.reservation_id AND d.status IN ('landed', 'flying')) END AS flown`,
  bags: '(SELECT membership FROM users u WHERE u.user_id = r.user_id) AS membership',
} as const;
const FOR_UPDATE_SQL = Object.fromEntries(
  Object.entries(FOR_UPDATE).map(([k, user]) => [
    k,
    `SELECT r.user_id, r.origin, r.destination, r.flight_type, r.cabin, r.created_at, r.total_baggages,
       r.nonfree_baggages, r.insurance, r.status, ${user},
       (SELECT count(*) FROM reservation_passengers p WHERE p.reservation_id = r.reservation_id) AS pax,
       m.source AS pm_source, m.amount AS pm_amount
     FROM reservations r LEFT JOIN user_payment_methods m ON m.user_id = r.user_id AND m.payment_method_id = +?2
     WHERE r.reservation_id = +?1`,
  ]),
) as Record<keyof typeof FOR_UPDATE, string>;

/** A user's payment method as {@link payForUpdate} checks it: `source` and `amount`; null when the user has none of that id. */
export type UpdateMethod = { source: string; amount: number | null } | null;

/**
 * A reservation about to be changed, with the checks tau2's update tools make first: the
 * reservation, then its user, must exist. `row` has the reservation's columns but `position` and
 * `absent_fields`; `pax` is its passenger count; `membership` its user's membership (`for:
 * 'bags'` only, else undefined); `paid` the sum of its segments' prices and `flown` how many
 * of them have taken off, unless `cabin` (the new one) is the reservation's: null then (both
 * `'flights'` only); `method` the user's payment method `paymentId` (for
 * {@link payForUpdate}). One statement (four before).
 * @throws ToolError "Reservation … not found", then "User … not found".
 */
export async function reservationForUpdate(
  db: ToolDb,
  reservationId: string,
  use: keyof typeof FOR_UPDATE,
  paymentId: string,
  cabin?: string,
): Promise<{
  row: SqlRow;
  pax: number;
  membership?: string;
  paid?: number;
  flown?: number | null;
  method: UpdateMethod;
}> {
  const found = await db.one(
    FOR_UPDATE_SQL[use],
    use === 'flights' ? [reservationId, paymentId, cabin ?? null] : [reservationId, paymentId],
  );
  if (!found) throw new ToolError(`Reservation ${reservationId} not found`);
  if (use === 'bags' ? found.membership === null : found.user_known === 0) throw userNotFound(found.user_id as string);
  const row: SqlRow = {
    reservation_id: reservationId,
    user_id: found.user_id!,
    origin: found.origin!,
    destination: found.destination!,
    flight_type: found.flight_type!,
    cabin: found.cabin!,
    created_at: found.created_at!,
    total_baggages: found.total_baggages!,
    nonfree_baggages: found.nonfree_baggages!,
    insurance: found.insurance!,
    status: found.status!,
  };
  const pax = found.pax as number;
  const method: UpdateMethod =
    found.pm_source === null ? null : { source: found.pm_source as string, amount: found.pm_amount as number | null };
  return use === 'bags'
    ? { row, pax, membership: found.membership as string, method }
    : { row, pax, paid: found.paid as number, flown: found.flown as number | null, method };
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

/**
 * A reservation's segments in position order: `flight_number`, `origin`, `destination`, `date`,
 * `price` (what the tools and records use; not `reservation_id` and `position`: each text
 * selected is decoded by sql.js, ~0.4 µs).
 */
export async function reservationFlights(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all(
    'SELECT flight_number, origin, destination, date, price FROM reservation_flights WHERE reservation_id = +? ORDER BY position',
    [reservationId],
  );
}

/**
 * A reservation's payment history in position order: `position` (appendPayments numbers new rows
 * after it), `payment_id`, `amount` (not `reservation_id`: see {@link reservationFlights}).
 */
export async function reservationPayments(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all(
    'SELECT position, payment_id, amount FROM reservation_payments WHERE reservation_id = +? ORDER BY position',
    [reservationId],
  );
}

/**
 * A reservation's segments as {@link reservationFlights} gives them, each with the `status` of
 * its flight date (what the cancellation checks read, {@link TOLD.segments}).
 */
export async function reservationSegments(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all(
    `SELECT f.flight_number, f.origin, f.destination, f.date, f.price, d.status FROM reservation_flights f
     LEFT JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = f.date
     WHERE f.reservation_id = +? ORDER BY f.position`,
    [reservationId],
  );
}

/** A reservation's passengers in position order: `first_name`, `last_name`, `dob` (see {@link reservationFlights}). */
export async function reservationPassengers(db: ToolDb, reservationId: string): Promise<SqlRow[]> {
  return db.all(
    'SELECT first_name, last_name, dob FROM reservation_passengers WHERE reservation_id = +? ORDER BY position',
    [reservationId],
  );
}

/**
 * The reservation as tau2 returns it (after any change made by the calling tool).
 * @param known rows the calling tool already holds as they are now (its `reservations` row, the
 *   segments, passengers or payments it wrote or read, each list in position order): not read again.
 */
export async function reservationJson(
  db: ToolDb,
  reservationId: string,
  known: { row?: SqlRow; flights?: SqlRow[]; passengers?: SqlRow[]; payments?: SqlRow[] } = {},
): Promise<string> {
  const r = known.row ?? (await reservationRow(db, reservationId));
  const [flights, pax, pay] = await Promise.all([
    known.flights ?? reservationFlights(db, reservationId),
    known.passengers ?? reservationPassengers(db, reservationId),
    known.payments ?? reservationPayments(db, reservationId),
  ]);
  return reservationModelJson(r, flights, pax, pay);
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

/**
 * An available flight date's route and price in `cabin`; errors as tau2's checks do, in its
 * order (flight, date, status, seats, price). One query: the flight with its date, and its seats
 * and price in the cabin, left-joined (each of those columns is NOT NULL: NULL means no row);
 * `+?` as the header says (with bare parameters the join was re-prepared at each call, ~40 µs).
 */
export async function availableCabin(
  db: ToolDb,
  flightNumber: string,
  date: string,
  cabin: Cabin,
  passengers: number,
): Promise<{ origin: string; destination: string; price: number }> {
  const f = await db.one(
    `SELECT f.origin, f.destination, d.status, s.available_seats, p.price FROM flights f
     LEFT JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = +?2
     LEFT JOIN flight_date_seats s ON s.flight_number = f.flight_number AND s.date = +?2 AND s.cabin = +?3
     LEFT JOIN flight_date_prices p ON p.flight_number = f.flight_number AND p.date = +?2 AND p.cabin = +?3
     WHERE f.flight_number = +?1`,
    [flightNumber, date, cabin],
  );
  if (!f) throw new ToolError(`Flight ${flightNumber} not found`);
  if (f.status === null) throw new ToolError(`Flight ${flightNumber} not found on date ${date}`);
  if (f.status !== 'available') throw new ToolError(`Flight ${flightNumber} not available on date ${date}`);
  // tau2 indexes the dicts by cabin: a missing cabin is a KeyError, i.e. a failed call.
  if (f.available_seats === null) throw new ToolError(`Flight ${flightNumber} on ${date} has no ${cabin} seats`);
  if ((f.available_seats as number) < passengers) throw new ToolError(`Not enough seats on flight ${flightNumber}`);
  if (f.price === null) throw new ToolError(`Flight ${flightNumber} on ${date} has no ${cabin} price`);
  return { origin: f.origin as string, destination: f.destination as string, price: f.price as number };
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

/** A table the tools insert rows into: its name and all of its columns, in table order. */
export interface RowTable {
  readonly name: string;
  readonly columns: readonly string[];
}

/** `reservation_flights` (see {@link insertRows}). */
export const FLIGHT_ROWS: RowTable = {
  name: 'reservation_flights',
  columns: ['reservation_id', 'position', 'flight_number', 'origin', 'destination', 'date', 'price'],
};
/** `reservation_passengers` (see {@link insertRows}). */
export const PASSENGER_ROWS: RowTable = {
  name: 'reservation_passengers',
  columns: ['reservation_id', 'position', 'first_name', 'last_name', 'dob'],
};
/** `reservation_payments` (see {@link insertRows}). */
export const PAYMENT_ROWS: RowTable = {
  name: 'reservation_payments',
  columns: ['reservation_id', 'position', 'payment_id', 'amount'],
};

/**
 * The INSERT text of {@link insertRows} by table, then by row count: built once, so that each
 * call hands the statement cache the same string (whose hash V8 keeps) instead of building and
 * hashing a new one.
 */
const insertTexts = new WeakMap<RowTable, string[]>();

function insertText(table: RowTable, count: number): string {
  let byCount = insertTexts.get(table);
  if (!byCount) insertTexts.set(table, (byCount = []));
  let sql = byCount[count];
  if (sql === undefined) {
    const one = `(${table.columns.map(() => '?').join(', ')})`;
    sql = byCount[count] =
      `INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES ${Array(count).fill(one).join(', ')}`;
  }
  return sql;
}

/**
 * Insert `rows` (values in column order) into `table` in one statement (the write log gets them
 * in this order, as from one INSERT each) and give them back as `SELECT *` by `position` would:
 * the rows come in position order with values of the columns' types (a tool's arguments, or
 * values read from the database), so the rows are written from the values, not read back
 * (`RETURNING *` cost ~3 µs a row in sql.js).
 */
export async function insertRows(db: ToolDb, table: RowTable, rows: readonly (string | number)[][]): Promise<SqlRow[]> {
  if (rows.length === 0) return [];
  // The values row after row: a loop, not `rows.flat()` (~1.2 µs for two rows in V8, 0.06 here).
  const values: (string | number)[] = [];
  for (const row of rows) for (let i = 0; i < row.length; i++) values.push(row[i]!);
  await db.run(insertText(table, rows.length), values);
  const { columns } = table;
  return rows.map((values) => {
    const row: SqlRow = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i]!;
    return row;
  });
}

/**
 * tau2's `_payment_for_update`: checks the method, takes a gift card's amount (a negative total
 * credits it) and returns whether a payment row is due (`total !== 0`). A total of 0 leaves the
 * gift card as it is without a statement (tau2 subtracts the 0; the write log records no change
 * of a value to itself).
 * @param pm the user's method `paymentId` as it is now, read by {@link reservationForUpdate}.
 */
export async function payForUpdate(
  db: ToolDb,
  userId: string,
  paymentId: string,
  pm: UpdateMethod,
  total: number,
): Promise<boolean> {
  if (!pm) throw new ToolError('Payment method not found');
  if (pm.source === 'certificate') throw new ToolError('Certificate cannot be used to update reservation');
  if (pm.source === 'gift_card' && (pm.amount as number) < total)
    throw new ToolError('Gift card balance is not enough');
  if (pm.source === 'gift_card' && total !== 0) {
    await db.run('UPDATE user_payment_methods SET amount = ? WHERE user_id = ? AND payment_method_id = ?', [
      (pm.amount as number) - total,
      userId,
      paymentId,
    ]);
  }
  return total !== 0;
}

/**
 * Append payments (refunds when `amount` is negative) to a reservation's history, in order, each
 * after the last (max(position) + 1, 0 for none), and give the history as `SELECT *` by position
 * now would: the rows of `history` and the new ones, written from the values inserted.
 * @param history the reservation's payment history as it is now, in position order.
 */
export async function appendPayments(
  db: ToolDb,
  reservationId: string,
  history: readonly SqlRow[],
  payments: readonly { paymentId: string; amount: number }[],
): Promise<SqlRow[]> {
  let position = history.reduce((max, p) => Math.max(max, (p.position as number) + 1), 0);
  const rows = payments.map((p) => [reservationId, position++, p.paymentId, p.amount + 0]);
  // + 0 above: a refund of 0 is -0, which sql.js binds as the integer 0.
  const added = await insertRows(db, PAYMENT_ROWS, rows);
  return [...history, ...added];
}
