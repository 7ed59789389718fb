/**
 * Airline rows → tau2-bench records (pydantic `model_dump` shapes, fields in declared order).
 * Used both by the tools (what the agent sees) and by the state export (db.json).
 *
 * `form`: `model` = every field present, unset optional fields as `null` (tau2's model_dump, what
 * tools return and what tau2 hashes); `source` = optional fields the source file left out stay
 * out while still unset (a lossless round trip of db.json).
 */
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import {
  pyFloat,
  pyJsonDumps,
  pyJsonText,
  type PyDict,
  type PyJson,
  type PyJsonObject,
} from '../../src/core/tau2/py-json.ts';
import { absentFields, type RecordForm } from '../../src/core/tau2/rows.ts';

const s = (v: unknown): string => v as string;
const n = (v: unknown): number => v as number;

/** Drop optional fields listed in `absent_fields` whose value is still null (source form only). */
function dropAbsent(record: PyJsonObject, row: SqlRow, form: RecordForm, prefix = ''): PyJsonObject {
  if (form === 'model' || row.absent_fields == null) return record;
  for (const path of absentFields(row.absent_fields)) {
    if (!path.startsWith(prefix)) continue;
    const field = path.slice(prefix.length);
    if (!field.includes('.') && record[field] === null) delete record[field];
  }
  return record;
}

/** `PaymentMethod` (CreditCard | GiftCard | Certificate) from a `user_payment_methods` row. */
export function paymentMethodRecord(r: SqlRow): PyJsonObject {
  if (r.source === 'credit_card') {
    return { source: 'credit_card', id: s(r.payment_method_id), brand: s(r.brand), last_four: s(r.last_four) };
  }
  return { source: s(r.source), id: s(r.payment_method_id), amount: pyFloat(n(r.amount)) };
}

/** `Passenger` from a passenger row (saved or on a reservation). */
export function passengerRecord(r: SqlRow): PyJsonObject {
  return { first_name: s(r.first_name), last_name: s(r.last_name), dob: s(r.dob) };
}

/** `User` from its row and child rows (each in position order). */
export function userRecord(
  u: SqlRow,
  paymentMethods: readonly SqlRow[],
  savedPassengers: readonly SqlRow[],
  reservationIds: readonly SqlRow[],
  form: RecordForm,
): PyJsonObject {
  const pms: PyDict = new Map();
  for (const pm of paymentMethods) pms.set(s(pm.payment_method_id), paymentMethodRecord(pm));
  return {
    user_id: s(u.user_id),
    name: { first_name: s(u.first_name), last_name: s(u.last_name) },
    address: dropAbsent(
      {
        address1: s(u.address1),
        address2: u.address2 as string | null,
        city: s(u.city),
        country: s(u.country),
        state: s(u.state),
        zip: s(u.zip),
      },
      u,
      form,
      'address.',
    ),
    email: s(u.email),
    dob: s(u.dob),
    payment_methods: pms,
    saved_passengers: savedPassengers.map(passengerRecord),
    membership: s(u.membership),
    reservations: reservationIds.map((r) => s(r.reservation_id)),
  };
}

/** `ReservationFlight` from a `reservation_flights` row. */
export function reservationFlightRecord(r: SqlRow): PyJsonObject {
  return {
    flight_number: s(r.flight_number),
    origin: s(r.origin),
    destination: s(r.destination),
    date: s(r.date),
    price: n(r.price),
  };
}

/** `Payment` from a `reservation_payments` row. */
export function paymentRecord(r: SqlRow): PyJsonObject {
  return { payment_id: s(r.payment_id), amount: n(r.amount) };
}

/** `Reservation` from its row and child rows (each in position order). */
export function reservationRecord(
  r: SqlRow,
  flights: readonly SqlRow[],
  passengers: readonly SqlRow[],
  payments: readonly SqlRow[],
  form: RecordForm,
): PyJsonObject {
  return dropAbsent(
    {
      reservation_id: s(r.reservation_id),
      user_id: s(r.user_id),
      origin: s(r.origin),
      destination: s(r.destination),
      flight_type: s(r.flight_type),
      cabin: s(r.cabin),
      flights: flights.map(reservationFlightRecord),
      passengers: passengers.map(passengerRecord),
      payment_history: payments.map(paymentRecord),
      created_at: s(r.created_at),
      total_baggages: n(r.total_baggages),
      nonfree_baggages: n(r.nonfree_baggages),
      insurance: s(r.insurance),
      status: r.status as string | null,
    },
    r,
    form,
  );
}

/**
 * `json.dumps` of an integer column's value as {@link reservationRecord} gives it: an int (NULL as
 * `null`); a value that is not a safe integer throws pyJsonDumps' TypeError, as the record does.
 */
function intJson(v: unknown): string {
  return typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : pyJsonDumps(v as PyJson);
}

