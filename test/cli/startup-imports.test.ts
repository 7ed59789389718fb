/**
 * Start-up cost (issue 15, item 6): commands that use no on-device model, no local TTS and render
 * no audio import none of the model runtimes or audio addons. The CLI runs as users run it
 * (`node bin/switchboard.mjs`) with a resolve hook that records every module URL it loads.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const RECORDER = join(ROOT, 'test/fixtures/import-recorder/register.mjs');
/** Packages only an on-device model, local TTS or a rendered channel needs. */
const HEAVY = /\/node_modules\/(@huggingface\/transformers|onnxruntime-[a-z]+|sharp|node-web-audio-api)\//;
const dir = mkdtempSync(join(tmpdir(), 'sb-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run the CLI with `args`; its stdout, exit code and the module URLs it resolved. */
async function cli(name: string, args: string[]): Promise<{ stdout: string; code: number; urls: string[] }> {
  const record = join(dir, `${name}.txt`);
  const run = promisify(execFile)(process.execPath, ['--import', RECORDER, 'bin/switchboard.mjs', ...args], {
    cwd: ROOT,
    env: { ...process.env, IMPORT_RECORD: record },
    maxBuffer: 16 * 1024 * 1024,
  });
  const { stdout, code } = await run.then(
    (r) => ({ stdout: r.stdout, code: 0 }),
    (e: { stdout: string; code: number }) => ({ stdout: e.stdout, code: e.code }),
  );
  return { stdout, code, urls: readFileSync(record, 'utf8').trim().split('\n') };
}

describe('CLI start-up imports', () => {
  it('--help loads no model runtime or audio addon', async () => {
    const { stdout, code, urls } = await cli('help', ['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: switchboard');
    expect(urls.some((u) => u.endsWith('/src/cli/main.ts'))).toBe(true); // the recorder saw the CLI load
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
  }, 60_000);

  it('run --agent reference on carrier loads no model runtime or audio addon', async () => {
    const { stdout, code, urls } = await cli('run', [
      'run',
      '--domain',
      'carrier',
      '--agent',
      'reference',
      '--task-ids',
      'carrier-pay-balance-1',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      tasks: [{ task_id: 'carrier-pay-balance-1', rewards: [1] }],
      totals: { episodes: 1, valid: 1 },
    });
    expect(urls.some((u) => u.includes('/node_modules/sql.js/'))).toBe(true); // the episode ran on sql.js
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
  }, 60_000);
});
