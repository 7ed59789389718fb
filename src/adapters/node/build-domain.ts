/**
 * `switchboard build-domain` on the filesystem: read a spec (a file, or a folder of MCP tool
 * files), scaffold the domain (src/core/build-domain), write it to a temporary folder beside
 * `--out`, gate it there, and only then rename it to `--out`. A bad spec, a failed build or a
 * refused gate leaves no folder at `--out` and removes the temporary one.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import {
  buildDomainFiles,
  domainNameOf,
  MCP_FILE_NAME,
  mergeMcpFiles,
  type BuildReport,
} from '../../core/build-domain/index.ts';
import { AGENT_REPLIES, runCodeAgent, type AgentReport } from '../../core/build-domain/agent-step.ts';
import { InputError } from '../../core/errors.ts';
import { DomainRuntime } from '../../core/env/environment.ts';
import { gateDomain, type GateReport } from '../../core/gate/gate.ts';
import type { AgentRecord } from '../../core/build-domain/code-agent.ts';
import type { ModelClient } from '../../core/ports/model-client.ts';
import { loadDomainFolder } from './load-domain.ts';
import { sqlJsFactory } from '../shared/sqljs-db.ts';

/** Options of {@link buildDomainFolder}. */
export interface BuildDomainOptions {
  /** Spec file (OpenAPI 3.x JSON/YAML, MCP tool list JSON) or a folder of MCP tool files (`*.json`, `*.snap`). */
  from: string;
  /** Domain folder to create; must not exist or be empty. */
  out: string;
  language: 'zh' | 'en';
  tasks: number;
  seed: number;
  /** Domain name; default: the `out` folder's name as an identifier. */
  name?: string;
  /** The admission check (default {@link gateDomain}); injectable for tests of the refusal path. */
  gate?: (runtime: DomainRuntime) => Promise<GateReport>;
  /**
   * The code agent's model (`--agent`, or a replay of recorded replies): refines each task's
   * caller text; every proposal is checked and the gate admits or refuses it.
   */
  agent?: ModelClient;
}

/** The outcome: the gate's report, the build report, and where the folder is (null when refused). */
export interface BuildDomainResult {
  report: BuildReport & { agent?: AgentReport };
  gate: GateReport;
  /** The written folder, or null when the gate refused the domain (nothing was written). */
  dir: string | null;
}

/**
 * The text of a spec path: a file's text, or for a folder the MCP tools of its `*.json` / `*.snap`
 * files (each one tool or a tool list), in file-name order, as one tool list ({@link mergeMcpFiles}).
 * @throws InputError naming the path when it cannot be read; SpecError naming the file for a
 *   folder file that is not an MCP tool, or the folder when it holds none.
 */
export async function readSpecSource(from: string): Promise<string> {
  if (!existsSync(from)) throw new InputError(`${from}: no such spec file or folder`);
  if (!statSync(from).isDirectory()) return readFile(from, 'utf8');
  const names = (await readdir(from)).filter((n) => MCP_FILE_NAME.test(n));
  return mergeMcpFiles(
    from,
    await Promise.all(names.map(async (n) => ({ name: join(from, n), text: await readFile(join(from, n), 'utf8') }))),
  );
}

/**
 * Read a run's recorded replies (`agent-replies.json`), for {@link replayClient}.
 * @throws InputError naming the file when it is not such a record
 */
export async function readAgentRecord(file: string): Promise<AgentRecord> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new InputError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let doc: unknown = null;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = null;
  }
  const parsed = AGENT_RECORD.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? ` (${issue.path.join('.')}: ${issue.message})` : '';
    throw new InputError(`${file}: not an ${AGENT_REPLIES} record ({"model", "seed", "replies": [...]})${where}`);
  }
  return doc as AgentRecord;
}

/**
 * The parts of an {@link AgentRecord} a replay reads: the model's id and each reply's text (a
 * string, or null with the endpoint's error); other fields are kept as they are.
 */
const AGENT_RECORD = z.looseObject({
  model: z.string(),
  replies: z.array(
    z.looseObject({ text: z.string().nullable(), reasoning: z.string().optional(), error: z.string().optional() }),
  ),
});

/**
 * Build, gate and write a domain folder.
 * @throws SpecError / InputError naming the spec path for bad input, or `out` when it exists and is
 *   not empty (before the build, or filled by then: it is never overwritten) or cannot be written
 *   beside. On a refusal by the gate nothing is written (see {@link BuildDomainResult.dir}).
 */
export async function buildDomainFolder(opts: BuildDomainOptions): Promise<BuildDomainResult> {
  const out = resolve(opts.out);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0))
    throw new InputError(`${out}: already exists and is not an empty folder; choose a new --out`);
  const text = await readSpecSource(opts.from);
  const { files, report } = buildDomainFiles(opts.from, text, {
    name: opts.name ?? domainNameOf(basename(out)),
    language: opts.language,
    tasks: opts.tasks,
    seed: opts.seed,
    source: basename(opts.from),
  });
  const factory = await sqlJsFactory();
  const agent = opts.agent
    ? await runCodeAgent({ dir: basename(out), files, client: opts.agent, seed: opts.seed, factory })
    : undefined;
  const agentReport = agent?.report;
  let tmp: string;
  try {
    await mkdir(dirname(out), { recursive: true });
    tmp = await mkdtemp(join(dirname(out), `.${basename(out)}.building-`));
  } catch (e) {
    throw new InputError(
      `${out}: cannot write beside it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  try {
    for (const [name, body] of Object.entries(agent?.files ?? files)) await writeFile(join(tmp, name), body);
    const runtime = await DomainRuntime.create(await loadDomainFolder(tmp), factory);
    const full = agentReport ? { ...report, agent: agentReport } : report;
    const gate = await (opts.gate ?? gateDomain)(runtime);
    if (!gate.accepted) {
      await rm(tmp, { recursive: true, force: true });
      return { report: full, gate, dir: null };
    }
    await writeFile(join(tmp, 'build-report.json'), `${JSON.stringify(full, null, 2)}\n`);
    // An empty `out` is replaced by the rename; one filled while the domain was built (another
    // build, the user) is left as it is and this build is not written.
    try {
      await rename(tmp, out);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') throw e;
      throw new InputError(`${out}: was filled while the domain was built; left as it is, nothing written`);
    }
    return { report: full, gate, dir: out };
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
}
