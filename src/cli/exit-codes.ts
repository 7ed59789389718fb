/**
 * Exit codes of `switchboard` and the one mapping from the error family (`src/core/errors.ts`)
 * to them. README: 0 success, 1 a refusal or failed check, 2 bad usage or a malformed input
 * file (the message names the file and field), 3 an internal error, 130 a run stopped by Ctrl-C
 * (SIGINT; 128 + the signal's number, as shells report it).
 */
import { CommanderError } from 'commander';
import { InputError } from '../core/errors.ts';

/** Exit codes. `refused` is set by commands themselves (a gate refusal, a failed check). */
export const EXIT = { ok: 0, refused: 1, usage: 2, internal: 3, interrupted: 130 } as const;

/** One of {@link EXIT}'s values. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The exit code for an error that ended a command: a command-line parse error (commander's) or
 * any {@link InputError} (a bad flag, a malformed file, teacher-guided data where it is refused,
 * a missing on-device model) is `usage`; `--help`/`--version` are `ok`; anything else is
 * `internal` (a bug: the CLI says so).
 */
export function exitCodeFor(e: unknown): ExitCode {
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (e instanceof InputError) return EXIT.usage;
  return EXIT.internal;
}
