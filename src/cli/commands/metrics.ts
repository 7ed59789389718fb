/**
 * `switchboard metrics <paths…> [--json] [--out <file>]`: the interaction-metric panel (L_R, L_Y,
 * R_R, R_Y, I_A, S_BC, S_VT, S_ND; docs/duplex.md) of full-duplex calls: tau2-bench voice
 * experiments (results.json with simulations/, or a folder of them). Exit 0 on success, 2 on bad input (the
 * message names file and field), a folder without experiments or calls without a tick timeline
 * included.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { DEFAULT_WINDOWS } from '../../core/duplex/interaction-events.ts';
import {
  formatPanelValue,
  interactionBlock,
  interactionPanel,
  PANEL_FIELDS,
  PANEL_LABELS,
  type InteractionBlock,
  type InteractionPanel,
} from '../../core/duplex/interaction-metrics.ts';
import { discoverResults, loadExperiment } from '../../adapters/node/interaction-experiments.ts';
import { InputError } from '../../core/errors.ts';
import type { CliIo } from '../io.ts';
import { table } from '../format.ts';

interface MetricsOpts {
  json?: boolean;
  out?: string;
}

/**
 * The panel table: one row per domain, then `All` (values by the ≥10-event display rule);
 * `fields` limits the columns (a subset's own table), in panel order.
 */
export function renderPanels(
  block: Pick<InteractionBlock, 'domains' | 'overall'>,
  first = 'Domain',
  fields: readonly string[] = PANEL_FIELDS,
): string {
  const rows: [string, InteractionPanel][] = Object.entries(block.domains);
  if (block.overall && rows.length > 1) rows.push(['All', block.overall]);
  const shown = PANEL_FIELDS.filter((f) => fields.includes(f));
  const headers = [first, ...shown.map((f) => PANEL_LABELS[f]), 'calls'];
  return table(
    headers,
    rows.map(([name, p]) => [name, ...shown.map((f) => formatPanelValue(p, f)), String(p.counts.n_simulations)]),
    new Set(headers.slice(1)),
  );
}

/**
 * The metrics document for tau2-bench experiment paths: one panel per domain with each
 * experiment's recorded tick length (tau2-bench's default 0.2 s when it recorded none).
 *
 * @throws InputError when two experiments cover the same domain or no call has ticks.
 */
export async function tau2MetricsBlock(paths: readonly string[]): Promise<InteractionBlock> {
  const domains: Record<string, InteractionPanel> = {};
  const ticks = new Set<number>();
  for (const file of await discoverResults(paths)) {
    const exp = await loadExperiment(file);
    if (domains[exp.domain]) throw new InputError(`${file}: domain ${exp.domain} is in more than one experiment`);
    const windows = {
      ...DEFAULT_WINDOWS,
      tick_duration_sec: exp.tick_duration_sec ?? DEFAULT_WINDOWS.tick_duration_sec,
    };
    ticks.add(windows.tick_duration_sec);
    try {
      domains[exp.domain] = interactionPanel(exp.calls, windows);
    } catch (e) {
      if (e instanceof RangeError) throw new InputError(`${file}: ${e.message}`);
      throw e;
    }
  }
  const tick = ticks.size === 1 ? [...ticks][0]! : DEFAULT_WINDOWS.tick_duration_sec;
  return interactionBlock(domains, { ...DEFAULT_WINDOWS, tick_duration_sec: tick });
}

/** Register `metrics` on the program. */
export function registerMetrics(program: Command, io: CliIo): Command {
  return program
    .command('metrics')
    .description("Interaction metrics (tau2-bench's τ-voice panel) of full-duplex calls: tau2-bench voice experiments.")
    .argument('<paths...>', 'results.json files, experiment folders, or folders holding them')
    .option('--out <file>', 'also write the JSON document here')
    .option('--json', 'print one JSON document')
    .action(async (paths: string[], opts: MetricsOpts) => {
      const block = await tau2MetricsBlock(paths);
      if (opts.out) await writeFile(opts.out, `${JSON.stringify(block, null, 2)}\n`);
      io.out(opts.json ? JSON.stringify(block, null, 2) : renderPanels(block));
    });
}
