/**
 * How the environment worker's requests and replies are encoded for its mailbox (`mailbox.ts`,
 * issue 15, item 2). Exact for every value a structured clone carries: plain data goes as JSON
 * text (the cheapest encoding V8 has: a tau2 call request is ~2.4 µs to encode and decode as JSON
 * against ~6.8 µs through `v8.serialize` + `deserialize`, measured on the 2-core VM), anything
 * else (`undefined`, -0, NaN, ±Infinity, a BLOB's Uint8Array, a cycle, a lone surrogate in a tool
 * result) as `v8.serialize` bytes, as `postMessage` would clone it.
 *
 * A tool call, the one request sent per step of an episode, has its own text forms both ways:
 * - the request ({@link encodeRequest}): its scalars on a header line, then the call's JSON;
 * - the outcome ({@link encodeOutcome}): its scalars on a header line, the content (the tool
 *   result, usually JSON itself, 0.3–6 KB on tau2) raw, not escaped inside another JSON string,
 *   then the violations and packed writes ({@link packWrites}) as JSON, or nothing when there are
 *   none (every read call).
 */
import { deserialize, serialize } from 'node:v8';
import type { ToolOutcome } from '../../core/env/environment.ts';
import type { Requestor } from '../../core/schema/task.ts';
import type { ToolCall } from '../../core/schema/trajectory.ts';
import { type EnvRequest, type PackedOutcome, packWrites, unpackOutcome, unpackWrites } from '../shared/env-service.ts';
import type { MailboxMessage, MailboxPayload } from './mailbox.ts';

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

/** A tool call request ({@link EnvRequest} `call`). */
type CallRequest = Extract<EnvRequest, { op: 'call' }>;

/** The actors a call request's header line can name. */
const ACTORS: readonly Requestor[] = ['assistant', 'user'];

/**
 * A request for the mailbox. A `call` whose call is {@link jsonExact}, with an integer handle and
 * turn, an actor of {@link ACTORS} and `sync` absent or false, goes as
 * `<env> <turn> <actor index> <0: sync false, 1: absent>\n<JSON of the call>` (the text starts with
 * a digit); every other request as {@link encodeValue} (a JSON object's text starts with `{`).
 */
export function encodeRequest(request: EnvRequest): MailboxMessage {
  if (request.op === 'call') {
    const { env, call, actor, turn, sync } = request;
    const a = ACTORS.indexOf(actor);
    if (
      a >= 0 &&
      Number.isSafeInteger(env) &&
      env >= 0 &&
      Number.isSafeInteger(turn) &&
      (sync === undefined ? !('sync' in request) : sync === false) &&
      Object.keys(request).length === (sync === false ? 6 : 5) &&
      jsonExact(call)
    )
      return [`${env} ${turn} ${a} ${sync === false ? 0 : 1}\n`, JSON.stringify(call)];
  }
  return encodeValue(request);
}

/** The request {@link encodeRequest} encoded, its fields in {@link RemoteEnvironment.call}'s order. */
export function decodeRequest(payload: MailboxPayload): EnvRequest {
  if (typeof payload !== 'string' || payload.charCodeAt(0) === 0x7b /* { */) return decodeValue(payload) as EnvRequest;
  const s1 = payload.indexOf(' ');
  const s2 = payload.indexOf(' ', s1 + 1);
  const s3 = payload.indexOf(' ', s2 + 1);
  const line = payload.indexOf('\n', s3 + 1);
  const request: CallRequest = {
    op: 'call',
    env: Number(payload.slice(0, s1)),
    call: JSON.parse(payload.slice(line + 1)) as ToolCall,
    actor: ACTORS[Number(payload.slice(s2 + 1, s3))]!,
    turn: Number(payload.slice(s1 + 1, s2)),
  };
  if (payload.charCodeAt(s3 + 1) === 0x30 /* 0 */) request.sync = false;
  return request;
}

/** `String.prototype.isWellFormed` (ES2024, in Node since 20; the project's TypeScript lib is ES2023). */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The tool kinds an outcome's header line can name (by index); `null` is `-`. */
const KINDS: readonly string[] = ['read', 'write', 'think', 'generic'];

/** Whether every element of a packed writes array is a JSON-exact scalar (a string, null or a finite number but -0). */
function exactScalars(values: readonly unknown[]): boolean {
  for (const v of values) {
    if (typeof v === 'string' || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || Object.is(v, -0)) return false;
  }
  return true;
}

/**
 * A call's outcome for the mailbox:
 * `<content length> <0|1: error> <kind index, or - for null>\n<content><JSON of [violations, packed writes]>`,
 * the JSON left out when both are empty, when the content is well-formed (UTF-8 cannot carry a
 * lone surrogate), the kind is one of {@link KINDS} or null, the violations are
 * {@link jsonExact}, and the written values are JSON-exact scalars; else `v8.serialize` bytes
 * of the outcome with its writes packed.
 */
export function encodeOutcome(outcome: ToolOutcome): MailboxMessage {
  const { content, error, kind, violations } = outcome;
  const writes = packWrites(outcome.writes);
  const k = kind === null ? -1 : KINDS.indexOf(kind);
  if (
    typeof content !== 'string' ||
    typeof error !== 'boolean' ||
    (k < 0 && kind !== null) ||
    Object.keys(outcome).length !== 5 ||
    !wellFormed(content) ||
    !exactScalars(writes) ||
    !jsonExact(violations)
  )
    return serialize({ ...outcome, writes } satisfies PackedOutcome);
  const head = `${content.length} ${error ? 1 : 0} ${k < 0 ? '-' : k}\n`;
  return violations.length === 0 && writes.length === 0
    ? [head, content]
    : [head, content, JSON.stringify([violations, writes])];
}

/** The outcome {@link encodeOutcome} encoded, its fields in {@link Environment.call}'s order. */
export function decodeOutcome(payload: MailboxPayload): ToolOutcome {
  if (typeof payload !== 'string') return unpackOutcome(deserialize(payload) as PackedOutcome);
  // The header line: `<length> <error> <kind>\n`, error and kind one character each.
  const s1 = payload.indexOf(' ');
  const start = s1 + 5;
  const end = start + Number(payload.slice(0, s1));
  const k = payload.charCodeAt(s1 + 3);
  const kind = (k === 0x2d /* - */ ? null : KINDS[k - 0x30]) as ToolOutcome['kind'];
  const error = payload.charCodeAt(s1 + 1) === 0x31; /* 1 */
  const content = payload.slice(start, end);
  if (end === payload.length) return { content, error, writes: [], violations: [], kind };
  const [violations, writes] = JSON.parse(payload.slice(end)) as [ToolOutcome['violations'], PackedOutcome['writes']];
  return { content, error, writes: unpackWrites(writes), violations, kind };
}
