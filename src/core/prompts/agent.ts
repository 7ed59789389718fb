/**
 * The agent's system prompt: the domain policy, the tool schemas and a short voice-call style
 * guide, plus an optional teacher-only guidance block (for producing SFT demonstrations; a
 * trajectory made with it is marked `teacher_guidance` and evaluation refuses it).
 */
import type { Domain, OpenAiToolSchema } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import { bullets, joinSections, languageName, section } from './common.ts';

/** Version of the agent prompt template; recorded in trajectories (`participants.agent_card`). */
export const AGENT_PROMPT_VERSION = 'agent-v1';

/** The voice-call style guide given to every model agent. */
export const VOICE_STYLE_GUIDE: readonly string[] = [
  'Everything you write is spoken to the caller by a text-to-speech voice over a phone line.',
  'Keep each turn short: one or two spoken sentences, one topic at a time, one question at a time.',
  'Never use markdown, lists, numbering, tables, headings, emoji or links.',
  'Say amounts, dates, phone numbers and codes the way a person says them aloud.',
  'Only state amounts, dates and ids that you got from a tool result or from the caller.',
  'If the line is unclear or you missed something, ask the caller to repeat it.',
];

/** Inputs of {@link renderAgentPrompt}. */
export interface AgentPromptInput {
  domain: Domain;
  task: Task;
  tools: readonly OpenAiToolSchema[];
  /** Teacher-only guidance text, or null for none. */
  guidance: string | null;
}

/** Render the agent's system prompt. Deterministic: the same inputs give the same text. */
export function renderAgentPrompt(input: AgentPromptInput): string {
  const { domain, task, tools, guidance } = input;
  const opening =
    task.role === 'outbound'
      ? `You are placing an outbound phone call for the business below. Speak ${languageName(domain.language)}. You speak first: say who you are and why you call.`
      : `You are answering an inbound phone call for the business below. Speak ${languageName(domain.language)}. The call has just connected and you speak first.`;
  const toolLines = tools.map(
    (t) => `- ${t.function.name}: ${t.function.description}\n  parameters: ${JSON.stringify(t.function.parameters)}`,
  );
  return joinSections([
    opening,
    section('Policy', domain.policy),
    section(
      'Tools',
      tools.length
        ? `Call a tool with JSON arguments that match its parameters, then wait for its result before you rely on it.\n${toolLines.join('\n')}`
        : null,
    ),
    section('How to speak on the phone', bullets(VOICE_STYLE_GUIDE)),
    guidance === null ? '' : section('Teacher guidance (demonstration runs only)', guidance),
  ]);
}

/**
 * Teacher guidance built from a task's evaluation criteria: the reference solution's tool calls
 * in order and the facts to tell the caller. Only for producing demonstrations.
 */
export function referenceGuidance(task: Task): string {
  const c = task.evaluation_criteria;
  const actions = (c?.actions ?? []).map(
    (a) => `${a.requestor === 'user' ? 'the caller does' : 'you call'} ${a.name} ${JSON.stringify(a.arguments)}`,
  );
  const info = c?.communicate_info ?? [];
  return joinSections([
    actions.length
      ? `A correct handling of this call, in order:\n${bullets(actions)}`
      : 'This call needs no tool call.',
    info.length ? `Make sure the caller hears: ${info.join('; ')}` : '',
  ]);
}
