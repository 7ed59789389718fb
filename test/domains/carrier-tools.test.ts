import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime, Environment } from '../../src/core/env/index.ts';
import { Task, type Domain } from '../../src/core/schema/index.ts';
import { CARRIER_NOW_MS, carrierEnvFunctions } from '../../domains/carrier/domain.ts';
import {
  TRANSFER_RESULT,
  disputeCutoff,
  localDate,
  localTimestamp,
  nextCycleStart,
  toFen,
  toYuan,
} from '../../domains/carrier/tools.ts';
import { call, carrierRuntime, fails, inserted, ok, w } from './carrier-helpers.ts';

let domain: Domain;
let runtime: DomainRuntime;
let env: Environment;

beforeAll(async () => {
  ({ domain, runtime } = await carrierRuntime());
});

async function fresh(task?: Task): Promise<Environment> {
  env = await runtime.open(task);
  return env;
}

afterEach(async () => {
  await env?.close();
});

/** A bill row as stored. */
async function bill(billId: string) {
  return (await env.query('SELECT * FROM bills WHERE bill_id = ?', [billId]))[0];
}

describe('money and time helpers', () => {
  it('converts yuan to fen and back', () => {
    expect([toFen(21.1), toFen(0.1 + 0.2), toFen(200), toFen(0.01)]).toEqual([2110, 30, 20000, 1]);
    expect([toYuan(2110), toYuan(6350), toYuan(0), toYuan(1)]).toEqual([21.1, 63.5, 0, 0.01]);
  });

  it('rejects non-positive amounts and more than 2 decimals', () => {
    expect(() => toFen(0)).toThrow('amount must be greater than 0, got 0');
    expect(() => toFen(-3)).toThrow('amount must be greater than 0, got -3');
    expect(() => toFen(Number.NaN)).toThrow('amount must be greater than 0, got NaN');
    expect(() => toFen(21.105)).toThrow('amount must have at most 2 decimal places, got 21.105');
  });

  it('reads the policy clock in China Standard Time', () => {
    expect(CARRIER_NOW_MS).toBe(Date.UTC(2025, 2, 15, 2, 0, 0));
    expect(localTimestamp(CARRIER_NOW_MS)).toBe('2025-03-15T10:00:00+08:00');
    expect(localDate(Date.parse('2025-03-14T17:30:00Z'))).toBe('2025-03-15');
    expect(nextCycleStart(CARRIER_NOW_MS)).toBe('2025-04-01');
    expect(nextCycleStart(Date.parse('2024-12-31T23:30:00+08:00'))).toBe('2025-01-01');
    expect(disputeCutoff(CARRIER_NOW_MS)).toBe('2025-01-14');
  });
});

describe('find_customer_by_phone', () => {
  it('returns the account in yuan', async () => {
    await fresh();
    expect(await ok(env, 'find_customer_by_phone', { phone: '13812345678' })).toEqual({
      customer_id: 'C1001',
      name: '李娜',
      phone: '13812345678',
      status: 'active',
      plan_id: 'PL18',
      plan_name: '基础18元套餐',
      next_plan_id: null,
      prepaid_balance: 17,
    });
  });

  it('accepts a number spoken in groups', async () => {
    await fresh();
    expect(await ok(env, 'find_customer_by_phone', { phone: '158 6745-2301' })).toMatchObject({ customer_id: 'C1002' });
  });

  it('rejects numbers that are not 11 digits, unknown numbers and non-strings', async () => {
    await fresh();
    expect(await fails(env, 'find_customer_by_phone', { phone: '1381234567' })).toBe(
      'Error: phone must be 11 digits, got "1381234567"',
    );
    expect(await fails(env, 'find_customer_by_phone', { phone: '1381234567a' })).toBe(
      'Error: phone must be 11 digits, got "1381234567a"',
    );
    expect(await fails(env, 'find_customer_by_phone', { phone: '13800000000' })).toBe(
      'Error: no customer with phone 13800000000',
    );
    expect(await fails(env, 'find_customer_by_phone', { phone: 13812345678 })).toBe(
      'Error: invalid arguments for find_customer_by_phone: phone: Invalid input: expected string, received number',
    );
  });
});

