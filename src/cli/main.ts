/**
 * `switchboard` command line: gate a domain, run batches of rollouts, and the demo.
 * Every command takes `--json` and then prints one machine-readable JSON document on stdout.
 */
import { mkdir, writeFile, appendFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import cliProgress from 'cli-progress';
import { DomainFileError, type Domain } from '../core/schema/domain.ts';
import { DomainRuntime } from '../core/env/environment.ts';
import { gateDomain, type GateReport } from '../core/gate/gate.ts';
import { runBatch, type BatchSummary } from '../core/rollout/batch.ts';
import { steppingClock } from '../core/ports/clock.ts';
import { sqlJsFactory } from '../adapters/shared/sqljs-db.ts';
import { loadDomain } from '../adapters/node/load-domain.ts';
import { agentFactory, userFactory, UsageError } from './participants.ts';
import { renderGate, renderSummary } from './reports.ts';

/** Where the CLI writes: swapped in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Show progress bars (stderr is a terminal and no --json). */
  progress: boolean;
}

const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  progress: Boolean(process.stderr.isTTY),
};

function intOption(name: string, min: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

async function openDomain(name: string): Promise<{ domain: Domain; runtime: DomainRuntime }> {
  const domain = await loadDomain(name).catch((e: unknown) => {
    throw e instanceof DomainFileError ? e : new UsageError((e as Error).message);
  });
  return { domain, runtime: await DomainRuntime.create(domain, await sqlJsFactory()) };
}

function pickTasks(domain: Domain, ids?: string): Domain['tasks'] {
  if (!ids) return domain.tasks;
  const wanted = ids.split(',').map((s) => s.trim()).filter(Boolean);
  const known = new Set(domain.tasks.map((t) => t.id));
  const unknown = wanted.filter((id) => !known.has(id));
  if (unknown.length) throw new UsageError(`unknown task id(s) in ${domain.name}: ${unknown.join(', ')}`);
  return domain.tasks.filter((t) => wanted.includes(t.id));
}

function bar(io: CliIo, total: number, label: string): { tick(): void; stop(): void } {
  if (!io.progress) return { tick() {}, stop() {} };
  const b = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} · {duration_formatted}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  b.start(total, 0);
  return { tick: () => b.increment(), stop: () => b.stop() };
}

async function gateCommand(io: CliIo, name: string, opts: { taskIds?: string; json?: boolean }): Promise<{ report: GateReport; code: number }> {
  const { domain, runtime } = await openDomain(name);
  const tasks = pickTasks(domain, opts.taskIds);
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length, `gate ${name}`);
  const report = await gateDomain(runtime, {
    ...(opts.taskIds ? { taskIds: tasks.map((t) => t.id) } : {}),
    onTask: () => progress.tick(),
  });
  progress.stop();
  return { report, code: report.accepted ? 0 : 1 };
}

interface RunOpts {
  domain: string;
  agent: string;
  user: string;
  trials: number;
  concurrency: number;
  seed: number;
  out?: string;
  taskIds?: string;
  json?: boolean;
  maxSteps?: number;
}

async function runCommand(io: CliIo, opts: RunOpts): Promise<BatchSummary> {
  const agent = agentFactory(opts.agent);
  const user = userFactory(opts.user);
  const { domain, runtime } = await openDomain(opts.domain);
  const tasks = pickTasks(domain, opts.taskIds);
  const outDir = opts.out ? resolve(opts.out) : undefined;
  const lines = outDir ? join(outDir, 'trajectories.jsonl') : undefined;
  if (outDir && lines) {
    await mkdir(outDir, { recursive: true });
    await writeFile(lines, '');
  }
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length * opts.trials, `run ${domain.name}`);
  let writing = Promise.resolve();
  const { summary } = await runBatch({
    runtime,
    tasks,
    agent,
    user,
    trials: opts.trials,
    seed: opts.seed,
    concurrency: opts.concurrency,
    clock: () => steppingClock(domain.now, 1000),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    onTrajectory: (t) => {
      if (t.valid) progress.tick();
      if (lines) writing = writing.then(() => appendFile(lines, `${JSON.stringify(t)}\n`));
    },
  });
  await writing;
  progress.stop();
  if (outDir) await writeFile(join(outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (!opts.json && outDir) io.err(`wrote ${lines} and ${join(outDir, 'summary.json')}`);
  return summary;
}

function program(io: CliIo, setCode: (c: number) => void): Command {
  const cmd = new Command('switchboard')
    .description('Voice-agent sandbox: executable domains, simulated calls, automatic scoring.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });

  cmd
    .command('gate')
    .description('Admission check of a domain: reference solutions replay, rules bind, do-nothing fails, reference passes.')
    .argument('<domain>', 'built-in domain name (carrier) or path to a domain folder')
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option('--json', 'print one JSON document')
    .action(async (name: string, opts: { taskIds?: string; json?: boolean }) => {
      const { report, code } = await gateCommand(io, name, opts);
      io.out(opts.json ? JSON.stringify(report, null, 2) : renderGate(report));
      setCode(code);
    });

  cmd
    .command('run')
    .description('Run K rollouts of each task and score them.')
    .requiredOption('--domain <name>', 'built-in domain name (carrier) or path to a domain folder')
    .option('--agent <spec>', 'agent: reference | noop', 'reference')
    .option('--user <spec>', 'simulated caller: scripted', 'scripted')
    .option('--trials <k>', 'rollouts per task', intOption('--trials', 1), 1)
    .option('--concurrency <n>', 'rollouts in flight', intOption('--concurrency', 1), 4)
    .option('--seed <n>', 'base seed', intOption('--seed', 0), 0)
    .option('--max-steps <n>', 'participant turns per episode', intOption('--max-steps', 1))
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option('--out <dir>', 'write trajectories.jsonl and summary.json here')
    .option('--json', 'print the summary as one JSON document')
    .action(async (opts: RunOpts) => {
      const summary = await runCommand(io, opts);
      io.out(opts.json ? JSON.stringify(summary, null, 2) : renderSummary(summary));
    });

  cmd
    .command('demo')
    .description('Gate the built-in carrier domain, then run it with the reference and the do-nothing agent.')
    .option('--json', 'print one JSON document')
    .action(async (opts: { json?: boolean }) => {
      const quiet = { ...io, progress: opts.json ? false : io.progress };
      const { report } = await gateCommand(quiet, 'carrier', { json: opts.json ?? false });
      const base = { domain: 'carrier', user: 'scripted', trials: 1, concurrency: 4, seed: 0, json: true };
      const reference = await runCommand(quiet, { ...base, agent: 'reference' });
      const noop = await runCommand(quiet, { ...base, agent: 'noop' });
      const ok =
        report.accepted &&
        reference.tasks.every((t) => t.mean === 1) &&
        noop.tasks.every((t) => t.mean === 0);
      if (opts.json) io.out(JSON.stringify({ gate: report, reference, noop, ok }, null, 2));
      else io.out([renderGate(report), '', renderSummary(reference), '', renderSummary(noop)].join('\n'));
      setCode(ok ? 0 : 1);
    });
  return cmd;
}

/**
 * Run the CLI with `argv` (without node and script). Returns the exit code: 0 success, 1 a
 * refusal or failed check, 2 a usage or input error.
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let code = 0;
  try {
    await program(io, (c) => (code = c)).parseAsync([...argv], { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError || e instanceof DomainFileError) {
      io.err(`switchboard: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
