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
import { DOMAIN_BUILDER_PROMPT_VERSION, REFINE_CALLER_TEXT } from '../prompts/domain-builder.ts';
import { TASK_EDITOR_PROMPT_VERSION } from '../prompts/task-editor.ts';
import type { Task } from '../schema/task.ts';

/** The requests of a code-agent run, in order: each task's caller text, then the domain stages. */
export type AgentStage = 'caller_text' | 'rules' | 'business_rules' | 'harder_tasks';

/** One recorded model reply, in request order: its text, or the endpoint's error. */
export interface RecordedReply {
  stage: AgentStage;
  /** The task of a `caller_text` request. */
  task_id?: string;
  text: string | null;
  /** The reply's reasoning, kept only when its text is blank (so a replay says "reasoning only"). */
  reasoning?: string;
  error?: string;
}

/**
 * `client`, recording each reply (or endpoint error) in `replies` under `label`.
 * @returns a client with the same identity whose `complete` also records
 */
export function recordingClient(
  client: ModelClient,
  replies: RecordedReply[],
  label: Pick<RecordedReply, 'stage' | 'task_id'>,
): ModelClient {
  return {
    id: client.id,
    flavor: client.flavor,
    kind: client.kind,
    endpoint: client.endpoint,
    model: client.model,
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      try {
        const res = await client.complete(request, signal);
        const thinking = !res.text.trim() && res.reasoning ? { reasoning: res.reasoning } : {};
        replies.push({ ...label, text: res.text, ...thinking });
        return res;
      } catch (e) {
        replies.push({ ...label, text: null, error: (e as Error).message });
        throw e;
      }
    },
  };
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
    const recording = recordingClient(opts.client, replies, { stage: 'caller_text', task_id: task.id });
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
        ...(r.reasoning ? { reasoning: r.reasoning } : {}),
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
