/**
 * Model-proposed repairs and variants: the code-agent role of the self-evolving task bank. A
 * model behind the {@link ModelClient} port (any OpenAI-compatible endpoint, or a test double)
 * gets the versioned task-editor prompt (`prompts/task-editor.ts`) and answers with a JSON patch
 * (RFC 6902, applied with fast-json-patch) on one task: a repair of a finding, or a harder
 * variant from a hard pattern of the library. Nothing it proposes is admitted unchecked: the
 * reply must be one JSON object with a reason and a patch, the patch must apply and leave `id`
 * and `lineage` alone, the result must pass the task schema, and then the gate
 * ({@link gateVariants}: reference replay, rule binding, reference 1 and do-nothing 0). Each
 * proposal ends in exactly one {@link ProposalOutcome}.
 */
import jsonpatch, { type Operation as PatchOperation } from 'fast-json-patch';
import { z } from 'zod';
import type { DomainRuntime } from '../env/environment.ts';
import { fieldPath } from '../schema/domain.ts';
import type { ModelClient, ModelResponse, SamplingParams } from '../ports/model-client.ts';
import {
  renderTaskEditorPrompt,
  TASK_EDITOR_PROMPT_VERSION,
  TASK_EDITOR_SYSTEM,
  type EditRequest,
} from '../prompts/task-editor.ts';
import { Task, type TaskChange } from '../schema/task.ts';
import { lineageOf } from './bank.ts';
import { gateVariants } from './harden.ts';
import { HARD_PATTERNS, variantId, type HardPatternLibrary } from './patterns.ts';

/** Most characters of a reply read (a longer one is refused as unparseable). */
export const MAX_PROPOSAL_CHARS = 100_000;
/** Most operations in one patch. */
export const MAX_PATCH_OPERATIONS = 200;

const Operation = z.object({
  op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
  path: z.string(),
  value: z.unknown().optional(),
  from: z.string().optional(),
});
const Reply = z.object({ reason: z.string().min(1), patch: z.array(Operation).min(1).max(MAX_PATCH_OPERATIONS) });

/** How one proposal ended. */
export type ProposalOutcome =
  /** Admitted: the new task (a repair: same id, version + 1; a variant: a new id one generation down). */
  | { status: 'admitted'; task: Task; reason: string }
  /** The reply was not one JSON object `{reason, patch}`. */
  | { status: 'unparseable'; detail: string }
  /** The patch did not apply (a missing path, a failed `test`), or touched `id` / `lineage`. */
  | { status: 'patch_failed'; detail: string }
  /** The patched task breaks the task schema at `field`. */
  | { status: 'schema_invalid'; field: string; detail: string }
  /** The gate refused the patched task. */
  | { status: 'gate_rejected'; task_id: string; reasons: string[] }
  /** The endpoint failed (after its retries). */
  | { status: 'model_error'; detail: string };

/** Options of {@link proposeTaskChange}. */
export interface ProposalOptions {
  client: ModelClient;
  runtime: DomainRuntime;
  /** The task to change (never modified). */
  task: Task;
  /** A repair of a finding, or a variant from a library pattern (by id). */
  request: { kind: 'repair'; finding: string } | { kind: 'variant'; pattern: string };
  /** Seed of the request and of the variant's id. */
  seed: number;
  sampling?: Partial<SamplingParams>;
  library?: HardPatternLibrary;
  signal?: AbortSignal;
}

function clip(text: string, max = 200): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/**
 * The JSON object of a model's reply, a Markdown code fence around it allowed, parsed by `shape`.
 * @param reply the reply's text, or its text and reasoning ({@link ModelResponse})
 * @param expected how the asked shape is named in the reason (e.g. `{"reason", "patch"}`)
 * @returns the parsed value, or the reason it is not one: `empty reply` (no text, no reasoning),
 *   `reasoning only, no content (<n> characters of reasoning)` (a reasoning model that spent its
 *   tokens thinking), over {@link MAX_PROPOSAL_CHARS} characters, `not JSON: "<start of the
 *   text>"`, or `not <expected>: <field>: <issue>`
 */
