import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../../src/core/env/environment.ts';
import { checkAssertion } from '../../../src/core/scoring/behaviour-checks.ts';
import { bankRuntime, bankTask, Recorder } from './fixture.ts';

const verifyAfterPay = {
  id: 'verify-after-pay',
  rule: 'R3',
  text: 'Look the account up again after paying.',
  check: { kind: 'read_after_write' as const, tool: 'get_account', args: { account_id: 'A1' }, after: 'pay' },
};

let bank: DomainRuntime;
beforeAll(async () => {
  bank = await bankRuntime();
});

async function run(order: ('read' | 'pay')[]) {
  const r = await Recorder.open(bank, bankTask({ actions: [], reward_basis: ['DB'] }));
  r.agent('Hello.');
  for (const step of order) {
    if (step === 'read') await r.call([['get_account', { account_id: 'A1' }]]);
    else await r.call([['pay', { account_id: 'A1', payee: 'Water', amount: 30 }]]);
  }
  return checkAssertion(verifyAfterPay, await r.done(), bank.domain);
}

describe('read_after_write: ordered assertions mean order', () => {
  it('a read only before the write fails', async () => {
    expect(await run(['read', 'pay'])).toEqual({
      id: 'verify-after-pay',
      rule: 'R3',
      status: 'failed',
      reason: 'no successful call matching get_account({"account_id":"A1"}) after the last pay (turn 4)',
      turn: 4,
    });
  });
  it('a read after the write passes', async () => {
    expect(await run(['pay', 'read'])).toEqual({
      id: 'verify-after-pay',
      rule: 'R3',
      status: 'passed',
      reason: 'get_account({"account_id":"A1"}) at turn 4 after the last pay (turn 2)',
      turn: 4,
    });
  });
  it('the read must follow the last of several writes', async () => {
    expect((await run(['pay', 'read', 'pay'])).status).toBe('failed');
  });
  it('is skipped when nothing was written', async () => {
    expect((await run(['read'])).status).toBe('skipped');
  });
});
