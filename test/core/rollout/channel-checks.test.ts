import { describe, expect, it } from 'vitest';
import { channelVerdicts } from '../../../src/core/scoring/channel-checks.ts';
import { pickBargeIn } from '../../../src/core/channel/barge-in.ts';
import { pickDropoutCut, tokenize } from '../../../src/core/channel/text-cut.ts';
import { seededRng } from '../../../src/core/ports/rng.ts';
import type { InterruptionType, Turn } from '../../../src/core/schema/trajectory.ts';

const a = (text: string, extra: object = {}): Turn =>
  ({ role: 'assistant', text, tool_calls: [], t_ms: 0, ...extra }) as Turn;
const u = (text: string, extra: object = {}): Turn =>
  ({ role: 'user', text, tool_calls: [], t_ms: 0, ...extra }) as Turn;
const call = (name: string, args: object): Turn =>
  ({ role: 'assistant', text: '', tool_calls: [{ id: 'c1', name, arguments: args }], t_ms: 0 }) as Turn;

function dropout(heard: string, full: string, reply: Turn[]): Turn[] {
  return [
    a('Could you give me your account number?'),
    u(heard, { dropout: { full_text: full, cut_char: heard.length, mode: 'word', cut_ms: 900 } }),
    ...reply,
  ];
}

function barge(
  type: InterruptionType,
  heard: string,
  said: string,
  reply: Turn[],
  value: string | null = null,
): Turn[] {
  return [
    a(heard, {
      interrupted: {
        type,
        heard_text: heard,
        full_text: `${heard} and the rest of it.`,
        cut_char: heard.length,
        cut_ms: 1000,
        dropped_tool_calls: [],
      },
    }),
    u(said, { barge_in: { type, value } }),
    ...reply,
  ];
}

describe('dropout reaction check', () => {
  it('passes a short follow-up that repeats the heard part and asks for the rest', () => {
    const v = channelVerdicts(
      dropout('My account number is 138', 'My account number is 138 4407.', [a('138, and the rest of the number?')]),
    );
    expect(v).toHaveLength(1);
    expect(v[0]).toMatchObject({ id: 'channel:dropout@1', rule: 'channel', status: 'passed', turn: 2 });
  });

  it('fails a restart of the form, a reply that drops the heard part, a long reply, or acting before asking', () => {
    const cases: Turn[][] = [
      [a("Let's start over. What is your account number?")],
      [a('Sorry, could you repeat that?')],
      [
        a(
          'Thank you for that, I understand you are giving me your account number which starts with 138 and I will need every digit of it in order to find your account in our system, so could you continue?',
        ),
      ],
      [call('find_account', { account: '138' }), a('138, and the rest?')],
    ];
    for (const reply of cases)
      expect(
        channelVerdicts(dropout('My account number is 138', 'My account number is 138 4407.', reply))[0]!.status,
      ).toBe('failed');
  });

  it('works in Mandarin', () => {
    const v = channelVerdicts(
      dropout('我的账号是一三八', '我的账号是一三八四四零七。', [a('一三八，后面几位是多少？')]),
    );
    expect(v[0]!.status).toBe('passed');
  });
});

describe('barge-in reaction checks', () => {
  const heard = 'Your current balance is 30 dollars, and the next bill';
  it('backchannel: carrying on passes, starting over or repeating fails', () => {
    expect(
      channelVerdicts(barge('backchannel', heard, 'Mm-hmm.', [a('is due on the fifth of next month.')]))[0]!.status,
    ).toBe('passed');
    expect(
      channelVerdicts(
        barge('backchannel', heard, 'Mm-hmm.', [
          a('Your current balance is 30 dollars, and the next bill is due on the fifth.'),
        ]),
      )[0]!.status,
    ).toBe('failed');
  });

  it('urge: a short answer passes, a long restart fails', () => {
    expect(
      channelVerdicts(barge('urge', heard, 'Just get to the point.', [a('You owe 30 dollars, due on the fifth.')]))[0]!
        .status,
    ).toBe('passed');
    const long = a(
      `${heard} is due on the fifth of next month, and I can also tell you about our autopay options which many customers find convenient for their monthly bills.`,
    );
    expect(channelVerdicts(barge('urge', heard, 'Just get to the point.', [long]))[0]!.status).toBe('failed');
  });

  it('correction: the corrected value must be used, in words or tool arguments', () => {
    const h = 'I have your number as 5550002, and I will';
    expect(
      channelVerdicts(
        barge('correction', h, "No, sorry, it's 5550001.", [a('Sorry, 5550001. Let me look that up.')], '5550001'),
      )[0]!.status,
    ).toBe('passed');
    expect(
      channelVerdicts(
        barge(
          'correction',
          h,
          "No, sorry, it's 5550001.",
          [call('find_account', { phone: '5550001' }), a('Found it.')],
          '5550001',
        ),
      )[0]!.status,
    ).toBe('passed');
    expect(
      channelVerdicts(barge('correction', h, "No, sorry, it's 5550001.", [a('OK, 5550002 it is.')], '5550001'))[0]!
        .status,
    ).toBe('failed');
  });

  it('stop: a short reply without tool calls passes; calling a tool fails; a question gets no verdict', () => {
    expect(channelVerdicts(barge('stop', heard, 'Stop, stop.', [a('Sure, I will wait.')]))[0]!.status).toBe('passed');
    expect(
      channelVerdicts(barge('stop', heard, 'Stop, stop.', [call('pay', { amount: 30 }), a('Done.')]))[0]!.status,
    ).toBe('failed');
    expect(channelVerdicts(barge('question', heard, 'Is there a fee?', [a('No fee.')]))).toEqual([]);
  });

  it('a text-only trajectory has no channel verdicts', () => {
    expect(channelVerdicts([a('Hello'), u('Hi'), a('Bye')])).toEqual([]);
  });
});

