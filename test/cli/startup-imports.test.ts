/**
 * Start-up cost (issue 15, item 6): commands that use no on-device model, no local TTS and render
 * no audio import none of the model runtimes or audio addons, and `--help` imports no command
 * module (each is imported when its command runs). The CLI runs as users run it
 * (`node bin/switchboard.mjs`, from its prebuilt bundle, and from the TypeScript sources through
 * tsx with SWITCHBOARD_NO_PREBUILT) with a resolve hook that records every module URL it loads.
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
/** Packages only a remote model, a realtime agent or a progress bar on a terminal needs (loaded at first use). */
const ON_USE = /\/node_modules\/(openai|ws|cli-progress)\//;
const dir = mkdtempSync(join(tmpdir(), 'sb-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI's entry module: the prebuilt bundle's or the TypeScript source's. */
const ENTRY = /\/node_modules\/\.cache\/switchboard-cli\/[0-9a-f]{16}\/[^/]+\/main\.js$|\/src\/cli\/main\.ts$/;
/** A command's own module: the source file, or its chunk in the prebuilt bundle (esbuild names it `<file>-<hash>.js`). */
const COMMAND_MODULE =
  /\/src\/cli\/commands\/(?!index\.ts$)[a-z-]+\.ts$|\/switchboard-cli\/[0-9a-f]{16}\/[^/]+\/(gate|run|demo|replay|groups|export|serve|rollout|data|evolve|propose|metrics)-[A-Z0-9]+\.js$/;

/** Run the CLI with `args`; its stdout, exit code and the module URLs it resolved. */
async function cli(
  name: string,
  args: string[],
  prebuilt = true,
): Promise<{ stdout: string; code: number; urls: string[] }> {
  const record = join(dir, `${name}.txt`);
  const env: NodeJS.ProcessEnv = { ...process.env, IMPORT_RECORD: record };
  delete env.SWITCHBOARD_NO_PREBUILT;
  if (!prebuilt) env.SWITCHBOARD_NO_PREBUILT = '1';
  const run = promisify(execFile)(process.execPath, ['--import', RECORDER, 'bin/switchboard.mjs', ...args], {
    cwd: ROOT,
    env,
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
    expect(urls.some((u) => ENTRY.test(u))).toBe(true); // the recorder saw the CLI load
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
  }, 60_000);

  for (const prebuilt of [true, false]) {
    const how = prebuilt ? 'prebuilt bundle' : 'sources through tsx';
    it(`--help imports no command module; \`run --help\` imports only run's (${how})`, async () => {
      const help = await cli(`help-${prebuilt}`, ['--help'], prebuilt);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('replay [options] <file>');
      expect(help.urls.some((u) => ENTRY.test(u) && u.endsWith('.js') === prebuilt)).toBe(true);
      expect(help.urls.filter((u) => COMMAND_MODULE.test(u))).toEqual([]);
      expect(help.urls.some((u) => u.includes('/node_modules/tsx/'))).toBe(!prebuilt);
      const run = await cli(`run-help-${prebuilt}`, ['run', '--help'], prebuilt);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('--concurrency <n>');
      const loaded = run.urls
        .filter((u) => COMMAND_MODULE.test(u))
        .map((u) => /\/(\w+)(?:-[A-Z0-9]+\.js|\.ts)$/.exec(u)![1]);
      expect(loaded).toContain('run');
      // Only run's module and those it imports (gate's domain help, metrics' panels): no other command's.
      for (const other of ['demo', 'replay', 'groups', 'export', 'serve', 'rollout', 'data', 'evolve', 'propose'])
        expect(loaded).not.toContain(other);
    }, 60_000);
  }

  it('run --agent reference on carrier loads no model runtime or audio addon, nor the model, WebSocket and progress packages', async () => {
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
    // The episode ran on sql.js (vendor/sql.js, which node_modules/sql.js links to).
    expect(urls.some((u) => u.includes('/vendor/sql.js/dist/sql-wasm.js'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/tsx/'))).toBe(false); // from the prebuilt bundle
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
    expect(urls.filter((u) => ON_USE.test(u))).toEqual([]);
  }, 60_000);
});
