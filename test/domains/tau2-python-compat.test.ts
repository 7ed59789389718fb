/**
 * Python behaviour the tau2 domains rely on: float printing, round(), json.dumps/loads and the
 * calculate tool's arithmetic. Expected values are what CPython 3 prints.
 */
import { describe, expect, it } from 'vitest';
import { PyFloat, parsePyJson, pyFloatRepr, pyJsonDumps, pyRound, pyRoundExact } from '../../src/core/tau2/py-json.ts';
import { PyCalcError, evalPyArithmetic, pyCalculate } from '../../src/core/tau2/py-calc.ts';

describe('pyFloatRepr (Python repr of a float)', () => {
  it.each([
    [3, '3.0'],
    [100, '100.0'],
    [-0, '-0.0'],
    [0, '0.0'],
    [2.67, '2.67'],
    [0.1 + 0.2, '0.30000000000000004'],
    [28.199999999999989, '28.19999999999999'],
    [1e16, '1e+16'],
    [1234567890123456, '1234567890123456.0'],
    [1.5e16, '1.5e+16'],
    [0.0001, '0.0001'],
    [9.999999999999999e-5, '9.999999999999999e-05'],
    [9999999999999998, '9999999999999998.0'],
    [0.00001, '1e-05'],
    [1.2345e-7, '1.2345e-07'],
    [1e21, '1e+21'],
    [1e100, '1e+100'],
    [-2.5, '-2.5'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('%s → %s', (x, text) => {
    expect(pyFloatRepr(x)).toBe(text);
  });
});

describe('pyRound (Python round(x, n) on binary floats)', () => {
  it.each([
    [2.675, 2, 2.67], // 2.675 is 2.67499999… in binary
    [0.125, 2, 0.12], // an exact tie goes to even
    [0.375, 2, 0.38],
    [2.5, 0, 2],
    [3.5, 0, 4],
    [1.005, 2, 1], // 1.00499999…
    [-2.675, 2, -2.67],
    [-0.125, 2, -0.12],
    [21.099999999999994, 2, 21.1],
    [1e300, 2, 1e300],
  ])('round(%s, %s) = %s', (x, n, r) => {
    expect(pyRound(x, n)).toBe(r);
  });

  it('keeps the sign of a result that rounds to zero', () => {
    expect(Object.is(pyRound(-0.001, 2), -0)).toBe(true);
    expect(pyFloatRepr(pyRound(-0.001, 2))).toBe('-0.0');
  });

  it('gives what the exact BigInt rounding gives, fast path or not', () => {
    // Money as the retail tools compute it (sums and differences of cent amounts, which land near
    // midpoints), midpoints k + 0.5 at every scale, and values spread over many magnitudes.
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const xs: number[] = [];
    for (let i = 0; i < 20000; i++) {
      const a = Math.floor(rand() * 500000) / 100;
      const b = Math.floor(rand() * 500000) / 100;
      xs.push(a + b, a - b, a * 1.1, (a + b) / 3);
    }
    for (let k = 0; k < 4000; k++)
      xs.push((2 * k + 1) / 2000, (2 * k + 1) / 200, (2 * k + 1) / 2, k + 0.005, k + 0.015);
    for (let e = -12; e <= 20; e++) for (let i = 0; i < 200; i++) xs.push((rand() - 0.5) * 10 ** e);
    let fast = 0;
    for (const x of xs)
      for (const n of [0, 1, 2, 3, 6]) {
        const got = pyRound(x, n);
        const want = x === 0 ? x : pyRoundExact(x, n);
        if (!Object.is(got, want)) expect({ x, n, got }).toEqual({ x, n, got: want });
        if (Math.abs(x * 10 ** n - Math.floor(x * 10 ** n) - 0.5) > 1e-6) fast++;
      }
    expect(xs.length).toBe(106600);
    expect(fast).toBeGreaterThan(400000);
  });
});

describe('pyCalculate (tau2 calculate: str(round(float(eval(e)), 2)))', () => {
  it.each([
    ['2 + 2', '4.0'],
    ['6 / 2', '3.0'],
    ['2.675 * 1', '2.67'],
    ['0.125', '0.12'],
    ['1 / 3', '0.33'],
    ['(1 + 2) * 3', '9.0'],
    ['10 // 3', '3.0'],
    ['-7 // 2', '-4.0'],
    ['-7.5 // 2', '-4.0'],
    ['2 ** 10', '1024.0'],
    ['-2 ** 2', '-4.0'],
    ['2 ** -1', '0.5'],
    ['2 ** 3 ** 2', '512.0'],
    ['--3', '3.0'],
    ['1.', '1.0'],
    ['.5 + .25', '0.75'],
    ['0.1 + 0.2', '0.3'],
    ['100000000000000000000 * 10', '1e+21'],
    ['10 ** 400 / 10 ** 399', '10.0'],
    ['0.00001', '0.0'],
    ['00 + 1', '1.0'],
    ['  3 * (4 - 1)  ', '9.0'],
    ['150 * 0.9 + 20', '155.0'],
    ['(1249.99 - 1054.43) + (269.77 - 247.01)', '218.32'],
  ])('%s → %s', (expr, text) => {
    expect(pyCalculate(expr)).toBe(text);
  });

  it.each([
    ['1e3', /Invalid characters/],
    ['2 ^ 3', /Invalid characters/],
    ['abs(2)', /Invalid characters/],
    ['1 / 0', /division by zero/],
    ['1.0 / 0', /division by zero/],
    ['1 // 0', /by zero/],
    ['0.0 ** -1', /negative power/],
    ['(-8) ** 0.5', /complex/],
    ['', /invalid syntax/],
    ['1 +', /invalid syntax/],
    ['(1 + 2', /invalid syntax/],
    ['1 2', /invalid syntax/],
    ['1.2.3', /invalid syntax/],
    ['2 * * 3', /invalid syntax/],
    ['()', /tuple/],
    ['2 (3)', /callable/],
    ['07', /leading zeros/],
    ['10 ** 400', /too large/],
  ])('%s fails (%s)', (expr, message) => {
    expect(() => pyCalculate(expr)).toThrow(PyCalcError);
    expect(() => pyCalculate(expr)).toThrow(message);
  });

  it('keeps Python ints exact before converting to float', () => {
    expect(evalPyArithmetic('9007199254740993 - 9007199254740992')).toBe(1n);
    expect(evalPyArithmetic('7 // 2')).toBe(3n);
    expect(evalPyArithmetic('7 / 2')).toBe(3.5);
  });
});

describe('pyJsonDumps (json.dumps) and parsePyJson (json.loads)', () => {
  it('writes ints, floats, escapes and separators as Python does', () => {
    const doc = { a: 1, b: new PyFloat(100), c: [new PyFloat(0.1), null, true], d: 'é"\n\u007f', e: {} };
    expect(pyJsonDumps(doc)).toBe('{"a": 1, "b": 100.0, "c": [0.1, null, true], "d": "\\u00e9\\"\\n\\u007f", "e": {}}');
    expect(pyJsonDumps(doc, { separators: [',', ':'] })).toBe(
      '{"a":1,"b":100.0,"c":[0.1,null,true],"d":"\\u00e9\\"\\n\\u007f","e":{}}',
    );
    expect(pyJsonDumps({ x: [1, { y: [] }] }, { indent: 4 })).toBe(
      '{\n    "x": [\n        1,\n        {\n            "y": []\n        }\n    ]\n}',
    );
  });

  it('escapes exactly what Python escapes, at the edges of printable ASCII, in keys met again too', () => {
    // Expected text printed by Python 3.11's json.dumps for the same document.
    const doc = { ' ~!#[]': ' ~', 'k"é': ['\u001f', ' ', '~', '\u007f', '\\', '😀'], 'k"é2': { 'k"é': 1 } };
    const python =
      '{" ~!#[]": " ~", "k\\"\\u00e9": ["\\u001f", " ", "~", "\\u007f", "\\\\", "\\ud83d\\ude00"], "k\\"\\u00e92": {"k\\"\\u00e9": 1}}';
    expect(pyJsonDumps(doc)).toBe(python);
    expect(pyJsonDumps(doc)).toBe(python);
  });

  it('keeps dict order, integer-like keys included, and sorts keys on request', () => {
    const dict = new Map([
      ['9612497925', 1],
      ['1008292230', 2],
      ['b', 3],
      ['a', 4],
    ]);
    expect(pyJsonDumps(dict)).toBe('{"9612497925": 1, "1008292230": 2, "b": 3, "a": 4}');
    expect(pyJsonDumps(dict, { sortKeys: true })).toBe('{"1008292230": 2, "9612497925": 1, "a": 4, "b": 3}');
    // A plain object cannot keep that order, which is why dicts are Maps.
    expect(Object.keys(JSON.parse('{"9612497925": 1, "1008292230": 2}'))).toEqual(['1008292230', '9612497925']);
  });

  it('parses floats as PyFloat, ints as numbers and objects as ordered Maps', () => {
    const doc = parsePyJson('{"9612497925": {"amount": 100.0, "n": 3, "e": 1e2}, "1008292230": [-0.5, -7]}');
    expect(doc).toBeInstanceOf(Map);
    const m = doc as Map<string, unknown>;
    expect([...m.keys()]).toEqual(['9612497925', '1008292230']);
    expect(m.get('9612497925')).toStrictEqual(
      new Map<string, unknown>([
        ['amount', new PyFloat(100)],
        ['n', 3],
        ['e', new PyFloat(100)],
      ]),
    );
    expect(m.get('1008292230')).toStrictEqual([new PyFloat(-0.5), -7]);
    expect(pyJsonDumps(doc as never)).toBe(
      '{"9612497925": {"amount": 100.0, "n": 3, "e": 100.0}, "1008292230": [-0.5, -7]}',
    );
  });

  it('rejects invalid text with the offset', () => {
    expect(() => parsePyJson('{"a": 1,}')).toThrow(/offset 8/);
    expect(() => parsePyJson('[1] x')).toThrow(/after the value/);
    expect(() => parsePyJson('{"a": "b}')).toThrow(/unterminated/);
  });

  it('refuses a non-integer plain number (floats must be marked)', () => {
    expect(() => pyJsonDumps({ a: 0.5 })).toThrow(/not an int/);
  });
});
