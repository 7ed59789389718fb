/**
 * The task editor's prompt (the code-agent role of the self-evolving task bank): a fixed,
 * versioned template that shows a model one task of a domain and asks for a JSON patch
 * (RFC 6902) on it — a repair of a finding, or a harder variant from a hard pattern. The reply
 * is one JSON object `{"reason": …, "patch": [...]}`.
 */
import { toolsFor, type Domain } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import { bullets, joinSections, section } from './common.ts';

/** Version of the task-editor prompt; bump it whenever the text below changes (it is recorded with each change it makes). */
export const TASK_EDITOR_PROMPT_VERSION = 'task-editor-v1';

/** The task editor's system message. */
export const TASK_EDITOR_SYSTEM =
  'You maintain the tasks of a customer-service simulation. Each task is a JSON document: the caller scenario, ' +
  'the initial state, and the evaluation criteria (a reference solution of tool calls, what the agent must tell, ' +
  'behaviour assertions tied to policy rules, and which writes are allowed). You change a task only by a JSON ' +
  'patch (RFC 6902) and answer with one JSON object and nothing else.';

/** What the editor is asked to do. */
export type EditRequest =
  | { kind: 'repair'; finding: string }
  | { kind: 'variant'; pattern: { id: string; title: string; description: string } };

/** The task editor's user message: policy, tools, the task, the request and the answer format. */
export function renderTaskEditorPrompt(domain: Domain, task: Task, request: EditRequest): string {
  const tools = toolsFor(domain, 'assistant').map((t) => `${t.name} (${t.kind}): ${t.description}`);
  const userTools = toolsFor(domain, 'user').map((t) => `${t.name} (${t.kind}): ${t.description}`);
  const { lineage: _, ...shown } = task;
  const ask =
    request.kind === 'repair'
      ? `Repair the task. The finding against it: ${request.finding}\nChange as little as you can; keep what the task tests.`
      : `Make the task harder with the hard pattern "${request.pattern.id}" (${request.pattern.title}): ${request.pattern.description}\nThe reference solution must still solve it under the policy, and an agent that does nothing must still fail.`;
  return joinSections([
    section('Policy of the domain', domain.policy),
    section("The agent's tools", bullets(tools)),
    section("The caller's tools", bullets(userTools)),
    section('The task (JSON)', JSON.stringify(shown, null, 2)),
    section('What to do', ask),
    section(
      'Answer format',
      'Return {"reason": <one sentence: what you changed and why>, "patch": [<RFC 6902 operations on the task JSON above>]}. Do not change "id" or "lineage".',
    ),
  ]);
}
