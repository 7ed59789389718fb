/**
 * The airline compensation rules (`compensation-eligible`, `compensation-case`) against an oracle
 * built from tau2's db.json alone: for every user with a reservation on a cancelled or delayed
 * flight date, and for the first regular members, a certificate that matches no stated case
 * lists exactly the cases the user's reservations allow (by reservation in db.json order,
 * cancelled before delayed; a delayed flight counts only for a reservation the agent changed,
 * none on a fresh environment), and one that matches a case passes. The rules read the user's
 * reservations once per starting state (RuleCheckContext.baseFact): after a booking, in the same
 * episode and in one forked from it, they read them again.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { describe, expect, it } from 'vitest';
import { call, tau2File, tau2Runtime } from './tau2-helpers.ts';

interface Db {
  flights: Record<string, { dates: Record<string, { status: string }> }>;
  users: Record<string, { membership: string; reservations: string[] }>;
  reservations: Record<
    string,
    {
      user_id: string;
      cabin: string;
      insurance: string;
      flights: { flight_number: string; date: string }[];
      passengers: unknown[];
    }
  >;
}

describe('tau2-airline compensation rules', () => {
  it('list the cases each user’s reservations allow, as db.json gives them', async () => {
    const db = JSON.parse(tau2File('airline', 'db.json')) as Db;
    const order = Object.keys(db.reservations);
    const reservationsOf = (userId: string) =>
      order.filter((id) => db.reservations[id]!.user_id === userId || db.users[userId]!.reservations.includes(id));
    const allowedFor = (userId: string) =>
      reservationsOf(userId).flatMap((id) => {
        const r = db.reservations[id]!;
        const statuses = new Set(r.flights.map((f) => db.flights[f.flight_number]?.dates[f.date]?.status));
        return statuses.has('cancelled')
          ? [{ amount: 100 * r.passengers.length, text: `(cancelled flight, ${id})` }]
          : [];
      });
    const cases = Object.keys(db.users).filter((u) =>
      reservationsOf(u).some((id) =>
        db.reservations[id]!.flights.some((f) =>
          ['cancelled', 'delayed'].includes(db.flights[f.flight_number]?.dates[f.date]?.status ?? ''),
        ),
      ),
    );
    const regular = Object.keys(db.users)
      .filter((u) => db.users[u]!.membership === 'regular')
      .slice(0, 20);
    const users = [...new Set([...cases, ...regular])];
    expect(cases.length).toBeGreaterThan(50);
    const { runtime } = await tau2Runtime('tau2-airline');
    for (const userId of users) {
      const allowed = allowedFor(userId);
      const covered =
        db.users[userId]!.membership !== 'regular' ||
        reservationsOf(userId).some(
          (id) => db.reservations[id]!.insurance === 'yes' || db.reservations[id]!.cabin === 'business',
        );
      const env = await runtime.open();
      try {
        const out = await call(env, 'send_certificate', { user_id: userId, amount: 7 });
        expect(out.error).toBe(false);
        const expected = [
          ...(covered
            ? []
            : [
                `certificate of 7 sent to ${userId}, a regular member with no reservation in business or with travel insurance`,
              ]),
          `certificate of 7 sent to ${userId}; the stated cases allow ${allowed.length ? allowed.map((a) => `${a.amount} ${a.text}`).join(', ') : 'none'}`,
        ];
        expect(out.violations.map((v) => v.message)).toEqual(expected);
      } finally {
        await env.close();
      }
      if (allowed.length === 0) continue;
      const env2 = await runtime.open();
      try {
        const out = await call(env2, 'send_certificate', { user_id: userId, amount: allowed.at(-1)!.amount });
        expect(out.violations.map((v) => v.rule)).toEqual(covered ? [] : ['compensation-eligible']);
      } finally {
        await env2.close();
      }
    }
  });

  it('see a booking made earlier in the episode, forked or not; other episodes keep the starting state', async () => {
    const { runtime } = await tau2Runtime('tau2-airline');
    // Task 14: a regular member with no reservation in business or with insurance books one in business.
    const task = runtime.domain.tasks.find((t) => t.id === '14')!;
    const booking = task.evaluation_criteria!.actions!.find((a) => a.name === 'book_reservation')!;
    const userId = String(booking.arguments.user_id);
    expect(booking.arguments.cabin).toBe('business');
    const certificate = { user_id: userId, amount: 7 };
    const uncovered = `certificate of 7 sent to ${userId}, a regular member with no reservation in business or with travel insurance`;
    const caseMessage = `certificate of 7 sent to ${userId}; the stated cases allow none`;
    const messages = async (env: Awaited<ReturnType<typeof runtime.open>>) => {
      const out = await call(env, 'send_certificate', certificate);
      expect(out.error).toBe(false);
      return out.violations.map((v) => v.message);
    };
    const fresh = await runtime.open(task);
    const booked = await runtime.open(task);
    const fork = await runtime.open(task);
    const later = await runtime.open(task);
    try {
      expect(await messages(fresh)).toEqual([uncovered, caseMessage]);
      expect((await call(booked, 'book_reservation', booking.arguments)).error).toBe(false);
      const snap = await booked.snapshot();
      expect(await messages(booked)).toEqual([caseMessage]);
      await fork.restore(snap);
      expect(await messages(fork)).toEqual([caseMessage]);
      expect(await messages(later)).toEqual([uncovered, caseMessage]);
    } finally {
      for (const env of [fresh, booked, fork, later]) await env.close();
    }
  });
});
