/**
 * tau2-bench's `calculate` tool semantics: a Python arithmetic expression over the characters
 * `0-9 + - * / ( ) .` and space, evaluated with Python's number model (ints of any size, floats,
 * `/` true division, `//` floor division, `**` power, unary signs), then `round(float(v), 2)`
 * printed as Python prints a float (`3.0`, `2.67`).
 */
import { pyFloatRepr, pyRound } from './py-json.ts';
import { SwitchboardError } from '../errors.ts';

/**
 * Why an expression was refused; the message is shown to the agent after `Error: `. Caller: the
 * calculate tool turns it into a `ToolError` (a tool message); nothing else should see it.
 */
export class PyCalcError extends SwitchboardError {
  override name = 'PyCalcError';
}

/** A Python number: `int` as bigint, `float` as number. */
type Num = bigint | number;

const ALLOWED = /^[0-9+\-*/(). ]*$/;
/** Largest int exponent evaluated exactly; beyond it the result would not fit a float anyway. */
const MAX_INT_POW_BITS = 1_100;

type Token = { kind: 'num'; value: Num; at: number } | { kind: 'op'; value: string; at: number };

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  const re = / +|(\d+\.\d*|\.\d+)|(\d+)|(\*\*|\/\/|[-+*/()])|(\.)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < expr.length && (m = re.exec(expr))) {
    const at = m.index;
    if (m[1] !== undefined) tokens.push({ kind: 'num', value: Number(m[1]), at });
    else if (m[2] !== undefined) {
      if (/^0+[1-9]/.test(m[2])) throw new PyCalcError('leading zeros in decimal integer literals are not permitted');
      tokens.push({ kind: 'num', value: BigInt(m[2]), at });
    } else if (m[3] !== undefined) tokens.push({ kind: 'op', value: m[3], at });
    else if (m[4] !== undefined) throw new PyCalcError('invalid syntax');
  }
  return tokens;
}

/** int → float as Python's `float(int)`: correctly rounded, OverflowError when too large. */
function toFloat(v: Num): number {
  if (typeof v === 'number') return v;
  const f = Number(v);
  if (!Number.isFinite(f)) throw new PyCalcError('int too large to convert to float');
  return f;
}

/** Python's int true division: the exact quotient rounded once to the nearest double. */
function trueDivBig(a: bigint, b: bigint): number {
  const LIMIT = 1n << 53n;
  const abs = (v: bigint) => (v < 0n ? -v : v);
  const na = abs(a);
  const nb = abs(b);
  if (na < LIMIT && nb < LIMIT) return Number(a) / Number(b);
  // Scale so the quotient has at least 55 significant bits, keep a sticky bit for the remainder,
  // and let Number() round once; the power-of-two rescale is exact.
  const shift = Math.max(0, nb.toString(2).length - na.toString(2).length + 55);
  let q = (na << BigInt(shift)) / nb;
  if ((na << BigInt(shift)) % nb !== 0n) q |= 1n;
  const value = Number(q) * 2 ** -shift;
  if (!Number.isFinite(value)) throw new PyCalcError('integer division result too large for a float');
  return a < 0n !== b < 0n ? -value : value;
}

function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Python's float floor division (`float_floor_div`). */
function floorDivFloat(vx: number, wx: number): number {
  if (wx === 0) throw new PyCalcError('float floor division by zero');
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  }
  if (div) {
    let floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
    return floordiv;
  }
  return Math.sign(vx / wx) < 0 || Object.is(vx / wx, -0) ? -0 : 0;
}

function floatPow(x: number, y: number): number {
  if (x === 0 && y < 0) throw new PyCalcError('0.0 cannot be raised to a negative power');
  if (x < 0 && Number.isFinite(y) && !Number.isInteger(y)) {
    // Python returns a complex number here, which float() then refuses.
    throw new PyCalcError("float() argument must be a string or a real number, not 'complex'");
  }
  const r = x ** y;
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y))
    throw new PyCalcError('Numerical result out of range');
  return r;
}

