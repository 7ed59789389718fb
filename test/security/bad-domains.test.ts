/**
 * Issue 11, item 8: every broken domain folder of the corpus (test/fixtures/attacks/domains/)
 * makes `gate` and `run` exit 2 with a message naming the file and the field, before any rollout.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { splitSqlStatements } from '../../src/core/env/data-check.ts';
import { capture } from '../fixtures/cli-io.ts';
import { BROKEN_DOMAINS, BROKEN_TAU2, writeBrokenDomain, writeBrokenTau2 } from '../fixtures/attacks/domains/corpus.ts';
import { tau2DataDir } from '../domains/tau2-helpers.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sb-broken-'));
  for (const c of BROKEN_DOMAINS) await writeBrokenDomain(join(root, c.name), c);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('broken domain folders', () => {
  it.each(BROKEN_DOMAINS.map((c) => [c.name, c] as const))(
    '%s: gate and run exit 2 naming file and field',
    async (_n, c) => {
      const dir = join(root, c.name);
      const expected = `switchboard: ${join(dir, c.file)}: ${c.field ? `${c.field}: ` : ''}${c.detail}`;
      for (const argv of [
        ['gate', dir],
        ['run', '--domain', dir, '--out', join(dir, 'out')],
      ]) {
        const io = capture();
        expect(await main(argv, io), argv[0]).toBe(2);
        expect(io.stderr.startsWith(expected), `${argv[0]}: ${io.stderr}`).toBe(true);
        expect(io.stdout).toBe('');
      }
    },
  );
});

// Built from tau2-bench's real airline data (test/fixtures/data.ts); skipped without it.
describe('broken tau2 data folders', { tags: ['tau2-data'] }, () => {
  beforeAll(async () => {
    for (const c of BROKEN_TAU2) await writeBrokenTau2(join(root, c.name), tau2DataDir('airline'), c);
  });

  it.each(BROKEN_TAU2.map((c) => [c.name, c] as const))(
    '%s: run (and gate, or its refusal) exit 2 naming file and field',
    async (_n, c) => {
      const dir = join(root, c.name);
      const expected = `switchboard: ${join(dir, c.file)}: ${c.field}: ${c.detail}`;
      for (const argv of [
        ['gate', 'tau2-airline', '--data', dir],
        ['run', '--domain', 'tau2-airline', '--data', dir],
      ]) {
        const io = capture();
        expect(await main(argv, io), argv[0]).toBe(2);
        expect(io.stderr.startsWith(expected), `${argv[0]}: ${io.stderr}`).toBe(true);
      }
    },
  );
});

describe('splitSqlStatements', () => {
  it('splits at semicolons outside quotes, comments and trigger bodies, with start lines', () => {
    const sql = [
      "CREATE TABLE a (x TEXT DEFAULT ';'); -- c;",
      '/* b;',
      '*/ CREATE TABLE "b;c" (y);',
      'CREATE TRIGGER t AFTER INSERT ON a BEGIN',
      '  INSERT INTO b VALUES (1);',
      'END;',
      '',
      'SELECT 1',
    ].join('\n');
    expect(splitSqlStatements(sql)).toEqual([
      { sql: "CREATE TABLE a (x TEXT DEFAULT ';')", line: 1 },
      { sql: '-- c;\n/* b;\n*/ CREATE TABLE "b;c" (y)', line: 1 },
      { sql: 'CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\nEND', line: 4 },
      { sql: 'SELECT 1', line: 8 },
    ]);
  });
});
