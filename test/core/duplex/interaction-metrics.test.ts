import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callEvents } from '../../../src/core/duplex/interaction-events.ts';
import {
  displayStatus,
  formatPanelValue,
  interactionPanel,
  overallPanel,
  type InteractionPanel,
} from '../../../src/core/duplex/interaction-metrics.ts';
import type { MetricEffect, MetricTick } from '../../../src/core/duplex/segments.ts';
import { metricsBlock } from '../../../src/cli/commands/metrics.ts';
import { main } from '../../../src/cli/main.ts';
import { capture } from '../../fixtures/cli-io.ts';

const GOLDEN = join(import.meta.dirname, '../../golden/tau2-interaction-metrics');

interface Spec {
  u?: boolean;
  a?: boolean;
  act?: string;
  fx?: 'vocal_tic' | 'non_directed_speech';
}
const tick = ({ u = false, a = false, act, fx }: Spec): MetricTick => ({
  agentSpeech: a,
  user:
    u || fx || act
      ? {
          speech: u,
          action: act ?? null,
          effects: fx
            ? [{ type: fx, text: fx === 'vocal_tic' ? '[cough]' : 'hold on', file: null } as MetricEffect]
            : [],
        }
      : null,
});
const rep = (n: number, s: Spec) => Array.from({ length: n }, () => tick(s));
const types = (ticks: MetricTick[]) => callEvents(ticks).events.map((e) => [e.type, e.tick, e.latency_sec]);

describe('interaction events (tau2-bench definitions, 200 ms ticks)', () => {
  it('a caller turn answered after 5 ticks is a response with latency 1.0 s', () => {
    const t = [...rep(5, { u: true, act: 'keep_talking' }), ...rep(5, {}), ...rep(5, { a: true }), ...rep(5, {})];
    expect(types(t)).toEqual([['response', 5, 1]]);
  });

  it('the caller speaking again before any answer is a no_response; the second turn is answered', () => {
    const t = [
      ...rep(5, { u: true }),
      ...rep(10, {}),
      ...rep(5, { u: true }),
      ...rep(5, {}),
      ...rep(3, { a: true }),
      ...rep(3, {}),
    ];
    expect(types(t)).toEqual([
      ['no_response', 5, null],
      ['response', 20, 1],
    ]);
  });

  it('a barge-in the agent stops for after 3 ticks is a yield of 0.6 s; talking through 2 s is a no_yield', () => {
    const yielded = [
      ...rep(4, { a: true }),
      ...rep(3, { a: true, u: true }),
      ...rep(3, { u: true }),
      ...rep(5, {}),
      ...rep(3, { a: true }),
      ...rep(2, {}),
    ];
    const ev = callEvents(yielded).events;
    expect(ev.find((e) => e.category === 'yield')).toMatchObject({ type: 'yield', tick: 4 });
    expect(ev.find((e) => e.category === 'yield')!.latency_sec).toBeCloseTo(0.6, 12);
    const kept = [...rep(2, { a: true }), ...rep(4, { a: true, u: true }), ...rep(12, { a: true }), ...rep(2, {})];
    expect(types(kept)).toEqual([['no_yield', 2, null]]);
  });

  it('a backchannel talked through is correct; stopping within 1 s is an error', () => {
    const through = [
      ...rep(3, { a: true }),
      ...rep(2, { a: true, u: true, act: 'backchannel' }),
      ...rep(8, { a: true }),
      ...rep(2, {}),
    ];
    expect(types(through)).toEqual([['backchannel_correct', 3, null]]);
    const stopped = [...rep(3, { a: true }), ...rep(2, { a: true, u: true, act: 'backchannel' }), ...rep(8, {})];
    expect(types(stopped)).toEqual([['backchannel_error', 3, null]]);
  });

  it('a vocal tic the agent stops for is an error; speech not meant for it in silence, unanswered, is correct', () => {
    const tic = [
      ...rep(3, { a: true }),
      ...rep(2, { a: true, u: true, act: 'keep_talking', fx: 'vocal_tic' }),
      ...rep(8, {}),
    ];
    expect(types(tic)).toEqual([['vocal_tic_error', 3, null]]);
    const aside = [...rep(3, { a: true }), ...rep(3, {}), ...rep(2, { fx: 'non_directed_speech' }), ...rep(15, {})];
    expect(types(aside)).toEqual([['non_directed_correct', 6, null]]);
  });

  it('an out-of-turn aside the agent answers within 2 s is an error at the answer; one it stops for within 1 s too', () => {
    const answered = [
      ...rep(3, {}),
      ...rep(2, { fx: 'non_directed_speech' }),
      ...rep(4, {}),
      ...rep(3, { a: true }),
      ...rep(2, {}),
    ];
    expect(types(answered)).toEqual([['non_directed_error', 9, null]]);
    const stoppedFor = [...rep(3, { a: true }), ...rep(1, { a: true, fx: 'vocal_tic' }), ...rep(6, {})];
    expect(types(stoppedFor)).toEqual([['vocal_tic_error', 3, null]]);
    // Talked through (the agent goes on past the window): not scored at all, as in tau2-bench.
    const talkedThrough = [
      ...rep(3, { a: true }),
      ...rep(1, { a: true, fx: 'vocal_tic' }),
      ...rep(8, { a: true }),
      ...rep(2, {}),
    ];
    expect(types(talkedThrough)).toEqual([]);
  });

  it('a one-tick caller segment on the very last tick (the stop artefact) is dropped', () => {
    const t = [...rep(3, { a: true }), ...rep(1, {}), ...rep(1, { u: true })];
    expect(callEvents(t).events).toEqual([]);
    const kept = [...rep(3, { a: true }), ...rep(2, { u: true, a: true })];
    expect(types(kept)).toEqual([['no_yield', 3, null]]);
  });

  it('the agent starting while the caller speaks counts as an agent interruption (I_A = count / response events)', () => {
    const t = [
      ...rep(3, { u: true }),
      ...rep(2, { u: true, a: true }),
      ...rep(3, { a: true }),
      ...rep(2, {}),
      ...rep(2, { u: true }),
      ...rep(2, {}),
      ...rep(2, { a: true }),
      ...rep(1, {}),
    ];
    const r = callEvents(t);
    expect(r.agent_interrupts).toBe(1);
    const p = interactionPanel([{ ticks: t }]);
    expect(p.counts).toEqual({
      n_simulations: 1,
      response_total: 1,
      yield_total: 0,
      backchannel_total: 0,
      vocal_tic_total: 0,
      non_directed_total: 0,
      agent_interrupts_count: 1,
    });
    expect(p.agent_interruption_rate).toBe(1);
    expect(p.selectivity_backchannel).toBeNull();
  });

  it('calls without ticks are refused, and the all-domain mean skips missing values', () => {
    expect(() => interactionPanel([{ ticks: [] }])).toThrow(/full-duplex/);
    const base = { counts: { response_total: 10 } } as unknown as InteractionPanel;
    const overall = overallPanel({
      retail: { ...base, response_rate: 0.9, selectivity_vocal_tic: null } as InteractionPanel,
      airline: {
        ...base,
        response_rate: 0.7,
        selectivity_vocal_tic: 0.5,
        counts: { response_total: 30 },
      } as InteractionPanel,
    })!;
    expect(overall.response_rate).toBeCloseTo(0.8, 12);
    expect(overall.selectivity_vocal_tic).toBe(0.5);
    expect(overall.counts.response_total).toBe(40);
  });
});

