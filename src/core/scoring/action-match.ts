/**
 * The `ACTION` component (tau2-bench `ActionEvaluator` with `Action.compare_args`).
 */
import type { Action } from '../schema/task.ts';
import type { ComponentResult, Turn } from '../schema/trajectory.ts';
import { passFail } from './component.ts';
import { jsonEqual, showCall, toolTurns } from './turns.ts';

/**
 * True when a call matches a reference action: same name and deep-equal values on the action's
 * `compare_args` (all of the action's own arguments when absent; name only when empty). A key
 * present on one side only does not match. Unlike tau2-bench, which compares on the *call's* keys when
 * `compare_args` is absent, extra optional arguments of the call are ignored.
 */
export function matchesAction(action: Action, name: string, args: Readonly<Record<string, unknown>>): boolean {
  if (action.name !== name) return false;
  const keys = action.compare_args ?? Object.keys(action.arguments);
  return keys.every((k) => {
    const inAction = Object.hasOwn(action.arguments, k);
    if (inAction !== Object.hasOwn(args, k)) return false;
    return !inAction || jsonEqual(args[k], action.arguments[k]);
  });
}

/**
 * Score `ACTION`: every reference action of requestor `assistant` must be matched by some agent
 * tool call in the trajectory (failed calls count, as in tau2-bench). Caller-side (`user`)
 * actions are not the agent's and are not checked. 1 when all match (or there are none), else
 * 0; details list the unmatched actions.
 */
export function scoreActions(turns: readonly Turn[], actions: readonly Action[]): ComponentResult {
  const calls = toolTurns(turns, 'assistant');
  const missing = actions
    .filter((a) => a.requestor === 'assistant')
    .filter((a) => !calls.some((c) => matchesAction(a, c.turn.name, c.turn.arguments)));
  return passFail(
    missing.length === 0,
    missing.map(
      (a) =>
        `no matching call for ${showCall(a.name, a.compare_args ? pick(a.arguments, a.compare_args) : a.arguments)}`,
    ),
  );
}

function pick(args: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => Object.hasOwn(args, k)).map((k) => [k, args[k]]));
}
