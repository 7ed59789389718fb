/**
 * tau2-retail's `one-user` rule over long episodes: it keeps what it learnt of the episode's write
 * log between calls (rules.ts, OwnerProgress), so after every call its finding must be the one the
 * whole log gives: the oracle here works it out from scratch (every assistant write of the log,
 * the owners of the orders it names read in one query), as the rule did before it kept anything.
 * Also after a restore into a fresh environment (copies of the log entries), and with exact
 * messages where the order of the users named matters.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Environment, ToolOutcome } from '../../src/core/env/environment.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { call, tau2Runtime } from './tau2-helpers.ts';

/** The users whose records `writes` touched, `user_id` keys first, then the orders' owners (SQL order). */
async function ownersFromScratch(env: Environment, writes: readonly WriteEntry[]): Promise<Set<string>> {
  const users = new Set<string>();
  const orders = new Set<string>();
  for (const w of writes) {
    if (typeof w.key.user_id === 'string') users.add(w.key.user_id);
    else if (typeof w.key.order_id === 'string') orders.add(w.key.order_id);
  }
  if (orders.size > 0) {
    const ids = [...orders];
    const rows = await env.query(
      `SELECT DISTINCT user_id FROM orders WHERE order_id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    for (const r of rows) users.add(String(r.user_id));
  }
  return users;
}

/** The one-user finding of a call whose writes are `writes`, after `log` (the log before it), from scratch. */
async function oracle(env: Environment, tool: string, log: readonly WriteEntry[], writes: readonly WriteEntry[]) {
  const earlier = await ownersFromScratch(
    env,
    log.filter((w) => w.actor === 'assistant'),
  );
  if (earlier.size === 0) return null;
  for (const u of await ownersFromScratch(env, writes))
    if (!earlier.has(u)) return `${tool} changed records of user ${u} after writes for ${[...earlier].join(', ')}`;
  return null;
}

const address = (k: number) => ({
  address1: `${k} Elm St`,
  address2: '',
  city: 'Austin',
  state: 'TX',
  country: 'USA',
  zip: '78701',
});

/**
 * Call k of the scripted episode, over `orders` (pending orders with their owners): the address of
 * a user, of an order, of an unknown order (fails: no writes), or again of an order or user written
 * before, so that new users keep coming (each a finding naming every user before it).
 */
function scripted(orders: readonly { order_id: string; user_id: string }[], k: number) {
  const o = orders[k >> 2]!;
  const again = orders[(k * 7) % Math.max(1, k >> 2)] ?? o;
  switch (k % 4) {
    case 0:
      return { name: 'modify_user_address', args: { user_id: o.user_id, ...address(k) } };
    case 1:
      return {
        name: 'modify_pending_order_address',
        args: { order_id: orders[(k >> 2) + 40]!.order_id, ...address(k) },
      };
    case 2:
      return { name: 'modify_pending_order_address', args: { order_id: '#W0000000', ...address(k) } };
    default:
      return k % 8 === 3
        ? { name: 'modify_user_address', args: { user_id: again.user_id, ...address(k) } }
        : { name: 'modify_pending_order_address', args: { order_id: again.order_id, ...address(k) } };
  }
}

/** Run `tool` and return the outcome with the one-user finding the oracle gives for it. */
async function callChecked(env: Environment, name: string, args: Record<string, unknown>) {
  const log = [...env.writes];
  const out: ToolOutcome = await call(env, name, args);
  const found = out.violations.find((v) => v.rule === 'one-user')?.message ?? null;
  const expected = out.error || out.writes.length === 0 ? null : await oracle(env, name, log, out.writes);
  return { out, found, expected };
}

const HASH = '98de538daf33170c';
const HASH_LAST_USERS = 55;
const FOUND_BY_CALL_9 = 5;
const FOUND_10_TO_40 = 14;

describe('tau2-retail one-user over long episodes', () => {
  it('names the users as the whole log gives them (user keys first, then order owners)', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const env = await runtime.open(runtime.domain.tasks[0]!);
    try {
      const steps: [string, Record<string, unknown>][] = [
        ['modify_pending_order_address', { order_id: '#W2974929', ...address(1) }],
        ['modify_user_address', { user_id: 'sofia_rossi_8776', ...address(2) }],
        ['modify_pending_order_address', { order_id: '#W6779827', ...address(3) }],
        ['modify_pending_order_address', { order_id: '#W5918442', ...address(4) }],
        ['modify_user_address', { user_id: 'fatima_anderson_2157', ...address(5) }],
        ['modify_user_address', { user_id: 'ava_lopez_2676', ...address(6) }],
      ];
      const found: (string | null)[] = [];
      for (const [name, args] of steps) {
        const r = await callChecked(env, name, args);
        expect(r.out.error).toBe(false);
        expect(r.found).toBe(r.expected);
        found.push(r.found);
      }
      expect(found).toEqual([
        null,
        'modify_user_address changed records of user sofia_rossi_8776 after writes for fatima_anderson_2157',
        'modify_pending_order_address changed records of user ethan_lopez_6291 after writes for sofia_rossi_8776, fatima_anderson_2157',
        null,
        null,
        'modify_user_address changed records of user ava_lopez_2676 after writes for sofia_rossi_8776, fatima_anderson_2157, ethan_lopez_6291',
      ]);
    } finally {
      await env.close();
    }
  });

  it('equals the from-scratch finding after each of 120 calls, failed ones included, and after a restore', async () => {
    const { runtime } = await tau2Runtime('tau2-retail');
    const env = await runtime.open(runtime.domain.tasks[0]!);
    const orders = (await env.query(
      "SELECT order_id, user_id FROM orders WHERE status = 'pending' ORDER BY position LIMIT 80",
    )) as { order_id: string; user_id: string }[];
    const counts = { failed: 0, findings: 0 };
    const messages: string[] = [];
    let snapshot: Awaited<ReturnType<Environment['snapshot']>> | undefined;
    try {
      for (let k = 0; k < 120; k++) {
        const { name, args } = scripted(orders, k);
        const r = await callChecked(env, name, args);
        expect(r.found, `call ${k}`).toBe(r.expected);
        if (r.out.error) counts.failed++;
        if (r.found) messages.push(r.found);
        if (k === 9) snapshot = await env.snapshot();
      }
    } finally {
      await env.close();
    }
    counts.findings = messages.length;
    expect(counts).toEqual({ failed: 30, findings: 55 });
    expect(messages.at(-1)!.split(', ').length).toBe(HASH_LAST_USERS);
    expect(createHash('sha256').update(messages.join('\n')).digest('hex').slice(0, 16)).toBe(HASH);
    // A fresh environment restored after call 9 (copies of the log entries) goes on from there.
    const again = await runtime.open(runtime.domain.tasks[0]!);
    try {
      await again.restore(snapshot!);
      const found: string[] = [];
      for (let k = 10; k < 40; k++) {
        const { name, args } = scripted(orders, k);
        const r = await callChecked(again, name, args);
        expect(r.found, `call ${k} after the restore`).toBe(r.expected);
        if (r.found) found.push(r.found);
      }
      expect(found).toEqual(messages.slice(FOUND_BY_CALL_9, FOUND_BY_CALL_9 + found.length));
      expect(found.length).toBe(FOUND_10_TO_40);
    } finally {
      await again.close();
    }
  });
});
