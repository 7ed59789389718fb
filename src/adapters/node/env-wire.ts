/**
 * How the environment worker's requests and replies are encoded for its mailbox (`mailbox.ts`,
 * issue 15, item 2). Exact for every value a structured clone carries: plain data goes as JSON
 * text (the cheapest encoding V8 has: a tau2 call request is ~2.4 µs to encode and decode as JSON
 * against ~6.8 µs through `v8.serialize` + `deserialize`, measured on the 2-core VM), anything
 * else (`undefined`, -0, NaN, ±Infinity, a BLOB's Uint8Array, a cycle, a lone surrogate in a tool
 * result) as `v8.serialize` bytes, as `postMessage` would clone it.
 *
 * A tool call's outcome has its own text form ({@link encodeOutcome}): the content (the tool
 * result, usually JSON itself, 0.3–6 KB on tau2) goes raw after a length header, not escaped
 * inside another JSON string, and the rest (error flag, kind, violations, packed writes) as JSON.
 */
import { deserialize, serialize } from 'node:v8';
import type { PackedOutcome } from '../shared/env-service.ts';
import type { MailboxPayload } from './mailbox.ts';

/** Nesting depth past which a value goes as bytes (deeper plain data is rare; a cycle never ends). */
const MAX_DEPTH = 64;

/**
 * Whether `JSON.parse(JSON.stringify(value))` gives back exactly what a structured clone of
 * `value` would: null, booleans, well-formed strings, finite numbers other than -0, dense arrays
 * and plain objects of those, at most {@link MAX_DEPTH} deep. (Extra named properties of an array
 * are not looked for; a structured clone keeps them, JSON drops them.)
 */
export function jsonExact(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
      return true; // JSON.stringify escapes a lone surrogate, so JSON carries it.
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonExact(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k in value) if (!jsonExact((value as Record<string, unknown>)[k], depth + 1)) return false;
      return !('toJSON' in value);
    }
    default:
      return false;
  }
}

/** `value` for the mailbox: JSON text when {@link jsonExact}, else `v8.serialize` bytes. */
export function encodeValue(value: unknown): MailboxPayload {
  return jsonExact(value) ? JSON.stringify(value) : serialize(value);
}

/** The value {@link encodeValue} encoded. */
export function decodeValue(payload: MailboxPayload): unknown {
  return typeof payload === 'string' ? JSON.parse(payload) : deserialize(payload);
}

/** `String.prototype.isWellFormed` (ES2024, in Node since 20; the project's TypeScript lib is ES2023). */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * A call's outcome for the mailbox: `<content length>\n<content><JSON of [error, kind, violations,
 * writes]>` when the content is well-formed (UTF-8 cannot carry a lone surrogate) and the rest is
 * {@link jsonExact}; else `v8.serialize` bytes of the whole outcome.
 */
export function encodeOutcome(outcome: PackedOutcome): MailboxPayload {
  const { content, error, kind, violations, writes } = outcome;
  const rest = [error, kind, violations, writes];
  if (typeof content !== 'string' || !wellFormed(content) || !jsonExact(rest) || Object.keys(outcome).length !== 5)
    return serialize(outcome);
  return `${content.length}\n${content}${JSON.stringify(rest)}`;
}

/** The outcome {@link encodeOutcome} encoded, its fields in {@link Environment.call}'s order. */
export function decodeOutcome(payload: MailboxPayload): PackedOutcome {
  if (typeof payload !== 'string') return deserialize(payload) as PackedOutcome;
  const head = payload.indexOf('\n');
  const end = head + 1 + Number(payload.slice(0, head));
  const [error, kind, violations, writes] = JSON.parse(payload.slice(end)) as [
    PackedOutcome['error'],
    PackedOutcome['kind'],
    PackedOutcome['violations'],
    PackedOutcome['writes'],
  ];
  return { content: payload.slice(head + 1, end), error, writes, violations, kind };
}
