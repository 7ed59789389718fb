/**
 * Conversation- and milestone-level samples: K full episodes per task, and K continuations
 * forked from each milestone of an episode. Built on the episode loop and the batch runner
 * ({@link runEpisode}, {@link runBatch}); nothing here runs turns itself.
 */
import type { EpisodeChannel } from '../rollout/channel-step.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import { hash32 } from '../ports/rng.ts';
import type { Agent, Judge, UserSimulator } from '../participants/types.ts';
import { RESAMPLE_STRIDE, runBatch, scoreEpisode } from '../rollout/batch.ts';
import { runEpisode, type EpisodeCheckpoint } from '../rollout/episode.ts';
import { replayGold } from '../scoring/replay.ts';
import { matchesAction } from '../scoring/action-match.ts';
import { successfulAgentCalls } from '../scoring/turns.ts';
import type { Task } from '../schema/task.ts';
import type { ToolCall, Trajectory, Turn } from '../schema/trajectory.ts';
import { episodeRewards, groupId, type Group } from './groups.ts';
import { TeacherGuidanceError } from '../errors.ts';
import type { TimelineState } from '../duplex/timeline.ts';
import { storeUnder } from '../channel/audio-store.ts';

export { TeacherGuidanceError };

/**
 * True when a trajectory was produced with teacher-only guidance: marked `teacher_guidance`, or
 * its agent's card records a guidance block.
 */
export function isTeacherGuided(t: Trajectory): boolean {
  return t.teacher_guidance === true || (t.participants.agent_card?.teacher_guidance ?? null) !== null;
}

/** Refuse trajectories produced with teacher-only guidance (they are SFT material only). */
export function refuseTeacherGuidance(trajectories: readonly Trajectory[], what = 'GRPO'): void {
  const guided = trajectories.filter(isTeacherGuided);
  if (guided.length) {
    throw new TeacherGuidanceError(
      `${what} refuses teacher-guided trajectories (${guided.length}: ${guided
        .slice(0, 3)
        .map((t) => t.id)
        .join(', ')}${guided.length > 3 ? ', …' : ''})`,
    );
  }
}

/** Participants and settings shared by the samplers. */
export interface SamplerOptions {
  runtime: DomainRuntime;
  /** A fresh agent per sample. */
  agent: () => Agent;
  /** A fresh caller per sample. */
  user: () => UserSimulator;
  judge?: Judge;
  /**
   * Clock of one rollout. `fromMs` is given for a continuation forked from a saved point: the
   * time just after the point's last turn, where the fork's clock must start (fork timestamps
   * continue from the fork point).
   */
  clock: (seed: number, fromMs?: number) => Clock;
  maxSteps?: number;
  /** Extra attempts for a sample broken by infrastructure (resampled, never scored). Default 2. */
  resamples?: number;
  /**
   * Issue 17: phone channel and full-duplex timeline of every sample (see `runBatch`): a
   * milestone saves the timeline's state with the database, and its forks go on on the
   * timeline from there ({@link forkMilestone}).
   */
  channel?: EpisodeChannel;
  duplex?: DuplexSettings;
}

/**
 * The sampling seeds of K samples from base seed `seed`: seed, seed + 1, …, seed + K − 1
 * (the batch runner's trial seeds). Distinct by construction.
 */
export function sampleSeeds(seed: number, k: number): number[] {
  return Array.from({ length: k }, (_, i) => seed + i);
}

/**
 * Conversation level: K full episodes of each task with seeds `seed + i` ({@link sampleSeeds}),
 * run by {@link runBatch} (invalid rollouts resampled, never scored), one group per task. Every
 * group has exactly K samples: a task left with fewer valid samples after resampling gives no
 * group and is listed in `incomplete`.
 *
 * @throws TeacherGuidanceError when an episode is marked `teacher_guidance`.
 */
export async function conversationGroups(
  opts: SamplerOptions & { tasks: readonly Task[]; k: number; seed: number; concurrency?: number },
): Promise<{
  groups: Group<Trajectory>[];
  trajectories: Trajectory[];
  incomplete: string[];
  invalid_attempts: number;
}> {
  const { trajectories } = await runBatch({
    runtime: opts.runtime,
    tasks: opts.tasks,
    agent: opts.agent,
    user: opts.user,
    ...(opts.judge ? { judge: opts.judge } : {}),
    trials: opts.k,
    seed: opts.seed,
    concurrency: opts.concurrency ?? 1,
    clock: (seed) => opts.clock(seed),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    ...(opts.resamples !== undefined ? { resamples: opts.resamples } : {}),
    ...(opts.channel ? { channel: opts.channel } : {}),
    ...(opts.duplex ? { duplex: opts.duplex } : {}),
  });
  refuseTeacherGuidance(trajectories);
  const groups: Group<Trajectory>[] = [];
  const incomplete: string[] = [];
  for (const task of opts.tasks) {
    const mine = trajectories
      .filter((t) => t.task_id === task.id && t.valid && t.reward_info)
      .sort((a, b) => a.trial - b.trial);
    if (mine.length < opts.k) {
      incomplete.push(task.id);
      continue;
    }
    groups.push({
      id: groupId('conversation', task.id),
      granularity: 'conversation',
      prefix: task.id,
      task_id: task.id,
      samples: mine.map((t) => ({ rewards: episodeRewards(t.reward_info!), seed: t.seed, item: t })),
    });
  }
  return {
    groups,
    trajectories,
    incomplete,
    invalid_attempts: trajectories.filter((t) => !t.valid).length,
  };
}

