/** Task text shown in the views. */
import type { Task } from '../adapters/browser/rollout-types.ts';

/** The reason for call of a task, whichever instruction shape it uses. */
export function reasonOf(task: Task): string {
  const ins = task.user_scenario.instructions;
  return typeof ins === 'string' ? ins : ins.reason_for_call;
}