describe('get_bills', () => {
  it('lists bills oldest first with outstanding amounts', async () => {
    await fresh();
    expect(await ok(env, 'get_bills', { customer_id: 'C1001' })).toEqual({
      customer_id: 'C1001',
      bills: [
        {
          bill_id: 'B10001',
          period: '2024-11',
          amount: 18,
          paid: 18,
          outstanding: 0,
          due_date: '2024-12-25',
          status: 'paid',
        },
        {
          bill_id: 'B10002',
          period: '2024-12',
          amount: 18,
          paid: 18,
          outstanding: 0,
          due_date: '2025-01-25',
          status: 'paid',
        },
        {
          bill_id: 'B10003',
          period: '2025-01',
          amount: 18,
          paid: 18,
          outstanding: 0,
          due_date: '2025-02-25',
          status: 'paid',
        },
        {
          bill_id: 'B10004',
          period: '2025-02',
          amount: 21.1,
          paid: 0,
          outstanding: 21.1,
          due_date: '2025-03-25',
          status: 'unpaid',
        },
      ],
    });
  });

  it('shows a partly paid overdue bill', async () => {
    await fresh();
    const out = (await ok(env, 'get_bills', { customer_id: 'C1017' })) as { bills: unknown[] };
    expect(out.bills[2]).toEqual({
      bill_id: 'B10067',
      period: '2025-01',
      amount: 68,
      paid: 20,
      outstanding: 48,
      due_date: '2025-02-25',
      status: 'overdue',
    });
  });

  it('rejects an unknown customer', async () => {
    await fresh();
    expect(await fails(env, 'get_bills', { customer_id: 'C9999' })).toBe('Error: customer C9999 not found');
  });
});

describe('get_bill_details', () => {
  it('itemizes the charges of a bill', async () => {
    await fresh();
    expect(await ok(env, 'get_bill_details', { bill_id: 'B10052' })).toEqual({
      bill_id: 'B10052',
      customer_id: 'C1013',
      period: '2025-02',
      amount: 96.5,
      paid: 0,
      outstanding: 96.5,
      due_date: '2025-03-25',
      status: 'unpaid',
      charges: [
        {
          charge_id: 'CH00058',
          description: '套餐月租费',
          amount: 58,
          charge_date: '2025-02-01',
          disputed: false,
          dispute_id: null,
        },
        {
          charge_id: 'CH00059',
          description: '超出套餐流量费',
          amount: 32,
          charge_date: '2025-02-26',
          disputed: false,
          dispute_id: null,
        },
        {
          charge_id: 'CH00060',
          description: '短信费',
          amount: 6.5,
          charge_date: '2025-02-28',
          disputed: false,
          dispute_id: null,
        },
      ],
    });
  });

  it('shows the dispute of a disputed charge', async () => {
    await fresh();
    const out = (await ok(env, 'get_bill_details', { bill_id: 'B10023' })) as { charges: unknown[] };
    expect(out.charges).toEqual([
      {
        charge_id: 'CH00028',
        description: '套餐月租费',
        amount: 38,
        charge_date: '2025-01-01',
        disputed: false,
        dispute_id: null,
      },
      {
        charge_id: 'CH00029',
        description: '游戏充值代扣费',
        amount: 9.9,
        charge_date: '2025-01-18',
        disputed: true,
        dispute_id: 'D0001',
      },
    ]);
  });

  it('rejects an unknown bill', async () => {
    await fresh();
    expect(await fails(env, 'get_bill_details', { bill_id: 'B99999' })).toBe('Error: bill B99999 not found');
  });
});

