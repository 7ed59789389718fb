/**
 * A recorded episode in the one shape the replayer reads, whatever file it came from
 * (tau2-bench results, or our own trajectories): the conversation as our {@link Turn}s, its tool
 * calls with the outputs that were recorded, how it ended and the reward it was given.
 */
import type { Domain } from '../schema/domain.ts';
import { FileFieldError } from '../errors.ts';
import type { Requestor } from '../schema/task.ts';
import { ranToolTurn, type TerminationReason, type Trajectory, type Turn } from '../schema/trajectory.ts';

/**
 * A malformed or unusable recording (a {@link FileFieldError}: fix the file; CLI exit 2): names the file and the first bad field, e.g.
 * `results.json: simulations[2].messages[5].tool_calls[0].name: Invalid input: expected string`.
 */
export class ReplayInputError extends FileFieldError {
  override name = 'ReplayInputError';
}

/** One tool call of a recording and what it returned then. */
export interface RecordedCall {
  /** Index of the tool turn of this call in {@link RecordedEpisode.turns}. */
  turn: number;
  /** Who made it: `user` calls run as user tools (tau2 `requestor`). */
  requestor: Requestor;
  /** Tool-call id as recorded (may be empty in tau2 files). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The recorded output text; `null` when the file holds none (tau2 `ToolMessage.content` unset). */
  output: string | null;
  /** Whether the recorded call failed (tau2 `ToolMessage.error`). */
  error: boolean;
}

/** A recorded episode, ready to replay. */
export interface RecordedEpisode {
  /** tau2 `SimulationRun.id`, or our `Trajectory.id`. */
  simulation_id: string;
  task_id: string;
  /** The version of the task it was scored with (ours: `Trajectory.task_version`, default 1); absent for tau2 files. */
  task_version?: number;
  /** Trial number when the file has one. */
  trial: number | null;
  /** The file the episode was read from (as named by the caller). */
  file: string;
  /**
   * The domain the recording says the episode ran in, and the file and field that say so (ours:
   * `Trajectory.domain`; tau2: `info.environment_info.domain_name`, e.g. `airline`); `null` when
   * the recording does not say.
   */
  domain: { name: string; file: string; field: string } | null;
  /** Where the episode is in its file (`simulations[3]`, `[2]`, `line 7`, or `` for a whole-file episode), for messages. */
  where: string;
  /** The conversation. Tool turns hold the recorded outputs (`""` where none was recorded). */
  turns: Turn[];
  /** Tool calls in execution order, each pointing at its tool turn. */
  calls: RecordedCall[];
  /** Calls that no tool message answers (the episode ended first); never replayed. */
  unanswered: { name: string; arguments: Record<string, unknown>; requestor: Requestor }[];
  /** How it ended, in our terms; `null` when unknown (then not used in scoring). */
  termination: TerminationReason | null;
  /** How it ended as the file says (tau2's `termination_reason` may be outside our set). */
  recorded_termination: string | null;
  /** The recorded reward (tau2 and ours: `reward_info.reward`); `null` when none was recorded. */
  reward: number | null;
  /** Recorded per-component scores (tau2 `reward_info.reward_breakdown`; ours: component scores). */
  reward_components: Record<string, number | null> | null;
}

/**
 * One of our trajectories as a {@link RecordedEpisode}. Every tool turn is a call (but answers to
 * calls that never ran, `not_run`); its recorded
 * output is the turn's `content` and `error`.
 *
 * @param file the file it was read from; `where` its position there (`[2]`, `line 3`, ``).
 */
export function trajectoryEpisode(t: Trajectory, file: string, where: string): RecordedEpisode {
  const calls: RecordedCall[] = [];
  t.turns.forEach((turn, i) => {
    if (!ranToolTurn(turn)) return;
    calls.push({
      turn: i,
      requestor: turn.requestor,
      id: turn.tool_call_id,
      name: turn.name,
      arguments: turn.arguments,
      output: turn.content,
      error: turn.error,
    });
  });
  const components = t.reward_info
    ? Object.fromEntries(t.reward_info.basis.map((c) => [c, t.reward_info?.components[c]?.score ?? null]))
    : null;
  return {
    simulation_id: t.id,
    task_id: t.task_id,
    task_version: t.task_version ?? 1,
    file,
    domain: { name: t.domain, file, field: fieldAt(where, 'domain') },
    trial: t.trial,
    where,
    turns: t.turns,
    calls,
    unanswered: [],
    termination: t.termination,
    recorded_termination: t.termination,
    reward: t.valid ? (t.reward_info?.reward ?? null) : null,
    reward_components: t.valid ? components : null,
  };
}

/**
 * A field path inside an episode: `simulations[3]` + `task_id` → `simulations[3].task_id`;
 * `line 7` + `task_id` → `line 7: task_id`; `` + `task_id` → `task_id`.
 */
export function fieldAt(where: string, field: string): string {
  if (!where) return field;
  if (!field) return where;
  return where.startsWith('line ') ? `${where}: ${field}` : `${where}${field.startsWith('[') ? '' : '.'}${field}`;
}

/**
 * Whether a domain name written in a file means `domain`: the same name, or tau2-bench's name of
 * one of our `tau2-` domains (`airline` for `tau2-airline`).
 */
export function sameDomain(named: string, domain: Domain): boolean {
  return named === domain.name || `tau2-${named}` === domain.name;
}

/**
 * Check that every episode was recorded in `domain` (when its recording says) and names one of
 * its tasks.
 * @throws ReplayInputError naming the file and field of the first episode that does not fit.
 */
export function checkEpisodes(domain: Domain, episodes: readonly RecordedEpisode[]): void {
  const known = new Set(domain.tasks.map((t) => t.id));
  for (const ep of episodes) {
    if (ep.domain && !sameDomain(ep.domain.name, domain)) {
      throw new ReplayInputError(
        ep.domain.file,
        ep.domain.field,
        `recorded in domain "${ep.domain.name}", not ${domain.name}`,
      );
    }
    if (!known.has(ep.task_id)) {
      throw new ReplayInputError(
        ep.file,
        fieldAt(ep.where, 'task_id'),
        `unknown task "${ep.task_id}" in domain ${domain.name}`,
      );
    }
  }
}
