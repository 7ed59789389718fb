/**
 * Turn level: fix the context of a stored trajectory at one agent decision point, sample K
 * candidates for just the next agent turn, and score each with a rubric. Deterministic items
 * come first and reuse the scorers (replay, write whitelist, confirm-before-write check, quality
 * detectors); a {@link Judge}, when configured, decides the rest.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { InfrastructureError, type Agent, type Judge } from '../participants/types.ts';
import { RESAMPLE_STRIDE } from '../rollout/batch.ts';
import { seededRng } from '../ports/rng.ts';
import { normalizeReply } from '../rollout/normalize.ts';
import { visibleReply } from '../participants/reply-text.ts';
import { DEFAULT_MAX_ERRORS, stopTermination } from '../rollout/episode.ts';
import {
  continueAndScore,
  type ContinuationPolicy,
  type ContinuationResult,
  type ContinuationTimeline,
} from './continuation.ts';
import type { TimelineState } from '../duplex/timeline.ts';
import { checkAssertion } from '../scoring/behaviour-checks.ts';
import { ambiguousConsentItems, judgedConsent } from '../scoring/consent.ts';
import { channelVerdicts, countedChannelRules } from '../scoring/channel-checks.ts';
import { judgeAll } from '../scoring/judging.ts';
import { qualityFindings } from '../scoring/quality.ts';
import { replayTrajectory } from '../scoring/replay.ts';
import { agentWrites, spokenText } from '../scoring/turns.ts';
import { whitelistViolations } from '../scoring/write-whitelist.ts';
import { toolSchema, toolsFor } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import {
  Generation,
  ranToolTurn,
  type TerminationReason,
  type ToolCall,
  type Trajectory,
  type Turn,
} from '../schema/trajectory.ts';
import { ModelRequestRecord } from '../schema/chat.ts';
import { groupId, type Group, type GroupSample } from './groups.ts';
import { failingReferenceActions, isTeacherGuided, referencePrefix } from './rollouts.ts';

/** Longest spoken agent turn the rubric accepts, in characters (after stop tokens are removed). */
export const MAX_SPOKEN_CHARS = 300;

/** One candidate for the next agent turn. */
export interface TurnCandidate {
  seed: number;
  /** Id of the agent that produced it. */
  agent: string;
  text: string;
  tool_calls: ToolCall[];
  /** What the model generated (token ids, logprobs), when a model produced the candidate. */
  generation?: Generation;
  /** The exact request the candidate was generated from (its `sampling.seed` is `seed`), when a model produced it. */
  request?: ModelRequestRecord;
  /** How the candidate ended the call with a stop token (its calls were dropped), when it did. */
  ended?: TerminationReason;
  /**
   * Per tool call (same index), why it is refused without running, as the episode loop refuses
   * it (`normalizeReply`: arguments that are not valid JSON, not an object, over the limits), or
   * null; absent when every call may run.
   */
  problems?: (string | null)[];
}

/** Status of one rubric item. */
export type RubricStatus = 'passed' | 'failed' | 'not_applicable' | 'not_judged';

/** Ids of the deterministic rubric items, in the order they are checked. */
export const RUBRIC_ITEMS = [
  'right_tool',
  'calls_succeed',
  'grounded_args',
  'no_unauthorized_write',
  'confirmation',
  'channel_reaction',
  'spoken_quality',
] as const;

/** One rubric item's verdict. */
export interface RubricItem {
  /** One of {@link RUBRIC_ITEMS}, or `judge:<id>` for judged items. */
  id: string;
  kind: 'deterministic' | 'judged';
  status: RubricStatus;
  reason: string;
  /** A failed veto item makes the score 0. */
  veto: boolean;
}

