/**
 * `switchboard build-domain` as a user runs it: a public spec in, a gated folder out that `run`
 * takes as `--domain` (reference 1.0, do-nothing 0.0 on every task); bad input exits 2 with the
 * spec path in the message and leaves no folder.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

const SPEC = new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-cli-build-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('switchboard build-domain', () => {
  it('builds a folder the other commands take as --domain', async () => {
    const out = join(work, 'petshop');
    const io = capture();
    expect(await main(['build-domain', '--from', SPEC, '--out', out, '--tasks', '5', '--seed', '3'], io)).toBe(0);
    expect(io.stdout).toContain('OpenAPI Swagger Petstore - OpenAPI 3.0: 5 tables (420 rows), 16 tools, 5 tasks');
    expect(io.stdout).toContain('ACCEPTED: all 5 tasks');
    expect(io.stdout).toContain(`wrote ${out}`);
    const report = JSON.parse(readFileSync(join(out, 'build-report.json'), 'utf8'));
    expect([report.seed, report.tasks.length]).toEqual([3, 5]);
    for (const [agent, mean] of [
      ['reference', 1],
      ['noop', 0],
    ] as const) {
      const run = capture();
      expect(await main(['run', '--domain', out, '--agent', agent, '--json'], run)).toBe(0);
      const summary = JSON.parse(run.stdout);
      expect(summary.tasks.map((t: { mean: number }) => t.mean)).toEqual(Array(5).fill(mean));
    }
  });

  it('exits 2 naming the spec path for a bad spec, and writes nothing', async () => {
    const bad = join(work, 'cycle.yaml');
    writeFileSync(
      bad,
      'openapi: 3.1.0\ninfo: {title: t, version: "1"}\npaths: {}\ncomponents:\n  schemas:\n    A: {$ref: "#/components/schemas/B"}\n    B: {$ref: "#/components/schemas/A"}\n',
    );
    const io = capture();
    const out = join(work, 'never');
    expect(await main(['build-domain', '--from', bad, '--out', out], io)).toBe(2);
    expect(io.stderr).toBe(
      `switchboard: ${bad}: components.schemas.A: $ref cycle: components.schemas.B → components.schemas.A → components.schemas.B\n`,
    );
    expect(existsSync(out)).toBe(false);
    const lang = capture();
    expect(await main(['build-domain', '--from', SPEC, '--out', out, '--language', 'fr'], lang)).toBe(2);
    expect(lang.stderr).toBe('switchboard: --language: "fr" is not zh or en\n');
  });
});
