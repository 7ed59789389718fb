/**
 * The `harsher_channel` axis of hardening inside the evolve loop: an always-passed task moves one
 * step up the channel ladder ({@link harsherChannel}: preset clean → control → regular → harsh,
 * then barge-in probability). The variant is the task unchanged under a new id
 * (`<task>~harsher_channel.<seed>`) whose lineage records the move (pattern `harsher_channel`,
 * params `{ axis: 'channel', from, to }`); it goes through the gate like every variant and runs
 * under its level from the next round on.
 */
import type { EpisodeChannel } from '../rollout/channel-step.ts';
import type { Task } from '../schema/task.ts';
import { harsherChannel, HARD_PATTERNS, variantId, type ChannelLevel, type HardPatternLibrary } from './patterns.ts';

/** Id of the channel-axis pattern in the library. */
export const CHANNEL_PATTERN = 'harsher_channel';

/** Text of a level: `control` or `harsh, barge-in 0.3`. */
export function levelText(l: ChannelLevel): string {
  return l.barge_in ? `${l.preset}, barge-in ${l.barge_in}` : l.preset;
}

/**
 * The level a run's channel starts at: its named preset and barge-in probability (default 0).
 * @throws RangeError when the channel's preset is inline (not a named preset)
 */
export function baseLevel(channel: EpisodeChannel): ChannelLevel {
  if (typeof channel.preset !== 'string')
    throw new RangeError(
      'the channel axis needs a named channel preset (clean, control, regular, harsh), not an inline one',
    );
  return { preset: channel.preset, barge_in: channel.bargeIn ?? 0 };
}

/** The channel of a run with `level`'s preset and barge-in probability. */
export function channelAt(channel: EpisodeChannel, level: ChannelLevel): EpisodeChannel {
  return { ...channel, preset: level.preset as EpisodeChannel['preset'], bargeIn: level.barge_in };
}

/**
 * The channel-axis variant of `base` at `level`, one step up; null at the top of the ladder.
 * @param seed the round's seed (in the id and the lineage)
 * @throws RangeError when `level` is not on the ladder
 */
export function channelVariant(
  base: Task,
  level: ChannelLevel,
  seed: number,
  library: HardPatternLibrary = HARD_PATTERNS,
): { task: Task; to: ChannelLevel; reason: string } | null {
  const to = harsherChannel(level, library);
  if (!to) return null;
  const parent = base.lineage ?? { version: 1, generation: 0, parent: null, changes: [] };
  const reason = `channel ${levelText(level)} → ${levelText(to)}`;
  const task: Task = {
    ...base,
    id: variantId(base.id, CHANNEL_PATTERN, seed),
    lineage: {
      version: 1,
      parent: { task_id: base.id, version: parent.version },
      generation: parent.generation + 1,
      changes: [
        {
          version: 1,
          reason,
          by: `hard-pattern:${CHANNEL_PATTERN}`,
          pattern: CHANNEL_PATTERN,
          params: { axis: 'channel', from: level, to },
          seed,
        },
      ],
    },
  };
  return { task, to, reason };
}