/**
 * The score of one candidate: its rubric, the continued episode (when a continuation policy is
 * set) and the turn reward combining them:
 *
 *   reward = 0                                 when a veto item failed;
 *   reward = ½ · s + ½ · γⁿ · R                with a continuation policy;
 *   reward = s                                 without one.
 *
 * s is the rubric score (share of passed among decided items, the judge's item included when a
 * judge is set), R the continued episode's reward (the task's reward basis, `evaluate`), n the
 * agent turns the continuation needed to end the call, γ = 0.99 (the process reward's discount).
 * The rubric term ranks how the turn was made; γⁿ · R ranks where it leads: a premature hang-up
 * ends the call with the task undone (R = 0), a pointless reply costs the call an extra exchange
 * (one more factor γ), the right action leads to the shortest successful ending. Weights ½/½ are
 * ours (equal weight for process and outcome; no published default exists for this mix).
 */
export interface TurnScore {
  items: RubricItem[];
  /** Rubric score s: 0 when a veto item failed; else the share of passed among passed + failed items. */
  score: number;
  /** The continued episode, or null without a continuation policy. */
  continuation: ContinuationResult | null;
  /** The turn reward (see above), in [0, 1]. */
  reward: number;
  /** 1 when every decided rubric item passed and (with a continuation) the continued episode succeeded. */
  outcome: 0 | 1;
  /**
   * True when the reward was computed without a judge it needed: the continued episode's reward
   * is partial (NL assertions without `--judge`).
   */
  partial: boolean;
  /** Context turns followed by the candidate's assistant turn and its replayed tool turns. */
  turns: Turn[];
}

/** Options of {@link scoreTurnCandidate}. */
export interface TurnRubricOptions {
  /** Decides {@link JUDGE_ITEMS} (left out without one). */
  judge?: Judge;
  maxSpokenChars?: number;
  /** Continue the episode after the candidate with this policy and add the outcome term. */
  continuation?: ContinuationPolicy;
  /** Issue 17: the continuation goes on on the source call's full-duplex timeline. */
  duplex?: ContinuationTimeline;
  /**
   * The episode loop's limit of failed agent tool calls (`EpisodeOptions.maxErrors`; tau2-bench's
   * `max_errors`, default 10): a candidate whose failed calls, with the context's, reach it would
   * end the episode `too_many_errors` at this turn, so its `calls_succeed` fails as a veto.
   */
  maxErrors?: number;
}

/** What the judge is asked about a candidate turn. */
export const JUDGE_ITEMS = [
  {
    id: 'judge:policy',
    text: 'The last agent turn is a sound next step: it follows the policy and moves the caller towards their goal.',
  },
] as const;

/** Indices of the assistant turns of a trajectory: the decision points of the turn level. */
export function decisionPoints(trajectory: Pick<Trajectory, 'turns'>): number[] {
  return trajectory.turns.flatMap((t, i) => (t.role === 'assistant' ? [i] : []));
}

/**
 * Ask a fresh agent for the next turn after `context`, once per seed. Each candidate sees the
 * same context, a generator seeded from its own seed and that seed as `view.seed` (a model agent
 * sends it as the sampling seed). Replies are normalized as the episode loop does; a stop token
 * ends the text and drops the calls. The model's generation and exact request are kept.
 */
export async function sampleTurnCandidates(opts: {
  runtime: DomainRuntime;
  task: Task;
  context: readonly Turn[];
  agent: () => Agent;
  seeds: readonly number[];
}): Promise<TurnCandidate[]> {
  const domain = opts.runtime.domain;
  const tools = toolsFor(domain, 'assistant').map(toolSchema);
  // As the episode loop: a call to a tool the agent does not have is refused by the environment
  // as unknown, not with an argument error.
  const toolNames = new Set(tools.map((t) => t.function.name));
  const out: TurnCandidate[] = [];
  for (const seed of opts.seeds) {
    const agent = opts.agent();
    const raw: unknown = await agent.respond({
      domain,
      task: opts.task,
      turns: opts.context,
      tools,
      rng: seededRng(seed).fork('agent'),
      seed,
    });
    const reply = normalizeReply(raw, opts.context.length, toolNames);
    const { text, token } = visibleReply(reply.text);
    const generation = Generation.safeParse((raw as { generation?: unknown } | null)?.generation);
    const request = ModelRequestRecord.safeParse((raw as { request?: unknown } | null)?.request);
    out.push({
      seed,
      agent: agent.id,
      text,
      tool_calls: token ? [] : reply.calls,
      ...(token ? { ended: stopTermination('assistant', token) } : {}),
      ...(!token && reply.problems.some((p) => p !== null) ? { problems: reply.problems } : {}),
      ...(generation.success ? { generation: generation.data } : {}),
      ...(request.success ? { request: request.data } : {}),
    });
  }
  return out;
}

