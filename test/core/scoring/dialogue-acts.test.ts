import { describe, expect, it } from 'vitest';
import {
  asksForConfirmation,
  classifyDialogueAct,
  type DialogueAct,
  isAgreement,
} from '../../../src/core/scoring/dialogue-acts.ts';
import cases from './dialogue-act-cases.json' with { type: 'json' };

interface Case {
  lang: 'en' | 'zh';
  text: string;
  act: DialogueAct;
  barge_in?: boolean;
}
const table = cases as Case[];

describe('classifyDialogueAct: the labelled phrase table', () => {
  it('has at least 60 phrases per language and every act in each', () => {
    for (const lang of ['en', 'zh'] as const) {
      const mine = table.filter((c) => c.lang === lang);
      expect(mine.length).toBeGreaterThanOrEqual(60);
      expect(new Set(mine.map((c) => c.act))).toEqual(
        new Set(['affirm', 'deny', 'hedge', 'question', 'backchannel', 'other']),
      );
    }
  });
  it.each(table.map((c) => [c.lang, c.text, c.barge_in ? ' (barge-in)' : '', c.act, c] as const))(
    '%s %j%s → %s',
    (_lang, text, _b, act, c) => {
      expect(classifyDialogueAct(text, { bargeIn: c.barge_in === true }).act).toBe(act);
    },
  );
});

describe('classifyDialogueAct: reasons', () => {
  it('names the deciding cue', () => {
    expect(classifyDialogueAct('Yes, but first tell me the fee.')).toEqual({
      act: 'hedge',
      cue: 'but',
      reason: 'opens with "yes" but sets the condition "but"',
    });
    expect(classifyDialogueAct('好的好的', { bargeIn: true })).toEqual({
      act: 'backchannel',
      cue: '好',
      reason: '"好" said while the agent was still talking',
    });
    expect(classifyDialogueAct('嗯嗯')).toEqual({ act: 'backchannel', cue: null, reason: 'only backchannel tokens' });
  });
  it('isAgreement is the affirm label', () => {
    expect(isAgreement('好的')).toBe(true);
    expect(isAgreement('嗯')).toBe(false);
    expect(isAgreement('Yes, but first tell me the fee.')).toBe(false);
  });
});

describe('asksForConfirmation', () => {
  it.each([
    'I will pay 30 to Water. Do you confirm?',
    'Shall I go ahead',
    '我将为您缴费30元。请问您确认吗？',
    '需要我现在办理吗',
    'OK to proceed',
  ])('asks: %j', (text) => expect(asksForConfirmation(text)).toBe(true));
  it.each(['I have paid 30 to Water.', '好的，已经办好了。'])('does not ask: %j', (text) =>
    expect(asksForConfirmation(text)).toBe(false),
  );
});
