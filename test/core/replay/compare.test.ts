import { describe, expect, it } from 'vitest';
import { jsonDifferences, jsonEqual, outputsEqual, parseOutput } from '../../../src/core/replay/compare.ts';

const ok = (content: string | null) => ({ content, error: false });
const failed = (content: string) => ({ content, error: true });

describe('outputsEqual', () => {
  it('compares JSON outputs as values: key order, spacing and 100.0 vs 100 do not matter', () => {
    expect(outputsEqual(ok('{"a": 1, "b": [1.0, "x"]}'), ok('{"b":[1,"x"],"a":1}'))).toBe(true);
    expect(outputsEqual(ok('{"a": 1}'), ok('{"a": 1, "b": null}'))).toBe(false);
    expect(outputsEqual(ok('[1, 2]'), ok('[2, 1]'))).toBe(false);
    expect(outputsEqual(ok('128.0'), ok('128'))).toBe(true);
  });

  it('compares text that is not JSON as text', () => {
    expect(outputsEqual(ok('Transfer successful'), ok('Transfer successful'))).toBe(true);
    expect(outputsEqual(ok('Transfer successful'), ok('Transfer successful '))).toBe(false);
    expect(outputsEqual(ok(''), ok(''))).toBe(true);
    // One side JSON, the other not: the texts differ.
    expect(outputsEqual(ok('"x"'), ok('x'))).toBe(false);
  });

  it('counts error vs error as equal whatever the wording, error vs success as different', () => {
    expect(outputsEqual(failed('Error: Reservation X not found'), failed('Error: no reservation X'))).toBe(true);
    expect(outputsEqual(failed('Error: x'), ok('Error: x'))).toBe(false);
    expect(outputsEqual(ok('{}'), failed('Error: x'))).toBe(false);
  });

  it('takes a missing recorded output as the JSON value null', () => {
    expect(parseOutput(null)).toBe(null);
    expect(parseOutput('nope')).toBe(undefined);
    expect(outputsEqual(ok(null), ok('null'))).toBe(true);
    expect(outputsEqual(ok(null), ok('{}'))).toBe(false);
  });
});

describe('jsonEqual / jsonDifferences', () => {
  it('tells arrays from objects', () => {
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
  });

  it('names the paths that differ', () => {
    const recorded = {
      id: 'Z',
      status: null,
      pay: [
        { id: 'g', amount: 169 },
        { id: 'g', amount: -169 },
      ],
      extra: 1,
    };
    const ours = {
      id: 'Z',
      status: 'cancelled',
      pay: [
        { id: 'g', amount: 169 },
        { id: 'g', amount: 169 },
      ],
      more: true,
    };
    expect(jsonDifferences(recorded, ours)).toEqual([
      'status: recorded null, ours "cancelled"',
      'pay[1].amount: recorded -169, ours 169',
      'extra: missing in ours',
      'more: not in the recording',
    ]);
    expect(jsonDifferences([1, 2], [1])).toEqual(['(top): recorded 2 items, ours 1']);
    expect(jsonDifferences({ a: 1, b: 2, c: 3 }, { a: 0, b: 0, c: 0 }, 2)).toEqual([
      'a: recorded 1, ours 0',
      'b: recorded 2, ours 0',
      '… 1 more',
    ]);
    expect(jsonDifferences({ a: 1 }, { a: 1 })).toEqual([]);
  });
});
