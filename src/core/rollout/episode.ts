/**
 * The episode loop: agent and caller take turns; tool calls run against the environment; the
 * episode ends on a stop token, a step or error limit, or an infrastructure failure.
 */
import type { DomainRuntime, Environment } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import { seededRng, type Rng } from '../ports/rng.ts';
import { toolSchema, toolsFor, type OpenAiToolSchema } from '../schema/domain.ts';
import type { Requestor, Task } from '../schema/task.ts';
import type { TerminationReason, ToolCall, Trajectory, Turn } from '../schema/trajectory.ts';
import { InfrastructureError, STOP_TOKENS, type Agent, type EpisodeView, type UserSimulator } from '../participants/types.ts';
import { normalizeReply, thrownReason } from './normalize.ts';

/** Settings of one episode. */
export interface EpisodeOptions {
  runtime: DomainRuntime;
  task: Task;
  agent: Agent;
  user: UserSimulator;
  /** Seed of every random choice in the episode. */
  seed: number;
  /** Trial number within a run (0-based). */
  trial?: number;
  /** Wall or simulated time for turn timestamps. */
  clock: Clock;
  /** Participant turns before `max_steps` (tau2-bench default: 100 steps). */
  maxSteps?: number;
  /** Failed agent tool calls before `too_many_errors` (tau2-bench default: 10). */
  maxErrors?: number;
  /** Called after each turn is appended (live views). */
  onTurn?: (turn: Turn, index: number) => void;
}

/** Split a stop token off a participant's text: the text before it is still delivered. */
export function splitStopToken(text: string): { text: string; token: keyof typeof STOP_TOKENS | null } {
  for (const [key, token] of Object.entries(STOP_TOKENS) as [keyof typeof STOP_TOKENS, string][]) {
    const at = text.indexOf(token);
    if (at >= 0) return { text: text.slice(0, at).trim(), token: key };
  }
  return { text, token: null };
}

const TOKEN_REASON: Record<keyof typeof STOP_TOKENS, TerminationReason> = {
  stop: 'user_stop',
  transfer: 'transfer',
  outOfScope: 'out_of_scope',
};

/**
 * Run one episode to its end and return its trajectory (without reward; score it with
 * `evaluate`). Never throws: malformed replies are normalized ({@link normalizeReply}) and bad
 * tool calls become `Error: …` tool messages; an {@link InfrastructureError} or any other
 * exception from a participant or a tool ends the episode as invalid, with the reason.
 */
export async function runEpisode(opts: EpisodeOptions): Promise<Trajectory> {
  const { runtime, task, agent, user, clock, seed } = opts;
  const maxSteps = opts.maxSteps ?? 100;
  const maxErrors = opts.maxErrors ?? 10;
  const rng = seededRng(seed);
  const rngs: Record<Requestor, Rng> = { assistant: rng.fork('agent'), user: rng.fork('user') };
  const schemas: Record<Requestor, OpenAiToolSchema[]> = {
    assistant: toolsFor(runtime.domain, 'assistant').map(toolSchema),
    user: toolsFor(runtime.domain, 'user').map(toolSchema),
  };
  const turns: Turn[] = [];
  const push = (turn: Turn) => {
    turns.push(turn);
    opts.onTurn?.(turn, turns.length - 1);
  };
  const startedAt = clock.now();
  let termination: TerminationReason = 'max_steps';
  let invalidReason: string | null = null;
  let env: Environment | undefined;

  const view = (who: Requestor): EpisodeView => ({
    domain: runtime.domain,
    task,
    turns,
    tools: schemas[who],
    rng: rngs[who],
  });

  try {
    env = await runtime.open(task);
    let errors = 0;
    let next: Requestor = 'assistant';
    for (let step = 0; ; step++) {
      if (step >= maxSteps) {
        termination = 'max_steps';
        break;
      }
      const who: Requestor = next;
      const raw: unknown = who === 'assistant' ? await agent.respond(view(who)) : await user.respond(view(who));
      const reply = normalizeReply(raw, turns.length);
      const { text, token } = splitStopToken(reply.text);
      // A stop token ends the episode: tool calls in the same turn are not executed.
      const calls: ToolCall[] = token ? [] : reply.calls;
      push({ role: who, text, tool_calls: calls, t_ms: clock.now() } as Turn);
      if (token) {
        termination = who === 'assistant' && token === 'stop' ? 'agent_stop' : TOKEN_REASON[token];
        break;
      }
      for (const [i, call] of calls.entries()) {
        const problem = reply.problems[i];
        const outcome = problem
          ? { content: `Error: ${problem}`, error: true, writes: [] }
          : await env.call(call, who, turns.length);
        push({
          role: 'tool',
          requestor: who,
          tool_call_id: call.id,
          name: call.name,
          arguments: call.arguments,
          content: outcome.content,
          error: outcome.error,
          writes: outcome.writes,
          t_ms: clock.now(),
        });
        // Only the agent's failures count towards too_many_errors (the caller's are not its fault).
        if (outcome.error && who === 'assistant') errors++;
        if (errors >= maxErrors) break;
      }
      if (errors >= maxErrors) {
        termination = 'too_many_errors';
        break;
      }
      // After its own tool calls a participant goes on; after speaking, the other side answers.
      if (calls.length === 0) next = who === 'assistant' ? 'user' : 'assistant';
    }
  } catch (e) {
    termination = 'infrastructure_error';
    invalidReason = e instanceof InfrastructureError ? e.message : thrownReason(e);
  } finally {
    await env?.close().catch(() => undefined);
  }

  return {
    schema_version: 1,
    id: `${runtime.domain.name}/${task.id}/${opts.trial ?? 0}/${seed}`,
    domain: runtime.domain.name,
    task_id: task.id,
    trial: opts.trial ?? 0,
    seed,
    participants: { agent: agent.id, user: user.id },
    termination,
    valid: invalidReason === null,
    invalid_reason: invalidReason,
    turns,
    started_at_ms: startedAt,
    ended_at_ms: clock.now(),
    reward_info: null,
  };
}
