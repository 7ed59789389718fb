/** `npm run bench`: prints medians and their ratio to each target. */
import { coreCases } from './core.ts';
import { runCases } from './harness.ts';
import { formatTau2Bench, measureTau2 } from './tau2.ts';
import { ADVERSARIAL_STRINGS } from '../test/fixtures/attacks/strings/adversarial.ts';
import { formatTextChecks, measureTextChecks } from './text-checks.ts';
import { largeRunLines } from './large-run.ts';
import { openEnvLines } from './openenv.ts';
import { milestoneMemoryLines } from './milestone-memory.ts';
import { evolveBenchLines } from './evolve.ts';
import { buildDomainBenchLines } from './build-domain.ts';

await runCases('Core (carrier domain, sql.js in-process)', await coreCases());
console.log('\nRollout threads: scripted episodes (reference agent, scripted caller, each scored) per second');
console.log((await (await import('./pool.ts')).poolBenchLines()).join('\n'));
console.log('\nCLI start-up: node bin/switchboard.mjs, spawned (time to exit, peak RSS)');
console.log((await (await import('./startup.ts')).startupBenchLines()).join('\n'));
console.log(`\nText checks on 1 MB adversarial strings (${ADVERSARIAL_STRINGS.length} kinds; slowest per check)`);
console.log(formatTextChecks(measureTextChecks()));
console.log('\nLarge run: run --out of carrier, scripted participants (RSS of this process)');
console.log(await largeRunLines());
console.log('\nOpenEnv server: environment overhead per agent turn (carrier, scripted caller, no-op policy)');
console.log((await openEnvLines()).join('\n'));
console.log('\nEvolve: one round over carrier, K=8, scripted policy (environment vs gate)');
console.log((await evolveBenchLines()).join('\n'));
console.log('\nbuild-domain: a 50-operation OpenAPI 3 spec, scaffold only (no model)');
console.log((await buildDomainBenchLines()).join('\n'));
console.log('\nMilestone groups on tau2-airline: peak RSS of this process (snapshots freed per task)');
console.log((await milestoneMemoryLines()).join('\n'));
console.log(
  '\nHot paths on tau2-bench data: tool calls, replay + scoring per task, milestone fork, channel (issue 15)',
);
console.log((await (await import('./hot-paths.ts')).hotPathLines()).join('\n'));
console.log(
  "\ntau2-bench airline and retail beside tau2-bench's own Python (issue 15: the same work, measured in this run)",
);
const anchor = await import('./tau2-anchor.ts');
console.log((await anchor.tau2AnchorLines(anchor.tau2DataRoot())).join('\n'));
console.log('\ntau2-bench airline and retail (sql.js in-process; reference trajectories)');
console.log(formatTau2Bench(await measureTau2()));
await runCases(
  'Audio (phone channel chain alone, median of 10 s turns; espeak-ng)',
  await (await import('./audio.ts')).audioCases(),
);
console.log('\nFull duplex: one 3-minute --duplex call, espeak-ng on both sides, regular preset, barge-in 0.3');
console.log((await (await import('./duplex.ts')).duplexBenchLines()).join('\n'));
console.log('\nThe page in chromium (production build, --disable-gpu)');
console.log((await (await import('./page.ts')).pageBenchLines()).join('\n'));
