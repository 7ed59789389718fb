/**
 * Python's JSON and float behaviour, for tau2-bench compatibility (pure TypeScript).
 *
 * tau2-bench's records are pydantic models: a field typed `float` always holds a Python float,
 * which `json.dumps` prints with a fractional part (`100.0`), while an `int` field prints as `100`.
 * JavaScript has one number type, so a document that must keep the distinction marks floats with
 * {@link PyFloat}; plain `number`s are Python ints.
 *
 * - {@link pyFloatRepr}: `repr(float)` (`3.0`, `1e-05`, `1.5e+16`, `inf`).
 * - {@link pyRound}: `round(x, ndigits)` on a binary float (exact, ties to even: `2.675 → 2.67`).
 * - {@link pyJsonDumps}: `json.dumps` (ASCII escapes, separators, `indent`, `sort_keys`).
 * - {@link parsePyJson}: JSON text → {@link PyJson}, numbers written with `.`/`e` become floats.
 *
 * Dict order: a JavaScript object lists integer-like keys (`"1008292230"`) first, in numeric
 * order, whatever the insertion order; a Python dict keeps insertion order. So a dict keyed by
 * data (ids, dates, option names) is a {@link PyDict} (`Map`), and a plain object is only used
 * for records whose keys are field names.
 */

/** A Python float inside a {@link PyJson} value. `JSON.stringify` writes its bare value. */
export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

/**
 * A JSON document that keeps Python's int/float distinction (`number` = int, {@link PyFloat} =
 * float) and dict order ({@link PyDict}).
 */
export type PyJson = null | boolean | number | string | PyFloat | PyJson[] | PyDict | PyJsonObject;
/** A Python dict: keys in insertion order, including integer-like keys. */
export type PyDict = Map<string, PyJson>;
/** A record (pydantic model dump): field names as keys, in declared order; never integer-like keys. */
export interface PyJsonObject {
  [key: string]: PyJson;
}

/** Wrap a number as a Python float; `null` stays `null` (for Optional[float] fields). */
export function pyFloat(value: number): PyFloat;
export function pyFloat(value: number | null): PyFloat | null;
export function pyFloat(value: number | null): PyFloat | null {
  return value === null ? null : new PyFloat(value);
}

/** Shortest round-trip digits of a finite, non-zero |x|: digit string and decimal exponent of the first digit. */
function shortestDigits(x: number): { digits: string; exp: number } {
  // toExponential() without an argument gives the shortest digits that identify x (ECMA-262),
  // as Python's repr does (both pick the candidate closest to x on a tie).
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e') as [string, string];
  return { digits: mantissa.replace('.', ''), exp: Number(exponent) };
}

/**
 * Python's `repr(x)` / `str(x)` of a float: shortest round-trip digits, fixed notation for
 * decimal exponents -4…15 (always with a fractional part, `3.0`), scientific otherwise (`1e-05`,
 * `1.5e+16`). Non-finite values print as `inf`, `-inf`, `nan`.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (x === 0) return `${sign}0.0`;
  const abs = Math.abs(x);
  if (abs >= 1e-4 && abs < 1e16) {
    // Fixed notation in both languages here, with the same shortest round-trip digits (ECMA-262
    // Number::toString; JavaScript writes no fractional part for an integral value).
    const text = String(x);
    return text.includes('.') ? text : `${text}.0`;
  }
  const { digits, exp } = shortestDigits(x);
  if (exp < -4 || exp >= 16) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intLen = exp + 1;
  const intPart = digits.length >= intLen ? digits.slice(0, intLen) : digits + '0'.repeat(intLen - digits.length);
  const fracPart = digits.length > intLen ? digits.slice(intLen) : '0';
  return `${sign}${intPart}.${fracPart}`;
}

/** The exact value of a finite double as `mantissa × 2^exponent` (integers). */
function exactBinary(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased !== 0) mantissa |= 1n << 52n;
  return { mantissa, exponent: (biased === 0 ? 1 : biased) - 1075 };
}

