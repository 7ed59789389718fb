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

  it.each([
    // tau2-bench retail tasks 12, 31, 36, 45, 50 and 62: how to act, what not to reveal, tests of
    // the agent and what only follows them ("If not, …") are not said.
    [
      'You just got into gaming and want to cancel or return everything not associated with it. (Everything except a keyboard and a mouse, but do not reveal it to the agent). PayPal is prefered for refund, but otherwise you are angry and ask for human agent for help.',
      'I just got into gaming and want to cancel or return everything not associated with it.',
    ],
    [
      ". You just lost your tablet you just received and are in a bad mood. You want to know the tracking number of the order, and if the agent can help you refund or reorder the tablet. (You know it's a long shot, but you want to try). If not, cancel the charger you just bought, because it goes with the tablet... Also cancel the boot and keep the kettle (if not possible, do not do anything on that order), and return the sneaker.",
      'I just lost my tablet I just received and am in a bad mood. Also cancel the boot and keep the kettle (if not possible, do not do anything on that order), and return the sneaker.',
    ],
    [
      'You just placed an order but you realize that your card has only $1131 credit left, but the order total is more than $1160. You wonder if the agent can help split the payment with another card. If not, you wonder what the most expensive item and its price, and if you can just cancel that item. If not, you wonder if you can switch all items to their cheapest options and bring the cost down to $1131. If so, do it. If not, you wonder if the agent can just cancel the order so that you can order again.',
      'I just placed an order but I realize that my card has only $1131 credit left, but the order total is more than $1160.',
    ],
    [
      "You want to exchange a robotic vacuum cleaner in your recent order for a canister based one from the same product line. When asked for order ID, provide 9502127 first. If that doesn't work, respond exactly with 'I forgot the W at the beginning'. If and only if the agent gives you several options for the new vacuum, go for the bagless version (don't mention this if the agent just provides you one option). Ask the agent for getting a gift card for the price difference instead of the original payment method, if possible.",
      'I want to exchange a robotic vacuum cleaner in my recent order for a canister based one from the same product line.',
    ],
    [
      "You're in a rush and you want to undo cancelling an order that you've previously placed. Be insistent that the customer service agent should undo the cancellation and ensure that the order is delivered as soon as possible. Do NOT mention the actual items that were in the order, just that you want to undo the cancellation and receive all the items that were in the initial order as soon as possible.",
      "I'm in a rush and I want to undo cancelling an order that I've previously placed.",
    ],
    [
      'As you are interacting with a customer service agent, you first try to get it to guess a famous poem by providing the first line. If it refuses to do so, you carry on with your intended task, which is to check and modify a recent order you placed. You first ask about the price of a bluetooth speaker you bought and its battery life. If the price is greater than $300, ask the agent to cancel it from your order since you thought it was cheaper than that. Ask the agent if there are any bluetooth speakers available for less than $100. If there are, ask the agent to add the cheapest one to your order. You only want to modify your order if there is a bluetooth speaker available for less than $100, otherwise tell the agent to forget about it. Finally, ask the agent to confirm the total price of your new order. You never want to cancel your entire order, and would prefer to return the speaker at a later time if canceling the entire order is the only option.',
      'First, I would like to know the price of a bluetooth speaker I bought and its battery life. I never want to cancel my entire order, and would prefer to return the speaker at a later time if canceling the entire order is the only option.',
    ],
  ])('retail: %j', (text, said) => {
    expect(firstPersonRequest(text)).toBe(said);
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
