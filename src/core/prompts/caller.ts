/**
 * The simulated caller's system prompt, rendered from the task: persona, reason for call, known
 * information (given only when asked), unknown information (never invented), task instructions,
 * bottom line, and for outbound callees budget / accept-if / hang-up-if; the imperfect-caller
 * behaviours of the task (a value misremembered, something withheld, a false claim); user tools
 * when the domain has them; spoken style; how to end the call.
 */
import type { Domain, OpenAiToolSchema } from '../schema/domain.ts';
import type { Negotiation, Task } from '../schema/task.ts';
import { STOP_TOKENS } from '../participants/types.ts';
import { bullets, joinSections, languageName, section } from './common.ts';

/** Version of the caller prompt template; recorded in trajectories (`participants.user_card`). */
export const CALLER_PROMPT_VERSION = 'caller-v2';

/** Render the caller's system prompt. Deterministic. */
export function renderCallerPrompt(domain: Domain, task: Task, tools: readonly OpenAiToolSchema[]): string {
  const s = task.user_scenario;
  const ins = typeof s.instructions === 'string' ? { reason_for_call: s.instructions } : s.instructions;
  const outbound = task.role === 'outbound';
  const known = ['known_info' in ins ? ins.known_info : null, ...(s.facts ?? []).map((f) => `${f.key}: ${f.value}`)];
  const unknown = 'unknown_info' in ins ? ins.unknown_info : null;
  const instructions = 'task_instructions' in ins ? ins.task_instructions : null;
  const outboundLines = outbound
    ? bullets([
        s.budget != null ? `Most you are willing to pay: ${s.budget}` : null,
        s.accept_if ? `You agree if: ${s.accept_if}` : null,
        s.hang_up_if ? `You hang up if: ${s.hang_up_if}` : null,
        ...negotiationLines(s.negotiation),
      ])
    : '';
  const facts = new Map((s.facts ?? []).map((f) => [f.key, f.value]));
  const imperfect = bullets([
    ...(s.misremembers ?? []).map(
      (m) =>
        `The first time you are asked for your ${m.fact}, say "${m.wrong}" (you misremember it). When the agent says it cannot find it or asks you to check, correct yourself: ${m.correction ? `"${m.correction}"` : `the right value is ${facts.get(m.fact) ?? 'the one listed above'}`}.`,
    ),
    ...(s.withholds ?? []).map(
      (w) =>
        `You do not want to give your ${w.fact} at first; when asked, say something like "${w.deflect}". Give it only when the agent asks again${w.press_cues?.length ? ` and explains why it is needed (for example: ${w.press_cues.join(', ')})` : ''}.`,
    ),
    ...(s.false_claims ?? []).map(
      (c) =>
        `You believe this, and say it early in the call: "${c.claim}". It is not true. When the agent tells you the records show otherwise, accept it: "${c.concede}".`,
    ),
  ]);
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
    section('How you get things wrong on this call (play it naturally, never say it is an act)', imperfect),
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

/** The negotiation card of an outbound callee in words (the scripted callee plays it exactly). */
function negotiationLines(n: Negotiation | undefined): string[] {
  if (!n) return [];
  return [
    `You accept a price of at most ${n.accept_at_most}; you never say this number.`,
    n.objections.length
      ? `To a higher price, object in this order, one per offer: ${n.objections.map((o) => `"${o}"`).join(', ')}.`
      : null,
    `When your objections are used up and the price is still too high, say: "${n.decline}". If the agent presses on after that, hang up.`,
    `If the agent threatens or pressures you, say "${n.hang_up}" and hang up.`,
    n.patience !== undefined ? `You stay on the line for at most ${n.patience} turns of the agent.` : null,
    n.reconsider
      ? `If the agent mentions ${n.reconsider.cues.map((c) => `"${c}"`).join(' or ')}, you change your mind and accept up to ${n.reconsider.accept_at_most}.`
      : null,
    'Agreeing is not enough: when you accept, do what the agent asks on your phone (pay or sign with your tools).',
  ].filter((l): l is string => l !== null);
}
