/**
 * The code agent of `build-domain --agent` (#19 item 3, first part): a model behind the
 * {@link ModelClient} port rewrites each scaffolded task's caller text (persona, instructions,
 * requests) as a real caller would say it. Every proposal goes through the task editor's checks
 * ({@link proposeTaskChange}: one JSON `{reason, patch}` reply, the patch applies, the task schema
 * holds, the gate admits the task) and one more: a refinement may not touch the evaluation
 * criteria. Rejected proposals are listed with the reason. The model's replies are recorded in
 * order, so a run is reproduced exactly from its seed and the recorded replies
 * ({@link replayClient}) without the model.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { InfrastructureError } from '../errors.ts';
import { proposeTaskChange, type ProposalOutcome } from '../evolution/proposals.ts';
import type { ModelClient, ModelRequest, ModelResponse } from '../ports/model-client.ts';
import { TASK_EDITOR_PROMPT_VERSION } from '../prompts/task-editor.ts';
import type { Task } from '../schema/task.ts';

/** Version of the refinement request below; bump it whenever the text changes (recorded with each run). */
export const DOMAIN_BUILDER_PROMPT_VERSION = 'domain-builder-v1';

/** The finding the task editor gets for each scaffolded task (its prompt: `prompts/task-editor.ts`). */
export const REFINE_CALLER_TEXT =
  "The caller's persona, instructions and requests are template text from an automatic scaffold. Rewrite " +
  'user_scenario.persona, user_scenario.instructions (reason_for_call, known_info, unknown_info, ' +
  'task_instructions) and user_scenario.requests as a real caller of this service would say them, in the ' +
  "task's language. Keep every value (ids, names, amounts, the new values) exactly; keep user_scenario.facts; " +
  'change nothing under evaluation_criteria.';

/** One recorded model reply, in request order: its text, or the endpoint's error. */
export interface RecordedReply {
  task_id: string;
  text: string | null;
  error?: string;
}

/** The record of a run: enough, with the seed, to reproduce it without the model. */
export interface AgentRecord {
  prompt_version: string;
  task_editor_prompt: string;
  /** The client's id (recorded in each admitted task's lineage as `model:<id>`). */
  model: string;
  seed: number;
  replies: RecordedReply[];
}

/** What the code agent did. */
export interface RefineResult {
  tasks: Task[];
  admitted: { task_id: string; reason: string }[];
  rejected: { task_id: string; status: string; detail: string }[];
  record: AgentRecord;
}

/** One line for a rejected proposal's outcome. */
function rejection(o: Exclude<ProposalOutcome, { status: 'admitted' }>): string {
  switch (o.status) {
    case 'schema_invalid':
      return `breaks the task schema at ${o.field}: ${o.detail}`;
    case 'gate_rejected':
      return `the gate refuses it: ${o.reasons.join('; ')}`;
    default:
      return o.detail;
  }
}

/**
 * Refine every task's caller text. Task i's request uses seed `seed + i`.
 * @param runtime the scaffolded domain (the gate runs on it)
 * @throws InfrastructureError when the endpoint fails a request (after the client's retries):
 *   the build stops rather than keep a scaffold the model never saw.
 */
export async function refineTasks(opts: {
  client: ModelClient;
  runtime: DomainRuntime;
  tasks: readonly Task[];
  seed: number;
}): Promise<RefineResult> {
  const replies: RecordedReply[] = [];
  const admitted: RefineResult['admitted'] = [];
  const rejected: RefineResult['rejected'] = [];
  const tasks: Task[] = [];
  for (const [i, task] of opts.tasks.entries()) {
    const recording: ModelClient = {
      id: opts.client.id,
      flavor: opts.client.flavor,
      kind: opts.client.kind,
      endpoint: opts.client.endpoint,
      model: opts.client.model,
      async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
        try {
          const res = await opts.client.complete(request, signal);
          replies.push({ task_id: task.id, text: res.text });
          return res;
        } catch (e) {
          replies.push({ task_id: task.id, text: null, error: (e as Error).message });
          throw e;
        }
      },
    };
    const outcome = await proposeTaskChange({
      client: recording,
      runtime: opts.runtime,
      task,
      request: { kind: 'repair', finding: REFINE_CALLER_TEXT },
      seed: opts.seed + i,
    });
    if (outcome.status === 'model_error')
      // The endpoint failed (after its retries): an infrastructure fault, not a rejected proposal.
      throw new InfrastructureError(
        `the code agent's endpoint failed on task ${task.id}: ${outcome.detail}; nothing was written`,
      );
    if (outcome.status !== 'admitted') {
      rejected.push({ task_id: task.id, status: outcome.status, detail: rejection(outcome) });
      tasks.push(task);
    } else if (JSON.stringify(outcome.task.evaluation_criteria) !== JSON.stringify(task.evaluation_criteria)) {
      rejected.push({
        task_id: task.id,
        status: 'out_of_scope',
        detail: 'a refinement of the caller text may not change evaluation_criteria',
      });
      tasks.push(task);
    } else {
      admitted.push({ task_id: task.id, reason: outcome.reason });
      tasks.push(outcome.task);
    }
  }
  return {
    tasks,
    admitted,
    rejected,
    record: {
      prompt_version: DOMAIN_BUILDER_PROMPT_VERSION,
      task_editor_prompt: TASK_EDITOR_PROMPT_VERSION,
      model: opts.client.id,
      seed: opts.seed,
      replies,
    },
  };
}

/**
 * A {@link ModelClient} that answers with a run's recorded replies, in order (a recorded endpoint
 * error is thrown again), so the run is reproduced without the model.
 * @throws Error from `complete` when asked for more replies than were recorded
 */
export function replayClient(record: AgentRecord): ModelClient {
  let next = 0;
  return {
    id: record.model,
    flavor: 'openai',
    kind: 'scripted',
    endpoint: null,
    model: record.model,
    async complete(): Promise<ModelResponse> {
      const r = record.replies[next++];
      if (!r) throw new Error(`the recorded replies end after ${record.replies.length}`);
      if (r.text === null) throw new Error(r.error ?? 'recorded endpoint error');
      return {
        text: r.text,
        tool_calls: [],
        tool_call_source: 'none',
        audio: null,
        finish_reason: 'stop',
        model: record.model,
        token_ids: null,
        prompt_token_ids: null,
        logprobs: null,
        usage: null,
        attempts: 1,
      };
    },
  };
}
