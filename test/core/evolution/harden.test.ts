import { describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';
import { evolve } from '../../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';

describe('evolve hardens always-passed tasks (carrier, noisy agent)', () => {
  it('turns always-passed tasks into gated variants the same agent passes less often; round 2 moves toward boundary', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    // Errs on each write with p = 0.2 and leaves out each item it must tell with q = 0.1.
    const agent = () => new NoisyAgent({ p: 0.2, tell: 0.1 });
    const { report, variants } = await evolve({
      runtime,
      tasks: domain.tasks,
      agent,
      user: () => new ScriptedUser(),
      k: 8,
      rounds: 2,
      seed: 0,
      concurrency: 2,
      clock: () => steppingClock(domain.now, 1000),
      harden: {},
    });
    const [r0, r1] = report.rounds;
    expect(r0!.labels.histogram).toEqual({ always_pass: 6, boundary: 9, always_fail: 0, 'flaky-infra': 0 });
    expect(r1!.labels.histogram).toEqual({ always_pass: 3, boundary: 12, always_fail: 0, 'flaky-infra': 0 });
    expect(r0!.labels.supply.outcome).toBe(0.6);
    expect(r1!.labels.supply.outcome).toBe(0.8);
    expect(r0!.hardening!.admitted.map((a) => a.task_id)).toEqual([
      'carrier-wallet-pay-1~near_duplicate_record.0',
      'carrier-claimed-payment-1~misremembered_value.0',
      'carrier-change-plan-overdue-1~db_contradicts_claim.0',
      'carrier-outbound-overdue-1~db_contradicts_claim.0',
      'carrier-transfer-human-1~misremembered_value.0',
      'carrier-misremember-phone-1~db_contradicts_claim.0',
    ]);
    expect(r0!.hardening!.rejected).toEqual([]);
    // Every admitted variant is one generation below its always-passed parent.
    expect(variants.slice(0, 6).map((v) => [v.lineage!.parent!.task_id, v.lineage!.generation])).toEqual(
      r0!.hardening!.admitted.map((a) => [a.parent, 1]),
    );
    // The parents passed 8 of 8 in round 0; their variants, run in their place in round 1:
    const successes = (id: string) => r1!.labels.tasks.find((t) => t.task_id === id)!.successes;
    expect(r0!.hardening!.admitted.map((a) => successes(a.task_id))).toEqual([6, 6, 7, 5, 8, 4]);
    expect(r1!.labels.tasks.map((t) => t.task_id)).toHaveLength(15);
    await runtime.close();
  });
});