describe('get_payments', () => {
  it('lists payments oldest first', async () => {
    await fresh();
    expect(await ok(env, 'get_payments', { customer_id: 'C1017' })).toEqual({
      customer_id: 'C1017',
      payments: [
        {
          payment_id: 'P0019',
          bill_id: 'B10065',
          amount: 71,
          method: 'prepaid_balance',
          paid_at: '2024-12-20T10:03:00+08:00',
        },
        { payment_id: 'P0048', bill_id: 'B10066', amount: 68, method: 'wallet', paid_at: '2025-01-18T11:57:00+08:00' },
        { payment_id: 'P0079', bill_id: 'B10067', amount: 20, method: 'wallet', paid_at: '2025-02-28T19:40:00+08:00' },
      ],
    });
  });

  it('shows no payment for the overdue January bill the caller of the claim task says was paid', async () => {
    await fresh();
    const out = (await ok(env, 'get_payments', { customer_id: 'C1007' })) as { payments: { bill_id: string }[] };
    expect(out.payments.map((p) => p.bill_id)).toEqual(['B10025', 'B10026']);
  });

  it('rejects an unknown customer', async () => {
    await fresh();
    expect(await fails(env, 'get_payments', { customer_id: 'C0000' })).toBe('Error: customer C0000 not found');
  });
});

describe('list_plans', () => {
  it('lists plans by monthly fee', async () => {
    await fresh();
    expect(await ok(env, 'list_plans', {})).toEqual({
      plans: [
        { plan_id: 'PL18', name: '基础18元套餐', monthly_fee: 18, data_gb: 5, voice_minutes: 100 },
        { plan_id: 'PL38', name: '畅聊38元套餐', monthly_fee: 38, data_gb: 15, voice_minutes: 300 },
        { plan_id: 'PL58', name: '畅享58元套餐', monthly_fee: 58, data_gb: 30, voice_minutes: 500 },
        { plan_id: 'PL88', name: '畅享88元套餐', monthly_fee: 88, data_gb: 60, voice_minutes: 1000 },
        { plan_id: 'PL128', name: '尊享128元套餐', monthly_fee: 128, data_gb: 100, voice_minutes: 2000 },
      ],
    });
  });
});

