/**
 * `pyJsonDumps` and `parsePyJson` against the code they replaced (src/core/tau2/py-json.ts
 * before the scoring speed-up of session 8, kept here verbatim as the reference: that code is
 * checked against Python's own `json.dumps` output in test/domains/tau2-python-compat.test.ts,
 * as the new code is). Random nested values of every kind the encoder takes: ints, floats of
 * every class (NaN, ±Infinity, ±0, subnormal, huge), strings of any UTF-16 code units (controls,
 * DEL, non-ASCII, lone surrogates, quotes and backslashes), lists, dicts (`Map`, integer-like
 * keys included) and records (plain objects), under every option (indent, separators,
 * sort_keys); for the parser, their texts whole, cut, and with characters inserted or removed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PyFloat,
  PyJsonSyntaxError,
  parsePyJson,
  pyFloatRepr,
  pyJsonDumps,
  type PyDict,
  type PyJson,
} from '../../../src/core/tau2/py-json.ts';

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

// ---- The reference parser (the one parsePyJson replaced), unchanged but for its names. ----------

/** A JSON number token (sticky: matched at `lastIndex`). */
const REF_NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/** The words the reference parser reads besides numbers, strings and containers. */
const REF_WORDS: readonly [string, () => PyJson][] = [
  ['true', () => true],
  ['false', () => false],
  ['null', () => null],
  ['NaN', () => new PyFloat(NaN)],
  ['Infinity', () => new PyFloat(Infinity)],
  ['-Infinity', () => new PyFloat(-Infinity)],
];

/** The state of one reference parse: the text and the index of the next character. */
class RefParser {
  i = 0;
  constructor(private readonly text: string) {}

  fail(msg: string): never {
    throw new PyJsonSyntaxError(msg, this.i);
  }

  ws(): void {
    const text = this.text;
    while (this.i < text.length) {
      const c = text.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(): PyJson {
    const text = this.text;
    this.ws();
    const c = text[this.i];
    if (c === '{') {
      this.i++;
      const obj: PyDict = new Map();
      this.ws();
      if (text[this.i] === '}') {
        this.i++;
        return obj;
      }
      for (;;) {
        this.ws();
        if (text[this.i] !== '"') this.fail('expected a string key');
        const key = this.str();
        this.ws();
        if (text[this.i] !== ':') this.fail("expected ':'");
        this.i++;
        obj.set(key, this.value());
        this.ws();
        if (text[this.i] === ',') this.i++;
        else if (text[this.i] === '}') {
          this.i++;
          return obj;
        } else this.fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      this.i++;
      const arr: PyJson[] = [];
      this.ws();
      if (text[this.i] === ']') {
        this.i++;
        return arr;
      }
      for (;;) {
        arr.push(this.value());
        this.ws();
        if (text[this.i] === ',') this.i++;
        else if (text[this.i] === ']') {
          this.i++;
          return arr;
        } else this.fail("expected ',' or ']'");
      }
    }
    if (c === '"') return this.str();
    for (const [word, v] of REF_WORDS) {
      if (text.startsWith(word, this.i)) {
        this.i += word.length;
        return v();
      }
    }
    REF_NUMBER.lastIndex = this.i;
    const m = REF_NUMBER.exec(text);
    if (!m) return this.fail('unexpected character');
    this.i += m[0].length;
    if (m[1] !== undefined || m[2] !== undefined) return new PyFloat(Number(m[0]));
    const n = Number(m[0]);
    if (!Number.isSafeInteger(n)) this.fail(`int ${m[0]} is outside the safe range`);
    return n;
  }

  str(): string {
    const text = this.text;
    const start = ++this.i;
    let simple = true;
    while (this.i < text.length && text[this.i] !== '"') {
      if (text[this.i] === '\\') {
        simple = false;
        this.i += 2;
      } else this.i++;
    }
    if (this.i >= text.length) this.fail('unterminated string');
    const raw = text.slice(start, this.i++);
    if (simple) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return this.fail('invalid string escape');
    }
  }
}

function refParse(text: string): PyJson {
  const parser = new RefParser(text);
  const result = parser.value();
  parser.ws();
  if (parser.i !== text.length) parser.fail('unexpected text after the value');
  return result;
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

/** A parse result or error as comparable text: Maps as entry lists, PyFloats tagged, -0 kept. */
function shown(f: () => PyJson): string {
  try {
    return JSON.stringify(f(), (_k, v: unknown) =>
      v instanceof Map
        ? { map: [...(v as PyDict)] }
        : v instanceof PyFloat
          ? { float: Object.is(v.value, -0) ? '-0' : String(v.value) }
          : v,
    );
  } catch (e) {
    expect(e).toBeInstanceOf(PyJsonSyntaxError);
    return `${(e as PyJsonSyntaxError).message} @${(e as PyJsonSyntaxError).offset}`;
  }
}

describe('parsePyJson gives what the parser it replaced gives', () => {
  /** The text of a random value, as json.dumps or JSON.stringify writes it (NaN and Infinity included). */
  const document = fc.oneof(
    fc.tuple(value, options).map(([v, o]) => pyJsonDumps(v, o)),
    fc.tuple(value, options).map(([v]) => pyJsonDumps(v, { separators: [',', ':'] })),
    fc.jsonValue().map((v) => JSON.stringify(v, null, 1)),
  );
  const edit = fc.oneof(
    fc.constant((t: string) => t),
    fc.nat().map((n) => (t: string) => t.slice(0, n % (t.length + 1))),
    fc
      .tuple(
        fc.nat(),
        fc.constantFrom('"', '\\', ',', ':', '}', ']', '{', '[', ' ', '-', '1', '.', 'e', 'x', 'n', 'N', 'I'),
      )
      .map(([n, c]) => (t: string) => {
        const at = n % (t.length + 1);
        return t.slice(0, at) + c + t.slice(at);
      }),
    fc.nat().map((n) => (t: string) => {
      const at = n % Math.max(1, t.length);
      return t.slice(0, at) + t.slice(at + 1);
    }),
  );

  it('on random documents, whole and edited (cut, a character inserted or removed)', () => {
    let errors = 0;
    fc.assert(
      fc.property(document, edit, edit, (text, e1, e2) => {
        const t = e2(e1(text));
        const ours = shown(() => parsePyJson(t));
        expect(ours).toBe(shown(() => refParse(t)));
        if (ours.includes(' @')) errors += 1;
      }),
      { numRuns: 4000, seed: 20261202 },
    );
    // The edits do reach the error paths.
    expect(errors).toBeGreaterThan(1000);
  });

  it('on texts made of the characters of JSON', () => {
    const alphabet = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      '"',
      ':',
      ',',
      ' ',
      '\\',
      'u',
      '0',
      '1',
      '-',
      '.',
      'e',
      'E',
      '+',
      '9007199254740993',
      'a',
      'true',
      'null',
      'NaN',
      '-Infinity',
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 20 }), (parts) => {
        const t = parts.join('');
        expect(shown(() => parsePyJson(t))).toBe(shown(() => refParse(t)));
      }),
      { numRuns: 4000, seed: 7 },
    );
  });
});
