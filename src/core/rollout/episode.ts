/**
 * The episode loop: agent and caller take turns; tool calls run against the environment; the
 * episode ends on a stop token, a step or error limit, or an infrastructure failure.
 */
import type { DomainRuntime, EnvSnapshot, Environment } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import { rngFromState, seededRng, type Rng } from '../ports/rng.ts';
import { toolSchema, toolsFor, type OpenAiToolSchema } from '../schema/domain.ts';
import type { Requestor, Task } from '../schema/task.ts';
import {
  Generation,
  ranToolTurn,
  ReplyCap,
  type TerminationReason,
  type ToolCall,
  type Trajectory,
  type Turn,
} from '../schema/trajectory.ts';
import { ModelRequestRecord } from '../schema/chat.ts';
import { InfrastructureError, type Agent, type EpisodeView, type UserSimulator } from '../participants/types.ts';
import { normalizeReply, thrownReason } from './normalize.ts';
import { MAX_REPLY_CHARS } from './limits.ts';
import { unrunCallTurns, unrunWhy } from './unrun-calls.ts';
import { type StopTokenKind, visibleReply } from '../participants/reply-text.ts';
import { asksForConfirmation, classifyDialogueAct } from '../scoring/dialogue-acts.ts';
import { textTurns } from '../scoring/turns.ts';
import { channelBargeIn, channelCallerTurn, type ChannelEpisodeKey, type EpisodeChannel } from './channel-step.ts';
import { agentOwnAudio, DuplexTimeline, type TimelineState } from '../duplex/timeline.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';

/**
 * Failed agent tool calls that end an episode as `too_many_errors` unless
 * {@link EpisodeOptions.maxErrors} says otherwise (tau2-bench's `max_errors` default, 10).
 */
export const DEFAULT_MAX_ERRORS = 10;

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
  /**
   * Failed agent tool calls before `too_many_errors` (tau2-bench default: 10). The same number of
   * failed caller tool calls makes the rollout invalid (a simulator failure, never the agent's 0).
   */
  maxErrors?: number;
  /** Called after each turn is appended (live views). */
  onTurn?: (turn: Turn, index: number) => void;
  /**
   * Start from a saved point instead of the beginning (milestone forks): the turns so far are
   * taken as the episode's first turns (not passed to `onTurn` again), the database is restored
   * from `env`, and the participants' generators start from the given states.
   */
  resume?: EpisodeCheckpoint;
  /**
   * Called before every participant turn with the state at that point. `checkpoint()` saves it
   * (database snapshot included, so call it only when needed); the result can be passed back as
   * `resume`. Awaited: the episode waits for it.
   */
  onStep?: (point: EpisodeStepPoint) => void | Promise<void>;
  /**
   * Issue 5: the phone channel. When set, every caller text turn is spoken (TTS), put through
   * the channel and stored (`audio` on the turn); caller turns may be cut off (`dropout`) and
   * agent replies interrupted (`interrupted`, followed by the caller's `barge_in` turn, which
   * counts as a step). Absent: the text-only loop, unchanged. See `channel-step.ts`.
   */
  channel?: EpisodeChannel;
  /**
   * Issue 17: the full-duplex timeline (needs `channel`). Turns are placed on one tick axis:
   * backchannels, tics, asides and background speech overlap the agent's speech without becoming
   * turns; a real barge-in makes the agent yield (see `../duplex/timeline.ts`). The trajectory
   * gains `duplex`. With `resume`, the timeline goes on from the checkpoint's `duplex` state
   * (turns of the checkpoint after that state are placed whole first, `DuplexTimeline.placeWhole`);
   * a checkpoint without one gives no timeline.
   */
  duplex?: DuplexSettings;
}

/** Everything needed to continue an episode from a point (see {@link EpisodeOptions.resume}). */
export interface EpisodeCheckpoint {
  /** The turns so far (deep copies). */
  turns: Turn[];
  /** Database image and write log at that point. */
  env: EnvSnapshot;
  /** States of the agent's and the caller's generators ({@link Rng.state}). */
  rng: Record<Requestor, number>;
  /** Who speaks next. */
  next: Requestor;
  /** Participant turns taken so far (counts towards `maxSteps`). */
  step: number;
  /** Failed agent tool calls so far (counts towards `maxErrors`). */
  errors: number;
  /**
   * When the episode started (ms, from its clock). A resumed episode keeps it as its
   * `started_at_ms`; its own clock should start after the checkpoint's last turn. Absent: the
   * resumed episode's clock gives it.
   */
  started_at_ms?: number;
  /** Issue 17: the full-duplex timeline's state at that point (a duplex episode's checkpoint). */
  duplex?: TimelineState;
}