/** Every scalar of an argument value (booleans excluded: they are not heard or looked up). */
function scalars(value: unknown, out: string[] = []): string[] {
  if (value === null || value === undefined || typeof value === 'boolean') return out;
  if (Array.isArray(value)) value.forEach((v) => scalars(v, out));
  else if (typeof value === 'object') Object.values(value).forEach((v) => scalars(v, out));
  else out.push(String(value));
  return out;
}

const squash = (text: string) => text.toLowerCase().replace(/[\s-]+/g, '');

const item = (id: string, status: RubricStatus, reason: string, veto = false): RubricItem => ({
  id,
  kind: 'deterministic',
  status,
  reason,
  veto,
});

/**
 * Score one candidate for the turn after `context`.
 *
 * Deterministic items:
 * - `right_tool`: the first call names the next agent action of the reference solution (the
 *   context's successful calls must match a reference prefix; otherwise not applicable). With
 *   the reference complete, a read passes and anything else fails. No call: not applicable.
 * - `calls_succeed`: every call of the candidate, run after the context, returns without error
 *   (a call the environment rejects — unknown id, wrong state — fails). No call: not applicable.
 *   A veto when the failures, with the context's failed agent calls, reach `maxErrors` (default
 *   10, as the episode loop): the episode would end there as `too_many_errors`, so a burst of
 *   failing calls cannot score on its other items.
 * - `grounded_args`: every argument scalar appears (case, spaces and dashes ignored) in what the
 *   caller said or an agent tool returned in the context.
 * - `no_unauthorized_write` (veto): the candidate's calls, replayed after the context, make no
 *   agent write outside the task's write whitelist (no whitelist: not applicable).
 * - `confirmation`: when the candidate writes and the task has a `confirm_before_write`
 *   assertion, that check passes on the context plus the candidate (not applicable when the
 *   context alone already fails it); with a judge, replies the dialogue-act cues leave ambiguous
 *   are judged as in the episode check.
 * - `channel_reaction`: the candidate's reaction to a dropout or barge-in just before it, by
 *   the domain's channel rules (see {@link channelReactionItem}; not applicable without them).
 * - `spoken_quality` (veto): the candidate's text has no quality finding (formatting,
 *   repetition within it or of earlier agent turns, garbled text) and is at most
 *   `maxSpokenChars` long.
 * Then {@link JUDGE_ITEMS}, asked of the judge in one call when a judge is set (left out without
 * one). With `continuation`, the episode is continued after the candidate (from the database the
 * candidate's calls left) and the turn reward combines both (see {@link TurnScore}).
 */
