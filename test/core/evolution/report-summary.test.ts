import { expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';
import { evolve, summarizeEvolve } from '../../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';

it('the report summary: labels before/after, each task lineage through the rounds, hardened variants with reasons', async () => {
  const domain = await loadBuiltinDomain('carrier');
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const ids = ['carrier-pay-balance-1', 'carrier-wallet-pay-1', 'carrier-dispute-recent-1'];
  const { report } = await evolve({
    runtime,
    tasks: domain.tasks.filter((t) => ids.includes(t.id)),
    agent: () => new NoisyAgent({ p: 0, tasks: { 'carrier-dispute-recent-1': 1 } }),
    user: () => new ScriptedUser(),
    k: 2,
    rounds: 2,
    seed: 0,
    concurrency: 2,
    clock: () => steppingClock(domain.now, 1000),
    harden: {},
  });
  const s = report.summary;
  expect(s).toEqual(summarizeEvolve(report));
  expect([s.labels_before, s.labels_after]).toEqual([
    { always_pass: 2, boundary: 0, always_fail: 1, 'flaky-infra': 0 },
    { always_pass: 2, boundary: 0, always_fail: 1, 'flaky-infra': 0 },
  ]);
  const pay = 'carrier-pay-balance-1~near_duplicate_record.0';
  const wallet = 'carrier-wallet-pay-1~near_duplicate_record.0';
  expect(
    s.lineage.map((t) => [t.task_id, t.parent, t.generation, t.pattern, t.admitted_round, t.labels, t.verdicts]),
  ).toEqual([
    ['carrier-pay-balance-1', null, 0, null, null, ['always_pass', null], [null, null]],
    [pay, 'carrier-pay-balance-1', 1, 'near_duplicate_record', 0, [null, 'always_pass'], [null, null]],
    [`${pay}~withhold_until_asked_twice.2`, pay, 2, 'withhold_until_asked_twice', 1, [null, null], [null, null]],
    ['carrier-wallet-pay-1', null, 0, null, null, ['always_pass', null], [null, null]],
    [wallet, 'carrier-wallet-pay-1', 1, 'near_duplicate_record', 0, [null, 'always_pass'], [null, null]],
    [`${wallet}~near_duplicate_record.2`, wallet, 2, 'near_duplicate_record', 1, [null, null], [null, null]],
    ['carrier-dispute-recent-1', null, 0, null, null, ['always_fail', 'always_fail'], ['hard', 'hard']],
  ]);
  expect(s.hardened[0]).toEqual({
    round: 0,
    task_id: pay,
    parent: 'carrier-pay-balance-1',
    pattern: 'near_duplicate_record',
    reason: 'a near-duplicate of customers C1002 (phone 15867452301 → 15867452305, customer_id C1000)',
  });
  expect(s.hardened.map((h) => h.round)).toEqual([0, 0, 1, 1]);
  expect(s.rejected.map((r) => [r.round, r.task_id, r.reasons.length > 0])).toEqual(
    report.rounds.flatMap((r) => (r.hardening?.rejected ?? []).map((x) => [r.round, x.task_id, true])),
  );
  expect(s.repaired).toEqual([]);
});
