/** sameRow: row equality as canonical JSON text gives it, without building the text. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameRow } from '../../../src/core/env/state.ts';
import type { SqlRow } from '../../../src/core/ports/sql-db.ts';

const rows: (SqlRow | null)[] = [
  null,
  { id: 'A1', balance: 100, nickname: null },
  { balance: 100, id: 'A1', nickname: null }, // same columns, other order
  { id: 'A1', balance: 100 }, // a column fewer
  { id: 'A1', balance: 100, nick: null }, // another column name
  { id: 'A1', balance: '100', nickname: null }, // text, not a number
  { id: 'A1', balance: 100, nickname: new Uint8Array([1, 2]) },
  { id: 'A1', balance: 100, nickname: new Uint8Array([1, 2]) }, // an equal blob in another array
  { id: 'A1', balance: 100, nickname: new Uint8Array([1, 3]) },
];

describe('sameRow', () => {
  it('agrees with comparing canonical JSON texts on every pair', () => {
    const verdicts = rows.flatMap((a) => rows.map((b) => sameRow(a, b)));
    expect(verdicts).toEqual(rows.flatMap((a) => rows.map((b) => canonicalJson(a) === canonicalJson(b))));
    // Column order does not matter; a blob equals an equal blob; one column fewer is a difference.
    expect([sameRow(rows[1]!, rows[2]!), sameRow(rows[6]!, rows[7]!), sameRow(rows[1]!, rows[3]!)]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
