/**
 * tau2-airline's write tools and their rule checks over a sweep of generated calls (not only the
 * reference solutions, which break few rules): flight changes to another cabin, a reversed or
 * shortened itinerary, a new one in another cabin; cancellations; certificates; bags added and
 * removed; bookings of one to six passengers paid by one card, two cards or a card and a gift
 * card, with charged bags right and wrong. Each call runs on a fresh environment; its outcome
 * (content, error, column writes, violations) is hashed per tool. The hashes were recorded with
 * 1beb7b5's airline code (cancel_reservation's and send_certificate's added later, with the same
 * code), before the rule checks and reads were made cheaper: a faster implementation must give
 * exactly the same outcomes. A few outcomes are also asserted by value, and the sweep is held to
 * break each rule it is meant to reach. The sweep runs twice: as the tools are, and with tools that
 * tell their rule checks nothing (ToolContext.tell), so that both ways of each check are held to
 * the recorded outcomes.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type ToolOutcome } from '../../src/core/env/environment.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import type { ToolDefinition } from '../../src/core/schema/domain.ts';
import { tau2Runtime } from './tau2-helpers.ts';

const CABINS = ['basic_economy', 'economy', 'business'] as const;

interface Swept {
  tool: string;
  args: Record<string, unknown>;
  outcome: Pick<ToolOutcome, 'content' | 'error' | 'writes' | 'violations'>;
}

/** Run one call on a fresh environment of the runtime's pristine database. */
async function once(runtime: DomainRuntime, tool: string, args: Record<string, unknown>): Promise<Swept> {
  const env = await runtime.open();
  try {
    const r = await env.call({ id: 'sweep', name: tool, arguments: args }, 'assistant', 0);
    return { tool, args, outcome: { content: r.content, error: r.error, writes: r.writes, violations: r.violations } };
  } finally {
    await env.close();
  }
}

/** The pristine database's rows of a query. */
async function rows(runtime: DomainRuntime, sql: string, params: unknown[] = []): Promise<SqlRow[]> {
  const env = await runtime.open();
  try {
    return await env.query(sql, params as never);
  } finally {
    await env.close();
  }
}

