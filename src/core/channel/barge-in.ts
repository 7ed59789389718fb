/**
 * Barge-in: the program, not a model, decides how the caller interrupts. The type is sampled
 * from configured ratios; a seeded heuristic picker chooses where the agent's reply is cut and
 * writes the caller's words for that type from phrase tables (Mandarin and English).
 */
import type { Rng } from '../ports/rng.ts';
import type { Fact } from '../schema/task.ts';
import type { InterruptionType } from '../schema/trajectory.ts';
import { compactValue, cutAfterToken, tokenize, type TextCut } from './text-cut.ts';

/** The types in sampling order (the order fixes which type a uniform draw lands on). */
export const INTERRUPTION_TYPES: readonly InterruptionType[] = [
  'backchannel',
  'urge',
  'correction',
  'question',
  'stop',
];

/**
 * Default mix (ours; no published reference fixes one): backchannels are the most common
 * overlap in real calls, the rest share the remainder.
 */
export const DEFAULT_INTERRUPTION_MIX: Readonly<Record<InterruptionType, number>> = {
  backchannel: 0.35,
  urge: 0.2,
  correction: 0.2,
  question: 0.15,
  stop: 0.1,
};

/**
 * Normalize a partial mix: missing types weigh 0 when any type is given, negative or non-finite
 * weights throw, an all-zero mix throws.
 */
export function normalizeMix(
  mix: Partial<Record<InterruptionType, number>> = DEFAULT_INTERRUPTION_MIX,
): Record<InterruptionType, number> {
  const out = {} as Record<InterruptionType, number>;
  let sum = 0;
  for (const t of INTERRUPTION_TYPES) {
    const w = mix[t] ?? 0;
    if (!(w >= 0) || !Number.isFinite(w))
      throw new RangeError(`barge-in weight of ${t} must be a finite number ≥ 0, got ${w}`);
    out[t] = w;
    sum += w;
  }
  if (sum <= 0) throw new RangeError('barge-in mix has no positive weight');
  for (const t of INTERRUPTION_TYPES) out[t] /= sum;
  return out;
}

/** Draw one type from a (normalized) mix with one uniform number. */
export function sampleInterruptionType(mix: Readonly<Record<InterruptionType, number>>, rng: Rng): InterruptionType {
  const u = rng.next();
  let acc = 0;
  for (const t of INTERRUPTION_TYPES) {
    acc += mix[t];
    if (u < acc) return t;
  }
  // Rounding: the last type with positive weight.
  return [...INTERRUPTION_TYPES].reverse().find((t) => mix[t] > 0)!;
}

interface BargePhrases {
  backchannel: readonly string[];
  urge: readonly string[];
  correction: (value: string) => string;
  correctionNoValue: string;
  question: readonly string[];
  stop: readonly string[];
}

const EN: BargePhrases = {
  backchannel: ['Mm-hmm.', 'OK, OK.', 'Uh-huh.', 'Right, right.'],
  urge: [
    'Yes, yes, just get to the point, please.',
    'OK, and what is the bottom line?',
    'Can you just tell me quickly?',
  ],
  correction: (v) => `No, sorry, it's ${v}.`,
  correctionNoValue: "No, that's not right.",
  question: [
    'Sorry, before that, how long will this take?',
    'Wait, is there a fee for this?',
    'Quick question, can I do this online too?',
  ],
  stop: ['Stop, stop. Hold on.', 'Wait, stop please.', 'Hold on, stop there.'],
};

const ZH: BargePhrases = {
  backchannel: ['嗯嗯。', '好的好的。', '嗯，对。', '对对。'],
  urge: ['好了好了，直接说重点吧。', '您就直接告诉我结果吧。', '快点说吧，我赶时间。'],
  correction: (v) => `不对，是${v}。`,
  correctionNoValue: '不对，不是这样的。',
  question: ['等一下，这个要多长时间？', '先问一下，这个收费吗？', '对了，这个能在网上办吗？'],
  stop: ['停一下，先别说了。', '等等，先停一下。', '先停，别往下说了。'],
};