export async function scoreTurnCandidate(
  runtime: DomainRuntime,
  task: Task,
  context: readonly Turn[],
  candidate: TurnCandidate,
  opts: TurnRubricOptions = {},
): Promise<TurnScore> {
  const domain = runtime.domain;
  const at = context.length;
  // Fork timestamps continue from the fork point.
  const t_ms = context.reduce((m, t) => Math.max(m, t.t_ms), 0) + 1;
  // A call the episode loop would refuse (bad arguments) does not run: its result is the error.
  const refused = (i: number) => candidate.problems?.[i] ?? null;
  const toolTurn = (c: ToolCall, i: number): Turn => ({
    role: 'tool',
    requestor: 'assistant',
    tool_call_id: c.id,
    name: c.name,
    arguments: c.arguments,
    content: refused(i) ? `Error: ${refused(i)}` : '',
    error: refused(i) !== null,
    writes: [],
    t_ms,
  });
  const spoken: Turn = {
    role: 'assistant',
    text: candidate.text,
    tool_calls: candidate.tool_calls,
    t_ms,
    ...(candidate.generation ? { generation: candidate.generation } : {}),
    ...(candidate.request ? { request: candidate.request } : {}),
  };
  const runs = candidate.tool_calls.flatMap((c, i) => (refused(i) ? [] : [toolTurn(c, i)]));
  const replay = await replayTrajectory(runtime, task, [...context, spoken, ...runs]);
  const snapshot = opts.continuation ? await replay.env.snapshot() : null;
  await replay.env.close();
  const ran = replay.turns.slice(at + 1);
  const turns = [
    ...replay.turns.slice(0, at + 1),
    ...candidate.tool_calls.map((c, i) => (refused(i) ? toolTurn(c, i) : ran.shift()!)),
  ];
  const items: RubricItem[] = [];
  const calls = candidate.tool_calls;

  // right_tool
  const failing = await failingReferenceActions(runtime, task);
  const prefix = referencePrefix(task, context, failing);
  const actions = (task.evaluation_criteria?.actions ?? []).filter(
    (a, i) => a.requestor === 'assistant' && !failing.has(i),
  );
  const first = calls[0];
  if (!first) items.push(item('right_tool', 'not_applicable', 'no tool call'));
  else if (prefix === null)
    items.push(item('right_tool', 'not_applicable', 'the context already left the reference solution'));
  else {
    const expected = actions[prefix];
    if (expected) {
      items.push(
        first.name === expected.name
          ? item('right_tool', 'passed', `${first.name} is reference action ${prefix + 1}`)
          : item('right_tool', 'failed', `called ${first.name}; reference action ${prefix + 1} is ${expected.name}`),
      );
    } else {
      const kind = toolsFor(domain, 'assistant').find((t) => t.name === first.name)?.kind;
      items.push(
        kind === 'read'
          ? item('right_tool', 'passed', `reference complete; ${first.name} only reads`)
          : item('right_tool', 'failed', `reference complete; ${first.name} is not a read`),
      );
    }
  }

  // calls_succeed
  const results = turns
    .slice(at + 1)
    .filter((t): t is Extract<Turn, { role: 'tool' }> => ranToolTurn(t) && t.requestor === 'assistant');
  const failedCalls = results.filter((t) => t.error);
  if (calls.length === 0) items.push(item('calls_succeed', 'not_applicable', 'no tool call'));
  else if (failedCalls.length === 0) items.push(item('calls_succeed', 'passed', 'every call ran without error'));
  else {
    const maxErrors = opts.maxErrors ?? DEFAULT_MAX_ERRORS;
    const before = context.filter(
      (t) => t.role === 'tool' && t.requestor === 'assistant' && t.error && ranToolTurn(t),
    ).length;
    const ends = before + failedCalls.length >= maxErrors;
    const reason = failedCalls.map((t) => `${t.name}: ${t.content}`).join('; ');
    items.push(
      ends
        ? item(
            'calls_succeed',
            'failed',
            `${failedCalls.length} failed calls, ${before} before this turn: the episode ends at ${maxErrors} (too_many_errors); ${reason}`,
            true,
          )
        : item('calls_succeed', 'failed', reason),
    );
  }

  // grounded_args
  if (calls.length === 0) items.push(item('grounded_args', 'not_applicable', 'no tool call'));
  else {
    const heard = context.flatMap((t) =>
      t.role === 'user' ? [t.text] : t.role === 'tool' && t.requestor === 'assistant' ? [t.content] : [],
    );
    const corpus = squash(heard.join('\n'));
    const missing = calls.flatMap((c) =>
      scalars(c.arguments)
        .filter((v) => !corpus.includes(squash(v)))
        .map((v) => `${c.name}: ${JSON.stringify(v)}`),
    );
    items.push(
      missing.length
        ? item('grounded_args', 'failed', `not heard or looked up: ${missing.join(', ')}`)
        : item('grounded_args', 'passed', 'every argument was heard or looked up'),
    );
  }

  // no_unauthorized_write
  const whitelist = task.evaluation_criteria?.write_whitelist;
  if (whitelist == null)
    items.push(item('no_unauthorized_write', 'not_applicable', 'task has no write whitelist', true));
  else {
    const bad = whitelistViolations(
      replay.writes.filter((w) => w.turn > at),
      whitelist,
    );
    items.push(
      bad.length
        ? item('no_unauthorized_write', 'failed', `write not allowed: ${bad.join('; ')}`, true)
        : item('no_unauthorized_write', 'passed', 'no write outside the whitelist', true),
    );
  }

  // confirmation
  const writes = agentWrites(turns, domain).filter((w) => w.index > at);
  const confirm = (task.evaluation_criteria?.assertions ?? []).filter((a) => a.check?.kind === 'confirm_before_write');
  const relevant = confirm.filter((a) => !a.check?.tool || writes.some((w) => w.turn.name === a.check?.tool));
  if (writes.length === 0) items.push(item('confirmation', 'not_applicable', 'no write'));
  else if (relevant.length === 0)
    items.push(item('confirmation', 'not_applicable', 'the task asks for no confirmation of this write'));
  else {
    // Replies the dialogue-act cues leave ambiguous go to the judge, when there is one.
    const consent = opts.judge
      ? {
          judgedConsent: judgedConsent(
            await judgeAll(opts.judge, ambiguousConsentItems(turns, domain), { domain, task, turns }),
          ),
        }
      : {};
    const results = relevant.map((a) => {
      const checked = { ...a, check: a.check! };
      const before = checkAssertion(checked, turns.slice(0, at), domain, consent);
      return before.status === 'failed' ? null : checkAssertion(checked, turns, domain, consent);
    });
    if (results.some((r) => r === null))
      items.push(item('confirmation', 'not_applicable', 'the context already has an unconfirmed write'));
    else {
      const failed = results.find((r) => r!.status === 'failed');
      items.push(
        failed
          ? item('confirmation', 'failed', failed.reason)
          : item('confirmation', 'passed', 'the write was confirmed by the caller'),
      );
    }
  }

  // channel_reaction
  items.push(channelReactionItem(domain, turns, at, candidate));

  // spoken_quality
  const max = opts.maxSpokenChars ?? MAX_SPOKEN_CHARS;
  const findings = qualityFindings(turns.slice(0, at + 1)).filter((f) => f.turn === at);
  const length = [...spokenText(candidate.text)].length;
  if (findings.length)
    items.push(item('spoken_quality', 'failed', findings.map((f) => `${f.rule} (${f.detail})`).join('; '), true));
  else if (length > max)
    items.push(item('spoken_quality', 'failed', `${length} characters, more than ${max} for one spoken turn`, true));
  else items.push(item('spoken_quality', 'passed', length ? 'plain spoken text' : 'no text', true));

  // judged items
  if (opts.judge) {
    const verdicts = await judgeAll(opts.judge, JUDGE_ITEMS, { domain, task, turns });
    for (const j of JUDGE_ITEMS) {
      const v = verdicts.get(j.id)!;
      items.push({ id: j.id, kind: 'judged', status: v.met ? 'passed' : 'failed', reason: v.reason, veto: false });
    }
  }

  const decided = items.filter((i) => i.status === 'passed' || i.status === 'failed');
  const passedCount = decided.filter((i) => i.status === 'passed').length;
  const vetoed = items.some((i) => i.veto && i.status === 'failed');
  const score = vetoed ? 0 : decided.length === 0 ? 1 : passedCount / decided.length;
  const continuation =
    opts.continuation && snapshot
      ? await continueAndScore({
          runtime,
          task,
          turns,
          env: snapshot,
          seed: candidate.seed,
          policy: opts.continuation,
          ...(candidate.ended ? { ended: candidate.ended } : {}),
          ...(opts.duplex ? { duplex: opts.duplex } : {}),
        })
      : null;
  const rubricOutcome = !vetoed && passedCount === decided.length;
  return {
    items,
    score,
    continuation,
    reward: vetoed ? 0 : continuation ? 0.5 * score + 0.5 * continuation.discounted : score,
    outcome: rubricOutcome && (continuation?.success ?? true) ? 1 : 0,
    partial: continuation?.partial ?? false,
    turns,
  };
}