/** Every call of the sweep, in order (the arguments come from the pristine database). */
async function sweep(runtime: DomainRuntime): Promise<Swept[]> {
  const out: Swept[] = [];
  // Available flight dates (with each cabin's price), for new itineraries and bookings.
  const legs = await rows(
    runtime,
    `SELECT d.flight_number, d.date, f.origin, f.destination, p.cabin, p.price FROM flight_dates d
     JOIN flights f ON f.flight_number = d.flight_number
     JOIN flight_date_prices p ON p.flight_number = d.flight_number AND p.date = d.date
     WHERE d.status = 'available' ORDER BY d.flight_number, d.date, p.position LIMIT 90`,
  );
  const reservations = await rows(
    runtime,
    'SELECT reservation_id, user_id, cabin, total_baggages, nonfree_baggages FROM reservations WHERE position % 16 = 0 ORDER BY position LIMIT 120',
  );
  for (const [i, r] of reservations.entries()) {
    const id = r.reservation_id as string;
    const flights = (
      await rows(
        runtime,
        'SELECT flight_number, date FROM reservation_flights WHERE reservation_id = ? ORDER BY position',
        [id],
      )
    ).map((f) => ({ flight_number: f.flight_number, date: f.date }));
    const methods = await rows(
      runtime,
      'SELECT payment_method_id, source FROM user_payment_methods WHERE user_id = ? ORDER BY position',
      [r.user_id],
    );
    const pay = (methods.find((m) => m.source !== 'certificate') ?? methods[0])?.payment_method_id ?? 'none';
    const cabin = r.cabin as (typeof CABINS)[number];
    const other = CABINS[(CABINS.indexOf(cabin) + 1 + (i % 2)) % 3]!;
    for (const args of [
      { reservation_id: id, cabin: other, flights, payment_id: pay },
      { reservation_id: id, cabin, flights: [...flights].reverse(), payment_id: pay },
      { reservation_id: id, cabin, flights: flights.slice(0, 1), payment_id: pay },
      // A new itinerary in another cabin: the segments it replaces may have been flown.
      {
        reservation_id: id,
        cabin: other,
        flights: [{ flight_number: legs[i % legs.length]!.flight_number, date: legs[i % legs.length]!.date }],
        payment_id: pay,
      },
    ])
      out.push(await once(runtime, 'update_reservation_flights', args));
    out.push(await once(runtime, 'cancel_reservation', { reservation_id: id }));
    out.push(await once(runtime, 'send_certificate', { user_id: r.user_id, amount: 50 * (1 + (i % 4)) }));
    const bags = r.total_baggages as number;
    const charged = r.nonfree_baggages as number;
    for (const [total, nonfree] of [
      [bags + 2, charged + (i % 3)],
      [Math.max(0, bags - 1), charged],
    ])
      out.push(
        await once(runtime, 'update_reservation_baggages', {
          reservation_id: id,
          total_baggages: total,
          nonfree_baggages: nonfree,
          payment_id: pay,
        }),
      );
  }
  // Bookings on those flight dates, by users of the reservations above.
  for (const [i, leg] of legs.entries()) {
    const user = reservations[i % reservations.length]!.user_id as string;
    const methods = await rows(
      runtime,
      'SELECT payment_method_id, source, amount FROM user_payment_methods WHERE user_id = ? ORDER BY position',
      [user],
    );
    const cards = methods.filter((m) => m.source === 'credit_card').map((m) => m.payment_method_id as string);
    const gift = methods.find((m) => m.source === 'gift_card' && (m.amount as number) >= 1);
    const nPax = (i % 6) + 1;
    const nonfree = i % 3;
    const insurance = i % 2 ? 'yes' : 'no';
    const total = (leg.price as number) * nPax + (insurance === 'yes' ? 30 * nPax : 0) + 50 * nonfree;
    // One card; two cards (a second credit card breaks the payment limits); a card and a gift card.
    const split = i % 3;
    const payment_methods =
      split === 1 && cards.length >= 2
        ? [
            { payment_id: cards[0], amount: total - 1 },
            { payment_id: cards[1], amount: 1 },
          ]
        : split === 2 && gift && cards.length
          ? [
              { payment_id: cards[0], amount: total - 1 },
              { payment_id: gift.payment_method_id, amount: 1 },
            ]
          : [{ payment_id: cards[0] ?? methods[0]?.payment_method_id ?? 'none', amount: total }];
    out.push(
      await once(runtime, 'book_reservation', {
        user_id: user,
        origin: leg.origin,
        destination: leg.destination,
        flight_type: 'one_way',
        cabin: leg.cabin,
        flights: [{ flight_number: leg.flight_number, date: leg.date }],
        passengers: Array.from({ length: nPax }, (_, k) => ({
          first_name: `P${k}`,
          last_name: 'Sweep',
          dob: `19${70 + k}-01-0${1 + (k % 9)}`,
        })),
        payment_methods,
        total_baggages: nonfree + (i % 4),
        nonfree_baggages: nonfree,
        insurance,
      }),
    );
  }
  return out;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** Recorded on 1beb7b5 (see the module comment). */
const HASHES: Record<string, string> = {
  update_reservation_flights: '02e57b85c072e711b5530a6f84e0257c26b70b3f7a75368013371b55cb19175a',
  update_reservation_baggages: 'e98dccef9367799d5209ad76559535386d0651ace68dc001ea4b43f4bfaebbc3',
  book_reservation: 'feb7ebe38f2ea5ce37475acc8a5fd06dc6787739f7ac6f088e9e1dbce1629eed',
  cancel_reservation: 'e60be54abf1be510221981ec8a7e0a9333a3fdece3030cd09588834756d2473d',
  send_certificate: '354b2de950efeef7bfbb84b9021efaa490f5bd0a06f549f7f0f0d8da21ff1880',
};

describe('tau2-airline write sweep: outcomes equal to those of 1beb7b5', () => {
  it('hashes every outcome per tool, and reaches the rules it is meant to', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    const swept = await sweep(runtime);
    const byTool = (tool: string) => swept.filter((s) => s.tool === tool);
    const hashes = Object.fromEntries(Object.keys(HASHES).map((t) => [t, sha(byTool(t))]));
    if (process.env.SB_SWEEP_PRINT) console.log(JSON.stringify(hashes, null, 2));
    // Counts first: a sweep that reached fewer calls or rules says so before the hashes do.
    const ok = (tool: string) => byTool(tool).filter((s) => !s.outcome.error).length;
    const rules = (tool: string) => {
      const n: Record<string, number> = {};
      for (const s of byTool(tool)) for (const v of s.outcome.violations) n[v.rule] = (n[v.rule] ?? 0) + 1;
      return n;
    };
    expect([byTool('update_reservation_flights').length, ok('update_reservation_flights')]).toEqual([480, 385]);
    expect(rules('update_reservation_flights')).toEqual({
      'modify-keep-route': 315,
      'basic-economy-no-flight-change': 66,
      'cabin-not-after-flown': 32,
    });
    expect([byTool('update_reservation_baggages').length, ok('update_reservation_baggages')]).toEqual([240, 226]);
    expect(rules('update_reservation_baggages')).toEqual({ 'bags-add-not-remove': 63, 'bag-allowance': 65 });
    expect([byTool('book_reservation').length, ok('book_reservation')]).toEqual([90, 61]);
    expect([byTool('cancel_reservation').length, ok('cancel_reservation')]).toEqual([120, 120]);
    expect(rules('cancel_reservation')).toEqual({ 'cancel-eligible': 33, 'cancel-not-flown': 40 });
    expect([byTool('send_certificate').length, ok('send_certificate')]).toEqual([120, 120]);
    expect(rules('send_certificate')).toEqual({ 'compensation-case': 117 });
    expect(rules('book_reservation')).toEqual({
      'bag-allowance': 42,
      'max-five-passengers': 8,
      'payment-method-limits': 4,
    });
    // The first finding of each rule, by value.
    const first = (rule: string) => {
      const s = swept.find((x) => x.outcome.violations.some((v) => v.rule === rule))!;
      return [s.args.reservation_id ?? s.args.user_id, s.outcome.violations.find((v) => v.rule === rule)!.message];
    };
    expect(
      [
        'modify-keep-route',
        'basic-economy-no-flight-change',
        'cabin-not-after-flown',
        'bags-add-not-remove',
        'bag-allowance',
        'max-five-passengers',
        'payment-method-limits',
        'cancel-not-flown',
        'cancel-eligible',
      ].map(first),
    ).toEqual([
      ['4WQ150', 'reservation 4WQ150 (round_trip DFW-LAX) now flies LAX to LAX, was DFW to DFW'],
      [
        'AQSRNQ',
        'basic economy reservation AQSRNQ had its flights changed from HAT284 on 2024-05-26, HAT256 on 2024-05-26, HAT245 on 2024-05-30, HAT027 on 2024-05-30 to HAT284 on 2024-05-26',
      ],
      [
        'QDGWHB',
        'cabin of reservation QDGWHB changed from business to economy with HAT216 on 2024-05-09, HAT247 on 2024-05-09, HAT148 on 2024-05-12 already flown',
      ],
      ['4WQ150', 'reservation 4WQ150: checked bags reduced from 5 to 4'],
      [
        'AQSRNQ',
        'reservation AQSRNQ: 2 checked bags for 2 passenger(s), regular member in basic_economy (0 free each, 0 in all): 2 should be charged, not 1',
      ],
      ['anya_lopez_8637', 'reservation HATHAT booked for 6 passengers'],
      [
        'harper_ito_2309',
        'reservation HATHAT uses 2 credit cards (credit_card_3005515, credit_card_1330512); at most 1 allowed',
      ],
      [
        'QDGWHB',
        'reservation QDGWHB cancelled with HAT216 on 2024-05-09 (landed), HAT247 on 2024-05-09 (landed), HAT148 on 2024-05-12 (landed) already flown',
      ],
      [
        'AQSRNQ',
        'reservation AQSRNQ cancelled: booked 2024-05-06T17:19:53 (more than 24 h before 2024-05-15T15:00:00), no flight cancelled by the airline, cabin basic_economy, no travel insurance',
      ],
    ]);
    expect(hashes).toEqual(HASHES);
  }, 120_000);

  it('gives the same outcomes when the tools tell their checks nothing (every check reading the state itself)', async () => {
    // The write tools tell their after checks what they read and wrote (ToolContext.tell), which
    // the checks then need not read: each check must find the same without it.
    const { domain } = await tau2Runtime('tau2-airline');
    const silent = (t: ToolDefinition): ToolDefinition => ({
      ...t,
      run: ({ tell: _, ...ctx }, args) => t.run(ctx, args),
    });
    const runtime = await DomainRuntime.create({ ...domain, tools: domain.tools.map(silent) }, await sqlJsFactory());
    try {
      const swept = await sweep(runtime);
      const hashes = Object.fromEntries(Object.keys(HASHES).map((t) => [t, sha(swept.filter((s) => s.tool === t))]));
      expect(hashes).toEqual(HASHES);
    } finally {
      await runtime.close();
    }
  }, 120_000);
});
