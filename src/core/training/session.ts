/**
 * An episode driven from outside, one agent turn at a time: the environment-server side of
 * `switchboard serve`. The ordinary episode loop runs unchanged; its agent is a bridge whose
 * `respond` waits for the next {@link EpisodeSession.step} call, so tool execution, the caller,
 * termination and scoring are exactly those of `runEpisode` and `evaluate`.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Clock } from '../ports/clock.ts';
import type { Task } from '../schema/task.ts';
import {
  ranToolTurn,
  type RewardInfo,
  type TerminationReason,
  type Trajectory,
  type Turn,
} from '../schema/trajectory.ts';
import type { Agent, EpisodeView, Judge, ParticipantReply, UserSimulator } from '../participants/types.ts';
import { runEpisode } from '../rollout/episode.ts';
import type { EpisodeChannel } from '../rollout/channel-step.ts';
import type { DuplexSettings } from '../duplex/turn-taking.ts';
import { evaluate } from '../scoring/evaluate.ts';
import { PROCESS_DEFAULTS, type ProcessRewardOptions } from '../scoring/process-reward.ts';
import { SwitchboardError } from '../errors.ts';

/** What the trainer sees after `reset` or `step`. */
export interface Observation {
  /** Turns appended since the previous observation (caller turns, tool results). */
  turns: Turn[];
  /** True when the episode has ended. */
  done: boolean;
  /**
   * Reward of the step just taken: process reward of the agent's tool calls in it (+0.1 per
   * success, −0.1 per failure by default), plus the final reward when the episode ended.
   */
  reward: number;
  /** Why the episode ended, when done. */
  termination: TerminationReason | null;
  /** The scored outcome (components, assertions), when done and valid. */
  reward_info: RewardInfo | null;
  /**
   * True when the final reward was computed without a judge it needed (NL assertions and the
   * server started without `--judge`): it covers the judged components only. Always present.
   */
  partial: boolean;
  /** False when infrastructure broke the episode (then it is not scored). */
  valid: boolean;
  invalid_reason: string | null;
  /**
   * Issue 17, only when the session runs on the full-duplex timeline: the call's interaction
   * metrics (tau2-bench's panel, `DuplexRecord.metrics`) on the last observation, else null. A
   * separate field: `reward` and `reward_info` are the task reward as without the timeline.
   */
  interaction_metrics?: Record<string, unknown> | null;
}

