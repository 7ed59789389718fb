/**
 * How a replayed tool output is compared with a recorded one. Tool outputs are text; most are
 * JSON documents whose key order and spacing carry no meaning (tau2-bench prints with Python's
 * `json.dumps`, a re-implementation may not), so two outputs that both parse as JSON are compared
 * as values, and anything else as text.
 */

/** The JSON value of `text`, or `undefined` when it is not valid JSON (`null` text: the value `null`). */
export function parseOutput(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Deep equality of two JSON values: objects by key set and values (key order ignored), arrays by
 * length and position, scalars by `===` (so `100.0` and `100`, which parse to the same number,
 * are equal, as in Python where `100.0 == 100`).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  return keys.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** One side of a comparison: the output text (`null` when none was recorded) and whether the call failed. */
export interface CallOutput {
  content: string | null;
  error: boolean;
}

/**
 * Whether a replayed call gave the recorded result.
 * - Both failed: equal, whatever the wording (tau2-bench leaves error messages free; what must
 *   agree is the condition that fails).
 * - One failed: different.
 * - Both succeeded: when both texts parse as JSON, {@link jsonEqual} of the values; otherwise the
 *   texts must be identical. A missing recorded text (`null`) counts as the JSON value `null`.
 */
export function outputsEqual(recorded: CallOutput, ours: CallOutput): boolean {
  if (recorded.error || ours.error) return recorded.error && ours.error;
  const a = parseOutput(recorded.content);
  const b = parseOutput(ours.content);
  if (a === undefined || b === undefined) return recorded.content === ours.content;
  return jsonEqual(a, b);
}

function show(value: unknown, max: number): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Where two JSON values differ, as readable lines (`payment_history[1].amount: recorded -169,
 * ours 169`; `insurance: missing in ours`): at most `max` lines, then one saying how many more.
 * Empty when the values are equal.
 */
export function jsonDifferences(recorded: unknown, ours: unknown, max = 5): string[] {
  const out: string[] = [];
  let total = 0;
  const visit = (a: unknown, b: unknown, path: string): void => {
    if (jsonEqual(a, b)) return;
    const bothObjects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object';
    if (bothObjects && Array.isArray(a) === Array.isArray(b)) {
      if (Array.isArray(a)) {
        const bb = b as unknown[];
        if (a.length !== bb.length) {
          total += 1;
          if (out.length < max) out.push(`${path || '(top)'}: recorded ${a.length} items, ours ${bb.length}`);
          return;
        }
        a.forEach((x, i) => visit(x, bb[i], `${path}[${i}]`));
        return;
      }
      const ao = a as Record<string, unknown>;
      const bo = b as Record<string, unknown>;
      for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
        const p = path ? `${path}.${k}` : k;
        if (!Object.hasOwn(bo, k)) {
          total += 1;
          if (out.length < max) out.push(`${p}: missing in ours`);
        } else if (!Object.hasOwn(ao, k)) {
          total += 1;
          if (out.length < max) out.push(`${p}: not in the recording`);
        } else visit(ao[k], bo[k], p);
      }
      return;
    }
    total += 1;
    if (out.length < max) out.push(`${path || '(top)'}: recorded ${show(a, 80)}, ours ${show(b, 80)}`);
  };
  visit(recorded, ours, '');
  if (total > out.length) out.push(`… ${total - out.length} more`);
  return out;
}