describe('change_plan', () => {
  it('schedules the plan for the next cycle', async () => {
    await fresh();
    const out = await call(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL58' });
    expect(JSON.parse(out.content)).toEqual({
      customer_id: 'C1008',
      plan_id: 'PL88',
      next_plan_id: 'PL58',
      effective_from: '2025-04-01',
    });
    expect(out.writes).toEqual([
      w(1, 'change_plan', 'customers', 'update', { customer_id: 'C1008' }, 'next_plan_id', null, 'PL58'),
    ]);
    expect(out.violations).toEqual([]);
    expect(await ok(env, 'find_customer_by_phone', { phone: '13601357924' })).toMatchObject({
      plan_id: 'PL88',
      next_plan_id: 'PL58',
    });
  });

  it('rejects unknown ids, the current plan and a plan already scheduled', async () => {
    await fresh();
    expect(await fails(env, 'change_plan', { customer_id: 'C9999', plan_id: 'PL58' })).toBe(
      'Error: customer C9999 not found',
    );
    expect(await fails(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL99' })).toBe(
      'Error: plan PL99 not found',
    );
    expect(await fails(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL88' })).toBe(
      'Error: customer C1008 is already on plan PL88',
    );
    await ok(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL58' });
    expect(await fails(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL58' })).toBe(
      'Error: plan PL58 is already scheduled for customer C1008 from 2025-04-01',
    );
    expect(env.writes).toHaveLength(1);
  });

  it('lets a change through for a customer with an overdue bill but reports R5', async () => {
    await fresh();
    const out = await call(env, 'change_plan', { customer_id: 'C1009', plan_id: 'PL88' });
    expect(out.error).toBe(false);
    expect(out.violations).toEqual([
      {
        rule: 'R5',
        message: 'plan change scheduled for customer C1009 while bills B10035 are overdue',
        policy: '客户有逾期账单时不得办理套餐变更',
      },
    ]);
  });
});

describe('pay_bill_from_balance', () => {
  it('pays a bill in full and logs every write', async () => {
    await fresh();
    const out = await call(env, 'pay_bill_from_balance', { customer_id: 'C1002', bill_id: 'B10008', amount: 63.5 });
    expect(JSON.parse(out.content)).toEqual({
      payment_id: 'P0090',
      bill_id: 'B10008',
      amount: 63.5,
      method: 'prepaid_balance',
      bill_status: 'paid',
      bill_outstanding: 0,
      prepaid_balance: 36.5,
    });
    const tool = 'pay_bill_from_balance';
    expect(out.writes).toEqual([
      w(1, tool, 'customers', 'update', { customer_id: 'C1002' }, 'prepaid_balance_fen', 10000, 3650),
      ...inserted(
        2,
        tool,
        'payments',
        { payment_id: 'P0090' },
        {
          payment_id: 'P0090',
          customer_id: 'C1002',
          bill_id: 'B10008',
          amount_fen: 6350,
          method: 'prepaid_balance',
          paid_at: '2025-03-15T10:00:00+08:00',
        },
      ),
      w(8, tool, 'bills', 'update', { bill_id: 'B10008' }, 'paid_fen', 0, 6350),
      w(9, tool, 'bills', 'update', { bill_id: 'B10008' }, 'status', 'unpaid', 'paid'),
    ]);
    expect(out.violations).toEqual([]);
  });

  it('pays part of an overdue bill, keeps it overdue and numbers payments in sequence', async () => {
    await fresh();
    expect(await ok(env, 'pay_bill_from_balance', { customer_id: 'C1017', bill_id: 'B10067', amount: 10 })).toEqual({
      payment_id: 'P0090',
      bill_id: 'B10067',
      amount: 10,
      method: 'prepaid_balance',
      bill_status: 'overdue',
      bill_outstanding: 38,
      prepaid_balance: 49,
    });
    const second = await call(env, 'pay_bill_from_balance', { customer_id: 'C1017', bill_id: 'B10067', amount: 38 });
    expect(JSON.parse(second.content)).toMatchObject({
      payment_id: 'P0091',
      bill_status: 'paid',
      bill_outstanding: 0,
      prepaid_balance: 11,
    });
    expect(second.writes.filter((x) => x.table === 'bills')).toEqual([
      w(16, 'pay_bill_from_balance', 'bills', 'update', { bill_id: 'B10067' }, 'paid_fen', 3000, 6800),
      w(17, 'pay_bill_from_balance', 'bills', 'update', { bill_id: 'B10067' }, 'status', 'overdue', 'paid'),
    ]);
  });

  it('refuses ¥21.10 from a prepaid balance of ¥17.00 and changes nothing', async () => {
    await fresh();
    expect(await fails(env, 'pay_bill_from_balance', { customer_id: 'C1001', bill_id: 'B10004', amount: 21.1 })).toBe(
      'Error: insufficient prepaid balance: 17 yuan available, 21.1 yuan requested',
    );
    expect(await bill('B10004')).toMatchObject({ paid_fen: 0, status: 'unpaid' });
    expect(await env.query("SELECT COUNT(*) AS n FROM payments WHERE bill_id = 'B10004'")).toEqual([{ n: 0 }]);
    expect(env.writes).toEqual([]);
  });

  it('rejects bad amounts, unknown ids, other customers’ bills, settled bills and overpayment', async () => {
    await fresh();
    const pay = (customer_id: string, bill_id: string, amount: unknown) =>
      fails(env, 'pay_bill_from_balance', { customer_id, bill_id, amount });
    expect(await pay('C1002', 'B10008', 0)).toBe('Error: amount must be greater than 0, got 0');
    expect(await pay('C1002', 'B10008', -5)).toBe('Error: amount must be greater than 0, got -5');
    expect(await pay('C1002', 'B10008', 10.005)).toBe('Error: amount must have at most 2 decimal places, got 10.005');
    expect(await pay('C1002', 'B10008', '63.5')).toBe(
      'Error: invalid arguments for pay_bill_from_balance: amount: Invalid input: expected number, received string',
    );
    expect(await pay('C9999', 'B10008', 10)).toBe('Error: customer C9999 not found');
    expect(await pay('C1002', 'B99999', 10)).toBe('Error: bill B99999 not found');
    expect(await pay('C1002', 'B10004', 10)).toBe('Error: bill B10004 does not belong to customer C1002');
    expect(await pay('C1002', 'B10005', 10)).toBe('Error: bill B10005 is already paid');
    expect(await pay('C1002', 'B10008', 70)).toBe(
      'Error: amount 70 yuan exceeds the outstanding 63.5 yuan of bill B10008',
    );
    expect(env.writes).toEqual([]);
  });

  it('lets more than ¥200 a day into one bill but reports R3', async () => {
    await fresh();
    const first = await call(env, 'pay_bill_from_balance', { customer_id: 'C1003', bill_id: 'B10012', amount: 200 });
    expect(first.violations).toEqual([]);
    const second = await call(env, 'pay_bill_from_balance', { customer_id: 'C1003', bill_id: 'B10012', amount: 0.01 });
    expect(second.error).toBe(false);
    expect(second.violations).toEqual([
      {
        rule: 'R3',
        message:
          'bill B10012 received 200.01 yuan from the prepaid balance on 2025-03-15, above the 200 yuan daily limit',
        policy: '同一张账单每天从话费余额缴纳的合计金额不得超过200元',
      },
    ]);
  });
});

describe('file_dispute', () => {
  it('opens a dispute on a recent charge', async () => {
    await fresh();
    const out = await call(env, 'file_dispute', { charge_id: 'CH00020', reason: 'not_subscribed' });
    expect(JSON.parse(out.content)).toEqual({
      dispute_id: 'D0003',
      charge_id: 'CH00020',
      reason: 'not_subscribed',
      status: 'open',
      created_at: '2025-03-15T10:00:00+08:00',
    });
    expect(out.writes).toEqual([
      ...inserted(
        1,
        'file_dispute',
        'disputes',
        { dispute_id: 'D0003' },
        {
          dispute_id: 'D0003',
          charge_id: 'CH00020',
          reason: 'not_subscribed',
          status: 'open',
          created_at: '2025-03-15T10:00:00+08:00',
        },
      ),
      w(6, 'file_dispute', 'charges', 'update', { charge_id: 'CH00020' }, 'disputed', 0, 1),
    ]);
    expect(out.violations).toEqual([]);
  });

  it('rejects an unknown charge and an unknown reason', async () => {
    await fresh();
    expect(await fails(env, 'file_dispute', { charge_id: 'CH99999', reason: 'wrong_amount' })).toBe(
      'Error: charge CH99999 not found',
    );
    expect(await fails(env, 'file_dispute', { charge_id: 'CH00020', reason: '没订过' })).toBe(
      'Error: invalid arguments for file_dispute: reason: Invalid option: expected one of "not_subscribed"|"service_not_received"|"wrong_amount"|"duplicate_charge"',
    );
  });

  it('lets a charge older than 60 days be disputed but reports R4', async () => {
    await fresh();
    const out = await call(env, 'file_dispute', { charge_id: 'CH00022', reason: 'service_not_received' });
    expect(out.error).toBe(false);
    expect(out.violations).toEqual([
      {
        rule: 'R4',
        message: 'charge CH00022 dated 2024-11-20 is outside the 60-day dispute window (earliest 2025-01-14)',
        policy: '只能对费用发生日期在60天以内（含第60天）的单笔费用提交申诉',
      },
    ]);
  });

  it('lets a second dispute on one charge through but reports R4', async () => {
    await fresh();
    const out = await call(env, 'file_dispute', { charge_id: 'CH00029', reason: 'not_subscribed' });
    expect(JSON.parse(out.content)).toMatchObject({ dispute_id: 'D0003', charge_id: 'CH00029' });
    expect(out.writes.map((x) => `${x.table}.${x.column}`)).toEqual([
      'disputes.dispute_id',
      'disputes.charge_id',
      'disputes.reason',
      'disputes.status',
      'disputes.created_at',
    ]);
    expect(out.violations).toEqual([
      {
        rule: 'R4',
        message: 'charge CH00029 now has 2 disputes; at most one is allowed',
        policy: '每笔费用最多申诉一次',
      },
    ]);
  });

  it('counts the 60th day as inside the window and the 61st as outside', async () => {
    const task = Task.parse({
      id: 'window',
      user_scenario: { instructions: 'x' },
      initial_state: {
        rows: {
          charges: [
            {
              charge_id: 'CH90001',
              bill_id: 'B10015',
              description: '短信费',
              amount_fen: 100,
              charge_date: '2025-01-14',
              disputed: 0,
            },
            {
              charge_id: 'CH90002',
              bill_id: 'B10015',
              description: '短信费',
              amount_fen: 100,
              charge_date: '2025-01-13',
              disputed: 0,
            },
          ],
        },
      },
    });
    await fresh(task);
    expect((await call(env, 'file_dispute', { charge_id: 'CH90001', reason: 'wrong_amount' })).violations).toEqual([]);
    expect((await call(env, 'file_dispute', { charge_id: 'CH90002', reason: 'wrong_amount' })).violations).toEqual([
      {
        rule: 'R4',
        message: 'charge CH90002 dated 2025-01-13 is outside the 60-day dispute window (earliest 2025-01-14)',
        policy: '只能对费用发生日期在60天以内（含第60天）的单笔费用提交申诉',
      },
    ]);
  });
});

describe('transfer_to_human_agents and think', () => {
  it('return fixed texts and write nothing', async () => {
    await fresh();
    const transfer = await call(env, 'transfer_to_human_agents', { summary: '客户想过户' });
    expect([transfer.content, transfer.error, transfer.kind, transfer.writes]).toEqual([
      TRANSFER_RESULT,
      false,
      'generic',
      [],
    ]);
    const thought = await call(env, 'think', { thought: '余额不够' });
    expect([thought.content, thought.error, thought.kind, thought.writes]).toEqual(['', false, 'think', []]);
  });

  it('rejects an empty summary', async () => {
    await fresh();
    expect(await fails(env, 'transfer_to_human_agents', { summary: '' })).toBe(
      'Error: invalid arguments for transfer_to_human_agents: summary: Too small: expected string to have >=1 characters',
    );
  });
});

describe('user tools (the caller’s wallet)', () => {
  it('check_wallet_balance shows the caller’s own wallet', async () => {
    await fresh();
    expect(await ok(env, 'check_wallet_balance', { phone: '13812345678' }, 'user')).toEqual({
      phone: '13812345678',
      balance: 50,
    });
  });

  it('check_wallet_balance rejects a bad number and a number without a wallet', async () => {
    await fresh();
    expect(await fails(env, 'check_wallet_balance', { phone: '12345' }, 'user')).toBe(
      'Error: phone must be 11 digits, got "12345"',
    );
    expect(await fails(env, 'check_wallet_balance', { phone: '13143089738' }, 'user')).toBe(
      'Error: no wallet for phone 13143089738',
    );
  });

  it('pay_bill_with_wallet moves money from the wallet into the bill, logged as the caller', async () => {
    await fresh();
    const out = await call(
      env,
      'pay_bill_with_wallet',
      { phone: '13812345678', bill_id: 'B10004', amount: 21.1 },
      'user',
    );
    expect(JSON.parse(out.content)).toEqual({
      payment_id: 'P0090',
      bill_id: 'B10004',
      amount: 21.1,
      method: 'wallet',
      bill_status: 'paid',
      bill_outstanding: 0,
      wallet_balance: 28.9,
    });
    const tool = 'pay_bill_with_wallet';
    expect(out.writes).toEqual([
      w(1, tool, 'wallet', 'update', { phone: '13812345678' }, 'balance_fen', 5000, 2890, 'user'),
      ...inserted(
        2,
        tool,
        'payments',
        { payment_id: 'P0090' },
        {
          payment_id: 'P0090',
          customer_id: 'C1001',
          bill_id: 'B10004',
          amount_fen: 2110,
          method: 'wallet',
          paid_at: '2025-03-15T10:00:00+08:00',
        },
        'user',
      ),
      w(8, tool, 'bills', 'update', { bill_id: 'B10004' }, 'paid_fen', 0, 2110, 'user'),
      w(9, tool, 'bills', 'update', { bill_id: 'B10004' }, 'status', 'unpaid', 'paid', 'user'),
    ]);
    expect(out.violations).toEqual([]);
  });

  it('pay_bill_with_wallet rejects every impossible payment', async () => {
    await fresh();
    const pay = (phone: string, bill_id: string, amount: number) =>
      fails(env, 'pay_bill_with_wallet', { phone, bill_id, amount }, 'user');
    expect(await pay('13812345678', 'B10004', 0)).toBe('Error: amount must be greater than 0, got 0');
    expect(await pay('13812345678', 'B10004', 1.234)).toBe(
      'Error: amount must have at most 2 decimal places, got 1.234',
    );
    expect(await pay('1381234567', 'B10004', 5)).toBe('Error: phone must be 11 digits, got "1381234567"');
    expect(await pay('13143089738', 'B10087', 5)).toBe('Error: no wallet for phone 13143089738');
    expect(await pay('13812345678', 'B99999', 5)).toBe('Error: bill B99999 not found');
    expect(await pay('13812345678', 'B10008', 5)).toBe('Error: bill B10008 does not belong to phone 13812345678');
    expect(await pay('13812345678', 'B10001', 5)).toBe('Error: bill B10001 is already paid');
    expect(await pay('13812345678', 'B10004', 30)).toBe(
      'Error: amount 30 yuan exceeds the outstanding 21.1 yuan of bill B10004',
    );
    expect(await pay('15988063412', 'B10035', 38)).toBe(
      'Error: insufficient wallet balance: 10 yuan available, 38 yuan requested',
    );
    expect(env.writes).toEqual([]);
  });

  it('are not available to the agent, and agent tools are not available to the caller', async () => {
    await fresh();
    expect(await fails(env, 'pay_bill_with_wallet', { phone: '13812345678', bill_id: 'B10004', amount: 21.1 })).toBe(
      'Error: tool pay_bill_with_wallet is not available to the agent',
    );
    expect(
      await fails(env, 'pay_bill_from_balance', { customer_id: 'C1001', bill_id: 'B10004', amount: 1 }, 'user'),
    ).toBe('Error: tool pay_bill_from_balance is not available to the caller');
    expect(await fails(env, 'refund_bill', {})).toBe('Error: unknown tool refund_bill');
  });
});

describe('env functions', () => {
  it('read the final state', async () => {
    await fresh();
    const f = carrierEnvFunctions;
    const db = env.reader;
    expect(await f.bill_outstanding!(db, { bill_id: 'B10067' })).toBe(48);
    expect(await f.bill_status!(db, { bill_id: 'B10067' })).toBe('overdue');
    expect(await f.pending_plan!(db, { customer_id: 'C1008' })).toBe(null);
    expect(await f.dispute_count!(db, { charge_id: 'CH00029' })).toBe(1);
    await ok(env, 'pay_bill_from_balance', { customer_id: 'C1017', bill_id: 'B10067', amount: 48 });
    await ok(env, 'change_plan', { customer_id: 'C1008', plan_id: 'PL58' });
    expect(await f.bill_outstanding!(db, { bill_id: 'B10067' })).toBe(0);
    expect(await f.bill_status!(db, { bill_id: 'B10067' })).toBe('paid');
    expect(await f.pending_plan!(db, { customer_id: 'C1008' })).toBe('PL58');
    expect(await f.dispute_count!(db, { charge_id: 'CH00020' })).toBe(0);
    expect(await f.bill_outstanding!(db, { bill_id: 'B99999' })).toBe(null);
    expect(await f.bill_status!(db, { bill_id: 'B99999' })).toBe(null);
    await expect(f.bill_status!(db, {})).rejects.toThrow('bill_status: argument "bill_id" must be a string');
  });

  it('are the ones the domain exposes', () => {
    expect(Object.keys(domain.envFunctions ?? {})).toEqual([
      'bill_outstanding',
      'bill_status',
      'pending_plan',
      'dispute_count',
    ]);
  });
});