/** Phrase table for a BCP-47 language: Mandarin for `zh*`/`cmn`, English otherwise. */
function phrasesFor(language: string): BargePhrases {
  const l = language.toLowerCase();
  return l.startsWith('zh') || l === 'cmn' ? ZH : EN;
}

/** A planned barge-in on one agent reply. */
export interface BargeIn {
  type: InterruptionType;
  cut: TextCut;
  /** What the caller says. */
  text: string;
  /** For `correction`: the value the caller gives (null when none could be found). */
  value: string | null;
}

/** What the picker may use besides the reply. */
export interface BargeInContext {
  language: string;
  /** The caller's facts (task `user_scenario.facts`): corrections give one of these values. */
  facts?: readonly Fact[];
}

/** Shares of the reply's tokens heard before the cut, per type (ours): urging comes early. */
const HEARD_SHARE: Record<InterruptionType, readonly [number, number]> = {
  backchannel: [0.3, 0.7],
  urge: [0.15, 0.45],
  correction: [0.3, 0.8],
  question: [0.3, 0.8],
  stop: [0.2, 0.7],
};

/**
 * Choose the cut and the caller's words for a sampled `type` on reply `text`. Null when the
 * reply is too short to interrupt (fewer than 3 tokens).
 *
 * Cut heuristics (seeded): a backchannel lands at a clause boundary (after `,;:，；：、—` or an
 * inner sentence end) when there is one in the allowed range; a correction lands right after a
 * 3+ digit number the agent says that has the digit count of one of the caller's numeric fact
 * values but other digits (the agent got the caller's number wrong), and the caller gives its own
 * value; when the reply has no such number the correction names no value ("No, that's not
 * right.", `value` null): a correction never names a value equal to what the agent said or a
 * value of another kind (a phone number for a customer id). Other types cut at a word boundary
 * with a heard share drawn from the type's range. The cut never falls after the last token.
 */
export function pickBargeIn(text: string, type: InterruptionType, rng: Rng, ctx: BargeInContext): BargeIn | null {
  const tokens = tokenize(text);
  const n = tokens.length;
  if (n < 3) return null;
  const p = phrasesFor(ctx.language);
  const [lo, hi] = HEARD_SHARE[type];
  const kMin = Math.max(1, Math.floor(lo * n));
  const kMax = Math.max(kMin, Math.min(n - 1, Math.ceil(hi * n)));
  const drawK = () => kMin + rng.int(kMax - kMin + 1);

  if (type === 'backchannel') {
    const clauses: number[] = [];
    for (let k = kMin; k <= kMax; k++) {
      const after = text.slice(tokens[k - 1]!.end, tokens[k]!.start);
      if (/[,;:，；：、—.!?。！？]/.test(after)) clauses.push(k);
    }
    const k = clauses.length ? rng.pick(clauses) : drawK();
    return { type, cut: cutAfterToken(text, k), text: rng.pick(p.backchannel), value: null };
  }
  if (type === 'correction') {
    const facts = ctx.facts ?? [];
    // Candidate cuts: right after a digit run the agent says that is one of the caller's numbers
    // said wrong (same digit count, other digits); the caller then gives its own value.
    const spots: { k: number; value: string }[] = [];
    for (let k = 1; k <= n - 1; k++) {
      const said = tokens[k - 1]!.text;
      if (!/^\p{N}{3,}$/u.test(said) || facts.some((f) => compactValue(f.value) === said)) continue;
      const own = facts.find((f) => {
        const v = compactValue(f.value);
        return /^\p{N}+$/u.test(v) && v.length === said.length && v !== said;
      });
      if (own) spots.push({ k, value: own.value });
    }
    // No value said wrong: the caller objects without a value (nothing to check) rather than
    // "correcting" a value the agent got right or one the caller never gave (a customer id).
    const spot = spots.length ? rng.pick(spots) : null;
    const cut = cutAfterToken(text, spot ? spot.k : drawK());
    const value = spot?.value ?? null;
    return { type, cut, text: value ? p.correction(value) : p.correctionNoValue, value };
  }
  const k = drawK();
  const list = type === 'urge' ? p.urge : type === 'question' ? p.question : p.stop;
  return { type, cut: cutAfterToken(text, k), text: rng.pick(list), value: null };
}
