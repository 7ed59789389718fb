/**
 * One evolve round over carrier (issue 16): 15 tasks × K = 8 rollouts with the scripted
 * reference policy and the scripted caller, then labels, attribution and hardening of the
 * always-passed tasks through the gate. Prints the median wall time of the round over a few runs
 * and where it went: the environment (episodes and their scoring) vs the gate (attribution and
 * hardening), from the round's `timing_ms` (evolve's `now` hook).
 */
import { loadBuiltinDomain } from '../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { evolve } from '../src/core/evolution/index.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { steppingClock } from '../src/core/ports/clock.ts';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Lines of the benchmark: `runs` rounds, medians. */
export async function evolveBenchLines(runs = 3): Promise<string[]> {
  const domain = await loadBuiltinDomain('carrier');
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  const rows: { total: number; environment: number; gate: number; labels: number; episodes: number; gated: number }[] =
    [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const { report } = await evolve({
      runtime,
      tasks: domain.tasks,
      agent: () => new ReferenceAgent(),
      user: () => new ScriptedUser(),
      k: 8,
      seed: 0,
      concurrency: 4,
      clock: () => steppingClock(domain.now, 1000),
      harden: {},
      now: () => performance.now(),
    });
    const total = performance.now() - start;
    const r = report.rounds[0]!;
    const t = r.timing_ms!;
    const h = r.hardening;
    rows.push({
      total,
      environment: t.environment,
      gate: t.attribution + t.hardening,
      labels: t.labels,
      episodes: r.episodes,
      gated: (h?.admitted.length ?? 0) + (h?.rejected.length ?? 0),
    });
  }
  const m = (k: keyof (typeof rows)[number]) => median(rows.map((r) => r[k]));
  // Share of each run's round time, then the median over runs.
  const share = (k: 'environment' | 'gate' | 'labels') =>
    `${median(rows.map((r) => (100 * r[k]) / r.total)).toFixed(1)}%`;
  return [
    `  one round, ${m('episodes')} episodes (15 tasks × K=8, reference policy) + ${m('gated')} hardened variants gated: median ${m('total').toFixed(0)} ms over ${runs} runs`,
    `    environment (episodes and scoring)   ${m('environment').toFixed(0).padStart(6)} ms  ${share('environment')}`,
    `    gate (attribution and hardening)     ${m('gate').toFixed(0).padStart(6)} ms  ${share('gate')}`,
    `    labels and sampling weights          ${m('labels').toFixed(1).padStart(6)} ms  ${share('labels')}`,
  ];
}
