/**
 * The command table (src/cli/commands/index.ts) that lets `--help` list commands without
 * importing them: every entry's help-list term is the loaded command's own, the help lists them
 * all in table order, and `commandOf` picks the command argv runs.
 */
import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandOf } from '../../src/cli/commands/index.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

describe('lazy command table', () => {
  it("each entry's help-list term is the loaded command's own", async () => {
    const help = new Help();
    for (const entry of COMMANDS) {
      const program = new Command('switchboard');
      const sub = (await entry.load())(program, capture(), () => {});
      expect(sub.name()).toBe(entry.name);
      expect(help.subcommandTerm(sub), entry.name).toBe(entry.term);
    }
  });

  it('--help lists every command in table order, and `<command> --help` shows its description', async () => {
    const io = capture();
    expect(await main(['--help'], io)).toBe(0);
    const listed = [...io.stdout.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]);
    expect(listed).toEqual([...COMMANDS.map((c) => c.name), 'help']);
    const gate = capture();
    expect(await main(['help', 'gate'], gate)).toBe(0);
    expect(gate.stdout).toContain('Admission check of a domain: reference solutions replay');
    expect(gate.stdout).toContain('--task-ids <ids>');
  });

  it('commandOf: the first word, the word after help, none for options only', () => {
    expect(commandOf(['run', '--domain', 'carrier'])?.name).toBe('run');
    expect(commandOf(['help', 'export'])?.name).toBe('export');
    expect(commandOf(['--help'])).toBeUndefined();
    expect(commandOf(['-V'])).toBeUndefined();
    expect(commandOf(['nosuch'])).toBeUndefined();
  });
});
