import { describe, expect, it } from 'vitest';
import { seededRng } from '../../../src/core/ports/rng.ts';
import {
  isSuccess,
  isSuccessfulReward,
  passHatK,
  passHatKTable,
  type TrialResult,
} from '../../../src/core/scoring/pass-hat-k.ts';

const trials = (taskId: string, outcomes: string): TrialResult[] =>
  [...outcomes].map((c) => ({ taskId, success: c === 's' || c === 'S', valid: c === 's' || c === 'f' }));

describe('passHatK', () => {
  // t1: 4 valid (3 successes) + 1 invalid success; t2: 4 valid (1 success); t3: 2 valid (2 successes).
  const results = [...trials('t1', 'ssfsS'), ...trials('t2', 'fsff'), ...trials('t3', 'ss')];

  it('is the mean over tasks of C(s,k)/C(n,k)', () => {
    expect(passHatK(results, 1)).toBeCloseTo((3 / 4 + 1 / 4 + 1) / 3, 12);
    expect(passHatK(results, 2)).toBeCloseTo((3 / 6 + 0 + 1) / 3, 12);
  });

  it('leaves out tasks with fewer than k valid trials', () => {
    expect(passHatK(results, 3)).toBeCloseTo((1 / 4 + 0) / 2, 12);
    expect(passHatK(results, 4)).toBeCloseTo((0 + 0) / 2, 12);
  });

  it('is NaN when no task has k valid trials, and rejects a bad k', () => {
    expect(passHatK(results, 5)).toBeNaN();
    expect(() => passHatK(results, 0)).toThrow(RangeError);
    expect(() => passHatK(results, 1.5)).toThrow(RangeError);
  });
});

describe('passHatKTable', () => {
  it('is passHatK for every k from 1 to maxK, bit for bit', () => {
    const r = seededRng(7);
    const rng = () => r.next();
    for (let run = 0; run < 200; run++) {
      const tasks = 1 + Math.floor(rng() * 6);
      const trials = Math.floor(rng() * 40);
      const successRate = rng();
      const results: TrialResult[] = [];
      for (let i = 0; i < tasks * trials; i++)
        results.push({ taskId: `t${Math.floor(rng() * tasks)}`, success: rng() < successRate, valid: rng() < 0.9 });
      const maxK = Math.floor(rng() * (trials + 3));
      const table = passHatKTable(results, maxK);
      expect(Object.keys(table)).toEqual(Array.from({ length: maxK }, (_, k) => String(k + 1)));
      for (let k = 1; k <= maxK; k++)
        expect(Object.is(table[k], passHatK(results, k)), `run ${run}, k ${k}`).toBe(true);
    }
  });

  it('gives the worked example and rejects a bad maxK', () => {
    const results = [...trials('t1', 'ssfsS'), ...trials('t2', 'fsff'), ...trials('t3', 'ss')];
    expect(passHatKTable(results, 5)).toEqual({
      1: (3 / 4 + 1 / 4 + 1) / 3,
      2: (1 / 2 + 0 + 1) / 3,
      3: (1 / 4 + 0) / 2,
      4: 0,
      5: Number.NaN,
    });
    expect(passHatKTable(results, 0)).toEqual({});
    expect(() => passHatKTable(results, -1)).toThrow(RangeError);
    expect(() => passHatKTable(results, 2.5)).toThrow(RangeError);
  });
});

describe('success', () => {
  it('follows tau2-bench: within 1e-6 of 1', () => {
    expect(isSuccessfulReward(1)).toBe(true);
    expect(isSuccessfulReward(1 - 5e-7)).toBe(true);
    expect(isSuccessfulReward(1 - 2e-6)).toBe(false);
    expect(isSuccessfulReward(0)).toBe(false);
  });

  it('never counts a partial reward as a success', () => {
    expect(isSuccess({ reward: 1, partial: true })).toBe(false);
    expect(isSuccess({ reward: 1, partial: false })).toBe(true);
  });
});
