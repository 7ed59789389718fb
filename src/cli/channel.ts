/**
 * Phone-channel options of `switchboard run` (issue 5): `--preset`, `--dropout`, `--barge-in`,
 * `--barge-in-mix`, `--noise-dir`, `--barge-in-model`, `--tts`. Any of them turns the channel on;
 * caller audio is written under `<out>/audio/` beside trajectories.jsonl.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { PRESET_NAMES } from '../core/channel/presets.ts';
import { choiceOption } from './options.ts';
import type { PresetName } from '../core/channel/presets.ts';
import { INTERRUPTION_TYPES, normalizeMix } from '../core/channel/barge-in.ts';
import type { NoiseBank } from '../core/channel/chain.ts';
import type { EpisodeChannel } from '../core/rollout/channel-step.ts';
import type { InterruptionType } from '../core/schema/trajectory.ts';
import { BED_MIN_S, noiseName, noiseRecording, splitNoiseBank } from '../core/channel/noise-bank.ts';
import { espeakTts } from '../adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../adapters/node/audio/renderer.ts';
import { fsAudioStore } from '../adapters/node/audio/fs-store.ts';
import { numberOption, parseModelSpec, UsageError } from './participants.ts';
import { OpenAiModelClient } from '../adapters/shared/openai-client.ts';
import { modelBargeInPicker, type BargeInPicker } from '../core/channel/picker.ts';
import { endpointTts } from '../adapters/shared/endpoint-tts.ts';
import type { Tts } from '../core/ports/tts.ts';
import { missingFiles, modelsDir, readManifest } from '../adapters/node/local-model.ts';
import { LocalModelError, resolveLocalTts } from '../adapters/shared/local-model-manifest.ts';
import type { LocalRuntime } from '../adapters/shared/local-model-engine.ts';
import type { ManifestModel } from '../adapters/shared/local-model-manifest.ts';

/** The channel flags as commander parses them. */
export interface ChannelFlags {
  preset?: PresetName;
  dropout?: number;
  bargeIn?: number;
  bargeInMix?: Partial<Record<InterruptionType, number>>;
  noiseDir?: string;
  /** `<flavor>:<model>@<url>` of a model barge-in picker. */
  bargeInModel?: string;
  /** Caller speech: `espeak` (default), `local:<id>` (on-device TTS model) or `<flavor>:<model>@<url>` for an endpoint's own speech. */
  tts?: string;
}

/** An OpenAI-compatible client for a `<flavor>:<model>@<url>` option (key from the environment). */
function endpointClient(
  option: string,
  spec: string,
  env: Readonly<Record<string, string | undefined>>,
): OpenAiModelClient {
  const model = parseModelSpec(spec);
  if (!model) throw new UsageError(`${option} "${spec}": expected <flavor>:<model>@<http(s) base URL>`);
  const apiKey = env.SWITCHBOARD_API_KEY || env.OPENAI_API_KEY || undefined;
  return new OpenAiModelClient({ ...model, ...(apiKey ? { apiKey } : {}) });
}

/**
 * The on-device TTS `model` with its runtime (transformers.js, onnxruntime-node) imported on the
 * first {@link Tts.synthesize}, so a command that never speaks through it does not pay for loading
 * them. Rejects on first use when the model cannot be loaded (see `localTts`).
 */
function deferredLocalTts(model: ManifestModel, runtime: LocalRuntime): Tts {
  let tts: Promise<Tts> | null = null;
  return {
    id: `local:${model.id}`,
    async synthesize(text, voice) {
      tts ??= import('../adapters/shared/local-tts.ts').then((m) => m.localTts(model, runtime));
      return (await tts).synthesize(text, voice);
    },
  };
}

/**
 * The caller's speech synthesizer for `--tts`: espeak-ng, an on-device `text-to-speech` model of
 * the manifest (`local:<id>`, from the models folder: `SWITCHBOARD_MODELS` or `models/`; files
 * checked now, the model loads on the first turn), or an endpoint's audio output.
 */
