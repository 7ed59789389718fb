/**
 * Fixed phrases of the scripted participants, per language, and the cue lists they use to read
 * the other side. Scripted participants are deterministic test doubles, not models: they speak
 * from these tables.
 */
import { joinOnce } from './spoken.ts';

/** Phrase table for one language. */
export interface Phrases {
  /** Agent asks for a fact, built from its first cue. */
  askFact(cue: string): string;
  /** Agent describes a write (its arguments read out, see `spokenArguments`) and asks for a yes. */
  confirmWrite(action: string, details: string): string;
  /** Agent asks the caller to do something on their side (a user tool). */
  askUserAction(action: string): string;
  /** Agent asks whether there is anything else. */
  anythingElse: string;
  /** Agent states facts it must communicate. */
  tell(items: readonly string[]): string;
  /** Separator between two sentences. */
  sentenceSep: string;
  /** Agent's filler reply that does nothing (the do-nothing agent). */
  noop: string;
  /** Caller agrees. */
  yes: string;
  /** Caller declines. */
  no: string;
  /** Caller acknowledges without new information. */
  ack: string;
  /** Caller reports a finished action on their side. */
  didUserAction(action: string): string;
  /** Caller has nothing more. */
  done: string;
  /** Agent closes the call. */
  goodbye: string;
  /** Caller gives up on a conversation that goes nowhere. */
  giveUp: string;
  /** Words in an agent turn that ask for a confirmation. */
  confirmCues: readonly string[];
  /** Words in an agent turn that ask whether there is more. */
  moreCues: readonly string[];
}

const zh: Phrases = {
  askFact: (cue) => `请您提供一下${cue}。`,
  confirmWrite: (action, details) => `${joinOnce('我将为您', action)}：${details}。请问您确认吗？`,
  askUserAction: (action) => `麻烦您${action}，好了告诉我。`,
  anythingElse: '请问还有什么可以帮您？',
  tell: (items) => `跟您说明一下：${items.join('；')}。`,
  sentenceSep: '',
  noop: '好的，我明白了。',
  yes: '是的，确认。',
  no: '不，先不要。',
  ack: '嗯，好的。',
  didUserAction: (action) => `好了，我已经${action}了。`,
  done: '没有了，谢谢，再见。',
  goodbye: '感谢您的来电，再见。',
  giveUp: '算了，那就先这样吧，再见。',
  confirmCues: ['确认吗', '是否确认', '可以吗', '同意吗'],
  moreCues: ['还有什么', '还有其他', '其他问题', '还需要'],
};

const en: Phrases = {
  askFact: (cue) => `Could you give me your ${cue}, please?`,
  confirmWrite: (action, details) => `${joinOnce('I will ', action)}: ${details}. Do you confirm?`,
  askUserAction: (action) => `Could you please ${action} now and tell me when it is done?`,
  anythingElse: 'Is there anything else I can help you with?',
  tell: (items) => `Just so you know: ${items.join('; ')}.`,
  sentenceSep: ' ',
  noop: 'I see.',
  yes: 'Yes, please go ahead.',
  no: 'No, please do not do that.',
  ack: 'Okay.',
  didUserAction: (action) => `Okay, done: ${action}.`,
  done: 'No, that is all. Thank you, goodbye.',
  goodbye: 'Thank you for calling. Goodbye.',
  giveUp: 'Never mind, I will leave it there. Goodbye.',
  confirmCues: ['do you confirm', 'shall i', 'is that ok', 'should i proceed'],
  moreCues: ['anything else'],
};

/** Phrases for a BCP-47 language tag: Mandarin for `zh*`, English otherwise. */
export function phrasesFor(language: string): Phrases {
  return language.toLowerCase().startsWith('zh') ? zh : en;
}

/** True when `text` contains any of `cues`, case-insensitively. */
export function hasCue(text: string, cues: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return cues.some((c) => lower.includes(c.toLowerCase()));
}