/**
 * A participant whose state is not derivable from the turns can offer these; the milestone
 * saves and restores it. The scripted participants need neither.
 */
export interface StatefulParticipant {
  saveState(): unknown;
  loadState(state: unknown): void;
}

function isStateful(x: unknown): x is StatefulParticipant {
  return (
    typeof (x as StatefulParticipant).saveState === 'function' &&
    typeof (x as StatefulParticipant).loadState === 'function'
  );
}

/** A saved point of an episode where the agent's successful calls match a reference prefix. */
export interface Milestone {
  /** `<trajectory id>#m<level>`. */
  id: string;
  task_id: string;
  /** Seed of the episode it was saved in. */
  seed: number;
  /** Reference actions matched so far (≥ 1). */
  level: number;
  /** The matched agent calls, in order. */
  matched: ToolCall[];
  /** Conversation, database, generators, step and error counters. */
  checkpoint: EpisodeCheckpoint;
  /** Saved caller state, for a {@link StatefulParticipant} caller; otherwise absent. */
  user_state?: unknown;
}

/**
 * How many of the task's agent reference actions the successful agent calls in `turns` match,
 * as a prefix: the i-th successful call must match the i-th action (`requestor: assistant`,
 * by {@link matchesAction}: name and compared arguments). Failed calls are ignored, and so are
 * reference actions that fail on purpose (`failing`: indices into the task's `actions`, see
 * {@link failingReferenceActions}; tau2 retail has deliberate wrong lookups), which no
 * successful call can match. `null` when some successful call breaks the prefix (wrong order,
 * wrong arguments, an extra call).
 */
export function referencePrefix(
  task: Task,
  turns: readonly Turn[],
  failing: ReadonlySet<number> = NO_FAILURES,
): number | null {
  const actions = (task.evaluation_criteria?.actions ?? []).filter(
    (a, i) => a.requestor === 'assistant' && !failing.has(i),
  );
  const calls = successfulAgentCalls(turns);
  if (calls.length > actions.length) return null;
  for (const [i, c] of calls.entries()) {
    if (!matchesAction(actions[i]!, c.turn.name, c.turn.arguments)) return null;
  }
  return calls.length;
}

const NO_FAILURES: ReadonlySet<number> = new Set();

/**
 * Indices (into the task's `actions`) of the reference actions that fail when the reference
 * solution is replayed on a fresh database ({@link replayGold}): lookups that fail on purpose.
 */
export async function failingReferenceActions(runtime: DomainRuntime, task: Task): Promise<Set<number>> {
  const gold = await replayGold(runtime, task, { writes: false });
  return new Set(gold.errors.map((e) => e.index));
}

/** Options of one episode run through the samplers. */
interface EpisodeRun extends SamplerOptions {
  task: Task;
  seed: number;
  trial?: number;
  /**
   * Issue 17, duplex only: also keep the timeline's state (without audio) before every agent
   * turn, by trajectory index (the turn-level decision points; see `turnGroups`).
   */
  decisionStates?: boolean;
}

/** The channel and duplex settings of one episode of the samplers, when set. */
function callOptions(opts: SamplerOptions, channel = opts.channel) {
  return { ...(channel ? { channel } : {}), ...(opts.duplex ? { duplex: opts.duplex } : {}) };
}

function scored(opts: SamplerOptions & { task: Task }, t: Trajectory): Promise<Trajectory> {
  return scoreEpisode(opts, opts.task, t);
}

/**
 * Run and score one episode, saving a milestone each time the successful agent calls so far
 * extend a prefix of the reference solution ({@link referencePrefix}). A milestone is saved
 * before the next participant turn after the matching call, i.e. right where the agent makes its
 * next decision. The episode ends as usual; milestones are returned with the trajectory.
 */