/** Settings of a session. */
export interface SessionOptions {
  runtime: DomainRuntime;
  task: Task;
  user: UserSimulator;
  seed: number;
  clock: Clock;
  judge?: Judge;
  maxSteps?: number;
  process?: ProcessRewardOptions;
  /**
   * Say the domain's greeting for the agent on inbound calls, so that the first observation is
   * the caller's first turn. Default true.
   */
  autoGreet?: boolean;
  /** The phone channel (caller audio, dropout, barge-in), as in `runEpisode`; absent: text only. */
  channel?: EpisodeChannel;
  /** Issue 17: run the episode on the full-duplex timeline (needs `channel`), as in `runEpisode`. */
  duplex?: DuplexSettings;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (r: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Raised by {@link EpisodeSession.step} when the session cannot take a step (not started, already
 * ended, or a step still running). Caller: a protocol mistake of the driver; report it to the
 * client (the servers answer 409/an error frame) and do not retry the same call.
 */
export class SessionStateError extends SwitchboardError {
  override name = 'SessionStateError';
}

/** One externally driven episode. Create it, call {@link start}, then {@link step} until done. */
export class EpisodeSession {
  private turns: readonly Turn[] = [];
  private seen = 0;
  private waiting: Deferred<ParticipantReply> | null = null;
  private turnReady: Deferred<void> = deferred();
  private trajectory: Trajectory | null = null;
  private finished: Promise<void> | null = null;
  private closed = false;
  private rewardInfo: RewardInfo | null = null;
  private busy = false;

  constructor(private readonly opts: SessionOptions) {}

  /** The task being played. */
  get task(): Task {
    return this.opts.task;
  }

  /** True once the episode has ended. */
  get done(): boolean {
    return this.trajectory !== null;
  }

  /** Start the episode and run it to the agent's first turn that the trainer must take. */
  async start(): Promise<Observation> {
    if (this.finished) throw new SessionStateError('session already started');
    const autoGreet = this.opts.autoGreet ?? true;
    const bridge: Agent = {
      id: 'external',
      respond: (view: EpisodeView) => {
        this.turns = view.turns;
        const first = !view.turns.some((t) => t.role === 'assistant');
        if (first && autoGreet && view.task.role !== 'outbound') return Promise.resolve({ text: view.domain.greeting });
        if (this.closed) return Promise.resolve({ text: '###STOP###' });
        this.waiting = deferred<ParticipantReply>();
        this.turnReady.resolve();
        return this.waiting.promise;
      },
    };
    this.finished = runEpisode({
      runtime: this.opts.runtime,
      task: this.opts.task,
      agent: bridge,
      user: this.opts.user,
      seed: this.opts.seed,
      clock: this.opts.clock,
      ...(this.opts.maxSteps ? { maxSteps: this.opts.maxSteps } : {}),
      ...(this.opts.channel ? { channel: this.opts.channel } : {}),
      ...(this.opts.duplex ? { duplex: this.opts.duplex } : {}),
      onTurn: () => undefined,
    }).then(async (t) => {
      this.trajectory = t;
      this.turns = t.turns;
      if (t.valid) {
        this.rewardInfo = await evaluate(this.opts.runtime, this.opts.task, t.turns, {
          termination: t.termination,
          ...(this.opts.judge ? { judge: this.opts.judge } : {}),
          ...(this.opts.process ? { process: this.opts.process } : {}),
        });
        t.reward_info = this.rewardInfo;
      }
      this.turnReady.resolve();
    });
    return this.next(0);
  }

  /**
   * Take the agent's turn: text and/or tool calls (malformed calls become `Error: …` tool
   * messages, as in any episode). Returns what happened until the agent's next turn.
   * @throws SessionStateError before {@link start}, after the end, or while a step is running.
   */
  async step(reply: ParticipantReply): Promise<Observation> {
    if (!this.finished) throw new SessionStateError('call reset before step');
    if (this.done) throw new SessionStateError('episode is over');
    if (this.busy || !this.waiting) throw new SessionStateError('a step is already running');
    this.busy = true;
    try {
      const from = this.turns.length;
      const w = this.waiting;
      this.waiting = null;
      this.turnReady = deferred();
      w.resolve(reply);
      return await this.next(from);
    } finally {
      this.busy = false;
    }
  }

  private async next(stepStart: number): Promise<Observation> {
    await this.turnReady.promise;
    const turns = this.trajectory ? this.trajectory.turns : this.turns;
    const fresh = turns.slice(this.seen);
    this.seen = turns.length;
    const p = { ...PROCESS_DEFAULTS, ...this.opts.process };
    let reward = 0;
    for (const t of turns.slice(stepStart)) {
      if (ranToolTurn(t) && t.requestor === 'assistant') reward += t.error ? p.failure : p.success;
    }
    const t = this.trajectory;
    if (t?.reward_info) reward += t.reward_info.reward;
    return {
      turns: structuredClone(fresh),
      done: t !== null,
      reward,
      termination: t?.termination ?? null,
      reward_info: t?.reward_info ?? null,
      partial: t?.reward_info?.partial ?? false,
      valid: t?.valid ?? true,
      invalid_reason: t?.invalid_reason ?? null,
      ...(this.opts.duplex ? { interaction_metrics: t?.duplex?.metrics ?? null } : {}),
    };
  }

  /** The whole trajectory so far (or the final one). */
  snapshot(): { turns: Turn[]; done: boolean; trajectory: Trajectory | null } {
    return { turns: structuredClone([...this.turns]), done: this.done, trajectory: this.trajectory };
  }

  /** End the episode early (the agent hangs up) and wait for the loop to finish. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.resolve({ text: '###STOP###' });
    }
    await this.finished?.catch(() => undefined);
  }
}
