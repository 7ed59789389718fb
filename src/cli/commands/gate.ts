/** `switchboard gate <domain>`: the admission check of a domain (src/core/gate). */
import type { Command } from 'commander';
import { gateDomain, type GateReport } from '../../core/gate/gate.ts';
import { openTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { DATA_HELP, DOMAIN_HELP } from '../options.ts';
import { bar } from '../progress.ts';
import { renderGate } from '../reports.ts';

export interface GateOpts {
  data?: string;
  split?: string;
  taskIds?: string;
  json?: boolean;
}

/** Gate the domain `name` (its tasks narrowed by `--split` / `--task-ids`); code 1 when refused. */
export async function gateCommand(
  io: CliIo,
  name: string,
  opts: GateOpts,
): Promise<{ report: GateReport; code: number }> {
  // A task the gate's static checks cannot read as written is bad input (exit 2, file and field),
  // as for `run`; the gate's refusals are for well-formed tasks that fail a check.
  const { domain, runtime, tasks } = await openTasks({ domain: name, ...(opts.data ? { data: opts.data } : {}) }, opts);
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length, `gate ${domain.name}`);
  const report = await gateDomain(runtime, {
    ...(tasks.length < domain.tasks.length ? { taskIds: tasks.map((t) => t.id) } : {}),
    onTask: () => progress.tick(),
  });
  progress.stop();
  return { report, code: report.accepted ? 0 : 1 };
}

/** Register `gate` on `program`. */
export function registerGate(program: Command, io: CliIo, setCode: (c: number) => void): Command {
  return program
    .command('gate')
    .argument('<domain>', DOMAIN_HELP)
    .option('--data <dir>', DATA_HELP)
    .option('--split <name>', 'tau2 task split: base, train or test')
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option('--json', 'print one JSON document')
    .action(async (name: string, opts: GateOpts) => {
      const { report, code } = await gateCommand(io, name, opts);
      io.out(opts.json ? JSON.stringify(report, null, 2) : renderGate(report));
      setCode(code);
    });
}