/** The state before one participant turn, given to {@link EpisodeOptions.onStep}. */
export interface EpisodeStepPoint {
  turns: readonly Turn[];
  next: Requestor;
  step: number;
  /** Save this point (snapshots the database). Call it before `onStep` returns. */
  checkpoint(): Promise<EpisodeCheckpoint>;
  /**
   * The full-duplex timeline's state at this point (without its audio unless `audio`), or null
   * without a timeline: cheap, for saving many points (turn-level decision points).
   */
  timeline(audio?: boolean): TimelineState | null;
}

/** Split a stop token off a participant's text (see `participants/reply-text.ts`). */
export { splitStopToken } from '../participants/reply-text.ts';

const TOKEN_REASON: Record<StopTokenKind, TerminationReason> = {
  stop: 'user_stop',
  transfer: 'transfer',
  outOfScope: 'out_of_scope',
};

/** How a stop token said by `who` ends the episode (`stop` is `agent_stop` or `user_stop` by speaker). */
export function stopTermination(who: Requestor, token: StopTokenKind): TerminationReason {
  return who === 'assistant' && token === 'stop' ? 'agent_stop' : TOKEN_REASON[token];
}

/**
 * True when the caller's `text` agrees ({@link classifyDialogueAct}: `affirm`) to a write the
 * agent proposed in its last spoken turn and that no agent write has followed yet. A proposal
 * asks for confirmation ({@link asksForConfirmation}) and names a write: one of the domain's
 * write tools' `operationCues`, or an explicit request cue (confirm / shall I / 确认 …; a bare
 * question such as "anything else?" is not a proposal).
 */
export function agreesToPendingWrite(turns: readonly Turn[], text: string, domain: DomainRuntime['domain']): boolean {
  const ask = textTurns(turns, 'assistant').at(-1);
  if (!ask || !asksForConfirmation(ask.text)) return false;
  const lower = ask.text.toLowerCase();
  const cues = domain.tools.filter((t) => t.kind === 'write').flatMap((t) => t.operationCues ?? []);
  if (!cues.some((c) => lower.includes(c.toLowerCase())) && !asksForConfirmation(ask.text.replace(/[?？]/g, '')))
    return false;
  const wroteSince = turns
    .slice(ask.index + 1)
    .some((t) => t.role === 'tool' && t.requestor === 'assistant' && !t.error && t.writes.length > 0);
  return !wroteSince && classifyDialogueAct(text).act === 'affirm';
}

/**
 * `value` when `schema` accepts it, else undefined. A participant that gives no such field
 * (`value` undefined: every scripted one, on every turn) costs no parse: each of these schemas
 * is an object, which undefined never is, and a failed zod parse builds its issue list (~10 µs).
 */
