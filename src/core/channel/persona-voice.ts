/**
 * The persona picks the caller's voice: a deterministic mapping from a persona key (the task's
 * persona text, or its id when it has none) to an espeak-ng voice variant, a speaking rate and
 * a pitch. Same key → same voice on every run and platform.
 */
import { hash32, rngFromState } from '../ports/rng.ts';
import type { TtsVoice } from '../ports/tts.ts';
import type { Task } from '../schema/task.ts';

/** espeak-ng voice variants (`<voice>+<variant>`): seven male, five female. */
export const ESPEAK_VARIANTS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'f1', 'f2', 'f3', 'f4', 'f5'] as const;
/** Speaking rate range in words per minute (espeak-ng default 175). */
export const PERSONA_RATE_WPM: readonly [number, number] = [145, 195];
/** Pitch range on espeak-ng's 0–99 scale (default 50). */
export const PERSONA_PITCH: readonly [number, number] = [30, 70];

/** espeak-ng base voice of a language tag: Mandarin → `cmn`, English → `en-us`, else the tag. */
export function espeakBaseVoice(language: string): string {
  const l = language.toLowerCase();
  if (l === 'zh' || l.startsWith('zh-') || l === 'cmn') return 'cmn';
  if (l === 'en') return 'en-us';
  return l;
}

/** The voice of persona `key` speaking `language`. */
export function personaVoice(language: string, key: string): TtsVoice {
  const rng = rngFromState(hash32(`persona-voice:${key}`));
  const variant = rng.pick(ESPEAK_VARIANTS);
  const [r0, r1] = PERSONA_RATE_WPM;
  const [p0, p1] = PERSONA_PITCH;
  return {
    language,
    voice: `${espeakBaseVoice(language)}+${variant}`,
    rateWpm: r0 + rng.int(r1 - r0 + 1),
    pitch: p0 + rng.int(p1 - p0 + 1),
  };
}

/** The persona key of a task: its persona text when it has one, else its id. */
export function personaKey(task: Pick<Task, 'id' | 'user_scenario'>): string {
  const p = task.user_scenario.persona?.trim();
  return p ? `persona:${p}` : `task:${task.id}`;
}

/** The {@link TtsVoice} back from a trajectory's recorded `audio.voice`. */
export function voiceFromRecord(v: {
  language: string;
  name: string | null;
  rate_wpm: number | null;
  pitch: number | null;
}): TtsVoice {
  return {
    language: v.language,
    ...(v.name !== null ? { voice: v.name } : {}),
    ...(v.rate_wpm !== null ? { rateWpm: v.rate_wpm } : {}),
    ...(v.pitch !== null ? { pitch: v.pitch } : {}),
  };
}
