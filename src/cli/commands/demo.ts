/** `switchboard demo`: gate carrier, then run it with the reference and the do-nothing agent. */
import type { Command } from 'commander';
import type { CliIo } from '../io.ts';
import { renderGate, renderSummary } from '../reports.ts';
import { gateCommand } from './gate.ts';
import { runCommand } from './run.ts';
import { DEFAULT_MAX_INVALID_SHARE, DEFAULT_MAX_SAME_FAULT } from '../../core/rollout/run-guards.ts';

/** Register `demo` on `program`. */
export function registerDemo(program: Command, io: CliIo, setCode: (c: number) => void): Command {
  return program
    .command('demo')
    .option('--json', 'print one JSON document')
    .action(async (opts: { json?: boolean }) => {
      const quiet = { ...io, progress: opts.json ? false : io.progress };
      const { report } = await gateCommand(quiet, 'carrier', { json: opts.json ?? false });
      const base = {
        domain: 'carrier',
        user: 'scripted',
        trials: 1,
        concurrency: 4,
        seed: 0,
        json: true,
        maxInvalidShare: DEFAULT_MAX_INVALID_SHARE,
        maxSameFault: DEFAULT_MAX_SAME_FAULT,
      };
      const reference = (await runCommand(quiet, { ...base, agent: 'reference' })).report;
      const noop = (await runCommand(quiet, { ...base, agent: 'noop' })).report;
      const referenceOk = reference.tasks.every((t) => t.mean === 1);
      const noopOk = noop.tasks.every((t) => t.mean === 0);
      const ok = report.accepted && referenceOk && noopOk;
      if (opts.json) io.out(JSON.stringify({ gate: report, reference, noop, ok }, null, 2));
      else {
        const verdict = ok
          ? 'DEMO OK: carrier admitted; reference agent 1.0 and do-nothing agent 0.0 on every task.'
          : `DEMO FAILED:${report.accepted ? '' : ' gate refused carrier;'}${referenceOk ? '' : ' reference agent below 1.0;'}${noopOk ? '' : ' do-nothing agent above 0.0;'}`;
        io.out([renderGate(report), '', renderSummary(reference), '', renderSummary(noop), '', verdict].join('\n'));
      }
      setCode(ok ? 0 : 1);
    });
}
