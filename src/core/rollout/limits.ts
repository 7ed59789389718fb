/**
 * Size limits on what a participant hands the episode loop. A model can return anything: a reply
 * of megabytes, tool arguments nested thousands of levels deep. Past these limits the input is
 * not worked on: an over-long agent reply is cut and vetoed by `QUALITY`, an over-long caller
 * reply is a simulator failure, and over-deep or over-large tool arguments become an error tool
 * message (the episode goes on). Every text check (quality detectors, caller fact check,
 * dialogue acts) therefore sees at most {@link MAX_REPLY_CHARS} characters of a turn.
 *
 * The limits are far above what a spoken reply or a real tool call needs: a phone reply of
 * 1,024 tokens (the default `--max-tokens`) is about 4,000 characters, and the largest argument
 * object of the built-in and tau2 domains is a few hundred characters, three levels deep.
 */

/**
 * Longest agent audio placed on the full-duplex timeline (a realtime agent's reply audio, an
 * endpoint's audio output): 120 s, about 300 spoken words; a phone reply is a few seconds.
 */
export const MAX_AGENT_AUDIO_S = 120;

/**
 * Sample rates accepted for the agent's own audio, Hz: 8 kHz (telephone) to 48 kHz (studio).
 * A WAV header outside them is not a speech recording we can place (a header written wrong).
 */
export const AGENT_AUDIO_RATES_HZ = { min: 8_000, max: 48_000 } as const;

/**
 * Own audio longer than `MAX_OWN_AUDIO_STRETCH ×` the synthesis of its own text plus
 * {@link OWN_AUDIO_SLACK_S} does not speak that text (the heard words, cut by word timings
 * scaled from the synthesis, would be meaningless): it is refused and the text synthesized.
 * Ours: speaking rates of people and TTS voices differ by well under 3× (about 2–7 syllables/s).
 */
export const MAX_OWN_AUDIO_STRETCH = 3;
/** Seconds added to the stretch limit, for pauses and breaths in short replies. */
export const OWN_AUDIO_SLACK_S = 5;

/** Longest reply text worked on, in UTF-16 code units (JavaScript string length). */
export const MAX_REPLY_CHARS = 16_000;

/**
 * Deepest tool-argument value, in nesting levels of objects and arrays: the argument object
 * itself is level 1, so `{"a": {"b": [1]}}` is 3 levels deep.
 */
export const MAX_ARGUMENT_DEPTH = 32;

/**
 * Largest tool-argument value, in characters of its JSON text (counted without building it),
 * or of the argument string when a model sent text that is not JSON.
 */
export const MAX_ARGUMENT_CHARS = 32_768;

/**
 * The longest start of `text` of at most `max` UTF-16 code units that ends on a code point
 * boundary: a character beyond the BMP (emoji, CJK Extension B…) is two units, a surrogate pair,
 * and is kept whole or left out, never cut in half (half a pair is not text: it prints as U+FFFD
 * and is refused by strict UTF-8 encoders). So the result is `max` units long, or `max − 1` when
 * unit `max` would be the first half of a pair.
 */