export function ttsFromSpec(
  spec: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Tts {
  if (spec === undefined || spec === 'espeak') return espeakTts();
  if (spec.startsWith('local:')) {
    const dir = modelsDir(env);
    try {
      const model = resolveLocalTts(readManifest(dir), spec.slice('local:'.length));
      const missing = missingFiles(dir, model);
      if (missing.length)
        throw new LocalModelError(
          `needs files that are not in ${dir}: ${missing.join(', ')}. On a machine with internet run: npm run models:fetch -- ${model.id}`,
        );
      return deferredLocalTts(model, { modelsPath: dir, device: 'cpu' });
    } catch (e) {
      if (e instanceof LocalModelError) throw new UsageError(`--tts ${spec}: ${e.message}`);
      throw e;
    }
  }
  return endpointTts(endpointClient('--tts', spec, env));
}

/** The model picker of `--barge-in-model` (key from SWITCHBOARD_API_KEY or OPENAI_API_KEY). */
export function pickerFromSpec(
  spec: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): BargeInPicker {
  return modelBargeInPicker(endpointClient('--barge-in-model', spec, env));
}

/** Parse `backchannel=0.4,urge=0.2,…` (types not named weigh 0; weights are normalized). */
export function parseMix(value: string): Partial<Record<InterruptionType, number>> {
  const mix: Partial<Record<InterruptionType, number>> = {};
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [k, v] = part.split('=').map((x) => x.trim());
    if (!k || !(INTERRUPTION_TYPES as readonly string[]).includes(k))
      throw new InvalidArgumentError(`--barge-in-mix: unknown type "${k}" (types: ${INTERRUPTION_TYPES.join(', ')})`);
    const w = v !== undefined && /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
    if (!Number.isFinite(w)) throw new InvalidArgumentError(`--barge-in-mix: weight of ${k} must be a number ≥ 0`);
    mix[k as InterruptionType] = w;
  }
  try {
    normalizeMix(mix);
  } catch (e) {
    throw new InvalidArgumentError(`--barge-in-mix: ${(e as Error).message}`);
  }
  return mix;
}

/** Load every `.wav` in `dir` as 16 kHz mono: ≥ {@link BED_MIN_S} s → continuous, shorter → bursts. */
export async function loadNoiseDir(dir: string): Promise<NoiseBank> {
  const names = (
    await readdir(dir).catch((e: Error) => {
      throw new UsageError(`--noise-dir ${dir}: ${e.message}`);
    })
  )
    .filter((f) => f.toLowerCase().endsWith('.wav'))
    .sort();
  if (names.length === 0) throw new UsageError(`--noise-dir ${dir}: no .wav files there`);
  const recordings: [string, Float32Array][] = [];
  for (const f of names) {
    try {
      recordings.push([noiseName(f), noiseRecording(new Uint8Array(await readFile(join(dir, f))))]);
    } catch (e) {
      throw new UsageError(`--noise-dir ${dir}: ${f}: not a readable WAV file (${(e as Error).message})`);
    }
  }
  return splitNoiseBank(recordings);
}

/**
 * The episode channel for the flags, or undefined when none is given. Audio goes to
 * `<outDir>/audio/…`; without --out it is rendered (timelines are recorded) but not kept.
 */
export async function channelFromFlags(
  flags: ChannelFlags,
  outDir: string | undefined,
): Promise<EpisodeChannel | undefined> {
  const none = [
    flags.preset,
    flags.dropout,
    flags.bargeIn,
    flags.bargeInMix,
    flags.noiseDir,
    flags.bargeInModel,
    flags.tts,
  ].every((f) => f === undefined);
  if (none) return undefined;
  return {
    tts: ttsFromSpec(flags.tts),
    renderer: nodeGraphRenderer,
    preset: flags.preset ?? 'regular',
    ...(outDir ? { store: fsAudioStore(outDir) } : {}),
    ...(flags.noiseDir ? { bank: await loadNoiseDir(flags.noiseDir) } : {}),
    dropout: flags.dropout ?? 0,
    bargeIn: flags.bargeIn ?? 0,
    ...(flags.bargeInMix ? { mix: flags.bargeInMix } : {}),
    ...(flags.bargeInModel ? { bargeInPicker: pickerFromSpec(flags.bargeInModel) } : {}),
  };
}

/** Add the phone-channel flags (`--preset`, `--dropout`, … `--barge-in-model`) to a command. */
export function addChannelOptions(cmd: Command): Command {
  return cmd
    .option(
      '--preset <name>',
      `phone channel preset: ${PRESET_NAMES.join(', ')} (turns the channel on; default regular when a channel flag is given)`,
      choiceOption('--preset', PRESET_NAMES),
    )
    .option(
      '--dropout <p>',
      'probability that a caller turn is cut off mid-way (default 0)',
      numberOption('--dropout', 0, 1),
    )
    .option(
      '--barge-in <p>',
      'probability that the caller interrupts an agent reply (default 0)',
      numberOption('--barge-in', 0, 1),
    )
    .option(
      '--barge-in-mix <ratios>',
      'interruption type ratios (default backchannel=0.35,urge=0.2,correction=0.2,question=0.15,stop=0.1)',
      parseMix,
    )
    .option(
      '--noise-dir <dir>',
      'noise recordings (WAV): 10 s or longer are background beds, shorter ones bursts (default procedural noise)',
    )
    .option(
      '--tts <spec>',
      "caller speech: espeak (Debian espeak-ng, default) | <flavor>:<model>@<base-url> for an endpoint's own speech (vLLM-Omni, OpenAI) | local:<model-id> for an on-device model",
    )
    .option(
      '--barge-in-model <spec>',
      'model that picks barge-in cut points and words: <flavor>:<model>@<base-url> (default the seeded heuristic; the type is still sampled by the program)',
    );
}
