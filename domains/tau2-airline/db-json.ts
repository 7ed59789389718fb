/**
 * tau2-bench airline `db.json` (FlightDB: `{flights, users, reservations}`) ↔ the tables of
 * `schema.sql`, losslessly: exporting right after importing gives back the same document.
 *
 * - Dict key order and list order → `position` columns.
 * - Optional fields a record leaves out (`Reservation.status`, `Address.address2`) → the
 *   `absent_fields` column; present-but-null stays null.
 * - int vs float follows tau2's field types: gift-card and certificate `amount` are floats (REAL
 *   columns, exported as {@link PyFloat}); prices, seats, baggage counts and payment amounts are ints.
 * - A dict key must equal its record's id field (`flights[k].flight_number === k`, …), and
 *   unknown fields are refused rather than dropped.
 */
import { z } from 'zod';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import type { DbState } from '../../src/core/env/state.ts';
import { DomainFileError, fieldPath } from '../../src/core/schema/domain.ts';
import type { PyDict, PyJsonObject } from '../../src/core/tau2/py-json.ts';
import {
  absentFieldsColumn,
  groupByParent,
  inPositionOrder,
  pyDocument,
  pyZod,
  requireTables,
  type ExportOptions,
} from '../../src/core/tau2/rows.ts';
import { flightRecord, reservationRecord, userRecord } from './records.ts';

const str = z.string();
const { int, float } = pyZod;
const Cabin = z.enum(['business', 'economy', 'basic_economy']);
const CabinInts = pyZod
  .dict(int)
  .refine((m) => [...m.keys()].every((k) => Cabin.safeParse(k).success), 'keys must be cabin classes');
const Passenger = pyZod.record({ first_name: str, last_name: str, dob: str });

const FlightDate = pyZod.union('status', [
  z.strictObject({ status: z.literal('available'), available_seats: CabinInts, prices: CabinInts }),
  z.strictObject({ status: z.literal('landed'), actual_departure_time_est: str, actual_arrival_time_est: str }),
  z.strictObject({ status: z.literal('cancelled') }),
  z.strictObject({ status: z.literal('delayed'), estimated_departure_time_est: str, estimated_arrival_time_est: str }),
  z.strictObject({ status: z.literal('flying'), actual_departure_time_est: str, estimated_arrival_time_est: str }),
  z.strictObject({ status: z.literal('on time'), estimated_departure_time_est: str, estimated_arrival_time_est: str }),
]);

const Flight = pyZod.record({
  flight_number: str,
  origin: str,
  destination: str,
  scheduled_departure_time_est: str,
  scheduled_arrival_time_est: str,
  dates: pyZod.dict(FlightDate),
});

const PaymentMethod = pyZod.union('source', [
  z.strictObject({ source: z.literal('credit_card'), id: str, brand: str, last_four: str }),
  z.strictObject({ source: z.literal('gift_card'), id: str, amount: float }),
  z.strictObject({ source: z.literal('certificate'), id: str, amount: float }),
]);

const User = pyZod.record({
  user_id: str,
  name: pyZod.record({ first_name: str, last_name: str }),
  address: pyZod.record({
    address1: str,
    address2: str.nullable().optional(),
    city: str,
    country: str,
    state: str,
    zip: str,
  }),
  email: str,
  dob: str,
  payment_methods: pyZod.dict(PaymentMethod),
  saved_passengers: z.array(Passenger),
  membership: z.enum(['gold', 'silver', 'regular']),
  reservations: z.array(str),
});

const Reservation = pyZod.record({
  reservation_id: str,
  user_id: str,
  origin: str,
  destination: str,
  flight_type: z.enum(['round_trip', 'one_way']),
  cabin: Cabin,
  flights: z.array(pyZod.record({ flight_number: str, origin: str, destination: str, date: str, price: int })),
  passengers: z.array(Passenger),
  payment_history: z.array(pyZod.record({ payment_id: str, amount: int })),
  created_at: str,
  total_baggages: int,
  nonfree_baggages: int,
  insurance: z.enum(['yes', 'no']),
  status: z.literal('cancelled').nullable().optional(),
});

