import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/core/env/state.ts';
import { jsonEqual } from '../../../src/core/scoring/turns.ts';

describe('jsonEqual', () => {
  it('is equality of canonical JSON texts, including the values JSON writes alike', () => {
    expect(jsonEqual(NaN, null)).toBe(true);
    expect(jsonEqual(Infinity, null)).toBe(true);
    expect(jsonEqual(0, -0)).toBe(true);
    expect(jsonEqual('1', 1)).toBe(false);
    expect(jsonEqual(true, 'true')).toBe(false);
    expect(jsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 })).toBe(true);
    const value = fc.oneof(
      fc.constantFrom(null, undefined, NaN, Infinity, -Infinity, 0, -0, 1, '1', '', 'a', true, false),
      fc.double(),
      fc.string({ maxLength: 3 }),
      fc.array(fc.constantFrom(1, '1', null, NaN), { maxLength: 2 }),
    );
    fc.assert(
      fc.property(value, value, (a, b) => jsonEqual(a, b) === (canonicalJson(a) === canonicalJson(b))),
      { numRuns: 5000, seed: 3 },
    );
  });
});
