/**
 * The airline's shared query helpers that keep state between calls or build statements: the
 * policy clock's text (the last one kept) and the multi-row INSERT of insertRows.
 */
import { describe, expect, it } from 'vitest';
import { FLIGHT_ROWS, PAYMENT_ROWS, estTimestamp, insertRows } from '../../domains/tau2-airline/queries.ts';
import type { SqlParams, SqlRow } from '../../src/core/ports/sql-db.ts';
import type { ToolDb } from '../../src/core/schema/domain.ts';

describe('estTimestamp', () => {
  it('gives EST text for each clock, alternating clocks included', () => {
    const may15 = Date.UTC(2024, 4, 15, 20, 0, 0);
    const jan1 = Date.UTC(2024, 0, 1, 3, 4, 5);
    expect([may15, jan1, jan1, may15, may15 + 1000, 0].map(estTimestamp)).toEqual([
      '2024-05-15T15:00:00',
      '2023-12-31T22:04:05',
      '2023-12-31T22:04:05',
      '2024-05-15T15:00:00',
      '2024-05-15T15:00:01',
      '1969-12-31T19:00:00',
    ]);
  });
});

describe('insertRows', () => {
  it('binds the rows in order, row after row, in one statement, and gives them back as rows', async () => {
    const ran: [string, SqlParams | undefined][] = [];
    const db: ToolDb = {
      one: async () => undefined,
      all: async (): Promise<SqlRow[]> => [],
      run: async (sql, params) => {
        ran.push([sql, params]);
        return 2;
      },
    };
    const rows = await insertRows(db, FLIGHT_ROWS, [
      ['HATHAT', 0, 'HAT001', 'SFO', 'JFK', '2024-05-20', 120],
      ['HATHAT', 1, 'HAT002', 'JFK', 'SFO', '2024-05-22', 135],
    ]);
    expect(ran).toEqual([
      [
        'INSERT INTO reservation_flights (reservation_id, position, flight_number, origin, destination, date, price) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?)',
        [
          'HATHAT',
          0,
          'HAT001',
          'SFO',
          'JFK',
          '2024-05-20',
          120,
          'HATHAT',
          1,
          'HAT002',
          'JFK',
          'SFO',
          '2024-05-22',
          135,
        ],
      ],
    ]);
    expect(rows).toEqual([
      {
        reservation_id: 'HATHAT',
        position: 0,
        flight_number: 'HAT001',
        origin: 'SFO',
        destination: 'JFK',
        date: '2024-05-20',
        price: 120,
      },
      {
        reservation_id: 'HATHAT',
        position: 1,
        flight_number: 'HAT002',
        origin: 'JFK',
        destination: 'SFO',
        date: '2024-05-22',
        price: 135,
      },
    ]);
    expect(await insertRows(db, PAYMENT_ROWS, [])).toEqual([]);
    expect(ran).toHaveLength(1);
  });
});
