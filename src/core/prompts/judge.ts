/**
 * The judge prompt: a fixed, versioned template that asks for one JSON verdict per item, with
 * the index of the turn that is the evidence and a one-sentence reason.
 */
import type { JudgeItem } from '../participants/types.ts';
import type { Domain } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import type { Turn } from '../schema/trajectory.ts';
import { joinSections, renderTranscript, section } from './common.ts';

/** Version of the judge prompt; bump it whenever the text below changes (verdicts are not comparable across versions). */
export const JUDGE_PROMPT_VERSION = 'judge-v1';

/** The judge's system message. */
export const JUDGE_SYSTEM =
  'You grade recorded customer-service phone calls. You judge each item strictly from the transcript, ' +
  'never from what the agent might have meant. Answer with one JSON object and nothing else.';

/** The judge's user message: policy, transcript with turn indices, items and the answer format. */
export function renderJudgePrompt(
  domain: Domain,
  task: Task,
  turns: readonly Turn[],
  items: readonly JudgeItem[],
): string {
  const purpose = task.description?.purpose ?? null;
  return joinSections([
    section('Policy the agent had to follow', domain.policy),
    section('What the call was about', purpose),
    section('Transcript (turn index in brackets)', renderTranscript(turns) || '(no turns)'),
    section('Items to judge', items.map((i) => `- ${JSON.stringify(i.id)}: ${i.text}`).join('\n')),
    section(
      'Answer format',
      'Return {"verdicts": [{"id": <item id>, "met": true or false, "turn": <index of the turn that is the evidence, or null>, "reason": <one sentence>}]} with exactly one verdict per item, in the order given.',
    ),
  ]);
}
