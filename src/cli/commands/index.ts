/**
 * The CLI's commands, in the order `switchboard --help` lists them: name, the term the help
 * list shows, the one-line description, and how to load the module that registers the command.
 * Only the command being run is loaded (issue 15, item 6: `--help` imports no command module);
 * the others appear in the help list from this table alone. test/cli/lazy-commands.test.ts
 * checks each `term` against the loaded command's own.
 */
import type { Command } from 'commander';
import { TAU2_DATA_MANIFEST } from '../../core/tau2/data-manifest.ts';
import type { CliIo } from '../io.ts';

/** Adds one command (with its options and action) to `program` and returns it. */
export type RegisterCommand = (program: Command, io: CliIo, setCode: (code: number) => void) => Command;

/** One command of the table. */
export interface CommandEntry {
  name: string;
  /** What commander prints for it in the parent's help list, e.g. `gate [options] <domain>`. */
  term: string;
  description: string;
  load: () => Promise<RegisterCommand>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'gate',
    term: 'gate [options] <domain>',
    description:
      'Admission check of a domain: reference solutions replay, rules bind, do-nothing fails, reference passes.',
    load: async () => (await import('./gate.ts')).registerGate,
  },
  {
    name: 'run',
    term: 'run [options]',
    description: 'Run K rollouts of each task and score them.',
    load: async () => (await import('./run.ts')).registerRun,
  },
  {
    name: 'demo',
    term: 'demo [options]',
    description: 'Gate the built-in carrier domain, then run it with the reference and the do-nothing agent.',
    load: async () => (await import('./demo.ts')).registerDemo,
  },
  {
    name: 'replay',
    term: 'replay [options] <file>',
    description:
      'Re-execute recorded tool calls (tau2-bench results or our trajectories) on fresh databases; compare outputs and rewards.',
    load: async () => (await import('./replay.ts')).registerReplay,
  },
  {
    name: 'groups',
    term: 'groups [options]',
    description: 'Sample GRPO groups (K samples per shared prefix), compute advantages, write one GRPO row per sample.',
    load: async () => (await import('./groups.ts')).registerGroups,
  },
  {
    name: 'export',
    term: 'export',
    description: 'Write training data: SFT chat records or GRPO rows (JSONL, Parquet).',
    load: async () => (await import('./export.ts')).registerExport,
  },
  {
    name: 'serve',
    term: 'serve [options]',
    description:
      'Serve episodes for a trainer to drive: OpenEnv over HTTP, WebSocket and MCP (default), or the reset / step / state / close API.',
    load: async () => (await import('./serve.ts')).registerServe,
  },
  {
    name: 'rollout',
    term: 'rollout [options]',
    description:
      'GRPO groups against policy endpoints: per agent turn the exact request, token ids, logprobs and loss mask; rewards and advantages. One group per JSONL line, written as it finishes.',
    load: async () => (await import('./rollout.ts')).registerRollout,
  },
  {
    name: 'data',
    term: 'data [options] <set>',
    description: `Download tau2-bench's airline, retail and telecom data and noise recordings (commit ${TAU2_DATA_MANIFEST.commit.slice(0, 12)}), check their sha256, and cache them.`,
    load: async () => (await import('./data.ts')).registerData,
  },
  {
    name: 'evolve',
    term: 'evolve [options]',
    description:
      'Self-evolving task bank: K rollouts per task per round, labels, pass^k, gradient supply, sampling weights.',
    load: async () => (await import('./evolve.ts')).registerEvolve,
  },
  {
    name: 'propose',
    term: 'propose [options]',
    description:
      'Ask a model for a JSON patch on a task (a repair or a hard-pattern variant); admit it to a task bank only through the schema and the gate.',
    load: async () => (await import('./propose.ts')).registerPropose,
  },
  {
    name: 'build-domain',
    term: 'build-domain [options]',
    description:
      'Scaffold a code-free domain folder (tables, declarative tools, seeded database, policy draft, tasks) from an OpenAPI 3.x description or an MCP tool list; written only when the gate admits it.',
    load: async () => (await import('./build-domain.ts')).registerBuildDomain,
  },
  {
    name: 'metrics',
    term: 'metrics [options] <paths...>',
    description:
      "Interaction metrics (tau2-bench's τ-voice panel) of full-duplex calls: run --duplex trajectories or tau2-bench voice experiments' results.",
    load: async () => (await import('./metrics.ts')).registerMetrics,
  },
];

/**
 * The command `argv` runs: its first word that is not an option (after `help`, the word
 * after it), or undefined for `--help`, `--version` and no command.
 */
export function commandOf(argv: readonly string[]): CommandEntry | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === name);
}