/** tau2's FlightDB document, validated (field names as in tau2-bench's airline data model). */
export const FlightDb = pyZod.record({
  flights: pyZod.dict(Flight),
  users: pyZod.dict(User),
  reservations: pyZod.dict(Reservation),
});
export type FlightDb = z.output<typeof FlightDb>;

/** Tables of the airline schema, in dependency order. */
export const AIRLINE_TABLES = [
  'flights',
  'flight_dates',
  'flight_date_seats',
  'flight_date_prices',
  'users',
  'user_payment_methods',
  'user_saved_passengers',
  'user_reservation_ids',
  'reservations',
  'reservation_flights',
  'reservation_passengers',
  'reservation_payments',
] as const;

function keyMustMatch(file: string, path: string, key: string, id: string, field: string): void {
  if (key !== id) throw new DomainFileError(file, `${path}.${field}`, `is "${id}" but its key is "${key}"`);
}

/**
 * Validate an airline db.json document and turn it into table rows.
 *
 * @param source db.json as text (preferred: parsed with `parsePyJson`, so dict order is exact) or
 *   as a parsed value (a `parsePyJson` tree, or a `JSON.parse` result; int/float follow the field
 *   types either way).
 * @param file the file name used in errors.
 * @returns table name → rows, for `buildDomain`'s seed.
 * @throws DomainFileError naming `file` and the first bad field (e.g. `users.mia_li_3668.membership`).
 */
export function importTau2Db(source: unknown, file = 'db.json'): Record<string, SqlRow[]> {
  const parsed = FlightDb.safeParse(pyDocument(source));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  const db = parsed.data;
  const t: Record<(typeof AIRLINE_TABLES)[number], SqlRow[]> = Object.fromEntries(
    AIRLINE_TABLES.map((n) => [n, []]),
  ) as never;
  [...db.flights].forEach(([key, f], position) => {
    keyMustMatch(file, `flights.${key}`, key, f.flight_number, 'flight_number');
    t.flights.push({
      flight_number: key,
      position,
      origin: f.origin,
      destination: f.destination,
      scheduled_departure_time_est: f.scheduled_departure_time_est,
      scheduled_arrival_time_est: f.scheduled_arrival_time_est,
    });
    [...f.dates].forEach(([date, d], datePosition) => {
      const row: SqlRow = {
        flight_number: key,
        date,
        position: datePosition,
        status: d.status,
        actual_departure_time_est: null,
        actual_arrival_time_est: null,
        estimated_departure_time_est: null,
        estimated_arrival_time_est: null,
      };
      if (d.status === 'available') {
        [...d.available_seats].forEach(([cabin, seats], i) =>
          t.flight_date_seats.push({ flight_number: key, date, cabin, position: i, available_seats: seats }),
        );
        [...d.prices].forEach(([cabin, price], i) =>
          t.flight_date_prices.push({ flight_number: key, date, cabin, position: i, price }),
        );
      } else {
        for (const [k, v] of Object.entries(d)) if (k !== 'status') row[k] = v as string;
      }
      t.flight_dates.push(row);
    });
  });
  [...db.users].forEach(([key, u], position) => {
    keyMustMatch(file, `users.${key}`, key, u.user_id, 'user_id');
    t.users.push({
      user_id: key,
      position,
      first_name: u.name.first_name,
      last_name: u.name.last_name,
      address1: u.address.address1,
      address2: u.address.address2 ?? null,
      city: u.address.city,
      country: u.address.country,
      state: u.address.state,
      zip: u.address.zip,
      email: u.email,
      dob: u.dob,
      membership: u.membership,
      absent_fields: absentFieldsColumn(u, ['address.address2']),
    });
    [...u.payment_methods].forEach(([pmKey, pm], i) => {
      keyMustMatch(file, `users.${key}.payment_methods.${pmKey}`, pmKey, pm.id, 'id');
      t.user_payment_methods.push({
        user_id: key,
        payment_method_id: pmKey,
        position: i,
        source: pm.source,
        brand: pm.source === 'credit_card' ? pm.brand : null,
        last_four: pm.source === 'credit_card' ? pm.last_four : null,
        amount: pm.source === 'credit_card' ? null : pm.amount,
      });
    });
    u.saved_passengers.forEach((p, i) => t.user_saved_passengers.push({ user_id: key, position: i, ...p }));
    u.reservations.forEach((r, i) => t.user_reservation_ids.push({ user_id: key, position: i, reservation_id: r }));
  });
  [...db.reservations].forEach(([key, r], position) => {
    keyMustMatch(file, `reservations.${key}`, key, r.reservation_id, 'reservation_id');
    t.reservations.push({
      reservation_id: key,
      position,
      user_id: r.user_id,
      origin: r.origin,
      destination: r.destination,
      flight_type: r.flight_type,
      cabin: r.cabin,
      created_at: r.created_at,
      total_baggages: r.total_baggages,
      nonfree_baggages: r.nonfree_baggages,
      insurance: r.insurance,
      status: r.status ?? null,
      absent_fields: absentFieldsColumn(r, ['status']),
    });
    r.flights.forEach((f, i) => t.reservation_flights.push({ reservation_id: key, position: i, ...f }));
    r.passengers.forEach((p, i) => t.reservation_passengers.push({ reservation_id: key, position: i, ...p }));
    r.payment_history.forEach((p, i) => t.reservation_payments.push({ reservation_id: key, position: i, ...p }));
  });
  return t;
}

