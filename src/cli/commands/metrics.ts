/**
 * `switchboard metrics <paths…> [--json] [--out <file>]`: the interaction-metric panel (L_R, L_Y,
 * R_R, R_Y, I_A, S_BC, S_VT, S_ND; docs/duplex.md) of full-duplex calls: tau2-bench voice
 * experiments (results.json with simulations/, or a folder of them) and our `run --duplex` output
 * (`trajectories.jsonl` or the run's `--out` folder). Exit 0 on success, 2 on bad input (the
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
  type MetricCall,
} from '../../core/duplex/interaction-metrics.ts';
import { discoverResults, isRunPath, loadExperiment, loadRun } from '../../adapters/node/interaction-experiments.ts';
import { InputError } from '../../core/errors.ts';
import type { CliIo } from '../io.ts';
import { table } from '../format.ts';

interface MetricsOpts {
  json?: boolean;
  out?: string;
}

/**
 * The panel table: one row per domain, then `All` (values by the ≥10-event display rule);
 * `fields` limits the columns (a subset's own table), in panel order. The first column is
 * `domain`, lower case like the score table's `task`, under `metrics` and `run --duplex` alike.
 */
export function renderPanels(
  block: Pick<InteractionBlock, 'domains' | 'overall'>,
  fields: readonly string[] = PANEL_FIELDS,
): string {
  const rows: [string, InteractionPanel][] = Object.entries(block.domains);
  if (block.overall && rows.length > 1) rows.push(['All', block.overall]);
  const shown = PANEL_FIELDS.filter((f) => fields.includes(f));
  const headers = ['domain', ...shown.map((f) => PANEL_LABELS[f]), 'calls'];
  return table(
    headers,
    rows.map(([name, p]) => [name, ...shown.map((f) => formatPanelValue(p, f)), String(p.counts.n_simulations)]),
    new Set(headers.slice(1)),
  );
}

/**
 * The metrics document for `paths`: tau2-bench experiments (one panel per domain with each
 * experiment's recorded tick length, tau2-bench's default 0.2 s when it recorded none) and our
 * runs (`trajectories.jsonl` or a run's `--out` folder: the valid `--duplex` calls, pooled per
 * domain over the runs given).
 *
 * @throws InputError when two experiments (or an experiment and a run) cover the same domain,
 * or when no call has ticks.
 */
export async function metricsBlock(paths: readonly string[]): Promise<InteractionBlock> {
  const domains: Record<string, InteractionPanel> = {};
  const ticks = new Set<number>();
  const runs: string[] = [];
  const others: string[] = [];
  for (const p of paths) ((await isRunPath(p)) ? runs : others).push(p);
  const pooled = new Map<string, { calls: MetricCall[]; tickSec: number }>();
  for (const p of runs) {
    const run = await loadRun(p);
    for (const [domain, calls] of run.domains) {
      const entry = pooled.get(domain) ?? { calls: [], tickSec: (run.tick_ms ?? 200) / 1000 };
      entry.calls.push(...calls);
      pooled.set(domain, entry);
    }
  }
  if (runs.length && pooled.size === 0)
    throw new InputError(`${runs.join(', ')}: no valid call has a tick timeline (run with --duplex)`);
  for (const [domain, { calls, tickSec }] of pooled) {
    ticks.add(tickSec);
    domains[domain] = interactionPanel(calls, { ...DEFAULT_WINDOWS, tick_duration_sec: tickSec });
  }
  for (const file of others.length ? await discoverResults(others) : []) {
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
    .argument(
      '<paths...>',
      'tau2-bench results.json files, experiment folders or folders holding them; our trajectories.jsonl files or run --out folders',
    )
    .option('--out <file>', 'also write the JSON document here')
    .option('--json', 'print one JSON document')
    .action(async (paths: string[], opts: MetricsOpts) => {
      const block = await metricsBlock(paths);
      if (opts.out) await writeFile(opts.out, `${JSON.stringify(block, null, 2)}\n`);
      io.out(opts.json ? JSON.stringify(block, null, 2) : renderPanels(block));
    });
}