/**
 * The `channel_reaction` item: when the domain's channel reactions count (its `channelRules`,
 * our own domains) and the candidate is the agent's first reply to a caller turn cut off by a
 * dropout or to a barge-in, the same check as the episode's assertion (`channelVerdicts`) on
 * the context plus the candidate. Not applicable otherwise, and for a barge-in answered by a
 * turn without speech.
 */
function channelReactionItem(
  domain: DomainRuntime['domain'],
  turns: readonly Turn[],
  at: number,
  candidate: TurnCandidate,
): RubricItem {
  const rules = countedChannelRules(domain);
  if (!rules) return item('channel_reaction', 'not_applicable', 'the domain has no channel rules');
  let caller = -1;
  for (let i = at - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.role === 'assistant' && spokenText(t.text)) break;
    if (t.role === 'user') {
      caller = i;
      break;
    }
  }
  const event = caller >= 0 ? turns[caller] : undefined;
  if (event?.role !== 'user' || (!event.dropout && !event.barge_in))
    return item('channel_reaction', 'not_applicable', 'no dropout or barge-in to react to');
  if (!event.dropout && !spokenText(candidate.text))
    return item('channel_reaction', 'not_applicable', 'no spoken reply in this turn');
  const verdict = channelVerdicts(turns, rules, caller).find((v) => v.id.endsWith(`@${caller}`));
  if (!verdict || verdict.status === 'skipped' || verdict.status === 'not_judged')
    return item('channel_reaction', 'not_applicable', verdict?.reason ?? 'no deterministic check for this event');
  return item('channel_reaction', verdict.status, `${verdict.rule}: ${verdict.reason}`);
}

