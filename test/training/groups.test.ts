import { describe, expect, it } from 'vitest';
import {
  ADVANTAGE_EPSILON,
  groupAdvantages,
  groupByPrefix,
  scoreGroups,
  spread,
  episodeRewards,
  type Group,
  type SampleRewards,
} from '../../src/core/training/groups.ts';

/** Rewards of a hand-made sample: binary outcome from `final`, shaped total given. */
function r(final: number, shaped = final): SampleRewards {
  return { final, outcome: final === 1 ? 1 : 0, step_rewards: [shaped], returns: [shaped], shaped };
}

function group(id: string, rewards: SampleRewards[]): Group<null> {
  return {
    id: `conversation:${id}`,
    granularity: 'conversation',
    prefix: id,
    task_id: id,
    samples: rewards.map((x, i) => ({ rewards: x, seed: i, item: null })),
  };
}

describe('spread and advantages', () => {
  it('uses the sample standard deviation by default and population on request', () => {
    expect(spread([1, 0, 0, 0])).toEqual({ mean: 0.25, std: 0.5 });
    expect(spread([1, 0, 0, 0], 'population').std).toBeCloseTo(Math.sqrt(0.1875), 15);
    expect(spread([0.7])).toEqual({ mean: 0.7, std: 0 });
    expect(spread([])).toEqual({ mean: 0, std: 0 });
  });

  it('Â = (r − μ)/(σ + ε) with ε = 1e-6 on [1,0,0,0]', () => {
    expect(ADVANTAGE_EPSILON).toBe(1e-6);
    const a = groupAdvantages([1, 0, 0, 0]);
    expect(a).toEqual([0.75 / (0.5 + 1e-6), -0.25 / (0.5 + 1e-6), -0.25 / (0.5 + 1e-6), -0.25 / (0.5 + 1e-6)]);
    expect(a[0]).toBeCloseTo(1.499997000006, 12);
    expect(a[1]).toBeCloseTo(-0.499999000002, 12);
    const pop = groupAdvantages([1, 0, 0, 0], { std: 'population' });
    expect(pop[0]).toBeCloseTo(1.732046807578115, 12);
    expect(pop[3]).toBeCloseTo(-0.5773489358593717, 12);
  });

  it('two successes of four: ±0.866…; equal rewards: all zero', () => {
    const a = groupAdvantages([1, 1, 0, 0]);
    expect(a[0]).toBeCloseTo(0.8660239037870368, 12);
    expect(a[3]).toBeCloseTo(-0.8660239037870368, 12);
    expect(groupAdvantages([0.3, 0.3, 0.3])).toEqual([0, 0, 0]);
    expect(groupAdvantages([1])).toEqual([0]);
  });

  it('takes the shaped total from the first return', () => {
    expect(
      episodeRewards({ reward: 1, partial: false, step_rewards: [0, 0.1, 1], returns: [1.0791, 1.09, 1] }),
    ).toEqual({
      final: 1,
      outcome: 1,
      step_rewards: [0, 0.1, 1],
      returns: [1.0791, 1.09, 1],
      shaped: 1.0791,
      partial: false,
    });
    // A partial reward keeps the outcome of its judged components and is flagged, never a silent 0.
    expect(episodeRewards({ reward: 1, partial: true, step_rewards: [], returns: [] })).toMatchObject({
      outcome: 1,
      shaped: 1,
      partial: true,
    });
  });
});