/**
 * Turn an exported environment state back into a FlightDB document.
 *
 * @returns `{flights, users, reservations}` with dicts as `Map` (order kept) and floats as
 *   `PyFloat` (serialize with `pyJsonDumps` to get Python's text, `100.0` included).
 * @throws Error when a table of the schema is missing from `state`.
 */
export function exportTau2Db(state: DbState, options: ExportOptions = {}): PyJsonObject {
  const form = options.form ?? 'source';
  requireTables(state, AIRLINE_TABLES);
  const datesByFlight = groupByParent(state.flight_dates, 'flight_number');
  const cabinKey = (r: SqlRow) => `${String(r.flight_number)}\u0000${String(r.date)}`;
  const seats = groupRows(state.flight_date_seats!, cabinKey);
  const prices = groupRows(state.flight_date_prices!, cabinKey);
  const flights: PyDict = new Map();
  for (const f of inPositionOrder(state.flights)) {
    const dates = (datesByFlight.get(String(f.flight_number)) ?? []).map((row) => ({
      row,
      seats: seats.get(cabinKey(row)) ?? [],
      prices: prices.get(cabinKey(row)) ?? [],
    }));
    flights.set(String(f.flight_number), flightRecord(f, dates));
  }
  const pms = groupByParent(state.user_payment_methods, 'user_id');
  const saved = groupByParent(state.user_saved_passengers, 'user_id');
  const resIds = groupByParent(state.user_reservation_ids, 'user_id');
  const users: PyDict = new Map();
  for (const u of inPositionOrder(state.users)) {
    const id = String(u.user_id);
    users.set(id, userRecord(u, pms.get(id) ?? [], saved.get(id) ?? [], resIds.get(id) ?? [], form));
  }
  const rFlights = groupByParent(state.reservation_flights, 'reservation_id');
  const rPax = groupByParent(state.reservation_passengers, 'reservation_id');
  const rPay = groupByParent(state.reservation_payments, 'reservation_id');
  const reservations: PyDict = new Map();
  for (const r of inPositionOrder(state.reservations)) {
    const id = String(r.reservation_id);
    reservations.set(id, reservationRecord(r, rFlights.get(id) ?? [], rPax.get(id) ?? [], rPay.get(id) ?? [], form));
  }
  return { flights, users, reservations };
}

function groupRows(rows: readonly SqlRow[], key: (r: SqlRow) => string): Map<string, SqlRow[]> {
  const out = new Map<string, SqlRow[]>();
  for (const r of rows) {
    const k = key(r);
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(r);
  }
  for (const list of out.values()) list.sort((a, b) => (a.position as number) - (b.position as number));
  return out;
}