/**
 * What a tool shows for a reservation: `toolJson(reservationRecord(r, flights, passengers,
 * payments, 'model'))` (Python's `json.dumps` of tau2's `Reservation.model_dump()`), written
 * straight from the rows in the fields' declared order without building the record (every
 * airline write tool but send_certificate, and get_reservation_details, return one). The rows
 * need the columns {@link reservationRecord} reads.
 */
export function reservationModelJson(
  r: SqlRow,
  flights: readonly SqlRow[],
  passengers: readonly SqlRow[],
  payments: readonly SqlRow[],
): string {
  let out = `{"reservation_id": ${pyJsonText(r.reservation_id)}, "user_id": ${pyJsonText(r.user_id)}, "origin": ${pyJsonText(r.origin)}, "destination": ${pyJsonText(r.destination)}, "flight_type": ${pyJsonText(r.flight_type)}, "cabin": ${pyJsonText(r.cabin)}, "flights": [`;
  for (let i = 0; i < flights.length; i++) {
    const f = flights[i]!;
    out += `${i ? ', ' : ''}{"flight_number": ${pyJsonText(f.flight_number)}, "origin": ${pyJsonText(f.origin)}, "destination": ${pyJsonText(f.destination)}, "date": ${pyJsonText(f.date)}, "price": ${intJson(f.price)}}`;
  }
  out += '], "passengers": [';
  for (let i = 0; i < passengers.length; i++) {
    const p = passengers[i]!;
    out += `${i ? ', ' : ''}{"first_name": ${pyJsonText(p.first_name)}, "last_name": ${pyJsonText(p.last_name)}, "dob": ${pyJsonText(p.dob)}}`;
  }
  out += '], "payment_history": [';
  for (let i = 0; i < payments.length; i++) {
    const p = payments[i]!;
    out += `${i ? ', ' : ''}{"payment_id": ${pyJsonText(p.payment_id)}, "amount": ${intJson(p.amount)}}`;
  }
  return `${out}], "created_at": ${pyJsonText(r.created_at)}, "total_baggages": ${intJson(r.total_baggages)}, "nonfree_baggages": ${intJson(r.nonfree_baggages)}, "insurance": ${pyJsonText(r.insurance)}, "status": ${pyJsonText(r.status)}}`;
}

/** A cabin → number dict (`available_seats` or `prices`) from rows in position order. */
export function cabinMap(rows: readonly SqlRow[], column: 'available_seats' | 'price'): PyDict {
  const out: PyDict = new Map();
  for (const r of rows) out.set(s(r.cabin), n(r[column]));
  return out;
}

/** Time fields of each flight-date status, in declared order. */
export const STATUS_TIME_FIELDS: Readonly<Record<string, readonly string[]>> = {
  available: [],
  cancelled: [],
  landed: ['actual_departure_time_est', 'actual_arrival_time_est'],
  flying: ['actual_departure_time_est', 'estimated_arrival_time_est'],
  delayed: ['estimated_departure_time_est', 'estimated_arrival_time_est'],
  'on time': ['estimated_departure_time_est', 'estimated_arrival_time_est'],
};

/** `FlightDateStatus` (the variant chosen by `status`) from a `flight_dates` row and its cabins. */
export function flightDateRecord(d: SqlRow, seats: readonly SqlRow[], prices: readonly SqlRow[]): PyJsonObject {
  const status = s(d.status);
  const out: PyJsonObject = { status };
  if (status === 'available') {
    out.available_seats = cabinMap(seats, 'available_seats');
    out.prices = cabinMap(prices, 'price');
    return out;
  }
  for (const f of STATUS_TIME_FIELDS[status] ?? []) out[f] = d[f] as string;
  return out;
}

/** `Flight` from its row and its dates (position order; `dates[i]` with its cabin rows). */
export function flightRecord(
  f: SqlRow,
  dates: readonly { row: SqlRow; seats: readonly SqlRow[]; prices: readonly SqlRow[] }[],
): PyJsonObject {
  const byDate: PyDict = new Map();
  for (const d of dates) byDate.set(s(d.row.date), flightDateRecord(d.row, d.seats, d.prices));
  return {
    flight_number: s(f.flight_number),
    origin: s(f.origin),
    destination: s(f.destination),
    scheduled_departure_time_est: s(f.scheduled_departure_time_est),
    scheduled_arrival_time_est: s(f.scheduled_arrival_time_est),
    dates: byDate,
  };
}

/** `DirectFlight`, a search result (`date` is null for direct searches, set for one-stop legs). */
export function directFlightRecord(
  f: SqlRow,
  date: string | null,
  seats: readonly SqlRow[],
  prices: readonly SqlRow[],
): PyJsonObject {
  return {
    flight_number: s(f.flight_number),
    origin: s(f.origin),
    destination: s(f.destination),
    status: 'available',
    scheduled_departure_time_est: s(f.scheduled_departure_time_est),
    scheduled_arrival_time_est: s(f.scheduled_arrival_time_est),
    date,
    available_seats: cabinMap(seats, 'available_seats'),
    prices: cabinMap(prices, 'price'),
  };
}

export type { PyJson };
