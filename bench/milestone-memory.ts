/**
 * Memory of milestone-level groups (issue 12): `milestoneGroups` over all 50 tau2-airline tasks
 * (reference agent, scripted caller, K = 4 forks per milestone), in this process. Prints the
 * resident set size (RSS) sampled every 20 ms and after each task: before and peak, with the
 * number of milestones and groups. A task's database snapshots are freed once its forks ran, so
 * the peak is that of the largest task, not of the split (target: well under 1 GB).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cachedTau2Part, tau2CacheDir } from '../src/adapters/node/tau2-data.ts';
import { loadTau2Domain } from '../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../src/core/participants/scripted.ts';
import { steppingClock } from '../src/core/ports/clock.ts';
import { milestoneGroups } from '../src/core/training/rollouts.ts';

const MB = 1024 * 1024;
/** The bar: peak RSS for all airline tasks, MB. */
export const MILESTONE_RSS_TARGET_MB = 1024;

/** Lines for `npm run bench`. */
export async function milestoneMemoryLines(k = 4): Promise<string[]> {
  const dir = cachedTau2Part('airline')
    ? `${tau2CacheDir()}/airline/`
    : fileURLToPath(new URL('../../shared/tau2/airline/', import.meta.url));
  if (!existsSync(dir)) return [`  (no tau2 airline data at ${dir}: skipped)`];
  const domain = await loadTau2Domain('tau2-airline', dir);
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, 20);
  const started = performance.now();
  let milestones = 0;
  let groups = 0;
  try {
    await milestoneGroups({
      runtime,
      agent: () => new ReferenceAgent(),
      user: () => new ScriptedUser(),
      clock: (_seed, fromMs) => steppingClock(fromMs ?? domain.now, 1000),
      tasks: domain.tasks,
      k,
      seed: 0,
      onGroups: (g, m) => {
        milestones += m.length;
        groups += g.length;
        sample();
      },
    });
  } finally {
    clearInterval(timer);
  }
  const s = (performance.now() - started) / 1000;
  const ratio = MILESTONE_RSS_TARGET_MB / (peak / MB);
  return [
    `  milestone groups, ${domain.tasks.length} airline tasks, K = ${k}: ${milestones} milestones, ${groups} groups in ${s.toFixed(1)} s`,
    `  RSS before ${(before / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (target < ${MILESTONE_RSS_TARGET_MB} MB: ${ratio.toFixed(2)}× headroom)`,
  ];
}
