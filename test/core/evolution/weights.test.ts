import { describe, expect, it } from 'vitest';
import type { LabelReport, TaskLabelRow } from '../../../src/core/evolution/labels.ts';
import { binOf, DEFAULT_BINS, samplingWeights } from '../../../src/core/evolution/weights.ts';

function row(task_id: string, label: TaskLabelRow['label'], pass_rate: number | null, adv: number): TaskLabelRow {
  return {
    task_id,
    label,
    k: 4,
    valid: pass_rate === null ? 0 : 4,
    invalid: pass_rate === null ? 4 : 0,
    successes: pass_rate === null ? 0 : pass_rate * 4,
    pass_rate,
    mean_reward: pass_rate,
    pass_hat: {},
    mean_abs_advantage: adv,
    trajectory_ids: [],
  };
}

function report(tasks: TaskLabelRow[]): LabelReport {
  return {
    k: 4,
    thresholds: { always_pass: 1, always_fail: 0, min_valid: 2 },
    tasks,
    histogram: { always_pass: 0, boundary: 0, always_fail: 0, 'flaky-infra': 0 },
    supply: { groups: 0, outcome: 0, final: 0, shaped: 0, kept: 0, partial_rows: 0 },
    mean_reward: null,
  };
}

describe('sampling weights: SEC bandit over difficulty bins', () => {
  it('bins pass rates with the ends as arms of their own', () => {
    expect([0, 0.1, 0.25, 0.5, 0.75, 0.99, 1].map((p) => binOf(p)!.id)).toEqual([
      'p=0',
      '0<p<0.25',
      '0.25≤p<0.5',
      '0.5≤p<0.75',
      '0.75≤p<1',
      '0.75≤p<1',
      'p=1',
    ]);
    expect(DEFAULT_BINS).toHaveLength(6);
  });

  it('Q = α r + (1 − α) Q, p = softmax(Q/τ), shared in a bin; boundary first; flaky weight 0', () => {
    const labels = report([
      row('easy', 'always_pass', 1, 0),
      row('hard', 'always_fail', 0, 0),
      row('b1', 'boundary', 0.5, 1),
      row('b2', 'boundary', 0.5, 0.8),
      row('b3', 'boundary', 0.75, 0.6),
      row('flaky', 'flaky-infra', null, 0),
    ]);
    const w = samplingWeights(labels, 0);
    expect(w.bandit).toMatchObject({ alpha: 0.5, tau: 1 });
    const q = Object.fromEntries(w.bins.map((b) => [b.id, b.q]));
    expect(q['0.5≤p<0.75']).toBeCloseTo(0.5 * 0.9, 15);
    expect(q['0.75≤p<1']).toBeCloseTo(0.5 * 0.6, 15);
    expect(q['p=0']).toBe(0);
    const z = 1 + 1 + Math.exp(0.45) + Math.exp(0.3);
    const p = Object.fromEntries(w.bins.map((b) => [b.id, b.p]));
    expect(p['0.5≤p<0.75']).toBeCloseTo(Math.exp(0.45) / z, 15);
    expect(p['p=1']).toBeCloseTo(1 / z, 15);
    expect(p['0<p<0.25']).toBe(0);
    // b3 is alone in its bin (e^0.3/z) and outweighs b1 and b2, who share theirs (e^0.45/2z each).
    expect(w.tasks.map((t) => t.task_id)).toEqual(['b3', 'b1', 'b2', 'easy', 'hard', 'flaky']);
    expect(w.tasks[1]!.weight).toBeCloseTo(Math.exp(0.45) / z / 2, 15);
    expect(w.tasks.find((t) => t.task_id === 'flaky')).toMatchObject({ weight: 0, bin: null });
    expect(w.tasks.reduce((a, t) => a + t.weight, 0)).toBeCloseTo(1, 12);

    // Round 2: the middle bin's r = 0.2 → Q = 0.5·0.2 + 0.5·0.45; the empty 0.75 bin keeps its Q, p = 0.
    const next = samplingWeights(report([row('b1', 'boundary', 0.5, 0.2), row('easy', 'always_pass', 1, 0)]), 1, w);
    const bin = next.bins.find((b) => b.id === '0.5≤p<0.75')!;
    expect(bin.q).toBeCloseTo(0.5 * 0.2 + 0.5 * 0.45, 15);
    expect(next.bins.find((b) => b.id === '0.75≤p<1')).toMatchObject({ tasks: 0, reward: null, p: 0 });
    expect(next.bins.find((b) => b.id === '0.75≤p<1')!.q).toBeCloseTo(0.3, 15);
    expect(bin.p).toBeCloseTo(Math.exp(bin.q) / (Math.exp(bin.q) + 1), 15);
  });

  it('refuses bad settings', () => {
    const labels = report([]);
    expect(() => samplingWeights(labels, 0, undefined, { alpha: 0, tau: 1 })).toThrow(/alpha/);
    expect(() => samplingWeights(labels, 0, undefined, { alpha: 0.5, tau: 0 })).toThrow(/tau/);
    const w = samplingWeights(labels, 0);
    expect(w.tasks).toEqual([]);
    expect(() => samplingWeights(labels, 1, w, undefined, DEFAULT_BINS.slice(1))).toThrow(/other difficulty bins/);
  });
});
