/**
 * tau2-bench's airline policy (policy.md at the data commit) as executable rule checks over the
 * write log and the database. Each check quotes the policy text it encodes (`policy`); the gate
 * reports a quote the loaded policy.md lacks. Which rules cannot be broken by a write, or cannot
 * be checked from state, is listed in README.md ("Executable policy").
 * `= +?` in queries with an `ORDER BY`, a join or an aggregate: see `queries.ts`.
 */
import type { SqlRow, SqlValue } from '../../src/core/ports/sql-db.ts';
import type { RuleCheck, RuleCheckContext } from '../../src/core/schema/domain.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { columnChange, rowImages } from '../../src/core/env/write-images.ts';
import { TOLD, estTimestamp } from './queries.ts';

type Db = RuleCheckContext['db'];

/** Flight-date statuses of a segment that has taken off (policy: "flying" = taken off, not landed). */
const FLOWN = new Set(['landed', 'flying']);

/** Free checked bags per passenger by the booking user's membership and the cabin (policy.md, "Checked bag allowance"). */
export const FREE_BAGS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  regular: { basic_economy: 0, economy: 1, business: 2 },
  silver: { basic_economy: 1, economy: 2, business: 3 },
  gold: { basic_economy: 2, economy: 3, business: 4 },
};

/** At most this many payment methods of each source on one reservation (policy.md, "Payment"). */
const PAYMENT_LIMITS: Readonly<Record<string, number>> = { certificate: 1, credit_card: 1, gift_card: 3 };

/** Compensation per passenger by the flight status complained about (policy.md, last section). */
const COMPENSATION_PER_PASSENGER: Readonly<Record<string, number>> = { cancelled: 100, delayed: 50 };

const str = (v: unknown) => String(v);

/**
 * The fact the tool told its after-checks under `key` ({@link RuleCheckContext.told}), else what
 * `read` reads (run only then). Every reader below takes what it was told this way: a tool tells
 * only rows as they are now (see {@link TOLD}), so either gives the same value.
 */
function toldOr<T>(ctx: RuleCheckContext, key: string, read: () => Promise<T>): Promise<T> | T {
  const told = ctx.told.get(key);
  return told !== undefined ? (told as T) : read();
}

/**
 * `f` of `value` at once when it is at hand, else once its promise settles: a check whose facts
 * were all told answers without an await ({@link RuleCheck.check}). The three flights checks
 * through it (and {@link readFlightChange}): their phase 7.4 -> 5.6 µs a call, the whole
 * update_reservation_flights call ×0.986 and ×0.992 against ×1.003 and ×1.008 for two copies of
 * the old code (same process, calls alternating, 60 pairs of 200, load 4-4.6). book_reservation's
 * three checks through a helper taking each reservation's told or read fact in turn (a closure
 * and an array per check) made their phase slower, 6.1 -> 6.7 µs; {@link firstReservationFinding} and
 * paymentLimits instead judge told facts at once with module-level functions and fall back to a
 * reading loop from the first reservation (5.7 -> 4.6 µs).
 */