describe('cut pickers', () => {
  it('dropout cuts fall inside the utterance, at word boundaries or inside a word, deterministically', () => {
    const text = 'My account number is one three eight, four four zero seven.';
    const modes = new Set<string>();
    for (let s = 0; s < 200; s++) {
      const c = pickDropoutCut(text, seededRng(s))!;
      expect(c).toEqual(pickDropoutCut(text, seededRng(s)));
      expect(c.char).toBeGreaterThan(0);
      expect(c.char).toBeLessThan(text.length - 1);
      expect(text.startsWith(c.heard)).toBe(true);
      if (c.mode === 'word') expect(tokenize(text).some((t) => t.end === c.char)).toBe(true);
      else expect(tokenize(text).some((t) => t.start < c.char && c.char < t.end)).toBe(true);
      modes.add(c.mode);
    }
    expect(modes).toEqual(new Set(['word', 'mid_word']));
  });

  it('barge-in texts come from the language tables; corrections cut after a value and give the caller’s value', () => {
    const facts = [{ key: 'phone', value: '5550001', cues: ['phone'] }];
    const reply = 'I found the account for 5550002, and I can take the payment now if you confirm.';
    const b = pickBargeIn(reply, 'correction', seededRng(1), { language: 'en-US', facts })!;
    expect(b.cut.heard).toBe('I found the account for 5550002');
    expect(b.value).toBe('5550001');
    expect(b.text).toContain('5550001');
    const zh = pickBargeIn('您的余额是三十元，下个月五号到期，需要我帮您缴费吗？', 'backchannel', seededRng(2), {
      language: 'zh-CN',
    })!;
    expect(['嗯嗯。', '好的好的。', '嗯，对。', '对对。']).toContain(zh.text);
    expect(
      /[，。]$/.test('您的余额是三十元，下个月五号到期，需要我帮您缴费吗？'.slice(zh.cut.char, zh.cut.char + 1)),
    ).toBe(true);
    expect(pickBargeIn('OK.', 'urge', seededRng(3), { language: 'en' })).toBeNull();
  });

  it('a correction never names a value the agent did not get wrong (a customer id is not the caller’s phone)', () => {
    const facts = [{ key: 'phone', value: '13601357924', cues: ['电话'] }];
    const idReply = '我将为您变更套餐，下个账期生效：客户C1008，套餐PL58。请问您确认吗？';
    for (let seed = 0; seed < 20; seed++) {
      const b = pickBargeIn(idReply, 'correction', seededRng(seed), { language: 'zh-CN', facts })!;
      expect(b).toMatchObject({ value: null, text: '不对，不是这样的。' });
    }
    // The phone said right: nothing to correct either.
    const right = pickBargeIn('好的，您的号码是13601357924，我来查一下。', 'correction', seededRng(1), {
      language: 'zh-CN',
      facts,
    })!;
    expect(right.value).toBeNull();
    // The phone said wrong (same length, other digits): the caller gives its own number.
    const wrong = pickBargeIn('好的，您的号码是13601357925，我来查一下。', 'correction', seededRng(1), {
      language: 'zh-CN',
      facts,
    })!;
    expect(wrong).toMatchObject({ value: '13601357924', text: '不对，是13601357924。' });
    expect(wrong.cut.heard).toBe('好的，您的号码是13601357925');
  });
});
