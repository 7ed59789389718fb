import { describe, expect, it } from 'vitest';
import { communicates, scoreCommunicate } from '../../../src/core/scoring/communicate.ts';
import { enNumbers, statedNumbers, zhIntegerValue, zhNumbers } from '../../../src/core/scoring/spoken-numbers.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';

const agent = (text: string): Turn => ({ role: 'assistant', text, tool_calls: [], t_ms: 0 });

describe('spoken numbers', () => {
  it.each([
    ['三十六', 36],
    ['一百零五', 105],
    ['两百五', 250],
    ['三千二', 3200],
    ['一万二', 12000],
    ['十二', 12],
    ['二十', 20],
    ['一三八', 138],
    ['一千零二十', 1020],
  ])('Mandarin integer %s = %d', (run, value) => expect(zhIntegerValue(run)).toBe(value));

  it.each([
    ['您需要缴纳三十六块五。', [36.5]],
    // 一共 ("in all") reads as 1: membership tests only, an item "1" is rare.
    ['一共三十六元五角', [1, 36.5]],
    ['三十六块五毛二分', [36.52]],
    ['三十六块零五分', [36.05]],
    ['六十三点五元', [63.5]],
    ['36块5', [36.5]],
    ['63.5元', [63.5]],
    ['五毛', [0.5]],
    ['两百元，剩下三十六块八', [200, 36.8]],
  ])('Mandarin %s', (text, values) => expect(zhNumbers(text)).toEqual(values));

  it.each([
    ['That is thirty-six fifty.', [36.5]],
    ['thirty-six dollars and fifty cents', [36.5]],
    ['thirty six dollars fifty', [36.5]],
    ['thirty-six point five', [36.5]],
    ['two hundred dollars', [200]],
    ['two hundred and five', [205]],
    ['fifty cents', [0.5]],
    ['one thousand two hundred', [1200]],
    ['I have one question', [1]],
  ])('English %s', (text, values) => expect(enNumbers(text)).toEqual(values));

  it('reads a text without Mandarin numerals or units as the full Mandarin scan does', () => {
    // ' 毛' appended forces the scan (毛 starts a token) and adds no number: a unit after a gap.
    const scan = (text: string) => zhNumbers(`${text} 毛`);
    expect(zhNumbers('Your bill is 36.50, due 2026-12-01; 007 x.5 1.2.3 4.')).toEqual([
      36.5, 2026, 12, 1, 7, 5, 1.2, 3, 4,
    ]);
    expect(zhNumbers('no digits at all, 百 and 点 alone')).toEqual([]);
    // Seeded fuzz over digits, dots, commas, letters, spaces, and CJK that starts no token.
    const alphabet = ['0', '1', '5', '9', '.', '.', ',', ' ', 'a', 'Z', '-', '百', '点', '千', '万', 'é', '\n'];
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let n = 0; n < 2000; n++) {
      let text = '';
      const length = next() % 24;
      for (let i = 0; i < length; i++) text += alphabet[next() % alphabet.length];
      expect(zhNumbers(text), JSON.stringify(text)).toEqual(scan(text));
    }
  });

  it('reads thousands separators and never a number out of a longer one', () => {
    expect(statedNumbers('1,000 and 136.5')).toEqual([1000, 136.5]);
    expect(statedNumbers('30,50')).toEqual([30, 50]);
  });
});

describe('communicates', () => {
  it.each([
    ['您的账单是36.5元', '36.5', true],
    ['您的账单是36.50元', '36.5', true],
    ['您的账单是136.5元', '36.5', false],
    ['您的账单是36.55元', '36.5', false],
    ['还差三十六块五', '36.5', true],
    ['还差三十六元五角', '36.5', true],
    ['还差三十六块', '36.5', false],
    ['The rest is thirty-six fifty.', '36.5', true],
    ['The rest is thirty-six dollars and fifty cents.', '36.5', true],
    ['The rest is one hundred thirty-six fifty.', '36.5', false],
    ['一共1,000元', '1000', true],
    ['一共1000元', '1,000', true],
    ['已经超过60天', '60天', true],
    ['已经超过160天', '60天', false],
    ['申诉单号是D0003', 'D0003', true],
    ['申诉单号是D00031', 'D0003', false],
    ['从4月1日起生效', '4月1日', true],
    ['从4月11日起生效', '4月1日', false],
    ['未查到缴费记录', '未查到', true],
  ])('numbers: %j says %j: %s', (said, item, expected) => expect(communicates(said, item, 'numbers')).toBe(expected));

  it('substring semantics (tau2) keep their substring meaning', () => {
    expect(communicates('The total is 136.5', '36.5', 'substring')).toBe(true);
    expect(communicates('thirty-six fifty', '36.5', 'substring')).toBe(false);
    expect(communicates('1,000 dollars', '1000', 'substring')).toBe(true);
  });
});

describe('scoreCommunicate', () => {
  const turns = [agent('您的二月账单是一百三十六块五。'), agent('余额还剩36.8元。###STOP###')];
  it('numbers: 136.5 does not say 36.5; stop tokens are not speech', () => {
    expect(scoreCommunicate(turns, ['136.5', '36.8'], 'numbers')).toEqual({
      score: 1,
      details: [],
      judged: true,
    });
    expect(scoreCommunicate(turns, ['36.5', '36.8'], 'numbers')).toEqual({
      score: 0,
      details: ['not communicated: "36.5"'],
      judged: true,
    });
  });
  it('substring (the default) is tau2-bench rule', () => {
    expect(scoreCommunicate([agent('Total 136.5')], ['36.5']).score).toBe(1);
  });
});
