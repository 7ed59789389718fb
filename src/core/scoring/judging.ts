/**
 * Everything the {@link Judge} decides, in one call per episode: the task's NL assertions
 * (tau2-bench `nl_assertions`, component `NL_ASSERTION`) and the behaviour assertions that have
 * no deterministic `check`.
 */
import type { Judge, JudgeItem, JudgeVerdict } from '../participants/types.ts';
import { InfrastructureError } from '../participants/types.ts';
import type { Domain } from '../schema/domain.ts';
import type { Assertion, Task } from '../schema/task.ts';
import type { AssertionVerdict, ComponentResult, Turn } from '../schema/trajectory.ts';
import { notJudged, passFail } from './component.ts';

/** Detail and reason used when an item needed a judge and none was configured. */
export const NOT_JUDGED = 'not judged: no judge configured';

/** Judge items of NL assertions: ids `nl:0`, `nl:1`, … in the task's order. */
export function nlItems(texts: readonly string[]): JudgeItem[] {
  return texts.map((text, i) => ({ id: `nl:${i}`, text }));
}

/** Judge items of behaviour assertions without `check`: the assertion's id and text. */
export function assertionItems(assertions: readonly Assertion[]): JudgeItem[] {
  return assertions.map((a) => ({ id: a.id, text: a.text }));
}

/**
 * Ask `judge` about every item in one call and index the verdicts by id. No call is made for no
 * items. Whatever the judge throws propagates (an infrastructure failure: the caller marks the
 * rollout invalid); a reply that leaves an item out is one too ({@link InfrastructureError}).
 */
export async function judgeAll(
  judge: Judge,
  items: readonly JudgeItem[],
  view: { domain: Domain; task: Task; turns: readonly Turn[] },
): Promise<Map<string, JudgeVerdict>> {
  if (items.length === 0) return new Map();
  const verdicts = new Map((await judge.judge(items, view)).map((v) => [v.id, v]));
  const missing = items.filter((i) => !verdicts.has(i.id)).map((i) => i.id);
  if (missing.length) throw new InfrastructureError(`judge ${judge.id} returned no verdict for ${missing.join(', ')}`);
  return verdicts;
}

/**
 * Score `NL_ASSERTION` as tau2-bench does: 1 when every assertion is met (or there are none),
 * else 0 with one detail per unmet assertion. `verdicts` is `null` when no judge is configured:
 * the component is then not judged (score `null`) unless there is nothing to judge.
 */
export function scoreNlAssertions(
  items: readonly JudgeItem[],
  verdicts: ReadonlyMap<string, JudgeVerdict> | null,
): ComponentResult {
  if (items.length === 0) return passFail(true);
  if (!verdicts) return notJudged([NOT_JUDGED]);
  const unmet = items.flatMap((item) => {
    const v = verdicts.get(item.id)!;
    return v.met
      ? []
      : [`not met: ${JSON.stringify(item.text)}${v.turn === null ? '' : ` (turn ${v.turn})`}: ${v.reason}`];
  });
  return passFail(unmet.length === 0, unmet);
}

/** Verdicts of judged behaviour assertions; `not_judged` for each when `verdicts` is `null`. */
export function judgedAssertionVerdicts(
  assertions: readonly Assertion[],
  verdicts: ReadonlyMap<string, JudgeVerdict> | null,
): AssertionVerdict[] {
  return assertions.map((a) => {
    const v = verdicts?.get(a.id);
    if (!v) return { id: a.id, rule: a.rule, status: 'not_judged', reason: NOT_JUDGED, turn: null };
    return { id: a.id, rule: a.rule, status: v.met ? 'passed' : 'failed', reason: v.reason, turn: v.turn };
  });
}
