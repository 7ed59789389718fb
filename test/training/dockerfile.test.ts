/**
 * The Dockerfile cannot be built here (no Docker engine), so this checks it against the package
 * statically: what it copies exists and is not excluded by .dockerignore; everything the CLI loads
 * at run time (the import graph from bin/switchboard.mjs, the built-in domain included) is in the
 * files it copies and in `dependencies` (the image runs `npm ci --omit=dev`); the command it runs
 * names options `serve` has; port, health check and openenv.yaml agree. `npm run bench` is not
 * involved; running the command by hand outside Docker is in the report of issue 14.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Instructions of the Dockerfile, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op!.toUpperCase(), args: rest.join(' ') };
  });
const copies = instructions
  .filter((i) => i.op === 'COPY')
  .map((i) => {
    const parts = i.args.split(/\s+/);
    return { sources: parts.slice(0, -1), dest: parts.at(-1)! };
  });
const copied = copies.flatMap((c) => c.sources);
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

/** Relative and package specifiers a module loads at run time (type-only imports left out). */
function specifiers(source: string): string[] {
  const code = source.replace(/^\s*(import|export)\s+type\s[^;]*;/gm, '');
  const out: string[] = [];
  for (const re of [
    /\b(?:import|export)\s+[\w*{}\s,$]+?\s+from\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /new URL\(\s*['"](\.[^'"]+)['"]\s*,\s*import\.meta\.url/g,
  ])
    for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

/** The files reachable from `entry` and the bare packages they import. */
function importGraph(entries: string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const todo = [...entries];
  while (todo.length) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (existsSync(target) && statSync(target).isFile() && /\.(ts|mjs|js)$/.test(target)) todo.push(target);
        continue;
      }
      if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (!packages.has(name)) packages.set(name, relative(ROOT, file));
    }
  }
  return { files, packages };
}

describe('Dockerfile, checked against the package', () => {
  it('copies files that exist and that .dockerignore does not exclude', () => {
    expect(copied).toEqual([
      'package.json',
      'package-lock.json',
      '.npmrc',
      'vendor',
      'bin',
      'src',
      'domains',
      'models',
    ]);
    for (const s of copied) {
      expect(existsSync(join(ROOT, s)), s).toBe(true);
      expect(ignored, s).not.toContain(s);
    }
    expect(ignored).toContain('node_modules');
  });

  it('everything the CLI loads is copied and installed by npm ci --omit=dev', () => {
    expect(instructions.find((i) => i.op === 'RUN' && i.args.includes('npm ci'))?.args).toContain('--omit=dev');
    const { files, packages } = importGraph([
      join(ROOT, 'bin/switchboard.mjs'),
      join(ROOT, 'domains/carrier/domain.ts'),
    ]);
    expect(files.size).toBeGreaterThan(100);
    const outside = [...files].map((f) => relative(ROOT, f)).filter((f) => !copied.includes(f.split('/')[0]!));
    expect(outside).toEqual([]);
    const devOnly = [...packages].filter(([name]) => !(name in pkg.dependencies));
    expect(devOnly, 'imported at run time but not in dependencies').toEqual([]);
    // The loader the entry point uses is a dependency.
    expect(packages.get('tsx')).toBe('bin/switchboard.mjs');
    for (const p of ['commander', 'openai', 'zod', 'sql.js', 'ws', 'hyparquet-writer', 'node-web-audio-api'])
      expect(packages.has(p), p).toBe(true);
  });

  it('copies each dependency installed from a folder of the repository before npm ci installs it', () => {
    const local = Object.values(pkg.dependencies)
      .filter((v) => v.startsWith('file:'))
      .map((v) => v.slice('file:'.length).split('/')[0]!);
    expect(local).toEqual(['vendor']);
    const ci = instructions.findIndex((i) => i.op === 'RUN' && i.args.includes('npm ci'));
    const before = instructions
      .slice(0, ci)
      .filter((i) => i.op === 'COPY')
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const folder of local) expect(before, folder).toContain(folder);
  });

  it('runs `serve` with options serve has, on the port it exposes, health-checked, as openenv.yaml says', async () => {
    const cmd = instructions.find((i) => i.op === 'CMD')!.args;
    expect(cmd).toContain('exec node bin/switchboard.mjs serve');
    const help = capture();
    expect(await main(['serve', '--help'], help)).toBe(0);
    const used = [...cmd.matchAll(/(--[a-z-]+)/g)].map((m) => m[1]!);
    expect(used).toEqual(['--protocol', '--domain', '--data', '--host', '--port']);
    for (const flag of used) expect(help.stdout).toContain(`${flag} `);
    const port = Number(/--port (\d+)/.exec(cmd)![1]);
    expect(instructions.find((i) => i.op === 'EXPOSE')!.args).toBe(String(port));
    expect(readFileSync(join(ROOT, 'openenv.yaml'), 'utf8')).toMatch(new RegExp(`^port: ${port}$`, 'm'));
    expect(instructions.find((i) => i.op === 'HEALTHCHECK')!.args).toContain(`http://127.0.0.1:${port}/health`);
    // Caller speech for the phone channel flags of SWITCHBOARD_SERVE_ARGS.
    expect(instructions.find((i) => i.op === 'RUN' && i.args.includes('apt-get'))!.args).toContain('espeak-ng');
    expect(instructions.find((i) => i.op === 'FROM')!.args).toMatch(/^node:20/);
  });
});
