/**
 * Barge-in pickers. The program samples the interruption type; a picker chooses the cut point in
 * the agent's reply and writes the caller's words for that type. The seeded heuristic
 * ({@link pickBargeIn}) is the default; {@link modelBargeInPicker} asks a model through the
 * `ModelClient` port and falls back to the heuristic (with a note) when the model's answer is
 * malformed. Endpoint failures are not malformed output: they propagate (an invalid rollout).
 */
import { z } from 'zod';
import { hash32, type Rng } from '../ports/rng.ts';
import type { ModelClient, SamplingParams } from '../ports/model-client.ts';
import type { InterruptionType } from '../schema/trajectory.ts';
import { pickBargeIn, type BargeIn, type BargeInContext } from './barge-in.ts';
import { cutAfterToken, tokenize } from './text-cut.ts';
import { replyTooLong } from '../rollout/limits.ts';

/** What a picker returns: the barge-in (null: the reply is too short) and a note when it fell back. */
export interface PickerResult {
  pick: BargeIn | null;
  /** Which picker produced `pick` (`heuristic`, `heuristic (fallback)`, or a model client's id). */
  picker: string;
  /** Why the model's answer was not used, or null. */
  note: string | null;
}

/** Chooses the cut and the caller's words for a sampled type. */
export interface BargeInPicker {
  readonly id: string;
  pick(text: string, type: InterruptionType, rng: Rng, ctx: BargeInContext): Promise<PickerResult>;
}

/** The seeded heuristic ({@link pickBargeIn}). */
export const heuristicPicker: BargeInPicker = {
  id: 'heuristic',
  pick: async (text, type, rng, ctx) => ({ pick: pickBargeIn(text, type, rng, ctx), picker: 'heuristic', note: null }),
};

/** Longest interruption text a model may write: 200 characters. */
export const MAX_INTERRUPTION_CHARS = 200;

/** The model's answer: `{"cut_after_token": k, "text": "...", "value": "..." | null}`. */
const ModelPick = z.object({
  cut_after_token: z.number().int(),
  text: z.string().trim().min(1).max(MAX_INTERRUPTION_CHARS),
  value: z.string().trim().min(1).nullable().optional(),
});

const TYPE_GUIDE: Record<InterruptionType, string> = {
  backchannel: 'a short backchannel ("mm-hmm", "OK OK") that lets the agent carry on',
  urge: 'impatient urging to get to the point',
  correction: 'a correction of a value the agent just said (give the right value in "value")',
  question: 'a new, unrelated short question',
  stop: 'a real request to stop talking',
};

/** Sampling of the picker: explicit, low temperature, seeded from the reply and type. */
export const PICKER_SAMPLING: Omit<SamplingParams, 'seed'> = {
  temperature: 0.3,
  top_p: 1,
  top_k: null,
  max_tokens: 200,
};

/** The prompt of {@link modelBargeInPicker} (exported for tests and docs). */
export function pickerMessages(text: string, type: InterruptionType, ctx: BargeInContext) {
  const tokens = tokenize(text);
  const numbered = tokens.map((t, i) => `${i + 1}:${t.text}`).join(' ');
  const facts = (ctx.facts ?? []).map((f) => `${f.key ?? ''}=${f.value}`).join('; ');
  return [
    {
      role: 'system' as const,
      content:
        'You simulate a phone caller who interrupts the agent mid-reply. Answer with one JSON object only: ' +
        '{"cut_after_token": <k>, "text": <what the caller says>, "value": <corrected value or null>}. ' +
        `k is the number of reply tokens the caller heard before interrupting (1 ≤ k ≤ ${Math.max(1, tokens.length - 1)}). ` +
        `Write the caller's words in the conversation's language (${ctx.language}), one short sentence.`,
    },
    {
      role: 'user' as const,
      content: `Interruption type: ${type} — ${TYPE_GUIDE[type]}.\nCaller facts: ${facts || '(none)'}\nAgent reply tokens: ${numbered}`,
    },
  ];
}

/** A picker backed by a model. `rng` is used only by the fallback, so a fallback equals the heuristic's pick. */
export function modelBargeInPicker(client: ModelClient): BargeInPicker {
  return {
    id: client.id,
    async pick(text, type, rng, ctx) {
      const n = tokenize(text).length;
      if (n < 3) return { pick: null, picker: client.id, note: null };
      const res = await client.complete({
        messages: pickerMessages(text, type, ctx),
        sampling: { ...PICKER_SAMPLING, seed: hash32(`picker:${type}:${text}`) & 0x7fffffff },
        json: true,
      });
      const problem = (why: string): PickerResult => ({
        pick: pickBargeIn(text, type, rng, ctx),
        picker: 'heuristic (fallback)',
        note: `model picker ${client.id}: ${why}; used the heuristic`,
      });
      const tooLong = replyTooLong(res.text);
      if (tooLong) return problem(tooLong);
      let raw: unknown;
      try {
        raw = JSON.parse(res.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
      } catch {
        return problem('reply is not JSON');
      }
      const parsed = ModelPick.safeParse(raw);
      if (!parsed.success)
        return problem(
          `reply does not match {cut_after_token, text, value}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        );
      const k = parsed.data.cut_after_token;
      if (k < 1 || k > n - 1) return problem(`cut_after_token ${k} is outside 1…${n - 1}`);
      const value = type === 'correction' ? (parsed.data.value ?? null) : null;
      return {
        pick: { type, cut: cutAfterToken(text, k), text: parsed.data.text, value },
        picker: client.id,
        note: null,
      };
    },
  };
}
