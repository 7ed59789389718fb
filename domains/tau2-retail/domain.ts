/**
 * tau2-bench's retail domain on our runtime (code half). Its data — db.json, tasks.json,
 * policy.md, split_tasks.json — is not in this folder: `loadTau2Domain('tau2-retail', dir)`
 * (src/adapters/node/tau2-loader.ts) reads it from a tau2-bench data folder the user points at.
 */
import { defineDomain } from '../../src/core/schema/domain.ts';
import { retailRuleChecks } from './rules.ts';
import { tools } from './tools.ts';

/**
 * The policy clock. tau2's retail domain has none: no tool reads the time and the policy names
 * no date. We use the airline clock (2024-05-15 15:00 EST) so both tau2 domains share one "now";
 * nothing in this domain depends on it.
 */
export const TAU2_RETAIL_NOW_MS = Date.parse('2024-05-15T15:00:00-05:00');

/** The tau2-retail domain definition (code half). */
export const tau2Retail = defineDomain({
  name: 'tau2-retail',
  language: 'en-US',
  roles: ['inbound'],
  now: TAU2_RETAIL_NOW_MS,
  greeting: 'Hi! How can I help you today?',
  // tau2-bench's tasks are run as they are: the gate reports tasks that do not discriminate.
  taskOrigin: 'imported',
  tools,
  // The written policy as rule checks: findings in the gate and beside the reward, never in it.
  ruleChecks: retailRuleChecks,
  // tau2 compares whole databases with lists in order, so every table stays ordered.
  // `position` records list and dict-key order: compared by DB, dropped by the order-insensitive
  // comparison reported beside it.
  tables: {
    products: { orderColumn: 'position' },
    product_variants: { orderColumn: 'position' },
    users: { orderColumn: 'position' },
    user_payment_methods: { orderColumn: 'position' },
    user_order_ids: { orderColumn: 'position' },
    orders: { orderColumn: 'position' },
    order_items: { orderColumn: 'position' },
    order_fulfillments: { orderColumn: 'position' },
    order_payment_history: { orderColumn: 'position' },
  },
});
