/**
 * An API description dropped on the page becomes a domain in the tab (issue 19 item 5, real
 * chromium): the vendored Swagger Petstore (test/fixtures/specs/) is built in the main worker by
 * the scaffold and gate of `switchboard build-domain`, listed as a domain, browsed, and a watched
 * reference call on it scores 1; a Swagger 2.0 file dropped on the zone shows the scaffold's error.
 * Screenshots go to `test-output/screenshots/` like the other views (`SWITCHBOARD_SCREENSHOTS`).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { chromiumSession } from './harness.ts';
import { buildDomainFolder } from '../../src/adapters/node/build-domain.ts';
import { buildDomainFiles } from '../../src/core/build-domain/index.ts';

const PETSTORE = fileURLToPath(new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url));
const OUT =
  process.env.SWITCHBOARD_SCREENSHOTS ?? fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));
/** A Swagger 2.0 description: refused by name. */
const SWAGGER2 = JSON.stringify({ swagger: '2.0', info: { title: 'old', version: '1' }, paths: {} });
let url = '';
let context: BrowserContext;
let work = '';
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
  await mkdir(OUT, { recursive: true });
  work = await mkdtemp(join(tmpdir(), 'switchboard-e2e-spec-'));
  cleanup.push(() => rm(work, { recursive: true, force: true }));
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('an API description dropped on the page', () => {
  it('builds the Swagger Petstore in the tab as the CLI does, browses it and scores a watched reference call 1', async () => {
    // What `switchboard build-domain --from openapi.yaml --out <dir>/openapi --seed 5` writes.
    const cli = await buildDomainFolder({
      from: PETSTORE,
      out: join(work, 'openapi'),
      language: 'en',
      tasks: 12,
      seed: 5,
    });
    expect(cli.dir).not.toBeNull();
    const cliTasks = JSON.parse(await readFile(join(cli.dir!, 'tasks.json'), 'utf8')) as { id: string }[];
    const cliTools = (JSON.parse(await readFile(join(cli.dir!, 'tools.json'), 'utf8')) as { tools: unknown[] }).tools;
    expect(cliTasks.length).toBeGreaterThan(1);

    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}#/browse`);
    await page.waitForSelector('#spec-file');
    await page.fill('#spec-seed', '5');
    await page.setInputFiles('#spec-file', PETSTORE);
    await page.waitForFunction(
      () =>
        /built as/.test(document.querySelector('#spec-status')?.textContent ?? '') ||
        !!document.querySelector('#spec-error'),
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.locator('#spec-error').count()).toBe(0);
    expect(await page.textContent('#spec-status')).toBe(
      `openapi.yaml built as openapi (${cli.report.tables.length} tables, ${cliTools.length} tools, ${cliTasks.length} tasks; admitted by the gate; ${cli.report.skipped.length} parts skipped)`,
    );
    await page.waitForFunction(() => document.querySelector('.lede strong')?.textContent === 'openapi');
    expect(await page.inputValue('#domain')).toBe('openapi');
    expect(await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value))).toContain(
      'openapi',
    );
    expect(await page.locator('#tools tbody tr').count()).toBe(cliTools.length);
    expect(await page.$$eval('#tasks > li summary code', (c) => c.map((x) => x.textContent))).toEqual(
      cliTasks.map((t) => t.id),
    );
    expect(await page.$$eval('#rules dt', (d) => d.map((x) => x.textContent))).toContain('R1');
    await page.selectOption('#db-table', { index: 0 });
    await page.waitForSelector('#db-rows tbody tr');
    await page.screenshot({ path: join(OUT, 'build-domain-browse-1400.png'), fullPage: true });

    // Watch the reference agent on the first task of the generated domain.
    await page.click('a[data-view="watch"]');
    await page.waitForSelector('#run');
    await page.selectOption('#task', cliTasks[0]!.id);
    await page.selectOption('#agent', 'reference');
    await page.selectOption('#pace', '0');
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 30_000 });
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    const called = await page.$$eval('#tool-calls tbody tr td:nth-child(2)', (c) => c.map((x) => x.textContent));
    expect(called).toHaveLength(2);
    await page.screenshot({ path: join(OUT, 'build-domain-watch-1400.png'), fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);

  it('shows the scaffold’s own error for a bad spec dropped on the zone', async () => {
    let expected = '';
    try {
      buildDomainFiles('old-api.json', SWAGGER2, { name: 'old_api', language: 'en', tasks: 12, seed: 0 });
    } catch (e) {
      expected = (e as Error).message;
    }
    expect(expected).toBe('old-api.json: swagger: Swagger 2.0 is not supported; convert it to OpenAPI 3.x first');
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}#/browse`);
    await page.waitForSelector('#spec-drop');
    const names = await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    // A real drop: a DataTransfer holding the file, dispatched on the zone.
    const transfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'old-api.json', { type: 'application/json' }));
      return dt;
    }, SWAGGER2);
    await page.dispatchEvent('#spec-drop', 'drop', { dataTransfer: transfer });
    await page.waitForSelector('#spec-error', { timeout: 30_000 });
    expect(await page.textContent('#spec-error')).toBe(expected);
    expect(await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(names);
    await page.screenshot({ path: join(OUT, 'build-domain-error-1400.png'), fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
