import { describe, expect, it } from 'vitest';
import { toneTts } from '../../fixtures/tone-tts.ts';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { nodeGraphRenderer } from '../../../src/adapters/node/audio/renderer.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/index.ts';
import { evolve } from '../../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';

describe('evolve hardens on the channel axis (carrier, noisy agent whose error depends on the channel)', () => {
  it('moves always-passed tasks clean → control through the gate; the next round runs them there and they pass less', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const tasks = domain.tasks.filter((t) =>
      ['carrier-pay-balance-1', 'carrier-dispute-recent-1', 'carrier-change-plan-1'].includes(t.id),
    );
    expect(tasks).toHaveLength(3);
    // Never errs on a clean line; errs on each write with p = 0.5 behind the telephony band (control).
    const agent = () => new NoisyAgent({ p: 0, channel: { clean: 0, control: 0.5 } });
    const heard = new Set<string>();
    const { report, variants } = await evolve({
      onTrajectory: (t, round) => {
        for (const turn of t.turns) if (turn.role === 'user' && turn.audio) heard.add(`${round}:${turn.audio.preset}`);
      },
      runtime,
      tasks,
      agent,
      user: () => new ScriptedUser(),
      k: 8,
      rounds: 2,
      seed: 0,
      concurrency: 2,
      clock: () => steppingClock(domain.now, 1000),
      channel: { tts: toneTts, renderer: nodeGraphRenderer, preset: 'clean' },
      harden: { patterns: [], channel: true },
    });
    const [r0, r1] = report.rounds;
    expect(r0!.labels.histogram).toEqual({ always_pass: 3, boundary: 0, always_fail: 0, 'flaky-infra': 0 });
    expect(r0!.hardening!.admitted).toEqual(
      tasks.map((t) => ({
        task_id: `${t.id}~harsher_channel.0`,
        parent: t.id,
        pattern: 'harsher_channel',
        reason: 'channel clean → control',
        channel: { from: { preset: 'clean', barge_in: 0 }, to: { preset: 'control', barge_in: 0 } },
      })),
    );
    expect(variants.map((v) => v.lineage!.changes[0]!.params)).toEqual(
      tasks.map(() => ({
        axis: 'channel',
        from: { preset: 'clean', barge_in: 0 },
        to: { preset: 'control', barge_in: 0 },
      })),
    );
    // The same task content: only the id and lineage differ.
    expect(variants.map(({ id: _, lineage: __, ...rest }) => rest)).toEqual(
      tasks.map(({ id: _, lineage: __, ...rest }) => rest),
    );
    const rows = r1!.labels.tasks.map((t) => [t.task_id, t.label, t.successes]);
    // Under control the agent errs on each write with p = 0.5: 4, 6 and 3 of 8 pass.
    expect(rows).toEqual([
      ['carrier-pay-balance-1~harsher_channel.0', 'boundary', 4],
      ['carrier-dispute-recent-1~harsher_channel.0', 'boundary', 6],
      ['carrier-change-plan-1~harsher_channel.0', 'boundary', 3],
    ]);
    expect(r0!.labels.tasks.map((t) => t.successes)).toEqual([8, 8, 8]);
    expect(r1!.labels.histogram).toEqual({ always_pass: 0, boundary: 3, always_fail: 0, 'flaky-infra': 0 });
    expect(r1!.hardening!.admitted).toEqual([]);
    expect(variants).toHaveLength(3);
    // Round 0 ran on the clean preset, round 1 (the variants) on control.
    expect([...heard].sort()).toEqual(['0:clean', '1:control']);
    expect(report.summary.labels_before).toEqual(r0!.labels.histogram);
    expect(report.summary.labels_after).toEqual(r1!.labels.histogram);
    expect(report.summary.hardened.map((h) => [h.round, h.task_id, h.reason])).toEqual(
      tasks.map((t) => [0, `${t.id}~harsher_channel.0`, 'channel clean → control']),
    );
    await runtime.close();
  }, 120_000);
});

describe('evolve: the channel axis needs a channel', () => {
  it('throws a RangeError without one', async () => {
    const domain = await loadBuiltinDomain('carrier');
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    await expect(
      evolve({
        runtime,
        tasks: domain.tasks.slice(0, 1),
        agent: () => new NoisyAgent({ p: 0 }),
        user: () => new ScriptedUser(),
        k: 1,
        seed: 0,
        concurrency: 1,
        clock: () => steppingClock(domain.now, 1000),
        harden: { channel: true },
      }),
    ).rejects.toThrow('evolve: hardening on the channel axis needs a channel (a named preset)');
    await runtime.close();
  });
});
