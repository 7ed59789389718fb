/** Option parsers and output checks shared by the commands. */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { numberOption, UsageError, type ModelSettings } from './participants.ts';

/** Parse a decimal whole-number option in [min, max] (max default 2^31 − 1). */
export function intOption(name: string, min: number, max = 2 ** 31 - 1) {
  return (value: string): number => {
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

/** Parse an option that takes one of `choices`. */
export function choiceOption<const T extends string>(name: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value))
      throw new InvalidArgumentError(`${name} must be one of ${choices.join(', ')}`);
    return value as T;
  };
}

/**
 * Check an output file path before any work is done: its folder exists or can be made, and the
 * path is not a folder. Returns the absolute path.
 * @throws UsageError naming the option and the path.
 */
export async function prepareOutFile(path: string, option = '--out'): Promise<string> {
  const abs = resolve(path);
  const info = await stat(abs).catch(() => null);
  if (info?.isDirectory()) throw new UsageError(`${option} ${path}: is a folder, not a file`);
  try {
    await mkdir(dirname(abs), { recursive: true });
  } catch (e) {
    throw new UsageError(`${option} ${path}: cannot write there (${(e as Error).message})`);
  }
  const parent = await stat(dirname(abs)).catch(() => null);
  if (!parent?.isDirectory()) throw new UsageError(`${option} ${path}: cannot write there (no folder ${dirname(abs)})`);
  return abs;
}

/** Help of `--domain` (every command that takes one). */
export const DOMAIN_HELP =
  'a built-in domain (carrier, insurance-renewal, debt-negotiation; tau2-airline, tau2-retail, tau2-telecom with data from --data or `switchboard data tau2`) or a path to a domain folder';

/** Help of `--data`. */
export const DATA_HELP = 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)';

/** Help of `--split`. */
export const SPLIT_HELP = 'tau2 task split: base, train or test (tau2-telecom also small or full)';

/** Add the domain options: `--domain` (required), `--data`, `--split` and `--task-ids`. */
export function withDomainOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', DATA_HELP)
    .option('--split <name>', SPLIT_HELP)
    .option('--task-ids <ids>', 'comma-separated task ids');
}

/** The model sampling and request flags as commander parses them ({@link withSamplingOptions}). */
export interface SamplingFlags {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  /** Per-request timeout, ms. */
  modelTimeout?: number;
  /** Retries after the first attempt. */
  modelRetries?: number;
}

/**
 * Add the model sampling and request flags shared by `run` and `rollout`: `--temperature` (0–2),
 * `--top-p` (0–1), `--top-k`, `--max-tokens`, `--model-timeout <ms>`, `--model-retries <n>`.
 * Absent flags stay undefined, so each command's defaults (temperature 1, top-p 1, 1,024 tokens,
 * 60,000 ms, 4 retries: src/adapters/shared/openai-client.ts) apply.
 */
export function withSamplingOptions(cmd: Command): Command {
  const withSampling = cmd
    .option('--temperature <t>', 'model sampling temperature (default 1)', numberOption('--temperature', 0, 2))
    .option('--top-p <p>', 'model nucleus sampling (default 1)', numberOption('--top-p', 0, 1))
    .option(
      '--top-k <k>',
      'model top-k sampling, not sent to openai (default: not sent)',
      numberOption('--top-k', -1, 1_000_000, true),
    )
    .option(
      '--max-tokens <n>',
      'most tokens per model reply (default 1024)',
      numberOption('--max-tokens', 1, 1_000_000, true),
    );
  return withRequestOptions(withSampling);
}

/**
 * Add the model request flags `--model-timeout <ms>` (per attempt, default 60000) and
 * `--model-retries <n>` (on 429/5xx/network errors, default 4: src/adapters/shared/openai-client.ts; a
 * `realtime:` agent's session reopens after a fault, default 2: docs/realtime-agent.md).
 */
export function withRequestOptions(cmd: Command): Command {
  return cmd
    .option(
      '--model-timeout <ms>',
      'per-request model timeout (default 60000)',
      numberOption('--model-timeout', 1, 3_600_000, true),
    )
    .option(
      '--model-retries <n>',
      'model request retries on 429/5xx/network errors (default 4); for a realtime: agent, session reopens after a fault (default 2)',
      numberOption('--model-retries', 0, 20, true),
    );
}

/** The sampling fields the flags give, in the request's names (`top_p`, …); absent flags left out. */
export function samplingFromFlags(opts: SamplingFlags): {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  max_tokens?: number;
} {
  return {
    ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
    ...(opts.topP !== undefined ? { top_p: opts.topP } : {}),
    ...(opts.topK !== undefined ? { top_k: opts.topK } : {}),
    ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}),
  };
}

/**
 * The model settings of the flags (sampling, timeout, retries) for the participant factories;
 * `teacherGuidance` gives a model agent the reference solution (`run --teacher-guidance`);
 * `agentVoice` asks a model agent for spoken audio (`run --agent-voice`).
 */
export function modelSettingsFromFlags(
  opts: SamplingFlags & { teacherGuidance?: boolean; agentVoice?: string },
): ModelSettings {
  return {
    sampling: samplingFromFlags(opts),
    ...(opts.teacherGuidance ? { teacherGuidance: true } : {}),
    ...(opts.agentVoice ? { agentVoice: opts.agentVoice } : {}),
    ...(opts.modelTimeout !== undefined ? { timeoutMs: opts.modelTimeout } : {}),
    ...(opts.modelRetries !== undefined ? { retries: opts.modelRetries } : {}),
  };
}