export function cutAtCodePoint(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * `text` cut to {@link MAX_REPLY_CHARS} on a code point boundary ({@link cutAtCodePoint}), and
 * its full length when it was longer (else null).
 */
export function capReply(text: string): { text: string; oversize: number | null } {
  return text.length > MAX_REPLY_CHARS
    ? { text: cutAtCodePoint(text, MAX_REPLY_CHARS), oversize: text.length }
    : { text, oversize: null };
}

/** Why a reply text is over the limit, or null. */
export function replyTooLong(text: string): string | null {
  return text.length > MAX_REPLY_CHARS
    ? `reply of ${text.length} characters is over the limit of ${MAX_REPLY_CHARS}`
    : null;
}

/**
 * Why tool arguments are over the limits, or null when they are within them. Walks the value
 * without recursion (so any depth is safe, and a cyclic object is reported as too deep) and stops
 * as soon as a limit is passed, so the cost is bounded by the limits, not by the input.
 *
 * Sizes count the JSON text the value would have: strings and keys with their quotes (escapes not
 * counted), numbers, booleans and null as written, one separator per member.
 */
export function argumentsProblem(args: unknown): string | null {
  if (typeof args === 'string') {
    return args.length > MAX_ARGUMENT_CHARS
      ? `arguments of ${args.length} characters are over the limit of ${MAX_ARGUMENT_CHARS}`
      : null;
  }
  const tooLarge = `arguments over ${MAX_ARGUMENT_CHARS} characters of JSON`;
  const stack: [unknown, number][] = [[args, 1]];
  let size = 0;
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') size += value.length + 2;
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      size += String(value).length;
    } else if (typeof value === 'object' && value !== null) {
      if (depth > MAX_ARGUMENT_DEPTH) return `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`;
      size += 2;
      if (Array.isArray(value)) {
        for (const v of value) {
          if (++size > MAX_ARGUMENT_CHARS) return tooLarge;
          stack.push([v, depth + 1]);
        }
      } else {
        for (const k in value) {
          if (!Object.hasOwn(value, k)) continue;
          if ((size += k.length + 4) > MAX_ARGUMENT_CHARS) return tooLarge;
          stack.push([(value as Record<string, unknown>)[k], depth + 1]);
        }
      }
    } else size += 4;
    if (size > MAX_ARGUMENT_CHARS) return tooLarge;
  }
  return null;
}

/**
 * The JSON text of `value`, written without recursion and stopped once it passes `max`
 * characters, so any depth (even a cycle) costs at most about `max` characters of work.
 * Used to keep over-limit tool arguments on the record (`raw_arguments`) without serializing
 * them in full (`JSON.stringify` throws past a few thousand levels).
 *
 * @returns the text (at most `max` characters) and whether it was cut.
 */
export function boundedJson(value: unknown, max: number): { text: string; cut: boolean } {
  const out: string[] = [];
  let size = 0;
  // Pending pieces, last first: literal text, or a value (with the key it is written under).
  const stack: ({ lit: string } | { val: unknown; key?: string })[] = [{ val: value }];
  const put = (s: string) => {
    out.push(s);
    size += s.length;
    return size > max;
  };
  while (stack.length) {
    const top = stack.pop()!;
    if ('lit' in top) {
      if (put(top.lit)) break;
      continue;
    }
    if (top.key !== undefined && put(`${JSON.stringify(top.key)}:`)) break;
    const v = top.val;
    if (Array.isArray(v)) {
      stack.push({ lit: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ val: v[i] });
        if (i > 0) stack.push({ lit: ',' });
      }
      if (put('[')) break;
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      stack.push({ lit: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ val: (v as Record<string, unknown>)[keys[i]!], key: keys[i]! });
        if (i > 0) stack.push({ lit: ',' });
      }
      if (put('{')) break;
    } else if (put(JSON.stringify(v) ?? 'null')) break;
  }
  const text = out.join('');
  return size > max ? { text: text.slice(0, max), cut: true } : { text, cut: false };
}

/**
 * Argument text kept on the record (`raw_arguments`): as written up to
 * {@link MAX_ARGUMENT_CHARS} characters; a longer text is cut there and marked
 * `…[cut: <n> characters in all]`.
 */
export function keptArgumentText(text: string): string {
  return text.length > MAX_ARGUMENT_CHARS
    ? `${text.slice(0, MAX_ARGUMENT_CHARS)}…[cut: ${text.length} characters in all]`
    : text;
}

/**
 * Over-limit argument values (not text) as kept on the record: their JSON text, cut at
 * {@link MAX_ARGUMENT_CHARS} characters and marked `…[cut at <n> characters]` when longer
 * ({@link boundedJson}).
 */
export function keptArgumentValue(value: unknown): string {
  const { text, cut } = boundedJson(value, MAX_ARGUMENT_CHARS);
  return cut ? `${text}…[cut at ${MAX_ARGUMENT_CHARS} characters]` : text;
}