function binary(op: string, a: Num, b: Num): Num {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    switch (op) {
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        if (b === 0n) throw new PyCalcError('division by zero');
        return trueDivBig(a, b);
      case '//':
        if (b === 0n) throw new PyCalcError('integer division or modulo by zero');
        return floorDivBig(a, b);
      case '**':
        if (b < 0n) return floatPow(toFloat(a), toFloat(b));
        if (a === 0n || a === 1n || a === -1n) return a ** b;
        if (b * BigInt(a.toString(2).length) > BigInt(MAX_INT_POW_BITS) * 64n) {
          throw new PyCalcError('int too large to convert to float');
        }
        return a ** b;
    }
  }
  const x = toFloat(a);
  const y = toFloat(b);
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      if (y === 0) throw new PyCalcError('float division by zero');
      return x / y;
    case '//':
      return floorDivFloat(x, y);
    case '**':
      return floatPow(x, y);
  }
  throw new PyCalcError(`unknown operator ${op}`);
}

/**
 * Evaluate a Python arithmetic expression (grammar: sums of products of signed powers of numbers
 * and parenthesized expressions; `-2**2 == -4`, `2**-1 == 0.5`).
 *
 * @returns an int (bigint) or a float (number)
 * @throws PyCalcError on a character outside `0-9+-*()./ `, a syntax error, a division by zero
 *   or a result out of range, like Python's `eval`.
 */
export function evalPyArithmetic(expression: string): Num {
  if (!ALLOWED.test(expression)) throw new PyCalcError('Invalid characters in expression');
  const tokens = tokenize(expression);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (t: Token | undefined, ...ops: string[]): boolean => t?.kind === 'op' && ops.includes(t.value);
  const syntax = (): never => {
    throw new PyCalcError('invalid syntax');
  };
  const expr = (): Num => {
    let v = term();
    while (isOp(peek(), '+', '-')) {
      const op = (tokens[pos++] as Token).value as string;
      v = binary(op, v, term());
    }
    return v;
  };
  const term = (): Num => {
    let v = factor();
    while (isOp(peek(), '*', '/', '//')) {
      const op = (tokens[pos++] as Token).value as string;
      v = binary(op, v, factor());
    }
    return v;
  };
  const factor = (): Num => {
    if (isOp(peek(), '+', '-')) {
      const op = (tokens[pos++] as Token).value;
      const v = factor();
      if (op === '+') return v;
      return typeof v === 'bigint' ? -v : -v;
    }
    return power();
  };
  const power = (): Num => {
    const base = atom();
    if (isOp(peek(), '**')) {
      pos++;
      return binary('**', base, factor());
    }
    return base;
  };
  const atom = (): Num => {
    const t = tokens[pos++];
    if (!t) return syntax();
    let v: Num;
    if (t.kind === 'num') v = t.value;
    else if (t.value === '(') {
      if (isOp(peek(), ')')) throw new PyCalcError("float() argument must be a string or a real number, not 'tuple'");
      v = expr();
      if (!isOp(tokens[pos++], ')')) syntax();
    } else return syntax();
    // A call such as `2(3)` parses in Python but fails when run.
    if (isOp(peek(), '(')) throw new PyCalcError('object is not callable');
    return v;
  };
  const result = expr();
  if (pos !== tokens.length) syntax();
  return result;
}

/**
 * tau2-bench's `calculate`: `str(round(float(eval(expression)), 2))`.
 *
 * @example pyCalculate('2.675 * 1') === '2.67'; pyCalculate('6 / 2') === '3.0'
 * @throws PyCalcError as {@link evalPyArithmetic}.
 */
export function pyCalculate(expression: string): string {
  return pyFloatRepr(pyRound(toFloat(evalPyArithmetic(expression)), 2));
}