/**
 * Python's `round(x, ndigits)` for a float: the exact binary value rounded to `ndigits` decimals,
 * ties to even, read back as the nearest double (`round(2.675, 2) == 2.67`, `round(0.125, 2) ==
 * 0.12`). Non-finite values and zero are returned unchanged (the sign of zero is kept).
 *
 * @param ndigits decimals to keep, 0…300.
 */
export function pyRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  if (!Number.isInteger(ndigits) || ndigits < 0 || ndigits > 300) throw new RangeError(`pyRound: ndigits ${ndigits}`);
  // Fast path (~0.05 µs; the exact one below ~2.7 µs). y = |x|·10^ndigits is the exact product
  // Y correctly rounded (10^ndigits ≤ 10^22 is exact). Below 2^52 every midpoint m = n + 0.5 is a
  // double, and rounding is monotonic: Y < m gives y ≤ m, Y > m gives y ≥ m. So when y is not a
  // midpoint, Y lies on y's side of every midpoint and rounds to the integer q nearest y (no tie).
  // q / 10^ndigits is one correctly rounded division of exact values: the double nearest
  // q·10^-ndigits, which is what parseFloat of its decimal text gives below.
  if (ndigits <= 22) {
    const y = Math.abs(x) * 10 ** ndigits;
    if (y < 2 ** 52) {
      const floor = Math.floor(y);
      const frac = y - floor; // exact: y and floor(y) share their exponent or floor is 0
      if (frac !== 0.5) {
        const value = (frac < 0.5 ? floor : floor + 1) / 10 ** ndigits;
        return x < 0 ? -value : value;
      }
    }
  }
  return pyRoundExact(x, ndigits);
}

/**
 * {@link pyRound} from the exact binary value, with BigInt: every finite non-zero `x` and
 * `ndigits` 0…300 (checked by the caller). Exported for the test that holds the fast path to it.
 * @internal
 */
export function pyRoundExact(x: number, ndigits: number): number {
  const { mantissa, exponent } = exactBinary(x);
  if (exponent >= 0) return x; // an integer already
  // |x| = mantissa / 2^k = mantissa·5^k / 10^k, so |x|·10^ndigits = mantissa·5^k / 10^(k-ndigits).
  const k = -exponent;
  const scaled = mantissa * 5n ** BigInt(k);
  let q: bigint;
  if (k <= ndigits) {
    q = scaled * 10n ** BigInt(ndigits - k);
  } else {
    const divisor = 10n ** BigInt(k - ndigits);
    q = scaled / divisor;
    const twice = (scaled % divisor) * 2n;
    if (twice > divisor || (twice === divisor && q % 2n === 1n)) q += 1n;
  }
  const text = q.toString().padStart(ndigits + 1, '0');
  const decimal = ndigits === 0 ? text : `${text.slice(0, -ndigits)}.${text.slice(-ndigits)}`;
  const value = Number.parseFloat(decimal);
  return x < 0 ? -value : value;
}