/** One scored candidate: the sample item of a turn-level group. */
export interface TurnSample {
  trajectory_id: string;
  /** Index of the decision point: the candidate replaces the turn at this index. */
  turn: number;
  candidate: TurnCandidate;
  score: TurnScore;
}

/** Options of {@link turnGroups}. */
export interface TurnGroupOptions {
  runtime: DomainRuntime;
  task: Task;
  trajectory: Trajectory;
  agent: () => Agent;
  k: number;
  seed: number;
  points?: readonly number[];
  judge?: Judge;
  maxSpokenChars?: number;
  /** The outcome term's continuation policy (see {@link TurnScore}); absent: rubric only. */
  continuation?: ContinuationPolicy;
  /** Extra attempts for a sample broken by infrastructure (endpoint down). Default 2. */
  resamples?: number;
  /** Called with the reason of every sample attempt broken by infrastructure. */
  onInvalid?: (reason: string) => void;
  /**
   * Issue 17: the trajectory's call ran on the full-duplex timeline: its channel and settings,
   * and the timeline's state before each decision point (`SourceEpisode.timeline_states`).
   * Each candidate's continuation goes on on the timeline from its point, and its sample
   * carries the call's interaction metrics (`ContinuationResult.interaction_metrics`).
   */
  duplex?: Omit<ContinuationTimeline, 'state'> & { states: ReadonlyMap<number, TimelineState> };
}

/** Result of {@link turnGroups}. */
export interface TurnGroups {
  /** Groups of exactly K samples, one per decision point. */
  groups: Group<TurnSample>[];
  /** Sample attempts broken by infrastructure and resampled (or given up on). */
  invalid_attempts: number;
  /** Decision points left without K valid samples after resampling (no group). */
  incomplete: string[];
}