export function parseJsonReply<T>(
  reply: string | Pick<ModelResponse, 'text' | 'reasoning'>,
  shape: z.ZodType<T>,
  expected: string,
): T | string {
  const { text, reasoning } = typeof reply === 'string' ? { text: reply, reasoning: null } : reply;
  if (!text.trim())
    return reasoning?.trim()
      ? `reasoning only, no content (${reasoning.length} characters of reasoning)`
      : 'empty reply';
  if (text.length > MAX_PROPOSAL_CHARS) return `the reply has ${text.length} characters, over ${MAX_PROPOSAL_CHARS}`;
  const body = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text)?.[1] ?? text;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return `not JSON: ${JSON.stringify(clip(text, 80))}`;
  }
  const r = shape.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return `not ${expected}: ${fieldPath(issue.path) || '(top)'}: ${issue.message}`;
  }
  return r.data;
}

/**
 * Ask the model for one change and check it.
 * @throws RangeError for an unknown pattern id
 */
export async function proposeTaskChange(opts: ProposalOptions): Promise<ProposalOutcome> {
  const library = opts.library ?? HARD_PATTERNS;
  const domain = opts.runtime.domain;
  let request: EditRequest;
  if (opts.request.kind === 'repair') request = { kind: 'repair', finding: opts.request.finding };
  else {
    const id = opts.request.pattern;
    const p = library.patterns.find((x) => x.id === id && x.axis === 'task');
    if (!p) throw new RangeError(`unknown task pattern "${id}"`);
    request = { kind: 'variant', pattern: { id: p.id, title: p.title, description: p.description } };
  }
  let res: ModelResponse;
  try {
    res = await opts.client.complete(
      {
        messages: [
          { role: 'system', content: TASK_EDITOR_SYSTEM },
          { role: 'user', content: renderTaskEditorPrompt(domain, opts.task, request) },
        ],
        sampling: { temperature: 0, top_p: 1, top_k: null, max_tokens: 4096, seed: opts.seed, ...opts.sampling },
        json: true,
      },
      opts.signal,
    );
  } catch (e) {
    return { status: 'model_error', detail: (e as Error).message };
  }
  const reply = parseJsonReply(res, Reply, '{"reason", "patch"}');
  if (typeof reply === 'string') return { status: 'unparseable', detail: reply };
  const touched = reply.patch.find((o) =>
    [o.path, o.from ?? ''].some((p) => p === '/id' || p === '/lineage' || p.startsWith('/lineage/')),
  );
  if (touched)
    return { status: 'patch_failed', detail: `operation ${touched.op} ${touched.path} changes id or lineage` };
  let patched: unknown;
  try {
    const { lineage: _, ...doc } = opts.task;
    patched = jsonpatch.applyPatch(structuredClone(doc), reply.patch as PatchOperation[], true, false).newDocument;
  } catch (e) {
    const err = e as Error & { index?: number; operation?: { op?: string; path?: string } };
    const at =
      err.index !== undefined ? ` at operation ${err.index} (${err.operation?.op} ${err.operation?.path})` : '';
    return { status: 'patch_failed', detail: `${err.name}${at}: ${err.message.split('\n')[0]}` };
  }
  const parsed = Task.safeParse(patched);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { status: 'schema_invalid', field: fieldPath(issue.path), detail: issue.message };
  }
  const parent = lineageOf(opts.task);
  const by = `model:${opts.client.id}`;
  const change = (version: number): TaskChange => ({
    version,
    reason: reply.reason,
    by,
    prompt: TASK_EDITOR_PROMPT_VERSION,
    ...(request.kind === 'variant' ? { pattern: request.pattern.id } : {}),
    seed: opts.seed,
  });
  const task: Task =
    request.kind === 'repair'
      ? {
          ...parsed.data,
          lineage: {
            version: parent.version + 1,
            parent: parent.parent,
            generation: parent.generation,
            changes: [...parent.changes, change(parent.version + 1)],
          },
        }
      : {
          ...parsed.data,
          id: variantId(opts.task.id, `model_${request.pattern.id}`, opts.seed),
          lineage: {
            version: 1,
            parent: { task_id: opts.task.id, version: parent.version },
            generation: parent.generation + 1,
            changes: [change(1)],
          },
        };
  const { accepted, reasons } = await gateVariants(opts.runtime, [task]);
  if (!accepted.has(task.id)) return { status: 'gate_rejected', task_id: task.id, reasons: reasons.get(task.id) ?? [] };
  return { status: 'admitted', task, reason: reply.reason };
}
