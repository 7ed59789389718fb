/**
 * The simulated caller's system prompt, rendered from the task: persona, reason for call, known
 * information (given only when asked), unknown information (never invented), task instructions,
 * bottom line, and for outbound callees budget / accept-if / hang-up-if; user tools when the
 * domain has them; spoken style; how to end the call.
 */
import type { Domain, OpenAiToolSchema } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import { STOP_TOKENS } from '../participants/types.ts';
import { bullets, joinSections, languageName, section } from './common.ts';

/** Version of the caller prompt template; recorded in trajectories (`participants.user_card`). */
export const CALLER_PROMPT_VERSION = 'caller-v1';

/** Render the caller's system prompt. Deterministic. */
export function renderCallerPrompt(domain: Domain, task: Task, tools: readonly OpenAiToolSchema[]): string {
  const s = task.user_scenario;
  const ins = typeof s.instructions === 'string' ? { reason_for_call: s.instructions } : s.instructions;
  const outbound = task.role === 'outbound';
  const known = [
    'known_info' in ins ? ins.known_info : null,
    ...(s.facts ?? []).map((f) => `${f.key}: ${f.value}`),
  ];
  const unknown = 'unknown_info' in ins ? ins.unknown_info : null;
  const instructions = 'task_instructions' in ins ? ins.task_instructions : null;
  const outboundLines = outbound
    ? bullets([
        s.budget != null ? `Most you are willing to pay: ${s.budget}` : null,
        s.accept_if ? `You agree if: ${s.accept_if}` : null,
        s.hang_up_if ? `You hang up if: ${s.hang_up_if}` : null,
      ])
    : '';
  const toolLines = tools.map((t) => `- ${t.function.name}: ${t.function.description}`);
  return joinSections([
    outbound
      ? `You are role-playing a person who receives a phone call from a company's agent. You are not the agent. Speak ${languageName(domain.language)}.`
      : `You are role-playing a customer who calls a company's phone line. You are not the agent. Speak ${languageName(domain.language)}.`,
    section('Who you are', s.persona ?? null),
    section(outbound ? 'Your situation' : 'Why you are calling', ins.reason_for_call),
    section('What you know (say each item only when the agent asks for it)', bullets(known)),
    section('What you do not know (never make it up; say you do not know)', unknown ?? null),
    section('How to act', instructions ?? null),
    section('Your bottom line', s.bottom_line ?? null),
    section('Your limits on this call', outboundLines),
    section(
      'Things you can do on your own phone (call these tools only when the agent asks you to or your instructions say so)',
      toolLines.join('\n'),
    ),
    section(
      'How to speak',
      bullets([
        'This is a phone call: one or two short spoken sentences per turn.',
        'Never use markdown, lists, numbering or tables.',
        'Say numbers and codes the way people say them on the phone, digit groups are fine.',
        'Never state an id, amount, date or name that is not written above or that the agent did not say.',
      ]),
    ),
    section(
      'Ending the call',
      bullets([
        `When your goal is met or cannot be met, say goodbye and end that turn with ${STOP_TOKENS.stop}.`,
        `If the agent transfers you to a human, end your turn with ${STOP_TOKENS.transfer}.`,
        `If the agent cannot help with anything you need here, end your turn with ${STOP_TOKENS.outOfScope}.`,
        'Do not end the call while something you just agreed to has not been confirmed as done.',
      ]),
    ),
  ]);
}
