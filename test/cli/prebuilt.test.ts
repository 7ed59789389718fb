/**
 * The prebuilt CLI (bin/prebuilt.mjs): the bundle is reused while no source it was built from
 * changed, rebuilt after one did, and runs with paths (`import.meta.url`) pointing at the
 * checkout (the version read from package.json, the built-in domain files). Checkouts that share
 * one node_modules (a symlink, as git worktrees often do) each build and run their own bundle.
 */
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** `prebuiltEntry()` in a fresh Node process (as bin/switchboard.mjs calls it). */
async function entry(root = ROOT): Promise<string> {
  const script = "const { prebuiltEntry } = await import('./bin/prebuilt.mjs'); console.log(await prebuiltEntry());";
  return (await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root })).stdout.trim();
}

describe('prebuilt CLI', () => {
  it('is reused while fresh and rebuilt after a source file changes', async () => {
    const first = await entry();
    expect(first).toMatch(/\/node_modules\/\.cache\/switchboard-cli\/[0-9a-f]{16}\/[^/]+\/main\.js$/);
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

  it('gives a second checkout sharing node_modules its own build, with its own paths', async () => {
    // A copy of the tracked files (as in the working tree) with another version, its node_modules a symlink to this one's.
    const copy = mkdtempSync(join(tmpdir(), 'sb-prebuilt-copy-'));
    let theirs: string | undefined;
    try {
      execFileSync('sh', ['-c', `git ls-files -z | tar --null -T - -cf - | tar -xf - -C "${copy}"`], { cwd: ROOT });
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
      const pkg = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as { version: string };
      writeFileSync(join(copy, 'package.json'), JSON.stringify({ ...pkg, version: '0.0.0-copy' }));
      const env = { ...process.env };
      delete env.SWITCHBOARD_NO_PREBUILT;
      const ours = await entry();
      // The copy's files are newer than our build: with one shared manifest the copy rebuilt it, and
      // its bundle, loaded through the symlink's real path, read our package.json.
      const version = await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: copy, env });
      expect(version.stdout.trim()).toBe('0.0.0-copy');
      theirs = await entry(copy);
      expect(theirs).not.toBe(ours);
      expect(await entry()).toBe(ours);
      const mine = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      const back = await run(process.execPath, ['bin/switchboard.mjs', '--version'], { cwd: ROOT, env });
      expect(back.stdout.trim()).toBe(mine.version);
    } finally {
      // The copy's builds sit in the shared node_modules: its own folder (…/<checkout hash>/<build>/main.js).
      if (theirs?.endsWith('main.js'))
        rmSync(dirname(dirname(fileURLToPath(theirs))), { recursive: true, force: true });
      rmSync(copy, { recursive: true, force: true });
    }
  }, 180_000);
});
