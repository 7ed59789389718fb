/**
 * `npm run bench`: every section below in turn; `npm run bench -- tau2 pool` runs only the named
 * sections (in the order given), `npm run bench -- --list` names them. Each figure is printed with
 * its target where the issue set one, as a ratio: nothing here judges a figure against another
 * system's number that this run did not measure.
 */
import { ADVERSARIAL_STRINGS } from '../test/fixtures/attacks/strings/adversarial.ts';
import { runCases } from './harness.ts';

/** A section: its title and what prints it. */
interface Section {
  title: string;
  run: () => Promise<void>;
}

const print = (lines: readonly string[] | string) => console.log(typeof lines === 'string' ? lines : lines.join('\n'));

const SECTIONS: Record<string, Section> = {
  core: {
    title: 'Core (carrier domain, sql.js in-process)',
    run: async () => void (await runCases(await (await import('./core.ts')).coreCases())),
  },
  pool: {
    title: 'Rollout threads: scripted episodes (reference agent, scripted caller, each scored) per second',
    run: async () => print(await (await import('./pool.ts')).poolBenchLines()),
  },
  startup: {
    title: 'CLI start-up: node bin/switchboard.mjs, spawned (time to exit, peak RSS)',
    run: async () => print(await (await import('./startup.ts')).startupBenchLines()),
  },
  text: {
    title: `Text checks on 1 MB adversarial strings (${ADVERSARIAL_STRINGS.length} kinds; slowest per check)`,
    run: async () => {
      const { formatTextChecks, measureTextChecks } = await import('./text-checks.ts');
      print(formatTextChecks(measureTextChecks()));
    },
  },
  'large-run': {
    title: 'Large run: run --out of carrier, scripted participants (RSS of this process)',
    run: async () => print(await (await import('./large-run.ts')).largeRunLines()),
  },
  openenv: {
    title: 'OpenEnv server: environment overhead per agent turn (carrier, scripted caller, no-op policy)',
    run: async () => print(await (await import('./openenv.ts')).openEnvLines()),
  },
  evolve: {
    title: 'Evolve: one round over carrier, K=8, scripted policy (environment vs gate)',
    run: async () => print(await (await import('./evolve.ts')).evolveBenchLines()),
  },
  'build-domain': {
    title: 'build-domain: a 50-operation OpenAPI 3 spec, scaffold only (no model)',
    run: async () => print(await (await import('./build-domain.ts')).buildDomainBenchLines()),
  },
  milestones: {
    title: 'Milestone groups on tau2-airline: peak RSS of this process (snapshots freed per task)',
    run: async () => print(await (await import('./milestone-memory.ts')).milestoneMemoryLines()),
  },
  tau2: {
    title:
      "tau2-bench airline and retail beside tau2-bench's own Python (issue 15: tool calls, fork, replay + scoring per task, whole process)",
    run: async () => print(await (await import('./tau2-anchor.ts')).tau2AnchorLines()),
  },
  'tau2-writes': {
    title:
      "tau2-bench airline and retail: every write tool in-process beside tau2-bench's own Python, interleaved (issue 15 item 2)",
    run: async () => print(await (await import('./tau2-writes.ts')).tau2WritesLines()),
  },
  'tau2-gate': {
    title: 'tau2-bench airline and retail: load, gate, executable policy (sql.js in-process; reference trajectories)',
    run: async () => {
      const { formatTau2Bench, measureTau2 } = await import('./tau2.ts');
      print(formatTau2Bench(await measureTau2()));
    },
  },
  channel: {
    title:
      "Phone channel chain alone on 10 s of espeak-ng speech, beside tau2-bench's own chain on the same speech (issues 15 item 7 and 17)",
    run: async () => print(await (await import('./channel.ts')).channelBenchLines()),
  },
  audio: {
    title: 'Audio: espeak-ng TTS',
    run: async () => void (await runCases(await (await import('./audio.ts')).audioCases())),
  },
  duplex: {
    title: 'Full duplex: one 3-minute --duplex call, espeak-ng on both sides, regular preset, barge-in 0.3',
    run: async () => print(await (await import('./duplex.ts')).duplexBenchLines()),
  },
  'page-memory': {
    title: 'The page in chromium with 16 rollouts at once: JS heap and process memory (tau2-airline batch)',
    run: async () => print(await (await import('./page-memory.ts')).pageMemoryLines()),
  },
  page: {
    title: 'The page in chromium (production build, --disable-gpu)',
    run: async () => print(await (await import('./page.ts')).pageBenchLines()),
  },
};

const asked = process.argv.slice(2);
if (asked.includes('--list')) {
  for (const [name, s] of Object.entries(SECTIONS)) console.log(`${name.padEnd(13)} ${s.title}`);
} else {
  const unknown = asked.filter((a) => !(a in SECTIONS));
  if (unknown.length) {
    console.error(`bench: no section ${unknown.join(', ')}; sections: ${Object.keys(SECTIONS).join(', ')}`);
    process.exit(2);
  }
  for (const name of asked.length ? asked : Object.keys(SECTIONS)) {
    console.log(`\n[${name}] ${SECTIONS[name]!.title}`);
    await SECTIONS[name]!.run();
  }
}
