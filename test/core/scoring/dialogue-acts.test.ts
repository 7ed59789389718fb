import { describe, expect, it } from 'vitest';
import { asksForConfirmation, isAgreement } from '../../../src/core/scoring/dialogue-acts.ts';

describe('isAgreement', () => {
  it.each([
    'Yes.',
    'Yes please',
    'Yes, please go ahead.',
    'Sure, no problem.',
    'OK',
    'Okay, go ahead.',
    "That's right.",
    'Um, yeah.',
    '好的',
    '是的，确认。',
    '可以',
    '对',
    '行，办吧',
    '嗯，好的。',
    '确认',
    '没问题',
  ])('agrees: %j', (text) => expect(isAgreement(text)).toBe(true));

  it.each([
    'No.',
    'No, please do not do that.',
    "Yes, but don't pay yet.",
    'Wait, hold on.',
    'Please pay 30 to Water from account A1.',
    'Yesterday I paid.',
    '不，先不要。',
    '不用了',
    '好的，等一下',
    '可以帮我交一下话费吗',
    '是吗？',
    '对了，我还想问余额',
    '好像不对',
    '算了',
    '',
  ])('does not agree: %j', (text) => expect(isAgreement(text)).toBe(false));
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
