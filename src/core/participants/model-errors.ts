/**
 * Error taxonomy of model-backed participants.
 *
 * Infrastructure (the episode is invalid and resampled, never scored 0) — all subclasses of
 * {@link InfrastructureError}:
 * - {@link ModelEndpointError}: the endpoint could not give a completion (network failure,
 *   timeout, HTTP 429/5xx that persisted through the retries, any other HTTP error, or a body
 *   that is not a chat completion). `retryable` tells which kind it was.
 * - {@link SimulatorError}: the simulated caller broke its script (stated a value that is not in
 *   its task), so the episode says nothing about the agent.
 * - {@link JudgeError}: the judge could not give usable verdicts.
 *
 * Model behaviour (the model answered, badly) — {@link ModelBehaviourError}: never ends an agent
 * episode by itself. Malformed tool calls go to the episode loop, which turns them into
 * `Error: …` tool messages; a judge reply that is not valid JSON is retried and then becomes a
 * {@link JudgeError}.
 */
import { InfrastructureError } from '../errors.ts';

/** An endpoint failure that survived the retries (or was not worth retrying). */
export class ModelEndpointError extends InfrastructureError {
  override name = 'ModelEndpointError';
  constructor(
    message: string,
    /** HTTP status, or null for network errors, timeouts and malformed bodies. */
    readonly status: number | null,
    /** True for the kinds that are retried: network, timeout, 408, 409, 429, 5xx. */
    readonly retryable: boolean,
    /** HTTP attempts made. */
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** The simulated caller stated something its task does not contain. */
export class SimulatorError extends InfrastructureError {
  override name = 'SimulatorError';
}

/** The judge gave no usable verdicts. */
export class JudgeError extends InfrastructureError {
  override name = 'JudgeError';
}

export { ModelBehaviourError } from '../errors.ts';

/** True when an HTTP status is worth retrying: 408, 409, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
