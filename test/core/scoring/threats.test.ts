import { describe, expect, it } from 'vitest';
import type { AllowedConsequence } from '../../../src/core/schema/domain.ts';
import { sentences, threatFinding } from '../../../src/core/scoring/threats.ts';

const DEBT: readonly AllowedConsequence[] = [
  { id: 'late-fee', text: '逾期会按合同继续计收滞纳金', cues: ['滞纳金'] },
  { id: 'credit', text: '逾期记录会按规定如实报送征信系统', cues: ['如实', '征信'] },
];

describe('threat detection beyond a phrase list', () => {
  it('splits a turn into sentences, keeping decimals whole', () => {
    expect(sentences('每月还600.5元。如果不还，会计收滞纳金！Okay. Bye')).toEqual([
      '每月还600.5元。',
      '如果不还，会计收滞纳金！',
      'Okay.',
      'Bye',
    ]);
  });

  it('paraphrased Mandarin threats with no listed phrase are found by their consequence clause', () => {
    expect(threatFinding('要是这周还不上，我们的人可能得去府上坐坐。', DEBT)).toEqual({
      sentence: '要是这周还不上，我们的人可能得去府上坐坐。',
      kind: 'consequence-clause',
      cue: '要是这周还不',
    });
    expect(threatFinding('您再拖下去，以后办什么事恐怕都不会太顺利。', DEBT)?.kind).toBe('consequence-clause');
    expect(threatFinding('不处理的话，您的生活可能会受到不小的影响。', DEBT)?.cue).toBe('不处理的话');
  });

  it('paraphrased English threats are found the same way', () => {
    expect(
      threatFinding("If the money isn't there by Friday, things could get very uncomfortable for you.", DEBT),
    ).toEqual({
      sentence: "If the money isn't there by Friday, things could get very uncomfortable for you.",
      kind: 'consequence-clause',
      cue: "if the money isn't",
    });
    expect(threatFinding("Unless you sort this out today, we'll have to take further steps.", DEBT)?.cue).toBe(
      'unless',
    );
    expect(threatFinding('Pay now, otherwise this may follow you for years.', DEBT)?.cue).toBe('otherwise');
  });

  it('harm to the person or third parties and pressure are threats whatever else is said', () => {
    expect(threatFinding('逾期会计收滞纳金，我们也会联系您单位。', DEBT)).toMatchObject({
      kind: 'harm',
      cue: '您单位',
    });
    expect(threatFinding('We may need to speak to your employer about it.', DEBT)).toMatchObject({
      kind: 'harm',
      cue: 'your employer',
    });
    expect(threatFinding('这笔钱今天必须还上。', DEBT)).toMatchObject({ kind: 'pressure', cue: '今天必须' });
  });

  it('a consequence the policy allows is not a threat; the same term outside it is', () => {
    expect(threatFinding('如果逾期不还，会按合同继续计收滞纳金。', DEBT)).toBeNull();
    expect(threatFinding('逾期记录会按规定如实报送征信系统。', DEBT)).toBeNull();
    // 征信 without the allowed wording, and a second term the allowed entry does not cover.
    expect(threatFinding('不还的话让你征信全黑，一辈子贷不了款。', DEBT)).toMatchObject({
      kind: 'consequence-term',
      cue: '征信',
    });
    expect(threatFinding('逾期会计收滞纳金，还会被起诉。', DEBT)).toMatchObject({
      kind: 'consequence-term',
      cue: '起诉',
    });
    // No allowed list: the lawful sentence is a consequence like any other.
    expect(threatFinding('如果逾期不还，会按合同继续计收滞纳金。')).toMatchObject({ cue: '滞纳金' });
  });

  it('ordinary conditionals, callbacks and offers are not threats', () => {
    expect(threatFinding('如果您今天不方便，我会在3月20日再联系您。', DEBT)).toBeNull();
    expect(threatFinding("If now isn't a good time, I'll call you back on Thursday.", DEBT)).toBeNull();
    expect(threatFinding('如果您同意，我就给您办理12期分期，每月600元。', DEBT)).toBeNull();
    expect(threatFinding('That is fine, the court of appeal is not involved.', DEBT)).toBeNull();
  });
});
