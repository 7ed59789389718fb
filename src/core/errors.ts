/**
 * The error family. Every error Switchboard throws on purpose is a {@link SwitchboardError}; any
 * other exception that reaches a boundary (the CLI, the page, the server) is a bug.
 *
 * ```text
 * SwitchboardError
 * ├── InputError                 the user's input is wrong: fix it         (CLI exit 2)
 * │   ├── FileFieldError         … in a file, at a field path
 * │   │   ├── DomainFileError    … a domain file (schema/domain.ts)
 * │   │   └── ReplayInputError   … a recording to replay (replay/episode.ts)
 * │   ├── TeacherGuidanceError   teacher-guided data given to evaluation or GRPO
 * │   ├── UsageError             a bad command line (src/cli/participants.ts)
 * │   └── LocalModelError        an on-device model not known or not installed (adapters)
 * ├── ToolError                  a tool call failed: `Error: …` tool message, the episode goes on
 * ├── InfrastructureError        a sandbox or endpoint fault: the rollout is invalid, resampled
 * │   └── ModelEndpointError, SimulatorError, JudgeError (participants/model-errors.ts)
 * ├── ModelBehaviourError        a model answered, but unusably
 * └── SessionStateError, PyCalcError, ChangeBaseMismatch, Tau2DataError (in their modules)
 * ```
 *
 * The CLI maps the family to its exit codes in one place (`src/cli/exit-codes.ts`). DESIGN.md's
 * rules: bad input gets a clear error naming file and field; bad model output becomes an error
 * tool message and the episode goes on; sandbox faults are invalid rollouts, never the agent's 0.
 */

/** Base of every deliberate Switchboard error; `name` is the concrete class name. */
export class SwitchboardError extends Error {
  override name = 'SwitchboardError';
}

/**
 * Input the user gave is wrong (a file, a flag, a value). The message says what and where.
 * Caller: show the message (no stack) and stop; the CLI exits with 2.
 */
export class InputError extends SwitchboardError {
  override name = 'InputError';
}

/**
 * A malformed input file. The message is `<file>: <field>: <detail>`, the field a path such as
 * `[3].user_scenario.instructions` or `line 4: turns[2].role` (empty when the whole file is bad).
 * Caller: as {@link InputError}; `file` and `field` let a UI point at the spot.
 */
export class FileFieldError extends InputError {
  override name = 'FileFieldError';
  constructor(
    /** The file as the user named it (path or name). */
    readonly file: string,
    /** Field path inside the file, or `''`. */
    readonly field: string,
    detail: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ''}${detail}`);
  }
}

/**
 * A malformed domain file (`domain.ts`, `tasks.json`, `seed.json`, `schema.sql`, `policy.md` or
 * tau2 data). Caller: as {@link FileFieldError}; the gate never sees such a domain.
 */
export class DomainFileError extends FileFieldError {
  override name = 'DomainFileError';
}

/**
 * Teacher-guided trajectories (the agent saw the reference solution) reached an evaluation or a
 * GRPO run, where they would score demonstrations as if they were the policy's own work.
 * Caller: drop those trajectories or use them only for SFT; the CLI exits with 2.
 */
export class TeacherGuidanceError extends InputError {
  override name = 'TeacherGuidanceError';
}

/**
 * A tool call failed for a reason the agent should see (unknown id, policy refusal, bad
 * arguments). Thrown by tools; the environment turns it into the tool message `Error: <message>`,
 * the call counts as failed and the episode goes on. Caller of a tool: never let it end an
 * episode. Any other exception from a tool is a bug.
 */
export class ToolError extends SwitchboardError {
  override name = 'ToolError';
}

/**
 * A failure of infrastructure (endpoint down, worker crash, simulator off script), not of the
 * agent's behaviour. Caller: end the episode as invalid (excluded from scores, resampled within
 * the batch's budget), never score it 0; nothing the agent controls may raise it.
 */
export class InfrastructureError extends SwitchboardError {
  override name = 'InfrastructureError';
}

/**
 * A model answered, but the answer is unusable for what was asked (e.g. a judge reply that is not
 * the JSON asked for). Caller: retry the request or degrade (an agent's malformed tool call
 * becomes an error tool message; a judge's, after retries, a {@link InfrastructureError}); it
 * never ends an agent episode by itself.
 */
export class ModelBehaviourError extends SwitchboardError {
  override name = 'ModelBehaviourError';
}
