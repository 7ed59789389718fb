/**
 * reservationModelJson (a reservation's reply text written straight from its rows) against the
 * record path it replaces, `toolJson(reservationRecord(…, 'model'))`: on every reservation of
 * tau2-bench's airline data (rows as the tools read them, and whole rows), with a digest recorded
 * from the record path, and on hand-made rows with escapes, non-ASCII text, NULLs and a value
 * that is not an int. Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reservationFlights, reservationPassengers, reservationPayments } from '../../domains/tau2-airline/queries.ts';
import { reservationModelJson, reservationRecord } from '../../domains/tau2-airline/records.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import type { ToolDb } from '../../src/core/schema/domain.ts';
import { toolJson } from '../../src/core/tau2/common-tools.ts';
import { tau2Runtime } from './tau2-helpers.ts';

const recordPath = (r: SqlRow, f: SqlRow[], p: SqlRow[], pay: SqlRow[]) =>
  toolJson(reservationRecord(r, f, p, pay, 'model'));

describe('reservationModelJson', () => {
  it('equals the record path on every reservation of the airline data', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const env = await runtime.open();
    try {
      const db = env.reader as ToolDb;
      const reservations = await env.query('SELECT * FROM reservations ORDER BY position');
      const whole = async (table: string, id: unknown) =>
        env.query(`SELECT * FROM ${table} WHERE reservation_id = ? ORDER BY position`, [id as string]);
      const hash = createHash('sha256');
      for (const r of reservations) {
        const id = r.reservation_id as string;
        const narrow = [
          await reservationFlights(db, id),
          await reservationPassengers(db, id),
          await reservationPayments(db, id),
        ] as const;
        const text = reservationModelJson(r, ...narrow);
        expect(text).toBe(recordPath(r, ...narrow));
        const all = [
          await whole('reservation_flights', id),
          await whole('reservation_passengers', id),
          await whole('reservation_payments', id),
        ] as const;
        expect(reservationModelJson(r, ...all)).toBe(text);
        hash.update(text);
      }
      expect(reservations.length).toBe(2000);
      // Recorded with the record path (toolJson(reservationRecord(...))) of 2634437.
      expect(hash.digest('hex')).toBe('4d36511e28cb1db327f66c2163738508832454fdb7759d2b95d1a3bd474e0cbe');
    } finally {
      await env.close();
    }
  }, 60_000);

  it('escapes as json.dumps does, writes NULLs as null and refuses a value that is not an int', () => {
    const r: SqlRow = {
      reservation_id: 'Q"1\\',
      user_id: 'zoë_ø',
      origin: 'SFO',
      destination: 'JFK\n',
      flight_type: 'one_way',
      cabin: 'economy',
      created_at: '2024-05-15T15:00:00',
      total_baggages: 0,
      nonfree_baggages: -1,
      insurance: 'no',
      status: null,
    };
    const flights = [{ flight_number: 'HAT001', origin: 'SFO', destination: 'JFK\n', date: '2024-05-20', price: 120 }];
    const passengers = [
      { first_name: 'Zoë', last_name: 'O\u2019Neil', dob: '1990-01-01' },
      { first_name: 'A\tB', last_name: null, dob: '1991-02-03' },
    ];
    const payments = [
      { payment_id: 'gift_card_1', amount: -120 },
      { payment_id: 'credit_card_2', amount: 0 },
    ];
    const text = reservationModelJson(r, flights, passengers, payments);
    expect(text).toBe(
      '{"reservation_id": "Q\\"1\\\\", "user_id": "zo\\u00eb_\\u00f8", "origin": "SFO", "destination": "JFK\\n", "flight_type": "one_way", "cabin": "economy", ' +
        '"flights": [{"flight_number": "HAT001", "origin": "SFO", "destination": "JFK\\n", "date": "2024-05-20", "price": 120}], ' +
        '"passengers": [{"first_name": "Zo\\u00eb", "last_name": "O\\u2019Neil", "dob": "1990-01-01"}, {"first_name": "A\\tB", "last_name": null, "dob": "1991-02-03"}], ' +
        '"payment_history": [{"payment_id": "gift_card_1", "amount": -120}, {"payment_id": "credit_card_2", "amount": 0}], ' +
        '"created_at": "2024-05-15T15:00:00", "total_baggages": 0, "nonfree_baggages": -1, "insurance": "no", "status": null}',
    );
    expect(text).toBe(recordPath(r, flights, passengers, payments));
    expect(reservationModelJson({ ...r, status: 'cancelled' }, [], [], [])).toBe(
      recordPath({ ...r, status: 'cancelled' }, [], [], []),
    );
    const half = [{ ...flights[0]!, price: 120.5 }];
    expect(() => recordPath(r, half, [], [])).toThrow(TypeError);
    expect(() => reservationModelJson(r, half, [], [])).toThrow(
      'pyJsonDumps: 120.5 is not an int; wrap floats in PyFloat',
    );
  });
});