function thenOf<T, U>(value: T | Promise<T>, f: (v: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * `compute` memoized for the checks of one call: its value for the last `(ctx.writes, key)` asked
 * (a call's writes are one array, the same for every check of its `after` phase), computed anew
 * for another call or key. Checks of one phase run one after another; when phases of several
 * environments interleave (an asynchronous database), a lookup for another call only computes
 * again. It keeps one entry where a `WeakMap` by the writes array kept one per call until the
 * next garbage collection, which the collector's ephemeron work made dear: send_certificate's two
 * checks alone 3.7 -> 2.7 µs a call (GC 33% of their samples before), the flights checks ×0.81;
 * the whole send_certificate call ×0.964 and ×0.962 (20 pairs each, same process, load 2-3).
 * Looking at each written row's key once instead of each column's (the flights checks' pass
 * over the writes) was measured too: ×0.99, not done. Likewise one index of the rows written, by
 * table, shared by book_reservation's three checks instead of a pass over the writes each: ×0.99
 * of the checks alone; the bag and passenger checks taking a row's id once rather than per
 * column: 2.47 -> 2.32 and 2.24 -> 2.12 µs timed in the call (20 pairs): neither done.
 */
function perCall<K, T>(compute: (ctx: RuleCheckContext, key: K) => T): (ctx: RuleCheckContext, key: K) => T {
  let writes: readonly WriteEntry[] | undefined;
  let lastKey: K | undefined;
  let value: T;
  return (ctx, key) => {
    if (ctx.writes !== writes || key !== lastKey) {
      // Cleared first: a `compute` that throws leaves no stale entry behind.
      writes = undefined;
      value = compute(ctx, key);
      writes = ctx.writes;
      lastKey = key;
    }
    return value;
  };
}

/**
 * The reservation a call names (`reservation_id` argument): `reservation_id`, `created_at`,
 * `cabin`, `insurance`, what the cancellation checks use (not `SELECT *`, whose ten texts sql.js
 * decodes at ~0.4 µs each); the row the tool told of ({@link TOLD.reservation}) when it did.
 */
async function reservation(ctx: RuleCheckContext): Promise<SqlRow | undefined> {
  const id = str(ctx.args.reservation_id);
  return toldOr(ctx, TOLD.reservation(id), () =>
    ctx.db.one('SELECT reservation_id, created_at, cabin, insurance FROM reservations WHERE reservation_id = ?', [id]),
  );
}

/**
 * Segments of a reservation now, with the status of their flight date (`flight_number`, `date`,
 * `origin`, `destination`, `status`); those the tool told of ({@link TOLD.segments}) when it did.
 */
function segments(ctx: RuleCheckContext, reservationId: string): SqlRow[] | Promise<SqlRow[]> {
  return toldOr(ctx, TOLD.segments(reservationId), () =>
    ctx.db.all(
      `SELECT f.flight_number, f.date, f.origin, f.destination, d.status FROM reservation_flights f
       LEFT JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = f.date
       WHERE f.reservation_id = +? ORDER BY f.position`,
      [reservationId],
    ),
  );
}

/** Status of each flight date of `flights` (`flight_number`, `date`), in order: one lookup each. */
async function statuses(ctx: RuleCheckContext, flights: readonly SqlRow[]): Promise<SqlRow[]> {
  const out: SqlRow[] = [];
  for (const f of flights) {
    const found = await ctx.db.one('SELECT status FROM flight_dates WHERE flight_number = ? AND date = ?', [
      str(f.flight_number),
      str(f.date),
    ]);
    out.push({ ...f, status: found?.status ?? null });
  }
  return out;
}

/**
 * Route of a reservation's segments now, in order (no statuses: the route checks need none); the
 * segments the tool told of ({@link TOLD.route}) when it did.
 */
function routeNow(ctx: RuleCheckContext, reservationId: string): SqlRow[] | Promise<SqlRow[]> {
  return toldOr(ctx, TOLD.route(reservationId), () =>
    ctx.db.all(
      'SELECT flight_number, date, origin, destination FROM reservation_flights WHERE reservation_id = +? ORDER BY position',
      [reservationId],
    ),
  );
}

const seg = (f: SqlRow) => `${str(f.flight_number)} on ${str(f.date)}`;

/**
 * What the three checks of an `update_reservation_flights` call ({@link basicEconomyUnchanged},
 * {@link keepRoute}, {@link cabinNotAfterFlown}) read of one reservation, read once per call.
 */
interface FlightChange {
  /** The reservation now (`origin`, `destination`, `flight_type`, `cabin`), or undefined when there is none. */
  r: SqlRow | undefined;
  /** The `cabin` column's change by the call (its first `before`, last `after`), or null. */
  cabin: { before: SqlValue; after: SqlValue } | null;
  /**
   * The segments before the call, in position order: the rows the call deleted (every column as
   * it was), or, when it deleted none, the segments now with the `status` of their flight date.
   */
  before: SqlRow[];
  /** Whether {@link before} are the deleted rows (which carry no `status`). */
  deleted: boolean;
  /** The segments now (`flight_number`, `date`, `origin`, `destination`), in position order. */
  after: SqlRow[];
}

/**
 * {@link FlightChange} of the reservation a call names, computed once per call and reservation
 * ({@link perCall}; callers must not change it). One pass over the call's writes gives the
 * deleted segments and the cabin change (what `rowImages` and `columnChange` give, keyed by the reservation); then the
 * reservation's four columns and its segments now, two statements (one when no segment was
 * deleted: the segments now, with statuses, are then both before and after). It replaces a
 * `SELECT *` of the reservation through each check, three passes over the writes (a
 * `JSON.stringify` per row image) and the sorting and copying of the same rows by each check:
 * the three checks ×0.77 (34 -> 26 µs a call under load ~7). Session 15: a deleted segment's
 * image built with five fixed fields (a `switch` on the column, its key looked at once) instead
 * of one field per column written: the first check, which computes this, 7.6 -> 6.6 and 8.5 ->
 * 7.6 µs timed in the call, the whole call ×1.004 and ×1.001 (20 pairs each): not done.
 */
const flightChange = perCall(readFlightChange);

/** {@link FlightChange} of the reservation named: at once when the tool told the rows it needs. */
function readFlightChange(ctx: RuleCheckContext, reservationId: string): FlightChange | Promise<FlightChange> {
  const r = toldOr(ctx, TOLD.reservation(reservationId), () =>
    ctx.db.one('SELECT origin, destination, flight_type, cabin FROM reservations WHERE reservation_id = ?', [
      reservationId,
    ]),
  );
  return thenOf(r, (row) => changeOf(ctx, reservationId, row));
}

/** {@link readFlightChange} once the reservation `r` is at hand. */
function changeOf(
  ctx: RuleCheckContext,
  reservationId: string,
  r: SqlRow | undefined,
): FlightChange | Promise<FlightChange> {
  if (!r) return { r, cabin: null, before: [], deleted: false, after: [] };
  let cabin: FlightChange['cabin'] = null;
  // Deleted segment images by position (a delete's key is the row's key: reservation_id, position).
  const deleted = new Map<unknown, SqlRow>();
  for (const w of ctx.writes) {
    if (w.key.reservation_id !== reservationId) continue;
    if (w.table === 'reservations') {
      if (w.column === 'cabin') cabin = { before: cabin ? cabin.before : w.before, after: w.after };
    } else if (w.table === 'reservation_flights' && w.op === 'delete') {
      let row = deleted.get(w.key.position);
      if (!row) deleted.set(w.key.position, (row = {}));
      // The first `before` of a column stands for the whole call.
      if (!(w.column in row)) row[w.column] = w.before;
    }
  }
  if (deleted.size === 0)
    return thenOf(segments(ctx, reservationId), (now) => ({ r, cabin, before: now, deleted: false, after: now }));
  const before = [...deleted.values()].sort((a, b) => Number(a.position) - Number(b.position));
  return thenOf(routeNow(ctx, reservationId), (after) => ({ r, cabin, before, deleted: true, after }));
}

const cancelNotFlown: RuleCheck = {
  rule: 'cancel-not-flown',
  description:
    'A reservation with a segment already flown (landed or flying) is not cancelled; the caller is transferred.',
  policy: 'If any portion of the flight has already been flown, the agent cannot help and transfer is needed.',
  tools: ['cancel_reservation'],
  async check(ctx) {
    const r = await reservation(ctx);
    if (!r) return null;
    const flown = (await segments(ctx, str(r.reservation_id))).filter((f) => FLOWN.has(str(f.status)));
    if (flown.length === 0) return null;
    return `reservation ${str(r.reservation_id)} cancelled with ${flown.map((f) => `${seg(f)} (${str(f.status)})`).join(', ')} already flown`;
  },
};

const cancelEligible: RuleCheck = {
  rule: 'cancel-eligible',
  description:
    'A reservation is cancelled only when booked within the last 24 h, a flight was cancelled by the airline, the cabin is business, or it has travel insurance (the reason must then be covered, which state cannot show).',
  policy: 'Otherwise, flight can be cancelled if any of the following is true:',
  tools: ['cancel_reservation'],
  async check(ctx) {
    const { now } = ctx;
    const r = await reservation(ctx);
    if (!r) return null;
    const since = estTimestamp(now() - 24 * 3_600_000);
    if (str(r.created_at) >= since) return null;
    const segs = await segments(ctx, str(r.reservation_id));
    if (segs.some((f) => f.status === 'cancelled')) return null;
    if (r.cabin === 'business' || r.insurance === 'yes') return null;
    return `reservation ${str(r.reservation_id)} cancelled: booked ${str(r.created_at)} (more than 24 h before ${estTimestamp(now())}), no flight cancelled by the airline, cabin ${str(r.cabin)}, no travel insurance`;
  },
};

const basicEconomyUnchanged: RuleCheck = {
  rule: 'basic-economy-no-flight-change',
  description: "A basic economy reservation's flights are not changed (its cabin may be).",
  policy: 'Basic economy flights cannot be modified.',
  tools: ['update_reservation_flights'],
  check(ctx) {
    const id = str(ctx.args.reservation_id);
    return thenOf(flightChange(ctx, id), ({ r, cabin, before: was, after: now }) => {
      // The cabin before the call: the column's first `before`, else as it is now.
      if (!r || str(cabin?.before ?? r.cabin) !== 'basic_economy') return null;
      const before = was.map(seg);
      const after = now.map(seg);
      if ([...before].sort().join('|') === [...after].sort().join('|')) return null;
      return `basic economy reservation ${id} had its flights changed from ${before.join(', ')} to ${after.join(', ')}`;
    });
  },
};

/** First origin, last destination and the airports reached, of segments in order. */
function route(segs: readonly SqlRow[]): { from: string; to: string; reached: Set<string> } {
  return {
    from: str(segs[0]?.origin ?? ''),
    to: str(segs[segs.length - 1]?.destination ?? ''),
    reached: new Set(segs.map((f) => str(f.destination))),
  };
}

const keepRoute: RuleCheck = {
  rule: 'modify-keep-route',
  description:
    'Changed flights keep the trip: same first origin and final destination, and a round trip still reaches its destination.',
  policy: 'Other reservations can be modified without changing the origin, destination, and trip type.',
  tools: ['update_reservation_flights'],
  check(ctx) {
    const id = str(ctx.args.reservation_id);
    return thenOf(flightChange(ctx, id), ({ r, before: was, after: now }) => {
      if (!r) return null;
      const before = route(was);
      const after = route(now);
      const dest = str(r.destination);
      const lostTurn = r.flight_type === 'round_trip' && before.reached.has(dest) && !after.reached.has(dest);
      if (before.from === after.from && before.to === after.to && !lostTurn) return null;
      return `reservation ${id} (${str(r.flight_type)} ${str(r.origin)}-${dest}) now flies ${after.from} to ${after.to}${lostTurn ? ` without reaching ${dest}` : ''}, was ${before.from} to ${before.to}`;
    });
  },
};

const cabinNotAfterFlown: RuleCheck = {
  rule: 'cabin-not-after-flown',
  description: 'The cabin is not changed once any segment of the reservation has been flown.',
  policy: 'Cabin cannot be changed if any flight in the reservation has already been flown.',
  tools: ['update_reservation_flights'],
  check(ctx) {
    const id = str(ctx.args.reservation_id);
    return thenOf(flightChange(ctx, id), ({ r, cabin: change, before, deleted }) => {
      if (!r || !change || change.before === change.after) return null;
      // None of the segments replaced had taken off, as the tool read them (TOLD.flown): no lookup.
      if (deleted && ctx.told.get(TOLD.flown(id)) === 0) return null;
      const judge = (segs: readonly SqlRow[]) => {
        const flown = segs.filter((f) => FLOWN.has(str(f.status)));
        if (flown.length === 0) return null;
        return `cabin of reservation ${id} changed from ${str(change.before)} to ${str(change.after)} with ${flown.map(seg).join(', ')} already flown`;
      };
      // The deleted segments' flight-date statuses (one lookup each), only now that they matter.
      return deleted ? statuses(ctx, before).then(judge) : judge(before);
    });
  },
};

const bagsNotRemoved: RuleCheck = {
  rule: 'bags-add-not-remove',
  description: 'Checked bags are added, never removed.',
  policy: 'The user can add but not remove checked bags.',
  tools: ['update_reservation_baggages'],
  check(ctx) {
    const id = str(ctx.args.reservation_id);
    const change = columnChange(ctx.writes, 'reservations', 'total_baggages', { reservation_id: id });
    if (!change || Number(change.after) >= Number(change.before)) return null;
    return `reservation ${id}: checked bags reduced from ${str(change.before)} to ${str(change.after)}`;
  },
};

/**
 * A reservation now (`cabin`, `total_baggages`, `nonfree_baggages`: what the checks use, not
 * `SELECT *`, whose ten texts cost ~0.4 µs each to decode) with its booking user's `membership`
 * (NULL when the user is unknown) and its passenger count (`pax`): what the bag and passenger
 * checks read, one statement through the phase's reader for both; what the tool told of
 * ({@link TOLD.bags}) when it did.
 */
async function reservationWithPax(ctx: RuleCheckContext, reservationId: string): Promise<SqlRow | undefined> {
  return toldOr(ctx, TOLD.bags(reservationId), () =>
    ctx.db.one(
      `SELECT r.cabin, r.total_baggages, r.nonfree_baggages, u.membership,
         (SELECT COUNT(*) FROM reservation_passengers p WHERE p.reservation_id = r.reservation_id) AS pax
       FROM reservations r LEFT JOIN users u ON u.user_id = r.user_id WHERE r.reservation_id = +?`,
      [reservationId],
    ),
  );
}

/**
 * The first finding `judge` gives for the reservations `ids` in turn (null: none), each as
 * {@link reservationWithPax} gives it: at once when the tool told every one (a booking), else its
 * promise, reading them one after another.
 */
function firstReservationFinding(
  ctx: RuleCheckContext,
  ids: ReadonlySet<string>,
  judge: (id: string, r: SqlRow | undefined) => string | null,
): string | null | Promise<string | null> {
  for (const id of ids) {
    const told = ctx.told.get(TOLD.bags(id)) as SqlRow | undefined;
    // From the first again, reading what was not told (the ones before found nothing).
    if (told === undefined) return readReservationFinding(ctx, ids, judge);
    const message = judge(id, told);
    if (message !== null) return message;
  }
  return null;
}

/** {@link firstReservationFinding} with reads. */
async function readReservationFinding(
  ctx: RuleCheckContext,
  ids: ReadonlySet<string>,
  judge: (id: string, r: SqlRow | undefined) => string | null,
): Promise<string | null> {
  for (const id of ids) {
    const message = judge(id, await reservationWithPax(ctx, id));
    if (message !== null) return message;
  }
  return null;
}

/** bag-allowance's finding for reservation `id` as {@link reservationWithPax} gives it `r`, or null. */
function bagFinding(id: string, r: SqlRow | undefined): string | null {
  // No reservation, or an unknown user (no membership): nothing to check.
  if (!r) return null;
  const perPassenger = FREE_BAGS[str(r.membership)]?.[str(r.cabin)];
  if (perPassenger === undefined) return null;
  const free = perPassenger * Number(r.pax);
  const due = Math.max(0, Number(r.total_baggages) - free);
  if (Number(r.nonfree_baggages) === due) return null;
  return `reservation ${id}: ${str(r.total_baggages)} checked bags for ${str(r.pax)} passenger(s), ${str(r.membership)} member in ${str(r.cabin)} (${perPassenger} free each, ${free} in all): ${due} should be charged, not ${str(r.nonfree_baggages)}`;
}

const bagAllowance: RuleCheck = {
  rule: 'bag-allowance',
  description:
    "Charged bags = checked bags beyond the free allowance of the booking user's membership and the cabin, per passenger.",
  policy: 'Checked bag allowance:',
  tools: ['book_reservation', 'update_reservation_baggages'],
  check(ctx) {
    const ids = new Set<string>();
    for (const w of ctx.writes) if (w.table === 'reservations') ids.add(str(w.key.reservation_id));
    return firstReservationFinding(ctx, ids, bagFinding);
  },
};

/** max-five-passengers' finding for reservation `id` (a reservation gone again has no passengers: they reference it). */
function paxFinding(id: string, now: SqlRow | undefined): string | null {
  return Number(now?.pax) > 5 ? `reservation ${id} booked for ${str(now?.pax)} passengers` : null;
}

const maxPassengers: RuleCheck = {
  rule: 'max-five-passengers',
  description: 'A reservation has at most five passengers.',
  policy: 'Each reservation can have at most five passengers.',
  tools: ['book_reservation'],
  check(ctx) {
    // The reservations inserted, in first-write order (an insert's key is the new row's id).
    const ids = new Set<string>();
    for (const w of ctx.writes) if (w.table === 'reservations' && w.op === 'insert') ids.add(str(w.key.reservation_id));
    return firstReservationFinding(ctx, ids, paxFinding);
  },
};

/**
 * {@link PAYMENT_LIMITS} in policy order, each source with the prefix of its method ids (tau2's ids
 * start with it: `certificate_…`, `credit_card_…`, `gift_card_…`). The limits check below, on
 * arrays and prefixes where it took each id's source from a regular expression into a Map of
 * Sets per source: 4.9 -> 3.1 µs a book_reservation call (the check timed in the call, calls
 * alternating old/new in one process, 20 pairs, twice, load 2.4); the whole call ×0.988, ×0.989
 * and ×1.009 (within its noise).
 */
const PAYMENT_SOURCES = Object.entries(PAYMENT_LIMITS).map(([source, limit]) => ({
  source,
  limit,
  prefix: `${source}_`,
}));

const paymentLimits: RuleCheck = {
  rule: 'payment-method-limits',
  description: 'A reservation uses at most one travel certificate, one credit card and three gift cards.',
  policy:
    'Each reservation can use at most one travel certificate, at most one credit card, and at most three gift cards.',
  tools: ['book_reservation'],
  check(ctx) {
    // The positions of the payment rows the call inserted, by reservation in first-write order
    // (an insert's key is the new row's key; the column writes of one row share one key object).
    const fresh = new Map<string, Set<number>>();
    let key: WriteEntry['key'] | undefined;
    for (const w of ctx.writes) {
      if (w.table !== 'reservation_payments' || w.op !== 'insert' || w.key === key) continue;
      key = w.key;
      const id = str(key.reservation_id);
      let positions = fresh.get(id);
      if (!positions) fresh.set(id, (positions = new Set()));
      positions.add(Number(key.position));
    }
    for (const [id, added] of fresh) {
      const rows = ctx.told.get(TOLD.payments(id)) as readonly SqlRow[] | undefined;
      // From the first again, reading what was not told (the ones before found nothing).
      if (rows === undefined) return readPaymentFinding(ctx, fresh);
      const message = paymentFinding(id, added, rows);
      if (message !== null) return message;
    }
    return null;
  },
};

/** {@link paymentLimits} with reads: each reservation's payment rows told or read in turn. */
async function readPaymentFinding(ctx: RuleCheckContext, fresh: ReadonlyMap<string, ReadonlySet<number>>) {
  for (const [id, added] of fresh) {
    // In position order (the key's), as the rows the tool told of (TOLD.payments).
    const rows = await toldOr(ctx, TOLD.payments(id), () =>
      ctx.db.all('SELECT position, payment_id FROM reservation_payments WHERE reservation_id = ?', [id]),
    );
    const message = paymentFinding(id, added, rows);
    if (message !== null) return message;
  }
  return null;
}

/**
 * payment-method-limits' finding for reservation `id` whose payment rows are `rows` (in position
 * order), of which the call added those at positions `added`, or null.
 */
function paymentFinding(id: string, added: ReadonlySet<number>, rows: readonly SqlRow[]): string | null {
  for (const { source, limit, prefix } of PAYMENT_SOURCES) {
    // The distinct method ids of this source in row order: all of them, and those of rows the
    // call did not add (a handful of rows: arrays, no regular expression, no Map of Sets).
    const all: string[] = [];
    const kept: string[] = [];
    for (const p of rows) {
      const paymentId = str(p.payment_id);
      if (!paymentId.startsWith(prefix)) continue;
      if (!all.includes(paymentId)) all.push(paymentId);
      if (!added.has(Number(p.position)) && !kept.includes(paymentId)) kept.push(paymentId);
    }
    // Only a call that brought in another method of this source can have broken the limit.
    if (all.length > limit && all.length > kept.length)
      return `reservation ${id} uses ${all.length} ${source.replace('_', ' ')}s (${all.join(', ')}); at most ${limit} allowed`;
  }
  return null;
}

/**
 * The user's reservations (as the user record lists them, and by owner) as an SQL set: the two
 * ways in are each looked up by an index (with `r.user_id = ? OR r.reservation_id IN (…)` SQLite
 * scanned every reservation, ~400 µs a call). The user id is bound as `?1`.
 */
const USER_RESERVATIONS = `SELECT reservation_id FROM reservations WHERE user_id = +?1
  UNION SELECT reservation_id FROM user_reservation_ids WHERE user_id = +?1`;

/**
 * The user's reservations that have a segment on a cancelled or delayed flight date, one row per
 * reservation and such status (in no order: the caller sorts by `position`), with the
 * reservation's passenger count (`pax`). Only those statuses earn compensation, and they are rare
 * (415 of 9,000 flight dates), so the passengers are counted only for these rows. Measured in a
 * loop for a user with 5 reservations and 11 segments: ~16 µs, where listing every reservation
 * with all its statuses (a temporary B-tree each for `group_concat(DISTINCT …)`) took ~31 µs.
 */
async function compensableReservations(db: Db, userId: string): Promise<SqlRow[]> {
  return db.all(
    `SELECT DISTINCT r.reservation_id, r.position, d.status,
       (SELECT COUNT(*) FROM reservation_passengers p WHERE p.reservation_id = r.reservation_id) AS pax
     FROM reservations r
     JOIN reservation_flights f ON f.reservation_id = r.reservation_id
     JOIN flight_dates d ON d.flight_number = f.flight_number AND d.date = f.date
     WHERE r.reservation_id IN (${USER_RESERVATIONS}) AND d.status IN ('cancelled', 'delayed')`,
    [userId],
  );
}

/**
 * The certificates a call added: `user_payment_methods` rows inserted with source `certificate`
 * (computed once per call, {@link perCall}; callers must not change the rows).
 */
const newCertificates = perCall((ctx, _: null) =>
  rowImages(ctx.writes, 'user_payment_methods', 'insert').filter((p) => p.source === 'certificate'),
);

/** The tables {@link compensableReservations} reads. */
const COMPENSABLE_TABLES = [
  'reservations',
  'user_reservation_ids',
  'reservation_flights',
  'flight_dates',
  'reservation_passengers',
] as const;

/**
 * {@link compensableReservations} of a user, in the order the compensation case lists them (by
 * reservation in the user's order, then by status in the policy's order: cancelled, delayed): a
 * fact of the episode's starting state until the episode writes one of its tables (tau2's
 * episodes rarely do before a certificate), so it is read once per starting state and user.
 */
function compensableInOrder(ctx: RuleCheckContext, userId: string): SqlRow[] | Promise<SqlRow[]> {
  return ctx.baseFact(`compensable ${userId}`, COMPENSABLE_TABLES, async () =>
    (await compensableReservations(ctx.db, userId)).sort(
      (a, b) =>
        Number(a.position) - Number(b.position) || (a.status === b.status ? 0 : a.status === 'cancelled' ? -1 : 1),
    ),
  );
}

/** The tables {@link coveredForCompensation} reads. */
const COVERED_TABLES = ['users', 'reservations', 'user_reservation_ids'] as const;

/**
 * Whether a certificate to the user is covered by the eligibility rule: the user is not a regular
 * member (or not found), or has a reservation in business or with travel insurance. A fact of the
 * episode's starting state until the episode writes one of its tables (see
 * {@link compensableInOrder}).
 */
function coveredForCompensation(ctx: RuleCheckContext, userId: string): boolean | Promise<boolean> {
  return ctx.baseFact(`compensation-covered ${userId}`, COVERED_TABLES, async () => {
    const u = await ctx.db.one('SELECT membership FROM users WHERE user_id = ?', [userId]);
    if (u && u.membership !== 'regular') return true;
    // Two EXISTS, each stopping at its first covered reservation: ~1 µs, where listing the
    // user's reservations as a set (a temporary B-tree for the UNION) cost ~7 µs.
    const covered = await ctx.db.one(
      `SELECT EXISTS (SELECT 1 FROM reservations WHERE user_id = +?1 AND (insurance = 'yes' OR cabin = 'business'))
         OR EXISTS (SELECT 1 FROM user_reservation_ids u JOIN reservations r ON r.reservation_id = u.reservation_id
           WHERE u.user_id = +?1 AND (r.insurance = 'yes' OR r.cabin = 'business')) AS x`,
      [userId],
    );
    return Boolean(covered?.x);
  });
}

/**
 * compensation-case's finding for certificate `cert` (the call's first) whose user's compensable
 * reservations are `compensable` ({@link compensableInOrder}), or null.
 */
function caseFinding(ctx: RuleCheckContext, cert: SqlRow, compensable: readonly SqlRow[]): string | null {
  const allowed: string[] = [];
  for (const r of compensable) {
    const status = str(r.status);
    const touched = ctx.log.some((w) => w.actor === 'assistant' && w.key.reservation_id === r.reservation_id);
    if (status === 'delayed' && !touched) continue;
    const amount = COMPENSATION_PER_PASSENGER[status]! * Number(r.pax);
    allowed.push(`${amount} (${status} flight, ${str(r.reservation_id)})`);
    if (Number(cert.amount) === amount) return null;
  }
  return `certificate of ${str(cert.amount)} sent to ${str(cert.user_id)}; the stated cases allow ${allowed.length ? allowed.join(', ') : 'none'}`;
}

const compensationCase: RuleCheck = {
  rule: 'compensation-case',
  description:
    'A certificate is sent only as the stated gestures: $100 × passengers for a reservation with a cancelled flight, $50 × passengers for one with a delayed flight that the agent changed or cancelled earlier in the conversation.',
  policy: 'Do not offer compensation for any other reason than the ones listed above.',
  tools: ['send_certificate'],
  check(ctx) {
    // The call's first certificate decides (a call sends one).
    const cert = newCertificates(ctx, null)[0];
    if (!cert) return null;
    return thenOf(compensableInOrder(ctx, str(cert.user_id)), (rows) => caseFinding(ctx, cert, rows));
  },
};

/** compensation-eligible's message for certificate `cert`, whose user is not covered. */
const notEligible = (cert: SqlRow) =>
  `certificate of ${str(cert.amount)} sent to ${str(cert.user_id)}, a regular member with no reservation in business or with travel insurance`;

/** {@link compensationEligible} from certificate `from` on, awaiting each user's coverage. */
async function eligibleRead(ctx: RuleCheckContext, certs: readonly SqlRow[], from: number): Promise<string | null> {
  for (let i = from; i < certs.length; i++) {
    if (await coveredForCompensation(ctx, str(certs[i]!.user_id))) continue;
    return notEligible(certs[i]!);
  }
  return null;
}

const compensationEligible: RuleCheck = {
  rule: 'compensation-eligible',
  description:
    'A certificate goes only to a silver or gold member, or for a reservation with travel insurance or in business.',
  policy: 'Only compensate if the user is a silver/gold member or has travel insurance or flies business.',
  tools: ['send_certificate'],
  check(ctx) {
    const certs = newCertificates(ctx, null);
    for (let i = 0; i < certs.length; i++) {
      // At once while each user's coverage is a settled base fact.
      const covered = coveredForCompensation(ctx, str(certs[i]!.user_id));
      if (covered instanceof Promise) return eligibleRead(ctx, certs, i);
      if (!covered) return notEligible(certs[i]!);
    }
    return null;
  },
};

/** The airline policy's rule checks, in policy order. */
export const airlineRuleChecks: readonly RuleCheck[] = [
  maxPassengers,
  paymentLimits,
  bagAllowance,
  basicEconomyUnchanged,
  keepRoute,
  cabinNotAfterFlown,
  bagsNotRemoved,
  cancelNotFlown,
  cancelEligible,
  compensationEligible,
  compensationCase,
];