describe("parity with tau2-bench's interaction-metrics test data", () => {
  it('reproduces expected_metrics.json to 1e-9 with exact counts', async () => {
    const expected = JSON.parse(await readFile(join(GOLDEN, 'expected_metrics.json'), 'utf8'));
    const block = await metricsBlock([join(GOLDEN, 'experiment')]);
    expect(Object.keys(block.domains)).toEqual(['retail']);
    const retail = block.domains.retail!;
    for (const [k, v] of Object.entries(expected)) {
      if (k === 'counts') expect(retail.counts).toEqual(v);
      else if (v === null) expect(retail[k as keyof InteractionPanel]).toBeNull();
      else expect(Math.abs((retail[k as keyof InteractionPanel] as number) - (v as number))).toBeLessThan(1e-9);
    }
    expect(block.config.tick_duration_sec).toBe(0.2);
    expect(block.overall?.response_rate).toBe(retail.response_rate);
    // The display rule: S_BC rests on 3 events, S_VT on 7, S_ND on 6 (hidden); the rest are shown.
    expect(displayStatus(retail, 'selectivity_backchannel')).toBe('low_n');
    expect(formatPanelValue(retail, 'selectivity_vocal_tic')).toBe('n=7');
    expect(formatPanelValue(retail, 'response_latency_mean')).toBe('1.46s');
    expect(formatPanelValue(retail, 'yield_rate')).toBe('100.0%');
  });

  it('switchboard metrics prints the panel and --json gives the same document', async () => {
    const io = capture();
    expect(await main(['metrics', join(GOLDEN, 'experiment', 'results.json')], io)).toBe(0);
    const lines = io.stdout.trim().split('\n');
    // The same header as `run --duplex` prints under its score table (test/cli/duplex.test.ts).
    expect(lines[0]).toMatch(/^domain\s+L_R ↓\s+L_Y ↓\s+R_R ↑\s+R_Y ↑\s+I_A ↓\s+S_BC ↑\s+S_VT ↑\s+S_ND ↑\s+calls$/);
    expect(lines[2]!.split(/\s+/)).toEqual([
      'retail',
      '1.46s',
      '0.67s',
      '97.1%',
      '100.0%',
      '22.9%',
      'n=3',
      'n=7',
      'n=6',
      '3',
    ]);
    const js = capture();
    expect(await main(['metrics', GOLDEN, '--json'], js)).toBe(0);
    const doc = JSON.parse(js.stdout);
    expect(doc.domains.retail.counts.agent_interrupts_count).toBe(8);
    expect(doc.version).toBe('1.0');
  });

  it('bad input exits 2 naming the file and field', async () => {
    const io = capture();
    expect(await main(['metrics', join(GOLDEN, 'expected_metrics.json')], io)).toBe(2);
    expect(io.stderr).toMatch(/expected_metrics\.json: info: /);
    const missing = capture();
    expect(await main(['metrics', join(GOLDEN, 'nope')], missing)).toBe(2);
    expect(missing.stderr).toMatch(/nope: no such file or folder/);
  });
});