/** Options of {@link pyJsonDumps}, as Python's `json.dumps`. */
export interface PyJsonDumpsOptions {
  /** Pretty-print with this many spaces per level (`indent=`); compact one-line output when absent. */
  indent?: number;
  /** `[item separator, key separator]`; default `[', ', ': ']`, or `[',', ': ']` with `indent`. */
  separators?: readonly [string, string];
  /** Sort object keys (`sort_keys=True`, by UTF-16 code unit; tau2 keys are ASCII). */
  sortKeys?: boolean;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/**
 * True when `json.dumps` writes `s` unchanged between quotes: printable ASCII other than `"` and
 * backslash (most tau2 strings). A loop over the code units: on the short strings of tool
 * results it is several times faster than a regular expression test.
 */
function isPlain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/**
 * A string as Python's `json.dumps` writes it with `ensure_ascii=True` (quoted; `"`, `\\` and
 * control characters escaped, every non-ASCII UTF-16 code unit as `\uXXXX`): `pyJsonDumps(s)`.
 */
export function pyJsonString(s: string): string {
  if (isPlain(s)) return `"${s}"`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Python's ensure_ascii escapes exactly these control characters
  return `"${s.replace(/["\\\u0000-\u001f\u007f-\uffff]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/**
 * `json.dumps` of a text column's value as a record holds it: a string through
 * {@link pyJsonString}, anything else (SQL NULL: `null`) through {@link pyJsonDumps}, which
 * throws its TypeError for a value that is not JSON. For replies written straight from rows.
 */
export function pyJsonText(v: unknown): string {
  return typeof v === 'string' ? pyJsonString(v) : pyJsonDumps(v as PyJson);
}

/** Quoted keys seen so far: records repeat the same few field names on every call. */
const quotedKeys = new Map<string, string>();

/** {@link pyJsonString} of an object key, cached (the first 4,096 distinct keys). */
function pyJsonKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = pyJsonString(k);
    if (quotedKeys.size < 4096) quotedKeys.set(k, q);
  }
  return q;
}

/** Quoted keys followed by `: `, the default key separator. */
const quotedKeysColon = new Map<string, string>();

/** `pyJsonKey(k) + ': '`, cached likewise. */
function pyJsonKeyColon(k: string): string {
  let q = quotedKeysColon.get(k);
  if (q === undefined) {
    q = `${pyJsonKey(k)}: `;
    if (quotedKeysColon.size < 4096) quotedKeysColon.set(k, q);
  }
  return q;
}

/**
 * A float as `json.dumps` writes it (`100.0`, `1e-05`; `NaN`, `Infinity`, `-Infinity` for
 * non-finite values): `pyJsonDumps(new PyFloat(x))`.
 */
export function pyJsonFloat(x: number): string {
  const abs = Math.abs(x);
  // The common case first: fixed notation, as in pyFloatRepr.
  if (abs >= 1e-4 && abs < 1e16) return Number.isInteger(x) ? `${x}.0` : String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return pyFloatRepr(x);
}

/**
 * Serialize like Python's `json.dumps(value, indent=…, separators=…, sort_keys=…)` with the
 * defaults `ensure_ascii=True`, `allow_nan=True`. Plain numbers must be integers (Python ints);
 * floats are {@link PyFloat}s.
 *
 * @throws TypeError for a non-integer plain number, `undefined` or another non-JSON value.
 */
export function pyJsonDumps(value: PyJson, options: PyJsonDumpsOptions = {}): string {
  const indent = options.indent;
  const [itemSep, keySep] = options.separators ?? (indent === undefined ? [', ', ': '] : [',', ': ']);
  return dumpValue(value, 0, { indent, itemSep, keySep, sortKeys: options.sortKeys === true });
}

/** The settings of one {@link pyJsonDumps}. */
interface DumpStyle {
  indent: number | undefined;
  itemSep: string;
  keySep: string;
  sortKeys: boolean;
}

/**
 * One value of {@link pyJsonDumps} at nesting `level`, built by string concatenation (a tool
 * result is serialized on every call; a module function, not a closure made per call). Strings,
 * the most common values, are written without a call of their own; containers test the cheap
 * cases first (a float, a list) and a record's keys are read once.
 */
function dumpValue(v: PyJson, level: number, style: DumpStyle): string {
  if (typeof v === 'string') return isPlain(v) ? `"${v}"` : pyJsonString(v);
  if (typeof v === 'object') {
    if (v === null) return 'null';
    if (v instanceof PyFloat) return pyJsonFloat(v.value);
    return Array.isArray(v) ? dumpList(v, level, style) : dumpDict(v, level, style);
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new TypeError(`pyJsonDumps: ${v} is not an int; wrap floats in PyFloat`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  throw new TypeError(`pyJsonDumps: unsupported value ${String(v)}`);
}

/** The line break and indentation before an item at `level` (none without `indent`). */
function padding(style: DumpStyle, level: number): string {
  return style.indent === undefined ? '' : `\n${' '.repeat(style.indent * level)}`;
}

function dumpList(v: readonly PyJson[], level: number, style: DumpStyle): string {
  if (v.length === 0) return '[]';
  const pad = padding(style, level + 1);
  const sep = style.itemSep + pad;
  let out = `[${pad}`;
  for (let i = 0; i < v.length; i++) {
    const item = v[i]!;
    if (i > 0) out += sep;
    out += typeof item === 'string' && isPlain(item) ? `"${item}"` : dumpValue(item, level + 1, style);
  }
  return `${out}${padding(style, level)}]`;
}

/**
 * A dict (`Map`, insertion order) or a record (plain object: its own keys, in `Object.keys`
 * order; read with `for…in`, which lists the same keys for a plain object without making an
 * array). Sorted by UTF-16 code unit with `sortKeys`.
 */
function dumpDict(v: PyDict | PyJsonObject, level: number, style: DumpStyle): string {
  const pad = padding(style, level + 1);
  const sep = style.itemSep + pad;
  let out = '';
  if (style.sortKeys) {
    const map = v instanceof Map ? v : undefined;
    const keys = map ? [...map.keys()] : Object.keys(v);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const k of keys)
      out += (out === '' ? `{${pad}` : sep) + dumpEntry(k, map ? map.get(k) : (v as PyJsonObject)[k], level, style);
  } else if (v instanceof Map) {
    for (const [k, item] of v) out += (out === '' ? `{${pad}` : sep) + dumpEntry(k, item, level, style);
  } else {
    for (const k in v) out += (out === '' ? `{${pad}` : sep) + dumpEntry(k, v[k], level, style);
  }
  return out === '' ? '{}' : `${out}${padding(style, level)}}`;
}

/** One `"key": value` of a dict at `level`. */
function dumpEntry(k: string, item: PyJson | undefined, level: number, style: DumpStyle): string {
  if (item === undefined) throw new TypeError(`pyJsonDumps: key "${k}" is undefined`);
  const key = style.keySep === ': ' ? pyJsonKeyColon(k) : pyJsonKey(k) + style.keySep;
  return key + (typeof item === 'string' && isPlain(item) ? `"${item}"` : dumpValue(item, level + 1, style));
}

/** Invalid JSON text given to {@link parsePyJson}; `offset` is the character index of the problem. */
export class PyJsonSyntaxError extends SyntaxError {
  override name = 'PyJsonSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

/**
 * Parse JSON text as Python's `json.loads` does: every object becomes a {@link PyDict} (a `Map`,
 * key order as written; a repeated key keeps its first position and last value), a number
 * written with a fraction or an exponent (`100.0`, `1e3`) becomes a {@link PyFloat}, any other a
 * plain (int) `number`. Also accepts `NaN`, `Infinity`, `-Infinity`.
 *
 * @throws PyJsonSyntaxError on invalid text or an int outside JavaScript's safe range.
 */
export function parsePyJson(text: string): PyJson {
  const parser = new PyJsonParser(text);
  const result = parser.value();
  parser.ws();
  if (parser.i !== text.length) parser.fail('unexpected text after the value');
  return result;
}

/** Whether a character code is an ASCII digit (false for NaN, past the end of the text). */
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The index after the run of digits that starts at `i` (`i` itself when there is none). */
function digitsEnd(text: string, i: number): number {
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

/**
 * The words {@link parsePyJson} reads besides numbers, strings and containers, by their first
 * character (`-` may also start a number).
 */
const WORDS: ReadonlyMap<number, readonly [string, () => PyJson]> = new Map([
  [0x74, ['true', () => true]],
  [0x66, ['false', () => false]],
  [0x6e, ['null', () => null]],
  [0x4e, ['NaN', () => new PyFloat(NaN)]],
  [0x49, ['Infinity', () => new PyFloat(Infinity)]],
  [0x2d, ['-Infinity', () => new PyFloat(-Infinity)]],
]);

/**
 * The state of one {@link parsePyJson}: the text and the index of the next character. Reads
 * character codes, not one-character strings, and finds a string's end with `indexOf` (a string
 * without a backslash before its closing quote is sliced whole).
 */
class PyJsonParser {
  i = 0;
  /** Index of the first backslash at or after the last search; -1: none left in the text. */
  private backslash = -2;
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

  /** The code of the character at the index after whitespace (NaN at the end). */
  private next(): number {
    this.ws();
    return this.text.charCodeAt(this.i);
  }

  value(): PyJson {
    const text = this.text;
    const c = this.next();
    if (c === 0x7b) {
      this.i++;
      const obj: PyDict = new Map();
      if (this.next() === 0x7d) {
        this.i++;
        return obj;
      }
      for (;;) {
        if (this.next() !== 0x22) this.fail('expected a string key');
        const key = this.str();
        if (this.next() !== 0x3a) this.fail("expected ':'");
        this.i++;
        obj.set(key, this.value());
        const d = this.next();
        if (d === 0x2c) this.i++;
        else if (d === 0x7d) {
          this.i++;
          return obj;
        } else this.fail("expected ',' or '}'");
      }
    }
    if (c === 0x5b) {
      this.i++;
      const arr: PyJson[] = [];
      if (this.next() === 0x5d) {
        this.i++;
        return arr;
      }
      for (;;) {
        arr.push(this.value());
        const d = this.next();
        if (d === 0x2c) this.i++;
        else if (d === 0x5d) {
          this.i++;
          return arr;
        } else this.fail("expected ',' or ']'");
      }
    }
    if (c === 0x22) return this.str();
    const word = WORDS.get(c);
    if (word && text.startsWith(word[0], this.i)) {
      this.i += word[0].length;
      return word[1]();
    }
    return this.number();
  }

  /**
   * The number at the index: the longest prefix of the form `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
   * (what JSON allows; a `.` or an exponent without digits after it is left unread). A float when
   * it has a fraction or an exponent.
   */
  private number(): PyJson {
    const text = this.text;
    const start = this.i;
    let j = start;
    if (text.charCodeAt(j) === 0x2d) j++;
    const first = text.charCodeAt(j);
    if (first === 0x30) j++;
    else if (first >= 0x31 && first <= 0x39) j = digitsEnd(text, j + 1);
    else return this.fail('unexpected character');
    let float = false;
    if (text.charCodeAt(j) === 0x2e && isDigit(text.charCodeAt(j + 1))) {
      j = digitsEnd(text, j + 2);
      float = true;
    }
    const e = text.charCodeAt(j);
    if (e === 0x65 || e === 0x45) {
      let k = j + 1;
      const sign = text.charCodeAt(k);
      if (sign === 0x2b || sign === 0x2d) k++;
      if (isDigit(text.charCodeAt(k))) {
        j = digitsEnd(text, k + 1);
        float = true;
      }
    }
    const token = text.slice(start, j);
    this.i = j;
    if (float) return new PyFloat(Number(token));
    const n = Number(token);
    if (!Number.isSafeInteger(n)) this.fail(`int ${token} is outside the safe range`);
    return n;
  }

  /** The string whose opening quote is at the index; the index moves past its closing quote. */
  str(): string {
    const text = this.text;
    const start = ++this.i;
    const end = text.indexOf('"', start);
    if (this.backslash !== -1 && this.backslash < start) this.backslash = text.indexOf('\\', start);
    if (this.backslash === -1 || (end !== -1 && this.backslash > end)) {
      if (end === -1) {
        this.i = text.length;
        return this.fail('unterminated string');
      }
      this.i = end + 1;
      return text.slice(start, end);
    }
    // A backslash before the closing quote: skip each escaped character to find the end.
    while (this.i < text.length && text.charCodeAt(this.i) !== 0x22) this.i += text.charCodeAt(this.i) === 0x5c ? 2 : 1;
    if (this.i >= text.length) this.fail('unterminated string');
    const raw = text.slice(start, this.i++);
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return this.fail('invalid string escape');
    }
  }
}
