/**
 * The environment service's wire form of column writes (issue 15, item 2): packed writes unpack to
 * entries equal field by field and in field order (a trajectory's JSON is the same), whatever
 * rows, calls and seq runs they come from.
 */
import { describe, expect, it } from 'vitest';
import { packWrites, unpackOutcome, unpackWrites } from '../../src/adapters/shared/env-service.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';

const entry = (over: Partial<WriteEntry>): WriteEntry => ({
  seq: 1,
  turn: 0,
  actor: 'assistant',
  tool: 'update_reservation_passengers',
  table: 'reservation_passengers',
  op: 'delete',
  key: { reservation_id: 'NO6JO3', position: 0 },
  column: 'reservation_id',
  before: 'NO6JO3',
  after: null,
  ...over,
});

describe('packWrites / unpackWrites', () => {
  it('gives back every entry with its fields in order, rows grouped', () => {
    const writes: WriteEntry[] = [
      entry({ seq: 1, column: 'reservation_id' }),
      entry({ seq: 2, column: 'position', before: 0 }),
      entry({ seq: 3, column: 'dob', before: '1957-03-21' }),
      // Same table and op, another row.
      entry({ seq: 4, key: { reservation_id: 'NO6JO3', position: 1 }, column: 'dob', before: '1990-01-01' }),
      // The same row again, inserted.
      entry({ seq: 5, op: 'insert', column: 'first_name', before: null, after: 'Amelia' }),
      // A gap in seq, another call (turn, actor, tool), a one-column key, a real and a null.
      entry({
        seq: 9,
        turn: 3,
        actor: 'user',
        tool: 'toggle_data',
        table: 'devices',
        op: 'update',
        key: { id: 7 },
        column: 'level',
        before: 0.5,
        after: null,
      }),
      entry({ seq: 10, turn: 4, actor: 'user', tool: 'toggle_data', table: 'devices', op: 'update', key: { id: 7 } }),
      // A key with its columns in another order is another group.
      entry({ seq: 11, key: { position: 0, reservation_id: 'NO6JO3' } }),
    ];
    const packed = packWrites(writes);
    const back = unpackWrites(packed);
    expect(back).toStrictEqual(writes);
    expect(JSON.stringify(back)).toBe(JSON.stringify(writes));
    // Rows of consecutive entries share one header: 8 entries in 6 groups here, the first of 3.
    expect(packed.filter((v) => v === 'reservation_passengers' || v === 'devices')).toHaveLength(6);
    // Each entry has its own key object, as Environment.call gives them.
    expect(back[0]!.key).not.toBe(back[1]!.key);
  });

  it('packs no writes as an empty array, and unpacks an outcome with the other fields as they were', () => {
    expect(packWrites([])).toEqual([]);
    const writes = [entry({}), entry({ seq: 2, column: 'position', before: 0 })];
    const outcome = { content: '{"a": 1}', error: false, violations: [], kind: 'write' as const };
    expect(unpackOutcome({ ...outcome, writes: packWrites(writes) })).toStrictEqual({ ...outcome, writes });
  });
});