/**
 * One valid scored candidate for slot `seed`, resampling on infrastructure failures (the
 * agent's endpoint, or the continuation's) with seeds `seed + a × RESAMPLE_STRIDE`; null when
 * every attempt broke.
 */
async function validSample(
  opts: TurnGroupOptions,
  context: readonly Turn[],
  seed: number,
  invalid: (reason: string) => void,
): Promise<{ candidate: TurnCandidate; score: TurnScore } | null> {
  for (let attempt = 0; attempt <= (opts.resamples ?? 2); attempt++) {
    const s = seed + attempt * RESAMPLE_STRIDE;
    try {
      const [candidate] = await sampleTurnCandidates({
        runtime: opts.runtime,
        task: opts.task,
        context,
        agent: opts.agent,
        seeds: [s],
      });
      const state = opts.duplex?.states.get(context.length);
      const score = await scoreTurnCandidate(opts.runtime, opts.task, context, candidate!, {
        ...(opts.judge ? { judge: opts.judge } : {}),
        ...(opts.maxSpokenChars ? { maxSpokenChars: opts.maxSpokenChars } : {}),
        ...(opts.continuation ? { continuation: opts.continuation } : {}),
        ...(opts.duplex && state
          ? { duplex: { channel: opts.duplex.channel, settings: opts.duplex.settings, state } }
          : {}),
      });
      if (score.continuation?.invalid) {
        invalid(`continuation: ${score.continuation.invalid_reason}`);
        continue;
      }
      return { candidate: candidate!, score };
    } catch (e) {
      if (!(e instanceof InfrastructureError)) throw e;
      invalid(e.message);
    }
  }
  return null;
}

/**
 * Turn level: for each decision point of `trajectory` (default: every assistant turn), K
 * candidates with seeds `seed + i`, each scored; one group per decision point, prefix
 * `<trajectory id>@<turn>`. The rewards of a sample are its turn reward ({@link TurnScore}:
 * final, shaped, single step), its outcome and partial flag. A sample broken by infrastructure
 * is resampled (seed + a × {@link RESAMPLE_STRIDE}); a decision point that cannot get K valid
 * samples gives no group (listed in `incomplete`), so every group has exactly K samples.
 *
 * @throws Error for a teacher-guided trajectory.
 */
export async function turnGroups(opts: TurnGroupOptions): Promise<TurnGroups> {
  if (isTeacherGuided(opts.trajectory)) {
    throw new Error(`GRPO refuses teacher-guided trajectory ${opts.trajectory.id}`);
  }
  const groups: Group<TurnSample>[] = [];
  const incomplete: string[] = [];
  let invalidAttempts = 0;
  const invalid = (reason: string) => {
    invalidAttempts++;
    opts.onInvalid?.(reason);
  };
  for (const turn of opts.points ?? decisionPoints(opts.trajectory)) {
    const context = opts.trajectory.turns.slice(0, turn);
    const prefix = `${opts.trajectory.id}@${turn}`;
    const samples: GroupSample<TurnSample>[] = [];
    for (let i = 0; i < opts.k; i++) {
      const got = await validSample(opts, context, opts.seed + i, invalid);
      if (!got) break;
      const { candidate, score } = got;
      samples.push({
        seed: candidate.seed,
        rewards: {
          final: score.reward,
          outcome: score.outcome,
          step_rewards: [score.reward],
          returns: [score.reward],
          shaped: score.reward,
          partial: score.partial,
        },
        item: { trajectory_id: opts.trajectory.id, turn, candidate, score },
      });
    }
    if (samples.length < opts.k) {
      incomplete.push(prefix);
      continue;
    }
    groups.push({ id: groupId('turn', prefix), granularity: 'turn', prefix, task_id: opts.task.id, samples });
  }
  return { groups, invalid_attempts: invalidAttempts, incomplete };
}
