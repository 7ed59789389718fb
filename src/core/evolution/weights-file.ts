/**
 * The schema of the sampling-weights file (`weights.json`, format `switchboard.sampling-weights`,
 * see ./weights.ts), for reading it back: `evolve --previous` and the environment server's
 * `GET /curriculum`.
 */
import { z } from 'zod';
import { TASK_LABELS } from './labels.ts';
import type { SamplingWeights } from './weights.ts';

const Bin = z.object({
  id: z.string(),
  lo: z.number(),
  hi: z.number(),
  tasks: z.number().int().min(0),
  reward: z.number().nullable(),
  q: z.number(),
  p: z.number().min(0).max(1),
});

const Weight = z.object({
  task_id: z.string(),
  label: z.enum(TASK_LABELS as [string, ...string[]]),
  pass_rate: z.number().nullable(),
  bin: z.string().nullable(),
  weight: z.number().min(0).max(1),
});

/** The contents of a `weights.json` file. */
export const SamplingWeightsFile = z.object({
  format: z.literal('switchboard.sampling-weights'),
  version: z.literal(1),
  round: z.number().int().min(0),
  k: z.number().int().min(1),
  bandit: z.object({ alpha: z.number(), tau: z.number(), source: z.string() }),
  bins: z.array(Bin),
  tasks: z.array(Weight),
});

/**
 * Check the parsed contents of a `weights.json` file.
 * @returns the weights, or the field (`bins[2].q`, empty for the whole document) and message of the first problem
 */
export function checkSamplingWeights(
  doc: unknown,
): { ok: true; weights: SamplingWeights } | { ok: false; path: PropertyKey[]; message: string } {
  const r = SamplingWeightsFile.safeParse(doc);
  if (r.success) return { ok: true, weights: r.data as SamplingWeights };
  const issue = r.error.issues[0]!;
  return { ok: false, path: issue.path, message: issue.message };
}
