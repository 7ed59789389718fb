/**
 * How many SQL statements tau2-airline and tau2-retail write tools run per call (issue 15 item 2:
 * each statement costs a few µs in sql.js, and these tools were slower than tau2-bench's Python). The
 * outputs, writes and rule outcomes of these calls are held by tau2-reference-turns.test.ts; this
 * file pins the statement counts, counted at the database port of the environment during one
 * call (the call's savepoint, the tool, the write-log read and the rule checks).
 * @module-tag tau2-data
 */
import { describe, expect, it } from 'vitest';
import { loadTau2Domain } from '../../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import type { SqlDb, SqlDbFactory } from '../../src/core/ports/sql-db.ts';
import { tau2DataDir } from './tau2-helpers.ts';

/** A factory whose databases append the text of every statement they run to `seen`. */
async function countingFactory(seen: string[]): Promise<SqlDbFactory> {
  const make = await sqlJsFactory();
  return async (image) => {
    const db = await make(image);
    const counted: SqlDb = {
      exec(sql) {
        seen.push(sql);
        return db.exec(sql);
      },
      run(sql, params) {
        seen.push(sql);
        return db.run(sql, params);
      },
      all(sql, params) {
        seen.push(sql);
        return db.all(sql, params);
      },
      batch(statements) {
        seen.push(...statements.map((s) => s.sql));
        return db.batch(statements);
      },
      snapshot: () => db.snapshot(),
      restore: (image) => db.restore(image),
      close: () => db.close(),
    };
    return counted;
  };
}

describe('tau2-airline write tools: statements per call', () => {
  it('book_reservation, update_reservation_flights, update_reservation_baggages and cancel_reservation of the reference solutions', async () => {
    const seen: string[] = [];
    const domain = await loadTau2Domain('tau2-airline', tau2DataDir('airline'));
    const runtime = await DomainRuntime.create(domain, await countingFactory(seen));
    try {
      // The first reference call of each tool, on a fresh environment of its task.
      const counts: Record<string, [string, number]> = {};
      for (const tool of [
        'book_reservation',
        'update_reservation_flights',
        'update_reservation_baggages',
        'cancel_reservation',
      ]) {
        const task = domain.tasks.find((t) => t.evaluation_criteria?.actions?.some((a) => a.name === tool))!;
        const action = task.evaluation_criteria!.actions!.find((a) => a.name === tool)!;
        const env = await runtime.open(task);
        seen.length = 0;
        const out = await env.call({ id: 'c', name: tool, arguments: action.arguments }, 'assistant', 0);
        counts[tool] = [task.id, out.error ? -1 : seen.length];
        if (tool === 'update_reservation_flights') {
          // The same call again: the cabin is now the one asked for.
          seen.length = 0;
          const again = await env.call({ id: 'd', name: tool, arguments: action.arguments }, 'assistant', 1);
          counts[`${tool} again`] = [task.id, again.error ? -1 : seen.length];
        }
        await env.close();
      }
      {
        // Bags paid by a gift card, nothing charged: the card is not written (no statement).
        const env = await runtime.open();
        seen.length = 0;
        const out = await env.call(
          {
            id: 'g',
            name: 'update_reservation_baggages',
            arguments: {
              reservation_id: '4G94T6',
              total_baggages: 1,
              nonfree_baggages: 0,
              payment_id: 'gift_card_8525656',
            },
          },
          'assistant',
          0,
        );
        counts['update_reservation_baggages, gift card, nothing charged'] = ['-', out.error ? -1 : seen.length];
        await env.close();
      }
      // book: the user, its methods, the new id and position in one read (4 before); flights
      // and bags: the reservation, its user and passenger count in one read (3 before), and no
      // cabin UPDATE when the cabin stays; their payment method in that read too (payForUpdate's own read before). The rule checks read nothing the tool told them
      // (ToolContext.tell): book's bags, passengers and payments (2 reads before), flights' route and
      // reservation (2), bags' reservation with membership and passengers (1), cancel's
      // reservation and segments with statuses (2; its reply reads the segments with them).
      expect(counts).toEqual({
        book_reservation: ['8', 12],
        update_reservation_flights: ['7', 12],
        'update_reservation_flights again': ['7', 9],
        update_reservation_baggages: ['12', 8],
        cancel_reservation: ['7', 9],
        'update_reservation_baggages, gift card, nothing charged': ['-', 8],
      });
    } finally {
      await runtime.close();
    }
  });
});

describe('tau2-retail write tools: statements per call', () => {
  it('the payment method is read before its user, who is looked up only when the method is missing', async () => {
    const seen: string[] = [];
    const domain = await loadTau2Domain('tau2-retail', tau2DataDir('retail'));
    const runtime = await DomainRuntime.create(domain, await countingFactory(seen));
    try {
      const counts: Record<string, [string, number, string]> = {};
      for (const tool of ['cancel_pending_order', 'modify_pending_order_payment', 'modify_pending_order_items']) {
        const task = domain.tasks.find((t) => t.evaluation_criteria?.actions?.some((a) => a.name === tool))!;
        const action = task.evaluation_criteria!.actions!.find((a) => a.name === tool)!;
        for (const [label, args] of [
          [tool, action.arguments],
          // A method the user lacks: the user is looked up to choose the error.
          [`${tool}, unknown method`, { ...action.arguments, payment_method_id: 'gift_card_0000000' }],
        ] as const) {
          if (label.endsWith('unknown method') && !('payment_method_id' in action.arguments)) continue;
          const env = await runtime.open(task);
          seen.length = 0;
          const out = await env.call({ id: 'c', name: tool, arguments: args }, 'assistant', 0);
          counts[label] = [task.id, seen.length, out.error ? out.content : 'ok'];
          await env.close();
        }
      }
      // One users lookup fewer per method read on success (payment reads two: the new and the
      // old method); the same count when the method is missing. Cancel reads the order's items,
      // fulfillments, payments and their methods in one statement (7, not 10); so does payment
      // (and it appends its payment and refund with one INSERT): 7, not 11.
      expect(counts).toEqual({
        cancel_pending_order: ['16', 7, 'ok'],
        modify_pending_order_payment: ['40', 7, 'ok'],
        'modify_pending_order_payment, unknown method': ['40', 6, 'Error: Payment method not found'],
        modify_pending_order_items: ['3', 12, 'ok'],
        'modify_pending_order_items, unknown method': ['3', 8, 'Error: Payment method not found'],
      });
    } finally {
      await runtime.close();
    }
  });
});
