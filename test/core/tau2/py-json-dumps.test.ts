/**
 * `pyJsonDumps` against the encoder it replaced (src/core/tau2/py-json.ts before the scoring
 * speed-up of session 8, kept here verbatim as the reference: that one is checked against
 * Python's own `json.dumps` output in test/domains/tau2-python-compat.test.ts, as the new one
 * is). Random nested values of every kind the encoder takes: ints, floats of every class (NaN,
 * ±Infinity, ±0, subnormal, huge), strings of any UTF-16 code units (controls, DEL, non-ASCII,
 * lone surrogates, quotes and backslashes), lists, dicts (`Map`, integer-like keys included)
 * and records (plain objects), under every option (indent, separators, sort_keys).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PyFloat, pyFloatRepr, pyJsonDumps, type PyJson } from '../../../src/core/tau2/py-json.ts';

// ---- The reference encoder (the one pyJsonDumps replaced), unchanged but for its names. --------

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};
const PLAIN_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
function refString(s: string): string {
  if (PLAIN_STRING.test(s)) return `"${s}"`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the reference escapes exactly these
  return `"${s.replace(/["\\\u0000-\u001f\u007f-\uffff]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}
function refFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return pyFloatRepr(x);
}
interface Style {
  indent: number | undefined;
  itemSep: string;
  keySep: string;
  sortKeys: boolean;
}
function refValue(v: PyJson, level: number, style: Style): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return refString(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isSafeInteger(v)) throw new TypeError(`pyJsonDumps: ${v} is not an int; wrap floats in PyFloat`);
      return String(v);
    case 'object':
      break;
    default:
      throw new TypeError(`pyJsonDumps: unsupported value ${String(v)}`);
  }
  if (v instanceof PyFloat) return refFloat(v.value);
  const { indent, itemSep, keySep } = style;
  const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (level + 1))}`;
  const end = indent === undefined ? '' : `\n${' '.repeat(indent * level)}`;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? itemSep : '') + pad + refValue(v[i]!, level + 1, style);
    return `${out}${end}]`;
  }
  const map = v instanceof Map ? v : undefined;
  const keys = map ? [...map.keys()] : Object.keys(v);
  if (style.sortKeys) keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return '{}';
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const item = map ? map.get(k) : (v as Record<string, PyJson>)[k];
    out += (i > 0 ? itemSep : '') + pad + refString(k) + keySep;
    if (item === undefined) throw new TypeError(`pyJsonDumps: key "${k}" is undefined`);
    out += refValue(item, level + 1, style);
  }
  return `${out}${end}}`;
}
function refDumps(
  value: PyJson,
  options: { indent?: number; separators?: readonly [string, string]; sortKeys?: boolean } = {},
): string {
  const indent = options.indent;
  const [itemSep, keySep] = options.separators ?? (indent === undefined ? [', ', ': '] : [',', ': ']);
  return refValue(value, 0, { indent, itemSep, keySep, sortKeys: options.sortKeys === true });
}

// ---- Random values. ---------------------------------------------------------------------------

/** Strings of any UTF-16 code units, biased to the characters the encoder treats specially. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom(
      'a',
      'Z',
      '0',
      ' ',
      '~',
      '"',
      '\\',
      '\n',
      '\u007f',
      '\u0080',
      'é',
      '\ud800',
      '\u0000',
      '\u001f',
    ),
    maxLength: 8,
  }),
  fc.constantFrom('', 'order_id', '1008292230', '#W0000000', '__proto__', 'constructor', 'toString'),
);
/** Record field names: identifiers, and the odd integer-like or escaped key. */
const field = fc.oneof(fc.constantFrom('a', 'b', 'name', 'items', 'price', '9', '10', 'é', 'x"y'), text);

const value: fc.Arbitrary<PyJson> = fc.letrec<{ v: PyJson }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.oneof(
      fc.integer(),
      fc.maxSafeInteger(),
      fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
    ),
    fc
      .oneof(fc.double(), fc.constantFrom(0, -0, 1e16, 1e-4, 9.999e-5, 1e15, 5e-324, 0.1, 100, -2.5))
      .map((x) => new PyFloat(x)),
    text,
    fc.array(tie('v'), { maxLength: 5 }),
    fc.array(fc.tuple(field, tie('v')), { maxLength: 5 }).map((entries) => new Map(entries)),
    // Plain objects, as records are (own properties only; `__proto__` set as a property).
    fc.array(fc.tuple(field, tie('v')), { maxLength: 5 }).map((entries) => {
      const o: Record<string, PyJson> = {};
      for (const [k, x] of entries)
        Object.defineProperty(o, k, { value: x, enumerable: true, writable: true, configurable: true });
      return o;
    }),
  ),
})).v;

const options = fc.record(
  {
    indent: fc.integer({ min: 0, max: 4 }),
    separators: fc.tuple(fc.constantFrom(',', ', ', ' , ', ''), fc.constantFrom(':', ': ', ' : ', '')),
    sortKeys: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** The result, or the error's type and message when it throws. */
function outcome(f: () => string): string {
  try {
    return f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

describe('pyJsonDumps is byte-identical to the encoder it replaced', () => {
  it('on random nested values under every option', () => {
    fc.assert(
      fc.property(value, options, (v, o) => {
        expect(pyJsonDumps(v, o)).toBe(refDumps(v, o));
        expect(pyJsonDumps(v)).toBe(refDumps(v));
      }),
      { numRuns: 3000, seed: 20261202 },
    );
  });

  it('throws the same errors: a non-integer number, undefined, a function, a bigint', () => {
    const bad: unknown[] = [0.5, Number.NaN, 2 ** 53, undefined, () => 1, 10n, Symbol('s')];
    for (const b of bad) {
      for (const doc of [b, [1, b], { a: 1, b }, new Map([['k', b]])]) {
        const ours = outcome(() => pyJsonDumps(doc as PyJson));
        expect(ours).toBe(outcome(() => refDumps(doc as PyJson)));
        expect(ours).toMatch(/^TypeError: pyJsonDumps: /);
      }
    }
  });
});
