/**
 * `switchboard propose --domain <d> --model <spec> --task <id> (--repair <finding> | --pattern
 * <id>) --out <bank dir>`: ask a model (any OpenAI-compatible endpoint) for a JSON patch on one
 * task — a repair of a finding or a harder variant from a hard pattern — and admit the result
 * to a task bank only when the patch applies, the task schema holds and the gate accepts it
 * ({@link proposeTaskChange}). Prints the outcome; exit 0 when admitted, 1 when not.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { writeBank } from '../../adapters/node/task-bank.ts';
import { admitToBank, proposeTaskChange, taskPatternIds, type ProposalOutcome } from '../../core/evolution/index.ts';
import { openDomain, withBankTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { DOMAIN_HELP, intOption } from '../options.ts';
import { modelClientFor, UsageError } from '../participants.ts';

/** Options of the command. */
export interface ProposeOpts {
  domain: string;
  data?: string;
  bank?: string;
  model: string;
  task: string;
  repair?: string;
  pattern?: string;
  seed: number;
  out?: string;
  json?: boolean;
}

/** One line for an outcome. */
export function renderOutcome(o: ProposalOutcome): string {
  switch (o.status) {
    case 'admitted':
      return `admitted ${o.task.id} version ${o.task.lineage?.version ?? 1}: ${o.reason}`;
    case 'schema_invalid':
      return `not admitted: the patched task breaks the task schema at ${o.field}: ${o.detail}`;
    case 'gate_rejected':
      return `not admitted: the gate refuses ${o.task_id}: ${o.reasons.join('; ')}`;
    case 'patch_failed':
      return `not admitted: the patch does not apply: ${o.detail}`;
    case 'unparseable':
      return `not admitted: the reply is not a patch: ${o.detail}`;
    case 'model_error':
      return `not admitted: the model endpoint failed: ${o.detail}`;
  }
}

/**
 * Run one proposal; on admission write the bank (`--out`, default `--bank`).
 * @throws UsageError for bad options, an unknown task or pattern
 */
export async function runPropose(opts: ProposeOpts): Promise<ProposalOutcome> {
  if (!!opts.repair === !!opts.pattern)
    throw new UsageError('give exactly one of --repair <finding> and --pattern <id>');
  if (opts.pattern && !taskPatternIds().includes(opts.pattern))
    throw new UsageError(`--pattern: unknown task pattern "${opts.pattern}" (known: ${taskPatternIds().join(', ')})`);
  const out = opts.out ?? opts.bank;
  if (!out) throw new UsageError('give --out <bank dir> (or --bank <dir> to update it in place)');
  if (existsSync(join(resolve(out), 'tasks.json')) && resolve(out) !== resolve(opts.bank ?? ''))
    throw new UsageError(`--out ${out} already holds a task bank; pass it as --bank to add to it`);
  const client = modelClientFor(opts.model, '--model');
  const opened = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
  const { runtime, bank } = await withBankTasks(opened, opts.bank);
  const task = runtime.domain.tasks.find((t) => t.id === opts.task);
  if (!task)
    throw new UsageError(`--task: no task "${opts.task}" in ${opts.domain}${opts.bank ? ` or ${opts.bank}` : ''}`);
  const outcome = await proposeTaskChange({
    client,
    runtime,
    task,
    request: opts.repair ? { kind: 'repair', finding: opts.repair } : { kind: 'variant', pattern: opts.pattern! },
    seed: opts.seed,
  });
  if (outcome.status === 'admitted') {
    await writeBank(resolve(out), opened.domain.tasks, admitToBank(bank, [outcome.task]));
  }
  return outcome;
}

/** Add the `propose` command. */
export function registerPropose(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  return program
    .command('propose')
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains)')
    .option('--bank <dir>', 'a task bank folder whose tasks join the domain (and which is updated without --out)')
    .requiredOption('--model <spec>', 'the task editor: <flavor>:<model>@<base-url>')
    .requiredOption('--task <id>', 'the task to change')
    .option('--repair <finding>', 'repair the task: what is wrong with it')
    .option('--pattern <id>', `make a harder variant with a hard pattern (${taskPatternIds().join(', ')})`)
    .option('--seed <n>', 'seed of the request and of the variant id', intOption('--seed', 0), 0)
    .option('--out <dir>', 'the task bank folder to write the admitted task to')
    .option('--json', 'print the outcome as JSON')
    .action(async (opts: ProposeOpts) => {
      const outcome = await runPropose(opts);
      io.out(opts.json ? JSON.stringify(outcome, null, 2) : renderOutcome(outcome));
      setCode(outcome.status === 'admitted' ? 0 : 1);
    });
}
