/** Participant specs on the command line (`--agent reference`, `--user scripted`). */
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../core/participants/scripted.ts';
import type { Agent, UserSimulator } from '../core/participants/types.ts';

const AGENTS: Record<string, () => Agent> = {
  reference: () => new ReferenceAgent(),
  noop: () => new NoopAgent(),
};
const USERS: Record<string, () => UserSimulator> = {
  scripted: () => new ScriptedUser(),
};

/** A factory for the agent named by `spec`. Throws with the known names for an unknown one. */
export function agentFactory(spec: string): () => Agent {
  const f = Object.hasOwn(AGENTS, spec) ? AGENTS[spec] : undefined;
  if (!f) throw new UsageError(`unknown agent "${spec}" (known: ${Object.keys(AGENTS).join(', ')})`);
  return f;
}

/** A factory for the simulated caller named by `spec`. */
export function userFactory(spec: string): () => UserSimulator {
  const f = Object.hasOwn(USERS, spec) ? USERS[spec] : undefined;
  if (!f) throw new UsageError(`unknown user "${spec}" (known: ${Object.keys(USERS).join(', ')})`);
  return f;
}

/** A mistake in the command line: printed without a stack trace, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
