/**
 * The `ENV_ASSERTION` component (tau2-bench `env_assertions`): domain functions called on the
 * predicted final environment.
 */
import type { Environment } from '../env/environment.ts';
import { ToolError } from '../schema/domain.ts';
import type { EnvAssertion } from '../schema/task.ts';
import type { ComponentResult } from '../schema/trajectory.ts';
import { passFail } from './component.ts';
import { jsonEqual, showCall } from './turns.ts';

/**
 * Score `ENV_ASSERTION`: for each assertion call `domain.envFunctions[func_name](env.reader,
 * arguments)` and compare the result with `assert_value` (deep equality). 1 when all hold (or
 * there are none), else 0. An unknown function, or one that throws a {@link ToolError}, fails
 * its assertion; any other exception is a domain bug and propagates. Our environment has one
 * database, so `env_type` is not used.
 */
export async function scoreEnvAssertions(
  env: Environment,
  assertions: readonly EnvAssertion[],
): Promise<ComponentResult> {
  const fns = env.domain.envFunctions ?? {};
  const details: string[] = [];
  for (const a of assertions) {
    const label = showCall(a.func_name, a.arguments);
    const note = a.message ? ` (${a.message})` : '';
    const fn = Object.hasOwn(fns, a.func_name) ? fns[a.func_name] : undefined;
    if (!fn) {
      details.push(`${label}: unknown env function "${a.func_name}"`);
      continue;
    }
    let value: unknown;
    try {
      value = await fn(env.reader, a.arguments);
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      details.push(`${label}: failed: ${e.message}${note}`);
      continue;
    }
    if (!jsonEqual(value, a.assert_value)) {
      details.push(`${label}: expected ${JSON.stringify(a.assert_value)}, got ${JSON.stringify(value ?? null)}${note}`);
    }
  }
  return passFail(details.length === 0, details);
}
