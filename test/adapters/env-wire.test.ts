/**
 * The environment worker's wire encoding (src/adapters/node/env-wire.ts): plain data as JSON
 * text, everything else as v8 bytes, and either way the decoded value equals a structured clone
 * of the original (what a message port would deliver).
 */
import { describe, expect, it } from 'vitest';
import { decodeOutcome, decodeValue, encodeOutcome, encodeValue, jsonExact } from '../../src/adapters/node/env-wire.ts';
import type { PackedOutcome } from '../../src/adapters/shared/env-service.ts';

const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;
let deep: unknown = 'leaf';
for (let i = 0; i < 70; i++) deep = [deep];

describe('jsonExact', () => {
  it.each([
    ['null', null, true],
    ['a nested plain object', { a: [1, 'x', { b: null, c: true }], d: -1.5e-7 }, true],
    ['a lone surrogate (JSON escapes it)', 'a\ud800b', true],
    ['-0', -0, false],
    ['NaN', Number.NaN, false],
    ['Infinity', Number.POSITIVE_INFINITY, false],
    ['undefined', undefined, false],
    ['a property set to undefined', { policy: undefined }, false],
    ['an array hole', new Array(3), false],
    ['a bigint', 1n, false],
    ['a Uint8Array (a BLOB)', new Uint8Array([1, 2]), false],
    ['a Date', new Date(0), false],
    ['a Map', new Map(), false],
    ['a cycle', cyclic, false],
    ['70 levels deep', deep, false],
    ['an object with toJSON', { toJSON: 1 }, false],
  ])('%s → %s', (_name, value, exact) => {
    expect(jsonExact(value)).toBe(exact);
  });
});

describe('encodeValue / decodeValue', () => {
  it('plain data goes as JSON text', () => {
    const request = { op: 'call', env: 3, call: { id: 'c1', name: 't', arguments: { n: [1, 2] } }, actor: 'assistant' };
    expect(encodeValue(request)).toBe(JSON.stringify(request));
    expect(decodeValue(encodeValue(request))).toStrictEqual(request);
  });

  it.each([
    ['-0', { x: -0 }],
    ['NaN and Infinity', [Number.NaN, Number.NEGATIVE_INFINITY]],
    ['undefined fields', { a: undefined, b: [undefined] }],
    ['a BLOB', { row: { data: new Uint8Array([0, 255, 7]) } }],
    ['a cycle', cyclic],
    ['a Date', { at: new Date(1_700_000_000_000) }],
  ])('%s goes as bytes and comes back as a structured clone would', (_name, value) => {
    const wire = encodeValue(value);
    expect(wire).toBeInstanceOf(Uint8Array);
    expect(decodeValue(wire)).toStrictEqual(structuredClone(value));
  });

  it('keeps the sign of -0', () => {
    expect(Object.is((decodeValue(encodeValue({ x: -0 })) as { x: number }).x, -0)).toBe(true);
  });
});

describe('encodeOutcome / decodeOutcome', () => {
  const outcome: PackedOutcome = {
    content: '{"order_id": "#W1", "note": "line\\nbreak \\"quoted\\" — ünïcödé ✓ 😀"}',
    error: false,
    writes: [3, 0, 'assistant', 'pay', 'accounts', 'update', 1, 'account_id', 'A1', 1, 'balance', 30, 20.5],
    violations: [{ rule: 'R2', message: 'below zero', policy: 'Never take a balance below zero.' }],
    kind: 'write',
  };

  it('sends the content raw after a length header, the rest as JSON', () => {
    const wire = encodeOutcome(outcome);
    expect(wire).toBe(
      `${outcome.content.length}\n${outcome.content}${JSON.stringify([false, 'write', outcome.violations, outcome.writes])}`,
    );
    expect(decodeOutcome(wire)).toStrictEqual(outcome);
  });

  it('round-trips an error outcome with an empty content and a null kind', () => {
    const failed: PackedOutcome = { content: '', error: true, writes: [], violations: [], kind: null };
    expect(typeof encodeOutcome(failed)).toBe('string');
    expect(decodeOutcome(encodeOutcome(failed))).toStrictEqual(failed);
  });

  it.each([
    ['a lone surrogate in the content', { ...outcome, content: 'half \ud83d of an emoji' }],
    ['a written -0', { ...outcome, writes: [1, 0, 'assistant', 'pay', 'accounts', 'update', 0, 1, 'x', 0, -0] }],
    [
      'a violation with policy undefined',
      { ...outcome, violations: [{ rule: 'R1', message: 'm', policy: undefined }] },
    ],
  ])('%s: the whole outcome goes as bytes, unchanged', (_name, value) => {
    const wire = encodeOutcome(value as PackedOutcome);
    expect(wire).toBeInstanceOf(Uint8Array);
    expect(decodeOutcome(wire)).toStrictEqual(structuredClone(value));
  });
});