export function parsedIfGiven<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  value: unknown,
): T | undefined {
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A generation record with reasoning found in the text added (model output details only). */
function withReasoning(generation: unknown, reasoning: string | null): unknown {
  if (!reasoning || typeof generation !== 'object' || generation === null) return generation;
  const own = (generation as { reasoning?: unknown }).reasoning;
  return { ...generation, reasoning: typeof own === 'string' && own ? `${own}\n\n${reasoning}` : reasoning };
}

/**
 * Run one episode to its end and return its trajectory (without reward; score it with
 * `evaluate`). Never throws: malformed replies are normalized ({@link normalizeReply}) and bad
 * tool calls become `Error: …` tool messages; an {@link InfrastructureError} or any other
 * exception from a participant or a tool ends the episode as invalid, with the reason.
 */
export async function runEpisode(opts: EpisodeOptions): Promise<Trajectory> {
  const { runtime, task, agent, user, clock, seed } = opts;
  const maxSteps = opts.maxSteps ?? 100;
  const maxErrors = opts.maxErrors ?? DEFAULT_MAX_ERRORS;
  const rng = seededRng(seed);
  const resume = opts.resume;
  const rngs: Record<Requestor, Rng> = resume
    ? { assistant: rngFromState(resume.rng.assistant), user: rngFromState(resume.rng.user) }
    : { assistant: rng.fork('agent'), user: rng.fork('user') };
  const schemas: Record<Requestor, OpenAiToolSchema[]> = {
    assistant: toolsFor(runtime.domain, 'assistant').map(toolSchema),
    user: toolsFor(runtime.domain, 'user').map(toolSchema),
  };
  const toolNames: Record<Requestor, ReadonlySet<string>> = {
    assistant: new Set(schemas.assistant.map((s) => s.function.name)),
    user: new Set(schemas.user.map((s) => s.function.name)),
  };
  const turns: Turn[] = resume ? structuredClone(resume.turns) : [];
  const push = (turn: Turn) => {
    turns.push(turn);
    opts.onTurn?.(turn, turns.length - 1);
  };
  const startedAt = resume?.started_at_ms ?? clock.now();
  let termination: TerminationReason = 'max_steps';
  let invalidReason: string | null = null;
  let env: Environment | undefined;
  let stopDeferred: Trajectory['stop_deferred'] | undefined;
  // Failed caller tool calls (counted from the turns, so a resumed episode keeps its count).
  let callerErrors = turns.filter((t) => ranToolTurn(t) && t.requestor === 'user' && t.error).length;

  const channelKey: ChannelEpisodeKey = {
    domain: runtime.domain.name,
    language: runtime.domain.language,
    task,
    trial: opts.trial ?? 0,
    seed,
  };

  const timeline =
    opts.duplex && opts.channel && (!resume || resume.duplex)
      ? new DuplexTimeline(opts.channel, channelKey, opts.duplex, resume?.duplex)
      : null;

  const view = (who: Requestor): EpisodeView => ({
    domain: runtime.domain,
    task,
    turns,
    tools: schemas[who],
    rng: rngs[who],
    seed,
  });

  try {
    env = await runtime.open(task);
    if (resume) await env.restore(resume.env);
    if (timeline && resume?.duplex) await timeline.placeWhole(turns, resume.duplex.turns);
    const opened = env;
    let errors = resume?.errors ?? 0;
    let next: Requestor = resume?.next ?? 'assistant';
    for (let step = resume?.step ?? 0; ; step++) {
      if (step >= maxSteps) {
        termination = 'max_steps';
        break;
      }
      if (opts.onStep) {
        const at = { next, step, errors };
        await opts.onStep({
          turns,
          next,
          step,
          checkpoint: async () => ({
            turns: structuredClone(turns),
            env: await opened.snapshot(),
            rng: { assistant: rngs.assistant.state(), user: rngs.user.state() },
            ...at,
            started_at_ms: startedAt,
            ...(timeline ? { duplex: timeline.save(turns.length) } : {}),
          }),
          timeline: (audio = false) => timeline?.save(turns.length, audio) ?? null,
        });
      }
      const who: Requestor = next;
      const raw: unknown = who === 'assistant' ? await agent.respond(view(who)) : await user.respond(view(who));
      const reply = normalizeReply(raw, turns.length, toolNames[who]);
      if (reply.oversize !== null && who === 'user') {
        throw new InfrastructureError(
          `simulator error: caller reply of ${reply.oversize} characters is over the limit of ${MAX_REPLY_CHARS}`,
        );
      }
      // An over-long agent reply is kept cut, marked `oversize` and vetoed by QUALITY; so is a
      // streamed reply stopped at a response limit (`capped`).
      const capped =
        who === 'assistant' ? parsedIfGiven(ReplyCap, (raw as { capped?: unknown } | null)?.capped) : undefined;
      const over = {
        ...(reply.oversize !== null ? { oversize: reply.oversize } : {}),
        ...(capped ? { capped } : {}),
      };
      // Reasoning (`<think>…</think>`) is never delivered, and a stop token inside it is no token.
      const visible = visibleReply(reply.text);
      const text = visible.text;
      let token = visible.token;
      // A caller who says yes to a pending write and stops in the same message: deliver the
      // text, give the agent its turn to act, then end (recorded as `stop_deferred`).
      const defer =
        token === 'stop' && who === 'user' && !stopDeferred && agreesToPendingWrite(turns, text, runtime.domain);
      if (defer) token = null;
      // A stop token ends the episode: tool calls in the same turn are not executed; they stay on
      // the turn as sent (`kept`) and are answered `not_run` (at the end; a deferred stop's at once).
      const calls: ToolCall[] = token || defer ? [] : reply.calls;
      const kept = token || defer ? reply.calls : calls;
      // Model output details (token ids, logprobs) are kept when a model participant gives them.
      const generation = parsedIfGiven(
        Generation,
        withReasoning((raw as { generation?: unknown } | null)?.generation, visible.reasoning),
      );
      // The exact request an agent model was sent is kept on its turn (issue 12).
      const sent =
        who === 'assistant'
          ? parsedIfGiven(ModelRequestRecord, (raw as { request?: unknown } | null)?.request)
          : undefined;
      const gen = {
        ...(generation ? { generation } : {}),
        ...(sent ? { request: sent } : {}),
      };
      // Barge-in: the reply keeps only its heard part, its tool calls are not executed, and the
      // caller's interruption is the next turn. Full duplex: every reply is placed on the time
      // axis (as the agent's own audio when its reply carries some, so its length is the real
      // one) and only a real barge-in comes back (backchannels and the like are no turns).
      const barge =
        timeline && who === 'assistant' && text
          ? await timeline.agentSpeech(turns.length, text, calls, !token, agentOwnAudio(raw), capped ?? null)
          : opts.channel && who === 'assistant' && !token && text
            ? await channelBargeIn(opts.channel, channelKey, turns.length, text, calls)
            : null;
      if (barge && opts.channel) {
        push({
          role: 'assistant',
          text: barge.interrupted.heard_text,
          tool_calls: [],
          t_ms: clock.now(),
          ...gen,
          ...over,
          interrupted: barge.interrupted,
        } as Turn);
        const { text: said, ...heard } = timeline
          ? await timeline.callerSpeech(turns.length, barge.caller.text, false, true)
          : await channelCallerTurn(opts.channel, channelKey, turns.length, barge.caller.text, false);
        push({
          role: 'user',
          text: said,
          tool_calls: [],
          t_ms: clock.now(),
          ...heard,
          barge_in: { type: barge.caller.type, value: barge.caller.value },
        } as Turn);
        step++;
        next = 'assistant';
        continue;
      }
      if (opts.channel && who === 'user') {
        const { text: said, ...heard } = timeline
          ? await timeline.callerSpeech(turns.length, text, !token && !defer, false)
          : await channelCallerTurn(opts.channel, channelKey, turns.length, text, !token && !defer);
        push({ role: who, text: said, tool_calls: kept, t_ms: clock.now(), ...gen, ...heard } as Turn);
      } else {
        push({ role: who, text, tool_calls: kept, t_ms: clock.now(), ...gen, ...over } as Turn);
      }
      if (token) {
        termination = stopTermination(who, token);
        break;
      }
      if (defer) {
        stopDeferred = {
          turn: turns.length - 1,
          reason: 'the caller agreed to a pending write and said stop in the same message',
        };
        // Its calls never run (the stop ends the call once the agent has acted): answered now, so
        // that they have their tool messages before the agent's turn.
        for (const turn of unrunCallTurns(turns, 'user_stop', stopDeferred.reason)) push(turn);
      }
      for (const [i, call] of calls.entries()) {
        const problem = reply.problems[i];
        const outcome = problem
          ? { content: `Error: ${problem}`, error: true, writes: [] }
          : await env.call(call, who, turns.length);
        timeline?.toolCall(who);
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
        // A caller model stuck calling tools it cannot use never lets the agent speak: that is
        // the simulator's failure (invalid, resampled), not a max_steps 0 for the agent.
        if (outcome.error && who === 'user' && ++callerErrors >= maxErrors) {
          throw new InfrastructureError(`simulator error: the caller's tool calls failed ${callerErrors} times`);
        }
      }
      if (errors >= maxErrors) {
        termination = 'too_many_errors';
        break;
      }
      // The agent has acted on the deferred stop and speaks: the caller's stop now ends the call.
      if (stopDeferred && who === 'assistant' && calls.length === 0) {
        termination = 'user_stop';
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
    await agent.close?.().catch(() => undefined);
  }
  // Calls of the last reply that the end left unrun are answered (marked `not_run`), the reply
  // itself kept as sent: every call on record then has its tool message.
  for (const turn of unrunCallTurns(turns, termination, unrunWhy(termination, invalidReason, maxErrors))) push(turn);
  let duplex: Trajectory['duplex'];
  if (timeline) {
    try {
      duplex = await timeline.finish();
    } catch (e) {
      termination = 'infrastructure_error';
      invalidReason = `duplex timeline: ${thrownReason(e)}`;
    }
  }

  return {
    schema_version: 1,
    id: `${runtime.domain.name}/${task.id}/${opts.trial ?? 0}/${seed}`,
    domain: runtime.domain.name,
    task_id: task.id,
    ...(task.lineage ? { task_version: task.lineage.version } : {}),
    trial: opts.trial ?? 0,
    seed,
    participants: {
      agent: agent.id,
      user: user.id,
      ...(agent.card ? { agent_card: agent.card } : {}),
      ...(user.card ? { user_card: user.card } : {}),
    },
    ...(agent.card?.teacher_guidance != null ? { teacher_guidance: true } : {}),
    ...(stopDeferred ? { stop_deferred: stopDeferred } : {}),
    ...(duplex ? { duplex } : {}),
    termination,
    valid: invalidReason === null,
    invalid_reason: invalidReason,
    turns,
    started_at_ms: startedAt,
    ended_at_ms: clock.now(),
    reward_info: null,
  };
}
