/** Where the CLI writes: standard output and error by default, a capture in tests. */

/** Where the CLI writes: swapped in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Show progress bars (stderr is a terminal and no --json). */
  progress: boolean;
}

/** The process's stdout and stderr (a newline added when missing); progress bars when stderr is a terminal. */
export const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  progress: Boolean(process.stderr.isTTY),
};