describe('scoreGroups', () => {
  const mixed = group('mixed', [r(1, 1.2), r(0, 0.1), r(0, 0), r(0, 0.3)]);
  const flatFail = group('all-0', [r(0, 0.2), r(0, 0.1), r(0, 0), r(0, 0.3)]);
  const flatPass = group('all-1', [r(1, 1.1), r(1, 1.1), r(1, 1.1), r(1, 1.1)]);

  it('[1,0,0,0] keeps four rows and the success has the largest advantage, on final and on shaped', () => {
    const onFinal = scoreGroups([mixed]).groups[0]!;
    expect(onFinal.samples).toHaveLength(4);
    expect(onFinal.informative).toBe(true);
    expect(onFinal.advantages).toEqual(groupAdvantages([1, 0, 0, 0]));
    const onShaped = scoreGroups([mixed], { reward: 'shaped' }).groups[0]!;
    expect(onShaped.reward).toBe('shaped');
    const want = [1.4605908200186448, -0.5477215575069919, -0.7302954100093225, -0.18257385250233069];
    onShaped.advantages.forEach((a, i) => expect(a).toBeCloseTo(want[i]!, 12));
    expect(Math.max(...onShaped.advantages)).toBe(onShaped.advantages[0]);
  });

  it('--filter outcome (DAPO style): all-0 and all-1 groups get zero advantage even when process rewards differ', () => {
    const { groups, dropped, supply } = scoreGroups([mixed, flatFail, flatPass], {
      reward: 'shaped',
      filter: 'outcome',
    });
    expect(groups.map((g) => [g.prefix, g.informative, g.advantages])).toEqual([
      ['mixed', true, groups[0]!.advantages],
      ['all-0', false, [0, 0, 0, 0]],
      ['all-1', false, [0, 0, 0, 0]],
    ]);
    expect(dropped).toEqual([]);
    // Outcome σ > 0 in 1 of 3 groups; shaped σ > 0 in 2 of 3 (the all-0 group's process rewards differ).
    expect(supply).toEqual({ groups: 3, outcome: 1 / 3, final: 1 / 3, shaped: 2 / 3, kept: 1 / 3, partial_rows: 0 });
  });

  it('--filter reward (default, SpeechGym): with the shaped reward an all-fail group whose returns differ keeps its advantages', () => {
    const { groups, supply } = scoreGroups([mixed, flatFail, flatPass], { reward: 'shaped' });
    expect(groups.map((g) => [g.prefix, g.informative])).toEqual([
      ['mixed', true],
      ['all-0', true],
      ['all-1', false],
    ]);
    // Shaped [0.2, 0.1, 0, 0.3]: μ = 0.15, sample σ = sqrt(0.05 / 3).
    const sigma = Math.sqrt(0.05 / 3);
    const want = [0.05, -0.05, -0.15, 0.15].map((d) => d / (sigma + 1e-6));
    groups[1]!.advantages.forEach((a, i) => expect(a).toBeCloseTo(want[i]!, 12));
    expect(want[3]).toBeCloseTo(1.161886, 6);
    expect(groups[2]!.advantages).toEqual([0, 0, 0, 0]);
    // Gradient supply: 2 of 3 groups under the reward filter, 1 of 3 under the outcome filter.
    expect(supply).toEqual({ groups: 3, outcome: 1 / 3, final: 1 / 3, shaped: 2 / 3, kept: 2 / 3, partial_rows: 0 });
    // On the final reward the same batch keeps only the mixed group; --filter none keeps all (σ = 0 gives zeros).
    expect(scoreGroups([mixed, flatFail, flatPass]).supply.kept).toBe(1 / 3);
    const none = scoreGroups([mixed, flatFail, flatPass], { filter: 'none' });
    expect(none.groups.map((g) => g.informative)).toEqual([true, true, true]);
    expect(none.groups[1]!.advantages).toEqual([0, 0, 0, 0]);
  });

  it('partial rows are counted apart', () => {
    const partial = group('p', [{ ...r(1), partial: true }, r(0), { ...r(0), partial: true }]);
    const { groups, supply } = scoreGroups([partial, mixed]);
    expect(groups[0]!.partial).toBe(2);
    expect(supply.partial_rows).toBe(2);
  });

  it('drop mode drops flat groups but reports supply over all of them', () => {
    const { groups, dropped, supply } = scoreGroups([mixed, flatFail, flatPass], { flat: 'drop' });
    expect(groups.map((g) => g.id)).toEqual(['conversation:mixed']);
    expect(dropped).toEqual(['conversation:all-0', 'conversation:all-1']);
    expect(supply.groups).toBe(3);
    expect(supply.outcome).toBe(1 / 3);
  });

  it('refuses a group id twice; groupByPrefix never mixes prefixes', () => {
    expect(() => scoreGroups([mixed, mixed])).toThrow(/appears twice/);
    const groups = groupByPrefix('milestone', [
      { prefix: 'm1', task_id: 't', rewards: r(1), seed: 1, item: 'a' },
      { prefix: 'm2', task_id: 't', rewards: r(0), seed: 2, item: 'b' },
      { prefix: 'm1', task_id: 't', rewards: r(0), seed: 3, item: 'c' },
    ]);
    expect(groups.map((g) => [g.id, g.samples.map((s) => s.item)])).toEqual([
      ['milestone:m1', ['a', 'c']],
      ['milestone:m2', ['b']],
    ]);
    expect(() =>
      groupByPrefix('turn', [
        { prefix: 'p', task_id: 't1', rewards: r(1), seed: 1, item: 0 },
        { prefix: 'p', task_id: 't2', rewards: r(1), seed: 2, item: 0 },
      ]),
    ).toThrow(/belongs to tasks t1 and t2/);
  });

  it('an empty batch has zero supply', () => {
    expect(scoreGroups([]).supply).toEqual({ groups: 0, outcome: 0, final: 0, shaped: 0, kept: 0, partial_rows: 0 });
  });
});
