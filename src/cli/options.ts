/** Option parsers and output checks shared by the commands. */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { UsageError } from './participants.ts';

/** Parse a decimal whole-number option in [min, 2^31). */
export function intOption(name: string, min: number) {
  return (value: string): number => {
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n >= 2 ** 31) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${2 ** 31 - 1}`);
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

/** Add the domain options: `--domain` (required), `--data`, `--split` and `--task-ids`. */
export function withDomainOptions(cmd: Command): Command {
  return cmd
    .requiredOption(
      '--domain <name>',
      'carrier, a path to a domain folder, or tau2-airline / tau2-retail (data from --data or `switchboard data tau2`)',
    )
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)')
    .option('--split <name>', 'tau2 task split: base, train or test')
    .option('--task-ids <ids>', 'comma-separated task ids');
}
