/**
 * `run --duplex` / `--subset <name>` (issue 17): the full-duplex timeline's channel and
 * settings, and the run's interaction metrics (summary.json `interaction_metrics`).
 */
import type { Command } from 'commander';
import type { EpisodeChannel } from '../core/rollout/channel-step.ts';
import {
  SUBSET_NAMES,
  subsetChannel,
  subsetSettings,
  type DuplexSettings,
  type SubsetName,
} from '../core/duplex/turn-taking.ts';
import { DEFAULT_WINDOWS } from '../core/duplex/interaction-events.ts';
import {
  interactionBlock,
  interactionPanel,
  type InteractionBlock,
  type MetricCall,
} from '../core/duplex/interaction-metrics.ts';
import { spanTicks } from '../core/duplex/record.ts';
import type { Trajectory } from '../core/schema/trajectory.ts';
import { nodeGraphRenderer } from '../adapters/node/audio/renderer.ts';
import { fsAudioStore } from '../adapters/node/audio/fs-store.ts';
import { choiceOption } from './options.ts';
import { ttsFromSpec } from './channel.ts';

/** The duplex flags as commander parses them. */
export interface DuplexFlags {
  duplex?: boolean;
  subset?: SubsetName;
}

/** Help of `--agent-voice` (run, groups). */
export const AGENT_VOICE_HELP =
  "ask a model agent (openai, vllm-omni) for spoken audio in this voice; with --duplex its audio is placed on the timeline when it is a WAV of 8–48 kHz, at most 120 s and 3× its text's synthesis + 5 s (else the text is synthesized; the span says why)";

/** Add `--duplex` and `--subset` to a command. */
export function addDuplexOptions(cmd: Command): Command {
  return cmd
    .option(
      '--duplex',
      'full-duplex timeline: caller and agent on one 200 ms tick axis, agent speech synthesized, backchannels and asides overlap without becoming turns, real barge-ins make the agent yield; stereo WAV and label track per call; interaction metrics (docs/duplex.md)',
    )
    .option(
      '--subset <name>',
      `Full-Duplex-Bench-style subset (implies --duplex; sets the barge-in rate and mix): ${SUBSET_NAMES.join(', ')}`,
      choiceOption('--subset', SUBSET_NAMES),
    );
}

/** The timeline settings for the flags, or undefined for a turn-based run. */
export function duplexFromFlags(flags: DuplexFlags): DuplexSettings | undefined {
  if (!flags.duplex && flags.subset === undefined) return undefined;
  return flags.subset ? subsetSettings(flags.subset) : {};
}

/**
 * The channel of a duplex run: the channel flags' channel (or the `clean` preset with espeak-ng
 * speech when none is given: the timeline needs speech on both sides), with a subset's barge-in
 * rate and mix in place of `--barge-in` / `--barge-in-mix`.
 */
export function duplexChannel(
  channel: EpisodeChannel | undefined,
  settings: DuplexSettings,
  outDir: string | undefined,
): EpisodeChannel {
  const base: EpisodeChannel = channel ?? {
    tts: ttsFromSpec(undefined),
    renderer: nodeGraphRenderer,
    preset: 'clean',
    ...(outDir ? { store: fsAudioStore(outDir) } : {}),
    dropout: 0,
    bargeIn: 0,
  };
  return settings.subset ? subsetChannel(base, settings.subset) : base;
}

/** Collects the duplex records of a run's valid trajectories for its metric block. */
export class RunMetrics {
  private readonly calls = new Map<string, MetricCall[]>();
  private tickMs: number | null = null;

  add(t: Pick<Trajectory, 'valid' | 'domain' | 'duplex'>): void {
    if (!t.valid || !t.duplex || t.duplex.total_ticks === 0) return;
    const list = this.calls.get(t.domain) ?? [];
    list.push({ ticks: spanTicks(t.duplex) });
    this.calls.set(t.domain, list);
    this.tickMs = t.duplex.turn_taking.tick_ms;
  }

  /** The block (one panel per domain), or null when no valid call had a timeline. */
  block(): InteractionBlock | null {
    if (this.calls.size === 0) return null;
    const windows = { ...DEFAULT_WINDOWS, tick_duration_sec: (this.tickMs ?? 200) / 1000 };
    const domains = Object.fromEntries([...this.calls].map(([d, calls]) => [d, interactionPanel(calls, windows)]));
    return interactionBlock(domains, windows);
  }
}
