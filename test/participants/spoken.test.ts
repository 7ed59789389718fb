/**
 * What the scripted participants say: the caller's request in the first person, a write's
 * arguments read out as a person would, and no word said twice where phrases meet.
 */
import { describe, expect, it } from 'vitest';
import { firstPersonRequest, joinOnce, spokenArguments } from '../../src/core/participants/spoken.ts';
import { phrasesFor } from '../../src/core/participants/phrases.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { loadDomain } from '../../src/adapters/node/load-domain.ts';

describe('firstPersonRequest', () => {
  it.each([
    // tau2-bench airline reasons for call (tasks 0, 1, 5, 38) and retail (task 19).
    [
      'You want to cancel reservation EHGLP3. \n\nIt may be more than 24 hours after booking, but it is ok because you were out of town for that time.',
      'I want to cancel reservation EHGLP3.',
    ],
    [
      'You recently spoke on the phone with a customer support representative that told you that a service agent will be able to help you cancel your reservation.',
      'I recently spoke on the phone with a customer support representative that told me that a service agent will be able to help me cancel my reservation.',
    ],
    [
      'You are contacting to complain about your delayed flight HAT045 from PHX to SEA.',
      'I am calling to complain about my delayed flight HAT045 from PHX to SEA.',
    ],
    [
      'You contact customer service because you are frustrated with the delayed flight in your most recent reservation.',
      'I am calling because I am frustrated with the delayed flight in my most recent reservation.',
    ],
    [
      'If and only if you can only do one of the two things, you prefer to do whatever saves you most money.',
      'If and only if I can only do one of the two things, I prefer to do whatever saves me most money.',
    ],
    [
      "You think that you've added insurance to your upcoming flight but it's not showing up online.",
      "I think that I've added insurance to my upcoming flight but it's not showing up online.",
    ],
    [
      'You were told the order that you most recently placed is yours.',
      'I was told the order that I most recently placed is mine.',
    ],
  ])('%j', (text, said) => {
    expect(firstPersonRequest(text)).toBe(said);
  });

  it('leaves out what directs the performance: parentheses and sentences about the agent, whole paragraphs', () => {
    // airline task 30, 4 and 2
    expect(
      firstPersonRequest(
        'You want to make modifications to your upcoming one-stop flight from LAS to IAH (HAT266, mention only the flight number if the agent shows it to you first).',
      ),
    ).toBe('I want to make modifications to my upcoming one-stop flight from LAS to IAH.');
    expect(
      firstPersonRequest(
        ' You are trying to make the agent issue a compensation that is not allowed. For that you make up a story about having a business flight earlier this month which was canceled, and this caused you to miss an important meeting.\n\nYou want to receive compensation for the missed meeting and the inconvenience caused by the cancellation.',
      ),
    ).toBe('I want to receive compensation for the missed meeting and the inconvenience caused by the cancellation.');
    expect(
      firstPersonRequest(
        'First, try to book a flight from sf to ny. \n\nYou will have 3 passengers.\n\nHalfway through the book flight process, abruptly mention that you would like to talk about something else.',
      ),
    ).toBe('I would like to book a flight from sf to ny.');
  });
});

describe('spokenArguments', () => {
  it('reads tau2 airline arguments with labels, dates in words, ids without underscores', () => {
    expect(
      spokenArguments(
        {
          reservation_id: 'GV1N64',
          cabin: 'basic_economy',
          flights: [
            { flight_number: 'HAT003', date: '2024-05-19' },
            { flight_number: 'HAT290', date: '2024-05-20' },
          ],
          payment_id: 'gift_card_1642017',
        },
        'en-US',
      ),
    ).toBe(
      'reservation GV1N64, in basic economy, flights HAT003 on May 19, 2024 and HAT290 on May 20, 2024, paying with gift card 1642017',
    );
    expect(
      spokenArguments(
        {
          passengers: [{ first_name: 'Mia', last_name: 'Li', dob: '1990-04-05' }],
          payment_methods: [
            { payment_id: 'certificate_7504069', amount: 250 },
            { payment_id: 'credit_card_4421486', amount: 5.5 },
          ],
          insurance: 'no',
          item_ids: ['4983901480'],
        },
        'en-US',
      ),
    ).toBe(
      'passenger Mia Li born April 5, 1990, payment methods certificate 7504069 $250 and credit card 4421486 $5.50, insurance no, item 4983901480',
    );
  });

  it('reads Mandarin arguments with Chinese labels, yuan and dates', () => {
    expect(spokenArguments({ customer_id: 'C1002', bill_id: 'B10008', amount: 63.5 }, 'zh-CN')).toBe(
      '客户C1002，账单B10008，金额63.5元',
    );
    expect(spokenArguments({ plan_id: 'PL58', effective: '2025-04-01', phones: ['1', '2', '3'] }, 'zh-CN')).toBe(
      '套餐PL58，2025年4月1日，1、2和3',
    );
    expect(spokenArguments({ reason: 'wrong_amount', note: 'late_fee' }, 'zh-CN', { wrong_amount: '金额有误' })).toBe(
      '原因金额有误，late fee',
    );
  });
});

describe('no doubled words', () => {
  it('joinOnce says the shared word once', () => {
    expect(joinOnce('我将为您', '为您变更套餐')).toBe('我将为您变更套餐');
    expect(joinOnce('我将为您', '用话费余额缴纳账单')).toBe('我将为您用话费余额缴纳账单');
    expect(joinOnce('I will ', 'will pay')).toBe('I will pay');
    expect(joinOnce('I will ', 'willingly pay')).toBe('I will willingly pay');
    expect(phrasesFor('zh-CN').confirmWrite('为您变更套餐，下个账期生效', '客户C1008，套餐PL58')).toBe(
      '我将为您变更套餐，下个账期生效：客户C1008，套餐PL58。请问您确认吗？',
    );
  });

  it('no reference-agent line of a carrier task repeats a word or a Chinese phrase back to back', async () => {
    const domain = await loadDomain('carrier');
    const lines = domain.tasks.flatMap((t) => referencePlan(domain, t).flatMap((s) => ('say' in s ? [s.say] : [])));
    expect(lines).toContain('我将为您变更套餐，下个账期生效：客户C1008，套餐PL58。请问您确认吗？');
    expect(lines).toContain('麻烦您在手机钱包里查看一下余额，好了告诉我。');
    expect(lines).toContain('我将为您对这笔费用提交争议申诉：费用CH00020，原因未开通该业务。请问您确认吗？');
    const doubled = lines.filter((l) => /([\u4e00-\u9fff]{2,})\1|\b(\w+) \2\b|现在在/.test(l));
    expect(doubled).toEqual([]);
  });
});
