/**
 * Guards of a whole run against the infrastructure path being used to escape scoring, or wasting
 * the run's time. An invalid rollout is resampled and left out of the scores, never the agent's 0
 * (DESIGN.md); but a server the agent controls — a Realtime agent's own server, an endpoint that
 * answers 5xx on the hard tasks — can end rollouts invalid on purpose or by breakage, and a mean
 * over the rest is then not comparable with another run's. Two guards, both applied by
 * `runBatch` (so every trial runner, in this thread or a pool's, goes through them):
 *
 * - the **invalid share** ({@link invalidShare}): trials left without a valid rollout after
 *   resampling, over the trials run; a run above {@link DEFAULT_MAX_INVALID_SHARE} is reported
 *   not comparable ({@link invalidShareFailure});
 * - the **fault streak** ({@link FaultStreak}): {@link DEFAULT_MAX_SAME_FAULT} rollouts in a row
 *   invalid for the same reason (a dead server, a refused session) stop the batch: no new
 *   rollout (trial or resample) is started, and the run fails with the reason.
 */

/**
 * Largest share of a run's trials that may end without a valid rollout (after resampling) for
 * its scores to count as comparable: 0.1. Rewards lie in [0, 1], so the mean over every trial
 * run can differ from the mean over the valid ones by at most this share (the lost trials could
 * all have scored 0 or all 1); 0.1 is the standard error of a mean over 25 pass/fail trials at
 * p = 0.5 (0.5 / √25), a shift the size of a small run's own sampling noise. A healthy endpoint
 * stays far below it: with the default 3 attempts per trial, a trial is lost only when all three
 * fail, and 10% lost trials takes 46% of attempts failing independently (0.464³ ≈ 0.1).
 */
export const DEFAULT_MAX_INVALID_SHARE = 0.1;

/**
 * Rollouts in a row invalid for exactly the same reason after which a batch stops starting new
 * ones: 6, two whole trials' attempts at the default 3 attempts per trial. Each of those rollouts
 * already outlived its participant's own retries (a realtime agent's session reopens, a chat
 * endpoint's backed-off HTTP retries), so six in a row with one reason and no valid rollout
 * between them is a fault that stays (a server that refuses connections, never answers, or
 * refuses the session), not a blip; going on costs a dead realtime server 3 × 3 × 15 s = 135 s
 * per trial for nothing.
 */
export const DEFAULT_MAX_SAME_FAULT = 6;

/**
 * Trials left without a valid rollout after resampling, over the trials run: `invalid / (valid +
 * invalid)`; null when no trial ran.
 */
export function invalidShare(trials: { valid: number; invalid: number }): number | null {
  const n = trials.valid + trials.invalid;
  return n === 0 ? null : trials.invalid / n;
}

/**
 * Why a run's scores are not comparable because too many trials were lost, or null when the
 * share is at most `max` (a share equal to the limit passes).
 * Reads e.g. `3 of 10 trials (share 0.300) have no valid rollout after resampling, above
 * --max-invalid-share 0.1: the scores are not comparable (they leave out the trials lost to
 * invalid rollouts)`.
 */
export function invalidShareFailure(trials: { valid: number; invalid: number }, max: number): string | null {
  const share = invalidShare(trials);
  if (share === null || share <= max) return null;
  const n = trials.valid + trials.invalid;
  return `${trials.invalid} of ${n} trial${n === 1 ? '' : 's'} (share ${share.toFixed(3)}) ${trials.invalid === 1 ? 'has' : 'have'} no valid rollout after resampling, above --max-invalid-share ${max}: the scores are not comparable (they leave out the trials lost to invalid rollouts)`;
}

/** Why a batch stopped early ({@link FaultStreak}). */
export interface StoppedRun {
  /** The `invalid_reason` every rollout of the streak had. */
  reason: string;
  /** Rollouts in the streak (the limit). */
  rollouts: number;
  /** Trials of the batch that were never started. */
  trials_not_started: number;
}

/**
 * Counts rollouts in a row (in the order they finish) invalid for the same reason; a valid
 * rollout, or an invalid one for another reason, starts the count again. With `max` 0 it never
 * trips. Finishing order depends on timing when trials run concurrently, so where a stopped
 * batch stopped does too (as with an abort); each rollout's own result does not.
 */
export class FaultStreak {
  private reason: string | null = null;
  private count = 0;
  /** The reason once `max` rollouts in a row had it; null until then. */
  tripped: string | null = null;

  constructor(readonly max: number) {}

  /** Count one finished rollout; returns whether the streak has reached `max` (now or before). */
  add(t: { valid: boolean; invalid_reason: string | null; termination: string }): boolean {
    if (this.tripped !== null) return true;
    if (t.valid) {
      this.reason = null;
      this.count = 0;
      return false;
    }
    const reason = t.invalid_reason ?? t.termination;
    this.count = reason === this.reason ? this.count + 1 : 1;
    this.reason = reason;
    if (this.max > 0 && this.count >= this.max) this.tripped = reason;
    return this.tripped !== null;
  }
}

/**
 * The message of a batch stopped by its fault streak: `stopped after 6 rollouts in a row were
 * invalid for the same reason (--max-same-fault 6); 4 trials not started: <reason>`.
 */
export function stoppedFailure(s: StoppedRun): string {
  return `stopped after ${s.rollouts} rollouts in a row were invalid for the same reason (--max-same-fault ${s.rollouts}); ${s.trials_not_started} trial${s.trials_not_started === 1 ? '' : 's'} not started: ${s.reason}`;
}
