/**
 * Vocal tics and asides inserted into a caller turn before the channel: a procedural cough or
 * sniffle, and speech not meant for the agent ("hold on a second", "wait, let me check"),
 * spoken in the caller's voice. Whether a turn gets one, where (a word boundary of the text) and
 * at what level is drawn from (preset, seed, task id, turn) alone; rates come from the preset
 * (`tics`, `asides`; 0 in clean and control).
 */
import { hash32, rngFromState, type Rng } from '../ports/rng.ts';
import { VOCAL_TIC_KINDS, type VocalTicKind } from '../audio/tics.ts';
import { tokenize } from './text-cut.ts';
import { PRESETS, type ChannelPreset, type PresetName, type Range } from './presets.ts';
import type { PlanKey } from './plan.ts';

/** One planned insertion. `atChar`: position in the turn's text (code units) where it goes. */
export type InsertPlan =
  | { kind: 'vocal_tic'; tic: VocalTicKind; atChar: number; levelDb: number; seed: number }
  | { kind: 'aside'; text: string; atChar: number; levelDb: number };

const EN_ASIDES = [
  'Hold on a second.',
  'Wait, let me check.',
  'Just a moment, honey.',
  'Sorry, one sec.',
  'Hang on, let me find it.',
];
const ZH_ASIDES = [
  '等一下。',
  '稍等，我看一下。',
  '你等会儿，我在打电话。',
  '等等，我找一下。',
  '别吵，我在打电话呢。',
];

/** Aside phrases in `language` (Mandarin for `zh*`/`cmn`, else English). */
export function asidePhrases(language: string): readonly string[] {
  const l = language.toLowerCase();
  return l.startsWith('zh') || l === 'cmn' ? ZH_ASIDES : EN_ASIDES;
}

const uniform = (rng: Rng, [lo, hi]: Range) => lo + (hi - lo) * rng.next();

/** A word boundary of `text`: the start of a token, or the end of the text. */
function boundary(text: string, rng: Rng): number {
  const tokens = tokenize(text);
  const k = rng.int(tokens.length + 1);
  return k < tokens.length ? tokens[k]!.start : text.length;
}

/** The insertions of one caller turn, sorted by position (a tic before an aside at the same place). */
export function planInserts(
  preset: PresetName | ChannelPreset,
  key: PlanKey,
  text: string,
  language: string,
): InsertPlan[] {
  const p = typeof preset === 'string' ? PRESETS[preset] : preset;
  const name = typeof preset === 'string' ? preset : 'custom';
  const root = rngFromState(hash32(`inserts:${name}:${key.seed}:${key.taskId}:${key.turn ?? 0}`));
  const out: InsertPlan[] = [];
  if (p.tics && p.tics.probability > 0) {
    const r = root.fork('tic');
    if (r.next() < p.tics.probability) {
      out.push({
        kind: 'vocal_tic',
        tic: r.pick(VOCAL_TIC_KINDS),
        atChar: boundary(text, r),
        levelDb: uniform(r, p.tics.levelDb),
        seed: r.int(2 ** 32),
      });
    }
  }
  if (p.asides && p.asides.probability > 0) {
    const r = root.fork('aside');
    if (r.next() < p.asides.probability) {
      out.push({
        kind: 'aside',
        text: r.pick(asidePhrases(language)),
        atChar: boundary(text, r),
        levelDb: uniform(r, p.asides.levelDb),
      });
    }
  }
  return out.sort((a, b) => a.atChar - b.atChar);
}
