/**
 * Normalizing what participants return. Model adapters can hand back anything (a number for
 * text, a tool-call list that is not a list, arguments that are not an object); the episode
 * loop turns that into a well-formed reply so that bad model output becomes an error tool
 * message and the episode goes on, and the recorded trajectory still validates.
 */
import type { ToolCall } from '../schema/trajectory.ts';
import { argumentsProblem, capReply, cutAtCodePoint, keptArgumentText, keptArgumentValue } from './limits.ts';

/** A reply after normalization, plus why a call could not be taken as given. */
export interface NormalizedReply {
  /** The reply text, cut to {@link MAX_REPLY_CHARS}. */
  text: string;
  /** Length of the text as sent when it was over {@link MAX_REPLY_CHARS} (the text is cut), else null. */
  oversize: number | null;
  calls: ToolCall[];
  /** For each call (same index): a problem that makes it fail without running, or null. */
  problems: (string | null)[];
}

/** Longest argument value echoed back in an error message, in characters. */
const ECHO_LIMIT = 200;

/** True for an object that is not null and not an array (what JSON calls an object). */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? 'an object' : `a ${typeof x}`;
}

/**
 * The arguments of a call: the object to run with (`{}` when there is none to run), the text to
 * keep as written (`raw_arguments`), and why the call cannot run, or null.
 * - absent: `{}`, no problem;
 * - text (arguments a model wrote that were not decoded): over {@link MAX_ARGUMENT_CHARS}
 *   characters, or not valid JSON, or JSON of another type than an object, or JSON over the
 *   limits; the text is kept (cut with a marker past the limit);
 * - a value over the limits ({@link argumentsProblem}): kept as bounded JSON text;
 * - any other value that is not an object: refused, nothing to keep.
 */
function argumentsOf(value: unknown): {
  value: Record<string, unknown>;
  raw: string | undefined;
  problem: string | null;
} {
  if (value === undefined) return { value: {}, raw: undefined, problem: null };
  if (typeof value === 'string') {
    const raw = keptArgumentText(value);
    const tooLong = argumentsProblem(value);
    if (tooLong) return { value: {}, raw, problem: tooLong };
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return { value: {}, raw, problem: `not valid JSON: ${clip(value)}` };
    }
    const limit = argumentsProblem(parsed);
    if (limit) return { value: {}, raw, problem: limit };
    const got = isPlainObject(parsed) ? 'a string holding a JSON object (encoded twice)' : describe(parsed);
    return { value: {}, raw, problem: `expected an object, got ${got}: ${clip(value)}` };
  }
  const limit = argumentsProblem(value);
  if (limit) return { value: {}, raw: keptArgumentValue(value), problem: limit };
  if (!isPlainObject(value))
    return { value: {}, raw: undefined, problem: `expected an object, got ${describe(value)}` };
  return { value, raw: undefined, problem: null };
}

/** Shorten a string for an error message. */
export function clip(text: string, limit = ECHO_LIMIT): string {
  return text.length > limit ? `${cutAtCodePoint(text, limit)}… (${text.length} characters)` : text;
}

/**
 * Normalize a participant's reply.
 * - text: a string is kept (cut to {@link MAX_REPLY_CHARS}, see `oversize`); anything else
 *   becomes `''`.
 * - tool calls: a non-array becomes one failed call; each entry gets a string `id` (generated
 *   `call_<turn>_<i>` when missing or repeated in the turn), a string `name` and an object
 *   `arguments` (`{}` when it was not an object — then the call fails with a clear error
 *   instead of running: `not valid JSON: …` for text that does not parse, `expected an object,
 *   got …` otherwise; argument text is kept verbatim in `raw_arguments` and quoted in the error).
 *   A tool name over 200 characters is cut and the call fails.
 *   Arguments over {@link MAX_ARGUMENT_DEPTH} levels or {@link MAX_ARGUMENT_CHARS} characters are
 *   replaced by `{}` and the call fails the same way; what was sent is kept in `raw_arguments`
 *   (its text, or bounded JSON of a value), cut at {@link MAX_ARGUMENT_CHARS} characters with a
 *   marker. A call the participant refused itself (`refusals[i]` a string, see
 *   `ParticipantReply.refusals`) fails with that text.
 *
 * @param turn index the turn will have in the trajectory (used for generated ids)
 * @param toolNames the tools the participant may call; when given, a call to any other name gets
 *   no argument problem here (the environment refuses it as unknown or not available, which is
 *   what the participant needs to hear)
 */
export function normalizeReply(reply: unknown, turn: number, toolNames?: ReadonlySet<string>): NormalizedReply {
  const r = isPlainObject(reply) ? reply : {};
  const { text, oversize } = capReply(typeof r.text === 'string' ? r.text : '');
  const raw = r.tool_calls;
  const calls: ToolCall[] = [];
  const problems: (string | null)[] = [];
  if (raw === undefined || raw === null) return { text, oversize, calls, problems };
  const entries: unknown[] = Array.isArray(raw) ? raw : [raw];
  // The participant's own refusals of calls (ParticipantReply.refusals), aligned with its calls.
  const refusals: unknown[] = Array.isArray(r.refusals) ? r.refusals : [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const e = isPlainObject(entry) ? entry : {};
    let id = typeof e.id === 'string' && e.id !== '' ? e.id : `call_${turn}_${i}`;
    if (seen.has(id)) id = `${id}_${i}`;
    seen.add(id);
    const longName = typeof e.name === 'string' && e.name.length > ECHO_LIMIT;
    const name = typeof e.name === 'string' ? clip(e.name) : '';
    const args = isPlainObject(entry) ? argumentsOf(e.arguments) : { value: {}, raw: undefined, problem: null };
    let problem: string | null = null;
    const refusal = refusals[i];
    if (typeof refusal === 'string') problem = refusal;
    else if (!Array.isArray(raw)) problem = `tool_calls must be a list, got ${describe(raw)}`;
    else if (!isPlainObject(entry)) problem = `invalid tool call: expected an object, got ${describe(entry)}`;
    else if (typeof e.name !== 'string' || e.name === '') problem = 'invalid tool call: missing tool name';
    else if (longName) problem = `invalid tool call: tool name of ${(e.name as string).length} characters`;
    else if (toolNames && !toolNames.has(name)) problem = null;
    else if (args.problem) problem = `invalid arguments for ${name}: ${args.problem}`;
    calls.push({
      id,
      name,
      arguments: args.value,
      // Argument text a model wrote that is not a JSON object, or arguments over the limits, are
      // kept as written (cut with a marker past the limit).
      ...(args.raw !== undefined ? { raw_arguments: args.raw } : {}),
    });
    problems.push(problem);
  });
  return { text, oversize, calls, problems };
}

/** A readable reason from anything thrown. */
export function thrownReason(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  if (typeof e === 'string') return e;
  return `non-error value thrown: ${String(e)}`;
}
