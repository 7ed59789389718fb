import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formattingMarks,
  garbledSigns,
  qualityFindings,
  repeatedSentences,
  repeatedTurns,
  scoreQuality,
  sentences,
} from '../../../src/core/scoring/quality.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';

const say = (role: 'assistant' | 'user', text: string): Turn => ({ role, text, tool_calls: [], t_ms: 0 });

describe('formattingMarks', () => {
  it('finds bold and a bullet list in the reference reply', () => {
    expect(formattingMarks('Refund is **$42.10**:\n- item A\n- item B')).toEqual(['bold/italic', 'bullet list']);
  });

  it.each([
    ['# Your bill', 'markdown header'],
    ['## 账单', 'markdown header'],
    ['This is __important__ news', 'bold/italic'],
    ['This is *really* it', 'bold/italic'],
    ['* first thing', 'bullet list'],
    ['• 第一项', 'bullet list'],
    ['Steps:\n1. call us\n2. pay', 'numbered list'],
    ['步骤：\n1) 登录\n2) 付款', 'numbered list'],
    ['步骤：\n1、登录\n2、付款', 'numbered list'],
    ['| a | b |\n|---|---|', 'table'],
    ['Run `pay` now', 'code'],
    ['```\ncode\n```', 'code'],
    ['See [our site](https://x.y)', 'markdown link'],
    ['Visit https://bank.example.com/help', 'url'],
    ['Visit www.bank.com today', 'url'],
    ['Done.\n---\nBye.', 'horizontal rule'],
  ])('%j → %s', (text, mark) => {
    expect(formattingMarks(text)).toContain(mark);
  });

  it.each([
    '您好，您的账单B1002金额是¥21.10，请拨打138-0013-8000。',
    'Your bill B1002 is ¥21.10; call 138-0013-8000 if you need help.',
    'The total is 3 * 4 = 12 dollars, and 5*3 is 15.',
    '1. That was the first reason I called.',
    'Your balance went from 100 to -20.',
    '好的，我已经为您缴纳了21.10元。还有什么可以帮您？',
  ])('plain speech passes: %j', (text) => {
    expect(formattingMarks(text)).toEqual([]);
  });
});

describe('repetition', () => {
  it('splits sentences without breaking decimals', () => {
    expect(sentences('Your bill is ¥21.10. Pay now! 好的。')).toEqual(['your bill is ¥21.10', 'pay now', '好的']);
  });

  it('flags a sentence said three times in one turn, not twice', () => {
    expect(repeatedSentences('Please hold. Please hold. Please hold.')).toEqual(['please hold']);
    expect(repeatedSentences('请稍等。请稍等！请稍等？')).toEqual(['请稍等']);
    expect(repeatedSentences('Please hold. Please hold. Thanks.')).toEqual([]);
  });

  it('flags the third identical non-trivial reply in an episode, not short ones', () => {
    const texts = [
      { index: 0, text: 'Let me check that for you.' },
      { index: 2, text: 'OK.' },
      { index: 4, text: 'Let me check  that for you.' },
      { index: 6, text: 'OK.' },
      { index: 8, text: 'let me check that for you.' },
      { index: 10, text: 'OK.' },
    ];
    expect(repeatedTurns(texts)).toEqual([{ turn: 8, earlier: [0, 4] }]);
  });

  it('counts the reply length in code points, not UTF-16 units', () => {
    const thrice = (text: string) => [0, 2, 4].map((index) => ({ index, text }));
    // 11 emoji are 22 UTF-16 units but 11 characters: too short; 12 are long enough.
    expect(repeatedTurns(thrice('😀'.repeat(11)))).toEqual([]);
    expect(repeatedTurns(thrice('😀'.repeat(12)))).toEqual([{ turn: 4, earlier: [0, 2] }]);
    expect(repeatedTurns(thrice('abcdefghijk'))).toEqual([]);
    expect(repeatedTurns(thrice('abcdefghijkl'))).toEqual([{ turn: 4, earlier: [0, 2] }]);
  });
});

describe('garbledSigns', () => {
  it('finds the replacement character', () => {
    expect(garbledSigns('您好\uFFFD\uFFFD')).toEqual(['replacement character U+FFFD']);
  });

  it('finds a long run of one character but not of digits', () => {
    expect(garbledSigns('哈哈哈哈哈哈哈哈')).toEqual(['run of "哈" ×8']);
    expect(garbledSigns('aaaaaaa')).toEqual([]);
    expect(garbledSigns('号码是13800000000。')).toEqual([]);
  });

  it('finds a high share of odd characters', () => {
    expect(garbledSigns('▓▒░ pay ▓▒░')).toEqual(['6 of 9 characters are not speech']);
    expect(garbledSigns('Thanks for calling 😊')).toEqual([]);
  });

  it('passes ordinary text with numbers and punctuation', () => {
    expect(garbledSigns('您的账单B1002（¥21.10）已缴清，电话138-0013-8000。')).toEqual([]);
    expect(garbledSigns('It costs $42.10 (about 5%) — OK?')).toEqual([]);
  });

  it('counts ASCII control characters as odd', () => {
    expect(garbledSigns('\x01\x02\x03 ab')).toEqual(['3 of 5 characters are not speech']);
  });

  it('agrees with a per-character count on any text (plain ASCII takes a shortcut)', () => {
    const ordinary =
      /[\p{L}\p{M}\p{N}\s!-/:-@[-`{-~。，、；：？！“”‘’（）《》〈〉【】「」『』…—–·～￥¥€£％＋－＝／＆＠＃]/u;
    const reference = (text: string): string[] => {
      const out: string[] = [];
      if (text.includes('\uFFFD')) out.push('replacement character U+FFFD');
      const run = /([^\s\d])\1{7,}/u.exec(text);
      if (run) out.push(`run of ${JSON.stringify(run[1])} ×${[...run[0]].length}`);
      const chars = [...text].filter((c) => !/\s/u.test(c));
      const odd = chars.filter((c) => !ordinary.test(c)).length;
      if (odd >= 3 && odd / chars.length > 0.25) out.push(`${odd} of ${chars.length} characters are not speech`);
      return out;
    };
    const chars = ['a', 'a', '1', ' ', '\t', '\n', '!', '~', '\x01', '\x7f', '▓', '哈', '😀', '\uFFFD', '\u00a0'];
    const text = fc.array(fc.constantFrom(...chars), { maxLength: 30 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, (s) => JSON.stringify(garbledSigns(s)) === JSON.stringify(reference(s))),
      { numRuns: 3000, seed: 7 },
    );
  });
});

describe('scoreQuality', () => {
  it('names the turn and the rule; user turns are not checked', () => {
    const turns = [
      say('assistant', 'Hello, how can I help?'),
      say('user', '**bold** from the caller is fine'),
      say('assistant', 'Refund is **$42.10**:\n- item A\n- item B'),
      say('assistant', 'Wait. Wait. Wait.'),
    ];
    expect(qualityFindings(turns)).toEqual([
      { turn: 2, rule: 'formatting', detail: 'bold/italic, bullet list' },
      { turn: 3, rule: 'repetition', detail: '"wait" said 3+ times' },
    ]);
    expect(scoreQuality(turns)).toEqual({
      score: 0,
      judged: true,
      details: ['turn 2: formatting (bold/italic, bullet list)', 'turn 3: repetition ("wait" said 3+ times)'],
    });
  });

  it('ignores stop tokens and passes clean speech', () => {
    const turns = [say('assistant', '好的，已为您缴费21.10元。再见。###STOP###')];
    expect(scoreQuality(turns)).toEqual({ score: 1, judged: true, details: [] });
  });
});
