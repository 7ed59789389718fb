/**
 * The prebuilt CLI (bin/prebuilt.mjs): the bundle is reused while no source it was built from
 * changed, rebuilt after one did, and runs with paths (`import.meta.url`) pointing at the
 * checkout (the version read from package.json, the built-in domain files).
 */
import { execFile } from 'node:child_process';
import { readFileSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** `prebuiltEntry()` in a fresh Node process (as bin/switchboard.mjs calls it). */
async function entry(): Promise<string> {
  const script = "const { prebuiltEntry } = await import('./bin/prebuilt.mjs'); console.log(await prebuiltEntry());";
  return (await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT })).stdout.trim();
}

describe('prebuilt CLI', () => {
  it('is reused while fresh and rebuilt after a source file changes', async () => {
    const first = await entry();
    expect(first).toMatch(/\/node_modules\/\.cache\/switchboard-cli\/[^/]+\/main\.js$/);
    expect(await entry()).toBe(first);
    await new Promise((r) => setTimeout(r, 20));
    const source = join(ROOT, 'src/cli/io.ts');
    const now = new Date();
    utimesSync(source, now, now);
    const second = await entry();
    expect(second).not.toBe(first);
    expect(second).toMatch(/main\.js$/);
    expect(await entry()).toBe(second);
  }, 120_000);

  it('runs from the bundle with the checkout paths: --version and gate carrier', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const env = { ...process.env };
    delete env.SWITCHBOARD_NO_PREBUILT;
    const version = await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: ROOT, env });
    expect(version.stdout.trim()).toBe(pkg.version);
    const gate = await run(process.execPath, ['bin/switchboard.mjs', 'gate', 'carrier', '--json'], { cwd: ROOT, env });
    const report = JSON.parse(gate.stdout) as { accepted: boolean; tasks: unknown[] };
    expect(report.accepted).toBe(true);
    expect(report.tasks).toHaveLength(15);
  }, 120_000);
});
