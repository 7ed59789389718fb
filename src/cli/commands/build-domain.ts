/**
 * `switchboard build-domain --from <openapi.json|yaml | mcp-tools.json | folder> --out <dir>
 * [--language zh|en] [--tasks N] [--seed S] [--name n]`: the deterministic scaffold (#19 item 2)
 * of a code-free domain folder from an API description, admitted only through the gate
 * ({@link buildDomainFolder}). Exit 0 written, 1 refused by the gate (nothing written, the
 * reasons printed), 2 a bad spec or option (the message names the spec path).
 */
import type { Command } from 'commander';
import { buildDomainFolder, readAgentRecord } from '../../adapters/node/build-domain.ts';
import { replayClient } from '../../core/build-domain/code-agent.ts';
import { MAX_TASKS } from '../../core/build-domain/scaffold.ts';
import { InfrastructureError } from '../../core/errors.ts';
import type { CliIo } from '../io.ts';
import { intOption, modelSettingsFromFlags, withRequestOptions } from '../options.ts';
import { modelClientFor, UsageError } from '../participants.ts';
import { renderGate } from '../reports.ts';

interface BuildOpts {
  from: string;
  out: string;
  language: string;
  tasks: number;
  seed: number;
  name?: string;
  agent?: string;
  replies?: string;
  modelTimeout?: number;
  modelRetries?: number;
  json?: boolean;
}

/** Add the `build-domain` command. */
export function registerBuildDomain(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  return withRequestOptions(program.command('build-domain'))
    .description(
      'Scaffold a code-free domain folder (tables, declarative tools, seeded database, policy draft, tasks) from an OpenAPI 3.x description or an MCP tool list; written only when the gate admits it.',
    )
    .requiredOption(
      '--from <spec>',
      'OpenAPI 3.x (JSON or YAML), an MCP tool list (JSON), or a folder of MCP tool files',
    )
    .requiredOption('--out <dir>', 'domain folder to create (must not exist or be empty)')
    .option('--language <zh|en>', 'language of goal texts and names', 'en')
    .option('--tasks <n>', `tasks to generate (at most; 1 to ${MAX_TASKS})`, intOption('--tasks', 1, MAX_TASKS), 12)
    .option('--seed <n>', 'seed of the synthetic database and the task walks', intOption('--seed', 0), 0)
    .option('--name <name>', 'domain name (default: the --out folder name)')
    .option(
      '--agent <spec>',
      "code agent: <flavor>:<model>@<base-url> rewrites each task's caller text; every proposal is checked and gated, rejects are listed; replies are recorded in agent-replies.json",
    )
    .option('--replies <file>', 'reproduce a code-agent run from its agent-replies.json (no model called)')
    .option('--json', 'print the build report and the gate report as one JSON document')
    .action(async (opts: BuildOpts) => {
      if (opts.language !== 'zh' && opts.language !== 'en')
        throw new UsageError(`--language: "${opts.language}" is not zh or en`);
      if (opts.name !== undefined && !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(opts.name))
        throw new UsageError(`--name: "${opts.name}" must be an identifier (letters, digits, _)`);
      if (opts.agent && opts.replies)
        throw new UsageError('give --agent <model spec> or --replies <agent-replies.json>, not both');
      const agent = opts.agent
        ? modelClientFor(opts.agent, '--agent', modelSettingsFromFlags(opts))
        : opts.replies
          ? replayClient(await readAgentRecord(opts.replies))
          : undefined;
      const { agent: _spec, replies: _file, modelTimeout: _t, modelRetries: _r, ...rest } = opts;
      let built: Awaited<ReturnType<typeof buildDomainFolder>>;
      try {
        built = await buildDomainFolder({ ...rest, language: opts.language, ...(agent ? { agent } : {}) });
      } catch (e) {
        // The code agent's endpoint failed: exit 1, nothing written (the message says so).
        if (!(e instanceof InfrastructureError)) throw e;
        io.err(`switchboard: build-domain: ${e.message}`);
        if (opts.json) io.out(JSON.stringify({ written: null, error: e.message }));
        setCode(1);
        return;
      }
      const { report, gate, dir } = built;
      if (opts.json) io.out(JSON.stringify({ written: dir, build: report, gate }, null, 2));
      else {
        const skipped = [
          ...report.renamed.map((r) => `  renamed ${r.path} "${r.from}" to tool ${r.to}`),
          ...report.flattened.map((f) => `  flattened ${f.path} into columns ${f.columns.join(', ')}`),
          ...report.skipped.map((s) => `  skipped ${s.path}: ${s.reason}`),
        ];
        io.out(
          [
            `${report.format === 'openapi' ? 'OpenAPI' : 'MCP'} ${report.title}: ${report.tables.length} tables (${report.tables.reduce((n, t) => n + t.rows, 0)} rows), ${report.tools.length} tools, ${report.tasks.length} tasks`,
            ...skipped,
            ...(report.agent
              ? [
                  `agent: caller text ${report.agent.admitted.length} admitted, ${report.agent.rejected.length} rejected (${report.agent.prompt_version})`,
                  ...report.agent.rejected.map((r) => `  rejected ${r.task_id} (${r.status}): ${r.detail}`),
                  ...(
                    [
                      ['rule texts', report.agent.rules],
                      ['business rules', report.agent.business_rules],
                      ['harder tasks', report.agent.harder_tasks],
                    ] as const
                  ).flatMap(([what, st]) => [
                    `agent: ${what} ${st.admitted.length} admitted, ${st.rejected.length} rejected`,
                    ...st.admitted.map((r) => `  admitted ${r.id}: ${r.detail}`),
                    ...st.rejected.map((r) => `  rejected ${r.id} (${r.status}): ${r.detail}`),
                  ]),
                ]
              : []),
            '',
            renderGate(gate),
            '',
            dir
              ? `wrote ${dir} (build-report.json lists what was left out)`
              : 'REFUSED by the gate: nothing was written (reasons above)',
          ].join('\n'),
        );
      }
      setCode(dir ? 0 : 1);
    });
}
