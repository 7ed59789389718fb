/**
 * The code-agent step of `build-domain --agent` on a domain's files in memory (name → text, as
 * {@link buildDomainFiles} returns them), so the CLI (src/adapters/node/build-domain.ts) and the
 * page (src/adapters/browser/rollout-service.ts) run the same step on the same bytes. The model's
 * work itself is {@link refineTasks}; this step loads the scaffolded domain, runs it, and returns
 * the files with the refined `tasks.json` and the recorded replies ({@link AGENT_REPLIES}). The
 * caller gates the result.
 */
import { DomainRuntime } from '../env/environment.ts';
import type { ModelClient } from '../ports/model-client.ts';
import type { SqlDbFactory } from '../ports/sql-db.ts';
import { refineTasks, type RefineResult } from './code-agent.ts';
import { runDomainAgent, type DomainAgentResult } from './domain-agent.ts';
import { domainFromFiles } from './index.ts';

/** File name of the code agent's recorded replies in a built folder (read back by `--replies`). */
export const AGENT_REPLIES = 'agent-replies.json';

/**
 * What the code agent did, as `build-report.json` keeps it under `agent`: the caller-text
 * refinements (`admitted`, `rejected`, per task) and the domain stages (`rules`,
 * `business_rules`, `harder_tasks`, see {@link runDomainAgent}).
 */
export type AgentReport = Omit<RefineResult, 'tasks' | 'record'> &
  Omit<DomainAgentResult, 'files'> & { prompt_version: string; model: string };

/** The files after the code agent, and its report. */
export interface AgentStep {
  /** The input files with `tasks.json` replaced and {@link AGENT_REPLIES} added. */
  files: Record<string, string>;
  report: AgentReport;
}

/**
 * Run the code agent over a scaffolded domain's files. Task i's request uses seed `seed + i`
 * ({@link refineTasks}), then the domain stages seeds from `seed + tasks` ({@link runDomainAgent});
 * every proposal is checked and gated, rejects are listed in the report.
 * @throws InfrastructureError when the endpoint fails a request (nothing is to be written)
 * @param dir folder name used in error messages (`<dir>/<file>`)
 * @param factory sql.js (or another {@link SqlDbFactory}) for the domain's database
 * @throws Error / DomainFileError naming `<dir>/<file>` when the files do not make a domain
 */
export async function runCodeAgent(opts: {
  dir: string;
  files: Readonly<Record<string, string>>;
  client: ModelClient;
  seed: number;
  factory: SqlDbFactory;
}): Promise<AgentStep> {
  const domain = domainFromFiles(opts.dir, opts.files);
  const runtime = await DomainRuntime.create(domain, opts.factory);
  const refined = await refineTasks({ client: opts.client, runtime, tasks: domain.tasks, seed: opts.seed });
  await runtime.close();
  // Then the domain stages (rule texts, business rules, harder tasks), seeds after the tasks'.
  const staged = await runDomainAgent({
    client: opts.client,
    files: { ...opts.files, 'tasks.json': `${JSON.stringify(refined.tasks, null, 2)}\n` },
    dir: opts.dir,
    factory: opts.factory,
    seed: opts.seed + refined.tasks.length,
    replies: refined.record.replies,
  });
  return {
    files: { ...staged.files, [AGENT_REPLIES]: `${JSON.stringify(refined.record, null, 2)}\n` },
    report: {
      prompt_version: refined.record.prompt_version,
      model: refined.record.model,
      admitted: refined.admitted,
      rejected: refined.rejected,
      rules: staged.rules,
      business_rules: staged.business_rules,
      harder_tasks: staged.harder_tasks,
    },
  };
}
