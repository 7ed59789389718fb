/**
 * Babble noise made from TTS speech: {@link BABBLE_TALKERS} synthesized talkers (each its own
 * persona voice, a few unrelated sentences in the conversation's language) looped from
 * different offsets and summed. Generated once per (TTS engine, language, seed) and cached like
 * the procedural beds; a plan's `procedural:babble` source loops it from the plan's offset.
 */
import { hash32, rngFromState } from '../ports/rng.ts';
import type { Tts } from '../ports/tts.ts';
import { loopTo, normalizeRms } from '../audio/noise.ts';
import { msToSamples, SPEECH_RATE_HZ } from '../audio/pcm.ts';
import { personaVoice } from './persona-voice.ts';

/** Length of a babble bed: 20 s. */
export const BABBLE_BED_S = 20;
/** Overlapping talkers in a bed. */
export const BABBLE_TALKERS = 6;
/** Sentences per talker. */
export const BABBLE_SENTENCES = 3;

const EN = [
  'I told him we would meet at the station around six.',
  'Did you see the game last night? It went to overtime.',
  'The printer on the third floor is broken again.',
  'We need two more chairs for the meeting room.',
  'She said the package should arrive on Thursday.',
  'Can you pass me the menu, please?',
  'My sister just moved to a new apartment downtown.',
  'The traffic this morning was terrible.',
  'I think the coffee machine needs cleaning.',
  'Let us order lunch before the queue gets long.',
];
const ZH = [
  '我跟他说好了六点在车站见面。',
  '你昨天晚上看比赛了吗？打到了加时。',
  '三楼的打印机又坏了。',
  '会议室还需要再加两把椅子。',
  '她说包裹星期四应该能到。',
  '麻烦把菜单递给我一下。',
  '我妹妹刚搬到市中心的新公寓。',
  '今天早上堵车堵得很厉害。',
  '咖啡机好像该清洗了。',
  '我们趁排队的人还不多先点午饭吧。',
];

/** Sentences of the babble talkers in `language` (Mandarin for `zh*`/`cmn`, else English). */
export function babbleSentences(language: string): readonly string[] {
  const l = language.toLowerCase();
  return l.startsWith('zh') || l === 'cmn' ? ZH : EN;
}

const cache = new Map<string, Promise<Float32Array>>();

/** The babble bed of (tts, language, seed): 20 s at 16 kHz, unit RMS, cached. */
export function babbleBed(tts: Tts, language: string, seed: number): Promise<Float32Array> {
  const key = `${tts.id}\u0000${language}\u0000${seed}`;
  let bed = cache.get(key);
  if (!bed) {
    bed = makeBabble(tts, language, seed);
    cache.set(key, bed);
    bed.catch(() => cache.delete(key));
  }
  return bed;
}

async function makeBabble(tts: Tts, language: string, seed: number): Promise<Float32Array> {
  const rng = rngFromState(hash32(`babble:${language}:${seed}`));
  const n = BABBLE_BED_S * SPEECH_RATE_HZ;
  const out = new Float32Array(n);
  const sentences = babbleSentences(language);
  const pause = msToSamples(300, SPEECH_RATE_HZ);
  for (let t = 0; t < BABBLE_TALKERS; t++) {
    const voice = personaVoice(language, `babble:${seed}:${t}`);
    const parts: Float32Array[] = [];
    for (let k = 0; k < BABBLE_SENTENCES; k++) parts.push((await tts.synthesize(rng.pick(sentences), voice)).samples);
    const total = parts.reduce((a, p) => a + p.length + pause, 0);
    const talk = new Float32Array(total);
    let at = 0;
    for (const p of parts) {
      talk.set(p, at);
      at += p.length + pause;
    }
    const unit = normalizeRms(talk);
    const looped = loopTo(unit, n, rng.int(Math.max(1, unit.length)));
    const gain = 0.6 + 0.4 * rng.next();
    for (let i = 0; i < n; i++) out[i] = (out[i] as number) + gain * (looped[i] as number);
  }
  return normalizeRms(out);
}
