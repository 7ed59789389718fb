/**
 * Scoring tau2 tasks with tau2 semantics, on hand-made agent trajectories over the real airline
 * data: a correct one, one with a wrong payment id, one that cancels when it must refuse.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import type { Task } from '../../src/core/schema/task.ts';
import { evaluate } from '../../src/core/scoring/evaluate.ts';
import { tau2Runtime } from './tau2-helpers.ts';
import { conversation, handTrajectory } from '../fixtures/turns.ts';
import { attributeTasks } from '../../src/core/evolution/index.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';

let runtime: DomainRuntime;
let tasks: Map<string, Task>;
beforeAll(async () => {
  const loaded = await tau2Runtime('tau2-airline');
  runtime = loaded.runtime;
  tasks = new Map(loaded.domain.tasks.map((t) => [t.id, t]));
});

const downgrade = (payment_id: string) => ({
  call: 'update_reservation_flights',
  args: {
    reservation_id: 'GV1N64',
    cabin: 'basic_economy',
    flights: [
      { flight_number: 'HAT003', date: '2024-05-19' },
      { flight_number: 'HAT290', date: '2024-05-20' },
    ],
    payment_id,
  },
});

describe('tau2 airline scoring (task 11: downgrade GV1N64 to basic economy, refund to the gift card)', () => {
  it('a correct trajectory scores 1 on DB and COMMUNICATE', async () => {
    const task = tasks.get('11')!;
    const turns = conversation([
      'Hi! How can I help you today?',
      'I want to move my reservation GV1N64 to basic economy.',
      { call: 'get_reservation_details', args: { reservation_id: 'GV1N64' } },
      'I can change both flights to basic economy and refund the difference to gift card 1642017. Shall I proceed?',
      'Yes please.',
      downgrade('gift_card_1642017'),
      'Done. The refund of 5244 dollars goes to your gift card.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect(info.basis).toEqual(['DB', 'COMMUNICATE']);
    expect(info.components.DB).toEqual({ score: 1, details: [], judged: true });
    // Equal in order, so equal with order ignored (reported without a second diff).
    expect(info.db_order_insensitive).toEqual({ score: 1, details: [], judged: true });
    expect(info.components.COMMUNICATE).toEqual({ score: 1, details: [], judged: true });
    expect([info.reward, info.partial]).toEqual([1, false]);
  });

  it('a wrong payment id fails the call and leaves DB at 0', async () => {
    const task = tasks.get('11')!;
    const turns = conversation([
      'Hi! How can I help you today?',
      'I want to move my reservation GV1N64 to basic economy.',
      downgrade('credit_card_0000000'),
      'Done. The refund of 5244 dollars goes to your card.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect(info.components.DB?.score).toBe(0);
    expect(info.components.DB?.details.length).toBeGreaterThan(0);
    expect(info.components.COMMUNICATE?.score).toBe(1);
    expect(info.reward).toBe(0);
    // The failed call is a −0.1 process step; the final reward 0 goes on the last agent turn.
    expect(info.step_rewards).toEqual([0, -0.1, 0]);
  });
});

describe('tau2 airline scoring (task 0: the cancellation must be refused)', () => {
  it('cancelling EHGLP3 anyway changes the database and scores 0', async () => {
    const task = tasks.get('0')!;
    const turns = conversation([
      'Hi! How can I help you today?',
      'Please cancel reservation EHGLP3.',
      { call: 'cancel_reservation', args: { reservation_id: 'EHGLP3' } },
      'Your reservation is cancelled.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect(info.components.DB?.score).toBe(0);
    expect(info.components.DB?.details.some((d) => d.includes('EHGLP3'))).toBe(true);
    expect(info.reward).toBe(0);
  });

  it('refusing scores 1 (the NL assertion is not in the basis of this task)', async () => {
    const task = tasks.get('0')!;
    const turns = conversation([
      'Hi! How can I help you today?',
      'Please cancel reservation EHGLP3.',
      { call: 'get_reservation_details', args: { reservation_id: 'EHGLP3' } },
      'I am sorry, this booking is not eligible for cancellation with a refund.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect([info.reward, info.partial, info.basis]).toEqual([1, false, ['DB', 'COMMUNICATE']]);
  });
});

describe('tau2 semantics by default', () => {
  it('a written-formatting reply keeps tau2 verdicts: no QUALITY veto on imported tasks', async () => {
    const task = tasks.get('0')!;
    const turns = conversation([
      'Hi! How can I help you today?',
      'Please cancel reservation EHGLP3.',
      "**Sorry**, I can't cancel it:\n- booked more than 24 hours ago\n- no travel insurance",
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect(info.components.QUALITY?.score).toBe(0);
    expect([info.reward, info.basis]).toEqual([1, ['DB', 'COMMUNICATE']]);
  });
  it('passengers in the opposite order: DB 0 (tau2 compares lists in order), order-insensitive DB 1 beside it', async () => {
    const task = tasks.get('40')!;
    const anya = { first_name: 'Anya', last_name: 'Garcia', dob: '1992-11-12' };
    const mei = { first_name: 'Mei', last_name: 'Garcia', dob: '1989-12-13' };
    const turns = conversation([
      'Hi! How can I help you today?',
      'Please put Mei Garcia on reservation 3RK2T9.',
      { call: 'get_reservation_details', args: { reservation_id: '3RK2T9' } },
      { call: 'update_reservation_passengers', args: { reservation_id: '3RK2T9', passengers: [mei, anya] } },
      'Done.',
    ]);
    const info = await evaluate(runtime, task, turns, { termination: 'user_stop' });
    expect(info.components.DB?.score).toBe(0);
    expect(info.components.DB?.details).toEqual([
      'reservation_passengers[3RK2T9,0].first_name: expected "Anya", got "Mei"',
      'reservation_passengers[3RK2T9,0].dob: expected "1992-11-12", got "1989-12-13"',
      'reservation_passengers[3RK2T9,1].first_name: expected "Mei", got "Anya"',
      'reservation_passengers[3RK2T9,1].dob: expected "1989-12-13", got "1992-11-12"',
    ]);
    expect(info.db_order_insensitive).toEqual({ score: 1, details: [], judged: true });
    expect(info.reward).toBe(0);
    // Attribution (issue 16) flags the flip as DB-comparison brittleness, with the rollout as evidence.
    const [a] = await attributeTasks({
      runtime,
      tasks: [task],
      policies: [{ agent: 'hand', trajectories: [handTrajectory('tau2-airline/40/0/0', turns, info)] }],
      clock: () => steppingClock(runtime.domain.now, 1000),
    });
    expect(a!.findings.filter((f) => f.kind === 'db_brittle')).toEqual([
      {
        kind: 'db_brittle',
        component: 'DB',
        field: 'order_insensitive',
        detail:
          'the DB verdict of tau2-airline/40/0/0 flips from 0 to 1 with the order-insensitive comparison (1 of 1 failed rollouts)',
        trajectory_ids: ['tau2-airline/40/0/0'],
      },
    ]);
  });
});
