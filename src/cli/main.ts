/**
 * `switchboard` command line: gate a domain, run batches of rollouts, and the demo.
 * Every command takes `--json` and then prints one machine-readable JSON document on stdout
 * (on failure: `{"error": "…"}`).
 *
 * Start-up (issue 15, item 6): only the module of the command being run is imported
 * (./commands/index.ts); `--help` and `--version` list the others from that table.
 */
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, Help } from 'commander';
import { redactText } from '../adapters/shared/endpoint-secrets.ts';
import { COMMANDS, commandOf } from './commands/index.ts';
import { type CliIo, defaultIo } from './io.ts';
import { EXIT, exitCodeFor } from './exit-codes.ts';

export type { CliIo };
export type { RunReport } from './commands/run.ts';

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function program(
  io: CliIo,
  setCode: (c: number) => void,
  version: string,
  argv: readonly string[],
): Promise<Command> {
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  const help = new Help();
  const cmd = new Command('switchboard')
    .description('Voice-agent sandbox: executable domains, simulated calls, automatic scoring.')
    .version(version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .configureHelp({ subcommandTerm: (c) => terms.get(c.name()) ?? help.subcommandTerm(c) });
  const wanted = commandOf(argv);
  for (const entry of COMMANDS) {
    if (entry === wanted) (await entry.load())(cmd, io, setCode).description(entry.description);
    // Listed by name only; never run, since argv names another command (or none).
    else cmd.command(entry.name).description(entry.description);
  }
  return cmd;
}

/**
 * Run the CLI with `argv` (without node and script). Returns the exit code: 0 success, 1 a
 * refusal or failed check, 2 a usage or input error, 3 an internal error (a bug: the message
 * says so; set SWITCHBOARD_DEBUG=1 for the stack).
 */
export async function main(argv: readonly string[], given: CliIo = defaultIo): Promise<number> {
  let code: number = EXIT.ok;
  const json = argv.includes('--json');
  // Error lines may quote a model spec or an endpoint: its credentials never reach the terminal.
  const io: CliIo = { ...given, out: (t) => given.out(t), err: (t) => given.err(redactText(t)) };
  const fail = (message: string, exit: number) => {
    io.err(`switchboard: ${message}`);
    if (json) io.out(JSON.stringify({ error: redactText(message) }));
    return exit;
  };
  try {
    const cli = await program(io, (c) => (code = c), await packageVersion(), argv);
    await cli.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (e) {
    const exit = exitCodeFor(e);
    if (e instanceof CommanderError) {
      // commander has printed its message on stderr already.
      if (exit !== EXIT.ok && json) io.out(JSON.stringify({ error: redactText(e.message.replace(/^error: /, '')) }));
      return exit;
    }
    if (exit !== EXIT.internal) return fail((e as Error).message, exit);
    if (process.env.SWITCHBOARD_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return fail(
      `internal error (a bug; please report it): ${e instanceof Error ? e.message : String(e)}`,
      EXIT.internal,
    );
  }
}