export async function runWithMilestones(opts: EpisodeRun): Promise<SourceEpisode> {
  const agent = opts.agent();
  const user = opts.user();
  const milestones: Milestone[] = [];
  const states = new Map<number, TimelineState>();
  const failing = await failingReferenceActions(opts.runtime, opts.task);
  let level = 0;
  const id = (n: number) => `${opts.runtime.domain.name}/${opts.task.id}/${opts.trial ?? 0}/${opts.seed}#m${n}`;
  const trajectory = await runEpisode({
    runtime: opts.runtime,
    task: opts.task,
    agent,
    user,
    seed: opts.seed,
    trial: opts.trial ?? 0,
    clock: opts.clock(opts.seed),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    ...callOptions(opts),
    onStep: async (point) => {
      if (opts.decisionStates && point.next === 'assistant') {
        const state = point.timeline();
        if (state) states.set(point.turns.length, state);
      }
      const m = referencePrefix(opts.task, point.turns, failing);
      if (m === null || m <= level) return;
      level = m;
      const checkpoint = await point.checkpoint();
      milestones.push({
        id: id(m),
        task_id: opts.task.id,
        seed: opts.seed,
        level: m,
        matched: successfulAgentCalls(checkpoint.turns).map((c) => ({
          id: c.turn.tool_call_id,
          name: c.turn.name,
          arguments: c.turn.arguments,
        })),
        checkpoint,
        ...(isStateful(user) ? { user_state: user.saveState() } : {}),
      });
    },
  });
  return {
    trajectory: await scored(opts, trajectory),
    milestones,
    ...(opts.decisionStates && opts.duplex ? { timeline_states: states } : {}),
  };
}

/** A source episode of milestone and turn groups, with what was saved along the way. */
export interface SourceEpisode {
  trajectory: Trajectory;
  milestones: Milestone[];
  /**
   * Issue 17, with `decisionStates` on a duplex episode: the timeline's state (no audio) before
   * each agent turn, by that turn's trajectory index.
   */
  timeline_states?: ReadonlyMap<number, TimelineState>;
}

/**
 * The source episode of a task for milestone and turn groups ({@link runWithMilestones} with
 * seed `seed`), resampled as any sample is when infrastructure breaks it: seed
 * `seed + a × RESAMPLE_STRIDE`, `resamples` times (default 2). `onInvalid` sees every broken
 * attempt. Null when every attempt broke (the task then gives no group: `incomplete`).
 */
export async function sourceEpisode(
  opts: EpisodeRun & { onInvalid?: (t: Trajectory) => void },
): Promise<SourceEpisode | null> {
  for (let attempt = 0; attempt <= (opts.resamples ?? 2); attempt++) {
    const got = await runWithMilestones({ ...opts, seed: opts.seed + attempt * RESAMPLE_STRIDE });
    refuseTeacherGuidance([got.trajectory]);
    if (got.trajectory.valid) return got;
    opts.onInvalid?.(got.trajectory);
  }
  return null;
}

/**
 * Fork one continuation per seed from `milestone` and score each. The database, the turns, the
 * counters and the caller's generator are restored exactly; the agent's generator is seeded from
 * the continuation's seed (so K continuations differ where the agent samples), unless `exact`,
 * which restores the agent's generator too (the continuation then replays the original). The
 * fork's clock starts just after the milestone's last turn (`clock(seed, fromMs)`). A
 * continuation broken by infrastructure is resampled with seed `seed + a × RESAMPLE_STRIDE`
 * (`resamples` times, default 2); the result has one trajectory per seed, invalid only when
 * every attempt broke. `onInvalid` sees every broken attempt.
 *
 * Duplex (issue 17): a milestone of a duplex episode holds the timeline's state, and each fork
 * goes on on the timeline from it (its call's spans, audio and interaction metrics cover the
 * whole call, the shared prefix included). With a channel store, a fork's files go under
 * `m<level>/` ({@link storeUnder}): forks of different milestones share (trial, seed) pairs.
 * The channel's and the timeline's random choices come from (seed, task, turn) alone, so they
 * need no saved generator state: with `exact` and the source's seed a fork replays the source.
 */
export async function forkMilestone(
  opts: SamplerOptions & {
    task: Task;
    milestone: Milestone;
    seeds: readonly number[];
    exact?: boolean;
    onInvalid?: (t: Trajectory) => void;
  },
): Promise<Trajectory[]> {
  const { milestone } = opts;
  const fromMs = milestone.checkpoint.turns.reduce((m, t) => Math.max(m, t.t_ms), 0) + 1;
  const channel = opts.channel?.store
    ? { ...opts.channel, store: storeUnder(opts.channel.store, `m${milestone.level}`) }
    : opts.channel;
  const out: Trajectory[] = [];
  for (const [i, base] of opts.seeds.entries()) {
    let t: Trajectory | undefined;
    for (let attempt = 0; attempt <= (opts.resamples ?? 2); attempt++) {
      const seed = base + attempt * RESAMPLE_STRIDE;
      const agent = opts.agent();
      const user = opts.user();
      if (milestone.user_state !== undefined && isStateful(user)) user.loadState(structuredClone(milestone.user_state));
      const agentState = opts.exact
        ? milestone.checkpoint.rng.assistant
        : forkState(milestone.checkpoint.rng.assistant, seed);
      t = await scored(
        opts,
        await runEpisode({
          runtime: opts.runtime,
          task: opts.task,
          agent,
          user,
          seed,
          trial: i,
          clock: opts.clock(seed, fromMs),
          ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
          ...callOptions(opts, channel),
          resume: { ...milestone.checkpoint, rng: { assistant: agentState, user: milestone.checkpoint.rng.user } },
        }),
      );
      if (t.valid) break;
      opts.onInvalid?.(t);
    }
    out.push(t!);
  }
  return out;
}

