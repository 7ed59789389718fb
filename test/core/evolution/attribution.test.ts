import { describe, expect, it } from 'vitest';

/** Skipping the dispute write fails the reference action, the R4 assertion and the DB comparison. */
const CROSS_COMPONENT = 'ACTION+ASSERTIONS+DB';
import { attributeTasks, evolve, taskIssues } from '../../../src/core/evolution/index.ts';
import { gateDomain } from '../../../src/core/gate/index.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { plantedCarrier } from '../../fixtures/planted-carrier.ts';

describe('attribution of always-failed tasks (carrier, noisy agent)', () => {
  it('done when (issue 16): planted broken tasks — gold breaks a rule, a value the caller does not know, an ambiguous communicate item — are attributed with exact evidence; a sound task is hard', async () => {
    const { domain, runtime } = await plantedCarrier();
    const ids = [
      'planted-gold-breaks-r5',
      'planted-unknown-phone',
      'planted-ambiguous-balance',
      'carrier-pay-balance-1',
    ];
    const tasks = domain.tasks.filter((t) => ids.includes(t.id));
    const clock = () => steppingClock(domain.now, 1000);
    const profile = { p: 0, tasks: Object.fromEntries(ids.map((id) => [id, 1])) };
    const { report, trajectories } = await evolve({
      runtime,
      tasks,
      agent: () => new NoisyAgent(profile),
      user: () => new ScriptedUser(),
      k: 4,
      seed: 0,
      concurrency: 2,
      clock,
    });
    const round = report.rounds[0]!;
    expect(round.labels.histogram).toEqual({ always_pass: 0, boundary: 0, always_fail: 4, 'flaky-infra': 0 });
    const evidence = (id: string) => [0, 1, 2, 3].map((t) => `carrier/${id}/${t}/${t}`);
    expect(round.attribution).toEqual([
      { task_id: 'carrier-pay-balance-1', verdict: 'hard', findings: [] },
      {
        task_id: 'planted-gold-breaks-r5',
        verdict: 'broken',
        findings: [
          {
            kind: 'gold_breaks_rule',
            component: 'reference',
            rule: 'R5',
            field: 'actions[2]',
            detail:
              'reference action #2 change_plan breaks R5: plan change scheduled for customer C1009 while bills B10035 are overdue',
            trajectory_ids: evidence('planted-gold-breaks-r5'),
          },
          // The planted reference also picks a plan the caller never names and no read lists.
          {
            kind: 'unsuppliable_value',
            component: 'user_scenario',
            field: 'change_plan.plan_id',
            detail:
              'the reference needs change_plan.plan_id = PL58, which the caller does not know and no read call finds',
            trajectory_ids: evidence('planted-gold-breaks-r5'),
          },
        ],
      },
      {
        task_id: 'planted-unknown-phone',
        verdict: 'broken',
        findings: [
          {
            kind: 'unsuppliable_value',
            component: 'user_scenario',
            field: 'find_customer_by_phone.phone',
            detail:
              'the reference needs find_customer_by_phone.phone = 13601357924, which the caller does not know and no read call finds',
            trajectory_ids: evidence('planted-unknown-phone'),
          },
        ],
      },
      {
        task_id: 'planted-ambiguous-balance',
        verdict: 'broken',
        findings: [
          {
            kind: 'ambiguous_communicate',
            component: 'COMMUNICATE',
            field: 'evaluation_criteria.communicate_info[1]',
            detail:
              'communicate item "36.5" is ambiguous: the caller\'s text does not say whether it means find_customer_by_phone#0.prepaid_balance when the call starts (100) or after the reference\'s writes (36.5)',
            trajectory_ids: evidence('planted-ambiguous-balance'),
          },
        ],
      },
    ]);
    expect(round.issues.map((i) => [i.id, i.finding, i.status, i.resolution, i.evidence_trajectory])).toEqual([
      ['planted-gold-breaks-r5#1', 'gold_breaks_rule', 'open', null, 'carrier/planted-gold-breaks-r5/0/0'],
      ['planted-gold-breaks-r5#2', 'unsuppliable_value', 'open', null, 'carrier/planted-gold-breaks-r5/0/0'],
      ['planted-unknown-phone#1', 'unsuppliable_value', 'open', null, 'carrier/planted-unknown-phone/0/0'],
      ['planted-ambiguous-balance#1', 'ambiguous_communicate', 'open', null, 'carrier/planted-ambiguous-balance/0/0'],
    ]);
    expect(taskIssues(round.attribution)).toEqual(round.issues);
    // The evidence trajectories are the failed rollouts of this round.
    const failedIds = new Set(trajectories[0]!.filter((t) => t.reward_info?.reward === 0).map((t) => t.id));
    expect(evidence('planted-unknown-phone').every((id) => failedIds.has(id))).toBe(true);
    // The ambiguous item's evidence is the rollouts that did not say 36.5, or every failed one when
    // all said it: the noisy agent speaks the reference plan's numbers even after skipping the write.
    const silent = trajectories[0]!.filter((t) =>
      t.reward_info?.components.COMMUNICATE?.details.includes('not communicated: "36.5"'),
    );
    expect(silent).toEqual([]);
    expect(evidence('planted-ambiguous-balance').every((id) => failedIds.has(id))).toBe(true);
    // The gate refuses the planted tasks and admits the sound one.
    const gate = await gateDomain(runtime, { taskIds: ids, episodes: false });
    expect(gate.tasks.map((t) => [t.task_id, t.accepted])).toEqual([
      ['carrier-pay-balance-1', true],
      ['planted-gold-breaks-r5', false],
      ['planted-unknown-phone', true],
      ['planted-ambiguous-balance', false],
    ]);
    expect(gate.tasks[3]!.reasons).toEqual([round.attribution[3]!.findings[0]!.detail]);
  });

  it('a do-nothing pass and cross-policy agreement (two policies failing the same way) are findings', async () => {
    const { domain, runtime } = await plantedCarrier();
    const clock = () => steppingClock(domain.now, 1000);
    // carrier-dispute-recent-1's write has no numeric argument: both policies always skip it.
    const task = domain.tasks.find((t) => t.id === 'carrier-dispute-recent-1')!;
    const policies = [];
    for (const profile of [{ p: 1 }, { p: 0, tasks: { [task.id]: 1 } }]) {
      const { report, trajectories } = await evolve({
        runtime,
        tasks: [task],
        agent: () => new NoisyAgent(profile),
        user: () => new ScriptedUser(),
        k: 2,
        seed: 0,
        concurrency: 1,
        clock,
      });
      expect(report.rounds[0]!.attribution.map((a) => a.verdict)).toEqual(['hard']);
      policies.push({ agent: report.agent, trajectories: trajectories[0]! });
    }
    const [agreed] = await attributeTasks({ runtime, tasks: [task], policies, clock });
    expect(agreed!.verdict).toBe('broken');
    expect(agreed!.findings.map((f) => [f.kind, f.component, f.trajectory_ids.length])).toEqual([
      ['cross_policy_agreement', CROSS_COMPONENT, 4],
    ]);
    expect(agreed!.findings[0]!.detail).toMatch(
      /^2 policies \(noisy:1, noisy:0\+1tasks\) fail every rollout the same way: /,
    );

    // A task the do-nothing agent passes: the read-only inquiry with its reference emptied.
    const inquiry = structuredClone(domain.tasks.find((t) => t.id === 'carrier-bill-inquiry-1')!);
    inquiry.evaluation_criteria = {
      ...inquiry.evaluation_criteria!,
      communicate_info: [],
      assertions: [],
      reward_basis: ['DB'],
    };
    const [noop] = await attributeTasks({ runtime, tasks: [inquiry], policies: [], clock });
    expect(noop!.findings.map((f) => [f.kind, f.detail, f.trajectory_ids])).toEqual([
      ['noop_passes', 'a do-nothing agent scores 1', ['carrier/carrier-bill-inquiry-1/0/0']],
    ]);
  });
});
