/**
 * The environment worker's wire encoding (src/adapters/node/env-wire.ts): plain data as JSON
 * text, a tool call and its outcome as a header line and JSON (the outcome's content raw),
 * everything else as v8 bytes, and either way the decoded value equals a structured clone of the
 * original (what a message port would deliver).
 */
import { describe, expect, it } from 'vitest';
import {
  decodeOutcome,
  decodeRequest,
  decodeValue,
  encodeOutcome,
  encodeRequest,
  encodeValue,
  jsonExact,
} from '../../src/adapters/node/env-wire.ts';
import type { MailboxMessage, MailboxPayload } from '../../src/adapters/node/mailbox.ts';
import { type EnvRequest, packWrites } from '../../src/adapters/shared/env-service.ts';
import type { ToolOutcome } from '../../src/core/env/environment.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';

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

/** What the mailbox delivers for a message: text parts arrive joined. */
const delivered = (m: MailboxMessage): MailboxPayload =>
  typeof m === 'string' || m instanceof Uint8Array ? m : m.join('');

describe('encodeRequest / decodeRequest', () => {
  const call = { id: 'c1', name: 'update_address', arguments: { zip: '19122', lines: ['763 Broadway', 'Suite 135'] } };

  it.each([
    ['a call', { op: 'call', env: 3, call, actor: 'assistant', turn: 0 }, ['3 0 0 1\n', JSON.stringify(call)]],
    [
      'a user call without syncState',
      { op: 'call', env: 12, call, actor: 'user', turn: -1, sync: false },
      ['12 -1 1 0\n', JSON.stringify(call)],
    ],
  ] as const)('%s goes as a header line and the call as JSON, and comes back equal', (_name, request, wire) => {
    expect(encodeRequest(request)).toEqual(wire);
    expect(decodeRequest(delivered(encodeRequest(request)))).toStrictEqual(request);
  });

  it('every other request goes as JSON (or bytes), and comes back equal', () => {
    const requests = [
      { op: 'open', taskId: '7', now: 1_700_000_000_000 },
      { op: 'open' },
      { op: 'changes', env: 2 },
      { op: 'close', env: 2 },
      // A call the header line cannot carry: sync true, a third actor, a fractional turn, an extra field.
      { op: 'call', env: 3, call, actor: 'assistant', turn: 0, sync: true },
      { op: 'call', env: 3, call, actor: 'system', turn: 0 },
      { op: 'call', env: 3, call, actor: 'assistant', turn: 0.5 },
      { op: 'call', env: 3, call, actor: 'assistant', turn: 0, trace: 'x' },
    ] as unknown as EnvRequest[];
    for (const request of requests) {
      const wire = encodeRequest(request);
      expect(wire).toBe(JSON.stringify(request));
      expect(decodeRequest(wire as string)).toStrictEqual(request);
    }
    // Arguments JSON cannot carry exactly: bytes, a structured clone.
    const odd = { op: 'call', env: 3, call: { ...call, arguments: { at: undefined, n: -0 } }, actor: 'user', turn: 1 };
    const wire = encodeRequest(odd as EnvRequest);
    expect(wire).toBeInstanceOf(Uint8Array);
    expect(decodeRequest(wire as Uint8Array)).toStrictEqual(structuredClone(odd));
  });
});

describe('encodeOutcome / decodeOutcome', () => {
  const paid = { seq: 3, turn: 0, actor: 'assistant', tool: 'pay', table: 'accounts', op: 'update' } as const;
  const writes: WriteEntry[] = [
    { ...paid, key: { account_id: 'A1' }, column: 'balance', before: 30, after: 20.5 },
    { ...paid, seq: 4, key: { account_id: 'A1' }, column: 'note', before: null, after: 'paid ✓' },
  ];
  const outcome: ToolOutcome = {
    content: '{"order_id": "#W1", "note": "line\\nbreak \\"quoted\\" — ünïcödé ✓ 😀"}',
    error: false,
    writes,
    violations: [{ rule: 'R2', message: 'below zero', policy: 'Never take a balance below zero.' }],
    kind: 'write',
  };

  it('sends a header line, the content raw, then the violations and packed writes as JSON', () => {
    const wire = encodeOutcome(outcome);
    expect(wire).toEqual([
      `${outcome.content.length} 0 1\n`,
      outcome.content,
      JSON.stringify([outcome.violations, packWrites(writes)]),
    ]);
    expect(decodeOutcome(delivered(wire))).toStrictEqual(outcome);
  });

  it('sends a read (no writes, no violations) as the header line and the content alone', () => {
    const read: ToolOutcome = { content: '{"a": [1, 2]}', error: false, writes: [], violations: [], kind: 'read' };
    expect(encodeOutcome(read)).toEqual(['13 0 0\n', read.content]);
    expect(decodeOutcome(delivered(encodeOutcome(read)))).toStrictEqual(read);
  });

  it.each([
    [
      'an error with an empty content and a null kind',
      { content: '', error: true, writes: [], violations: [], kind: null },
    ],
    ['a think call', { content: 'ok', error: false, writes: [], violations: [], kind: 'think' }],
    [
      'a refused write',
      {
        content: 'Error: no',
        error: true,
        writes: [],
        violations: [{ rule: 'R1', message: 'm', refused: true }],
        kind: 'generic',
      },
    ],
  ] as const)('round-trips %s', (_name, value) => {
    const wire = encodeOutcome(value as unknown as ToolOutcome);
    expect(Array.isArray(wire)).toBe(true);
    expect(decodeOutcome(delivered(wire))).toStrictEqual(value);
  });

  it.each([
    ['a lone surrogate in the content', { ...outcome, content: 'half \ud83d of an emoji' }],
    ['a written -0', { ...outcome, writes: [{ ...writes[0]!, after: -0 }] }],
    [
      'a violation with policy undefined',
      { ...outcome, violations: [{ rule: 'R1', message: 'm', policy: undefined }] },
    ],
    ['a kind the header line cannot name', { ...outcome, kind: 'audit' }],
    ['an extra field', { ...outcome, trace: [1] }],
  ])('%s: the whole outcome goes as bytes, unchanged', (_name, value) => {
    const wire = encodeOutcome(value as ToolOutcome);
    expect(wire).toBeInstanceOf(Uint8Array);
    expect(decodeOutcome(wire as Uint8Array)).toStrictEqual(structuredClone(value));
  });
});