/** Agent generator state of a continuation: the saved state mixed with the continuation's seed. */
function forkState(saved: number, seed: number): number {
  return hash32(`${saved}:continuation:${seed}`);
}

/** What {@link milestoneGroups} keeps of a milestone once its forks are done (no snapshot). */
export interface MilestoneSummary {
  id: string;
  task_id: string;
  seed: number;
  level: number;
  matched: ToolCall[];
  /** Turns of the checkpoint: the shared prefix of the milestone's group. */
  turns: number;
}

/**
 * Milestone level: for each task, one source episode (seed `seed`, resampled when infrastructure
 * breaks it: {@link sourceEpisode}; a task without one is listed in `incomplete`), then K continuations from
 * each of its milestones with seeds `seed + 1 …` ({@link sampleSeeds}, offset by 1 so no
 * continuation reuses the source seed). One group per milestone, of exactly K samples: broken
 * continuations are resampled ({@link forkMilestone}); a milestone left without K valid ones
 * gives no group (listed in `incomplete`).
 *
 * Memory: the database snapshots of one task's milestones live only while that task's forks
 * run; what is returned holds no snapshot ({@link MilestoneSummary}), so a whole split runs in
 * the memory of its largest task (tau2-airline's 50 tasks: see `npm run bench`).
 *
 * @throws TeacherGuidanceError when a produced trajectory is marked `teacher_guidance`.
 */
export async function milestoneGroups(
  opts: SamplerOptions & {
    tasks: readonly Task[];
    k: number;
    seed: number;
    /** Called with each task's groups as soon as they are complete (stream rows out). */
    onGroups?: (groups: Group<Trajectory>[], milestones: MilestoneSummary[]) => void | Promise<void>;
    /** Called with every attempt broken by infrastructure (source episodes and continuations). */
    onInvalid?: (t: Trajectory) => void;
  },
): Promise<{
  groups: Group<Trajectory>[];
  sources: Trajectory[];
  milestones: MilestoneSummary[];
  trajectories: Trajectory[];
  incomplete: string[];
  invalid_attempts: number;
}> {
  const groups: Group<Trajectory>[] = [];
  const sources: Trajectory[] = [];
  const all: MilestoneSummary[] = [];
  const trajectories: Trajectory[] = [];
  const incomplete: string[] = [];
  let invalidAttempts = 0;
  const invalid = (t: Trajectory) => {
    invalidAttempts++;
    opts.onInvalid?.(t);
  };
  for (const task of opts.tasks) {
    const source = await sourceEpisode({ ...opts, task, seed: opts.seed, onInvalid: invalid });
    if (!source) {
      incomplete.push(task.id);
      continue;
    }
    const { trajectory, milestones } = source;
    sources.push(trajectory);
    const mine: Group<Trajectory>[] = [];
    const summaries: MilestoneSummary[] = [];
    while (milestones.length) {
      // Take each milestone out of the list before forking: its snapshot is freed once forked.
      const milestone = milestones.shift()!;
      const { checkpoint: _c, user_state: _u, ...meta } = milestone;
      summaries.push({ ...meta, turns: milestone.checkpoint.turns.length });
      const forks = await forkMilestone({
        ...opts,
        task,
        milestone,
        seeds: sampleSeeds(opts.seed + 1, opts.k),
        onInvalid: invalid,
      });
      refuseTeacherGuidance(forks);
      trajectories.push(...forks);
      const valid = forks.filter((t) => t.valid && t.reward_info);
      if (valid.length < opts.k) {
        incomplete.push(milestone.id);
        continue;
      }
      mine.push({
        id: groupId('milestone', milestone.id),
        granularity: 'milestone',
        prefix: milestone.id,
        task_id: task.id,
        samples: valid.map((t) => ({ rewards: episodeRewards(t.reward_info!), seed: t.seed, item: t })),
      });
    }
    all.push(...summaries);
    groups.push(...mine);
    await opts.onGroups?.(mine, summaries);
  }
  return { groups, sources, milestones: all, trajectories, incomplete, invalid_attempts: invalidAttempts };
}
