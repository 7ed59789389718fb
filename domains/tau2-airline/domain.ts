/**
 * tau2-bench's airline domain on our runtime (code half). Its data — db.json, tasks.json,
 * policy.md, split_tasks.json — is not in this folder: `loadTau2Domain('tau2-airline', dir)`
 * (src/adapters/node/tau2-loader.ts) reads it from a tau2-bench data folder the user points at.
 */
import { defineDomain } from '../../src/core/schema/domain.ts';
import { airlineRuleChecks } from './rules.ts';
import { tools } from './tools.ts';

/** The policy clock: 2024-05-15 15:00 EST (UTC-5), as tau2's airline policy and tools fix it. */
export const TAU2_AIRLINE_NOW_MS = Date.parse('2024-05-15T15:00:00-05:00');

/** The tau2-airline domain definition (code half). */
export const tau2Airline = defineDomain({
  name: 'tau2-airline',
  language: 'en-US',
  roles: ['inbound'],
  now: TAU2_AIRLINE_NOW_MS,
  greeting: 'Hi! How can I help you today?',
  // tau2-bench's tasks are run as they are: the gate reports tasks that do not discriminate.
  taskOrigin: 'imported',
  tools,
  // The written policy as rule checks: findings in the gate and beside the reward, never in it.
  ruleChecks: airlineRuleChecks,
  // tau2 compares whole databases with lists in order, so every table stays ordered; `position`
  // records list and dict-key order: compared by DB, dropped by the order-insensitive comparison
  // reported beside it.
  tables: {
    flights: { orderColumn: 'position' },
    flight_dates: { orderColumn: 'position' },
    flight_date_seats: { orderColumn: 'position' },
    flight_date_prices: { orderColumn: 'position' },
    users: { orderColumn: 'position' },
    user_payment_methods: { orderColumn: 'position' },
    user_saved_passengers: { orderColumn: 'position' },
    user_reservation_ids: { orderColumn: 'position' },
    reservations: { orderColumn: 'position' },
    reservation_flights: { orderColumn: 'position' },
    reservation_passengers: { orderColumn: 'position' },
    reservation_payments: { orderColumn: 'position' },
  },
});
