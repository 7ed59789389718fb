/**
 * An API description dropped on the page becomes a domain in the tab (issue 19 item 5, real
 * chromium): the vendored Swagger Petstore (test/fixtures/specs/) is built in the main worker by
 * the scaffold and gate of `switchboard build-domain`, listed as a domain, browsed, and a watched
 * reference call on it scores 1; a Swagger 2.0 file dropped on the zone shows the scaffold's error.
 * With the code agent on, a fake OpenAI-compatible endpoint (one good reply, prose, a patch the
 * gate refuses, one out of scope) gets the key and the CLI's requests, and the rejects are listed
 * as the CLI lists them; Batch runs the built domain in its worker pool (reference 1, do-nothing
 * 0); several MCP tool files dropped at once, a folder picked, and a folder dragged onto the zone
 * (through DevTools' drag events) build one domain each as `--from <folder>` does; after a reload the built domains are listed and callable, and a damaged
 * kept record is reported and skipped.
 * Screenshots go to `test-output/screenshots/` like the other views (`SWITCHBOARD_SCREENSHOTS`).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumSession, storedRecords } from './harness.ts';
import { buildDomainFolder } from '../../src/adapters/node/build-domain.ts';
import { buildDomainFiles } from '../../src/core/build-domain/index.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { scriptedModels, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { EDITED_PERSONA, EDITOR_REPLIES } from '../fixtures/editor-replies.ts';

const PETSTORE = fileURLToPath(new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url));
const TOOLS = fileURLToPath(new URL('../fixtures/specs/github-mcp-server/tools', import.meta.url));
const OUT =
  process.env.SWITCHBOARD_SCREENSHOTS ?? fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));
/** A Swagger 2.0 description: refused by name. */
const SWAGGER2 = JSON.stringify({ swagger: '2.0', info: { title: 'old', version: '1' }, paths: {} });
let url = '';

/** Watch the reference agent on `taskId` of the current domain (Watch view open); its final reward as shown. */
async function watchReference(page: Page, taskId: string): Promise<string | null> {
  await page.selectOption('#task', taskId);
  await page.selectOption('#agent', 'reference');
  await page.selectOption('#pace', '0');
  await page.click('#run');
  await page.waitForSelector('#termination', { timeout: 30_000 });
  return page.getAttribute('#reward-breakdown .reward-value', 'data-reward');
}
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
    await expect.poll(() => taskIds(page), POLL).toEqual(cliTasks.map((t) => t.id));
    expect(await page.$$eval('#rules dt', (d) => d.map((x) => x.textContent))).toContain('R1');
    await page.selectOption('#db-table', { index: 0 });
    await page.waitForSelector('#db-rows tbody tr');
    await page.screenshot({ path: join(OUT, 'build-domain-browse-1400.png'), fullPage: true });

    // Watch the reference agent on the first task of the generated domain.
    await page.click('a[data-view="watch"]');
    await page.waitForSelector('#run');
    expect(await watchReference(page, cliTasks[0]!.id)).toBe('1');
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

const KEY = 'sk-builder-e2e-4410';

/** Wait for the build's status line, or its error (returned as thrown text). */
async function built(page: Page, timeout = 60_000): Promise<string> {
  await page.waitForFunction(
    () =>
      /built as/.test(document.querySelector('#spec-status')?.textContent ?? '') ||
      !!document.querySelector('#spec-error'),
    undefined,
    { timeout },
  );
  if (await page.locator('#spec-error').count()) throw new Error(String(await page.textContent('#spec-error')));
  return String(await page.textContent('#spec-status'));
}

/**
 * The task ids the Browse view lists. The status line says "built as" before the view has switched
 * to the new domain (`onBuilt` loads it after), so callers poll until the list is the one expected.
 */
const taskIds = (page: Page) => page.$$eval('#tasks > li summary code', (c) => c.map((x) => x.textContent));
const POLL = { timeout: 30_000 };

/** Run a batch of the current domain's tasks; the result table's rows and its status. */
async function batch(page: Page, agent: 'reference' | 'noop', trials: number): Promise<string[][]> {
  await page.selectOption('#batch-agent', agent);
  await page.fill('#trials', String(trials));
  await page.fill('#workers', '2');
  await page.click('#batch-run');
  await page.waitForFunction(
    () => / · done$/.test(document.querySelector('#batch-status')?.textContent ?? ''),
    undefined,
    {
      timeout: 60_000,
    },
  );
  return page.$$eval('#batch-results tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent ?? '')),
  );
}

describe('built domains: the code agent, Batch, folders, and a reload (chromium)', () => {
  let server: TestServer;
  let page: Page;
  const errors: string[] = [];
  let cliTasks: { id: string }[] = [];
  beforeAll(async () => {
    server = await startOpenAiServer(scriptedModels({ editor: EDITOR_REPLIES }), { cors: true });
    cleanup.push(() => server.close());
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
  });

  it('builds with the code agent at a fake endpoint: the key goes there only, rejects listed as the CLI lists them', async () => {
    // The CLI's run with the same replies (its own endpoint, so both get replies 1-4).
    const second = await startOpenAiServer(scriptedModels({ editor: EDITOR_REPLIES }));
    const cli = await buildDomainFolder({
      from: PETSTORE,
      out: join(work, 'pets'),
      name: 'pets',
      language: 'en',
      tasks: 4,
      seed: 0,
      agent: new OpenAiModelClient({ flavor: 'openai', baseURL: second.url, model: 'editor' }),
    }).finally(() => second.close());
    cliTasks = JSON.parse(await readFile(join(cli.dir!, 'tasks.json'), 'utf8')) as { id: string }[];

    await page.goto(`${url}#/browse`);
    await page.waitForSelector('#spec-file');
    await page.check('#spec-agent-on');
    const form = page.locator('fieldset[data-endpoint="builder"]');
    await form.locator('input[type="url"]').fill(server.url);
    await form.locator('label', { hasText: 'Model' }).locator('input').fill('editor');
    await form.locator('input[type="password"]').fill(KEY);
    expect(await form.locator('.key-origin').textContent()).toBe(`sent only to ${new URL(server.url).origin}`);
    await page.fill('#spec-name', 'pets');
    await page.fill('#spec-tasks', '4');
    await page.setInputFiles('#spec-file', PETSTORE);
    expect(await built(page)).toBe(
      `openapi.yaml built as pets (${cli.report.tables.length} tables, ${cli.report.tools.length} tools, 4 tasks; admitted by the gate; ${cli.report.skipped.length} parts skipped)`,
    );
    // One request per task, then one per domain stage.
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.headers.authorization)).toEqual(Array(7).fill(`Bearer ${KEY}`));
    expect(await page.textContent('#spec-admitted')).toBe('1');
    expect(await page.$$eval('#spec-admitted-list li', (l) => l.map((x) => x.textContent))).toEqual(
      cli.report.agent!.admitted.map((r) => `${r.task_id} admitted: ${r.reason}`),
    );
    expect(await page.$$eval('#spec-rejected li', (l) => l.map((x) => x.textContent))).toEqual(
      cli.report.agent!.rejected.map((r) => `${r.task_id} ${r.status}: ${r.detail}`),
    );
    expect(await page.$$eval('#spec-rejected li', (l) => l.map((x) => x.getAttribute('data-status')))).toEqual([
      'unparseable',
      'gate_rejected',
      'out_of_scope',
    ]);
    // The domain stages, each proposal as the CLI's report lists it.
    for (const stage of ['rules', 'business_rules', 'harder_tasks'] as const) {
      const r = cli.report.agent![stage];
      expect(
        await page.$$eval(`#spec-agent [data-stage="${stage}"] li`, (l) => l.map((x) => x.textContent)),
        stage,
      ).toEqual([
        ...r.admitted.map((p) => `${p.id} admitted: ${p.detail}`),
        ...r.rejected.map((p) => `${p.id} ${p.status}: ${p.detail}`),
      ]);
    }
    expect(await page.textContent('#rules')).toContain('R7One order is for at most 5 pets.');
    await expect.poll(() => taskIds(page), POLL).toEqual(cliTasks.map((t) => t.id));
    // Kept in IndexedDB for the next visit, without the key; the settings in localStorage hold no key either.
    const kept = await storedRecords(page, 'switchboard-built');
    expect(kept).toContain(EDITED_PERSONA);
    expect(kept).not.toContain(KEY);
    expect(await page.evaluate(() => localStorage.getItem('switchboard.builder-endpoint'))).not.toContain(KEY);
    await page.screenshot({ path: join(OUT, 'build-domain-agent-1400.png'), fullPage: false });
    expect(errors).toEqual([]);
  }, 150_000);

  it('runs a batch over the built domain in the worker pool: reference 1, do-nothing 0', async () => {
    await page.click('a[data-view="batch"]');
    await page.waitForSelector('#batch-run');
    expect(await page.inputValue('#domain')).toBe('pets');
    expect(await page.$$eval('input[name="task"]', (i) => i.map((x) => (x as HTMLInputElement).value))).toEqual(
      cliTasks.map((t) => t.id),
    );
    expect(await batch(page, 'reference', 2)).toEqual(
      cliTasks.map((t) => [t.id, '2', '2', '1', '1', '1', 'always passed']),
    );
    expect(await page.textContent('#batch-status')).toBe('8 / 8 rollouts · done');
    expect(await batch(page, 'noop', 1)).toEqual(cliTasks.map((t) => [t.id, '1', '0', '0', '0', 'always failed']));
    expect(errors).toEqual([]);
  }, 150_000);

  it('builds one domain from several MCP tool files dropped at once, a picked folder and a dragged folder, as --from <folder> does', async () => {
    const cli = await buildDomainFolder({ from: TOOLS, out: join(work, 'tools'), language: 'en', tasks: 5, seed: 0 });
    const toolsTasks = JSON.parse(await readFile(join(cli.dir!, 'tasks.json'), 'utf8')) as { id: string }[];
    await page.click('a[data-view="browse"]');
    await page.waitForSelector('#spec-drop');
    await page.uncheck('#spec-agent-on');
    await page.fill('#spec-name', '');
    await page.fill('#spec-tasks', '5');
    const files = await Promise.all(
      readdirSync(TOOLS).map(async (n) => ({ name: n, text: await readFile(join(TOOLS, n), 'utf8') })),
    );
    const transfer = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
      return dt;
    }, files);
    await page.dispatchEvent('#spec-drop', 'drop', { dataTransfer: transfer });
    expect(await built(page)).toMatch(/^mcp-tools built as mcp_tools \(\d+ tables, \d+ tools, \d+ tasks; admitted/);
    // The same tools and tasks as the CLI's folder build (ids carry the domain name).
    await expect.poll(() => taskIds(page), POLL).toEqual(toolsTasks.map((t) => t.id.replace(/^tools-/, 'mcp_tools-')));
    expect(await page.locator('#tools tbody tr').count()).toBe(cli.report.tools.length);

    await page.setInputFiles('#spec-folder', TOOLS);
    expect(await built(page)).toBe(
      `tools built as tools (${cli.report.tables.length} tables, ${cli.report.tools.length} tools, ${toolsTasks.length} tasks; admitted by the gate; ${cli.report.skipped.length} parts skipped)`,
    );
    await expect.poll(() => taskIds(page), POLL).toEqual(toolsTasks.map((t) => t.id));
    // Kept in this browser, in name order (`openapi` from the first test: the same profile).
    await page.waitForSelector('#built-domains li[data-name="tools"]');
    expect(await page.$$eval('#built-domains li', (l) => l.map((x) => x.getAttribute('data-name')))).toEqual([
      'mcp_tools',
      'openapi',
      'pets',
      'tools',
    ]);
    // The same folder picked again under another name builds again; Delete takes it out of the list and the picker.
    await page.fill('#spec-name', 'tools_again');
    await page.setInputFiles('#spec-folder', TOOLS);
    expect(await built(page)).toMatch(/^tools built as tools_again \(/);
    // The folder itself dragged onto the zone (a real drag through DevTools: a directory entry).
    await page.fill('#spec-name', 'tools_dir');
    const box = (await page.locator('#spec-drop').boundingBox())!;
    const cdp = await page.context().newCDPSession(page);
    const data = { items: [], files: [TOOLS], dragOperationsMask: 1 };
    for (const type of ['dragEnter', 'dragOver', 'drop'] as const)
      await cdp.send('Input.dispatchDragEvent', { type, x: box.x + 20, y: box.y + 10, data });
    expect(await built(page)).toMatch(/^tools built as tools_dir \(/);
    await expect.poll(() => taskIds(page), POLL).toEqual(toolsTasks.map((t) => t.id.replace(/^tools-/, 'tools_dir-')));
    for (const name of ['tools_again', 'tools_dir']) {
      await page.click(`#built-domains li[data-name="${name}"] .delete-built`);
      await page.waitForSelector(`#built-domains li[data-name="${name}"]`, { state: 'detached' });
    }
    const picker = await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(picker).not.toContain('tools_again');
    expect(picker).not.toContain('tools_dir');
    await page.fill('#spec-name', '');
    expect(errors).toEqual([]);
  }, 150_000);

  it('lists the built domains after a reload, callable; a damaged kept record is reported and skipped', async () => {
    await page.goto(`${url}#/watch?domain=pets`);
    await page.reload();
    await page.waitForSelector('#run');
    const options = await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(options).toEqual(expect.arrayContaining(['pets', 'tools', 'mcp_tools']));
    expect(await page.inputValue('#domain')).toBe('pets');
    expect(await watchReference(page, cliTasks[0]!.id)).toBe('1');
    expect(await page.locator('#built-skipped').count()).toBe(0);

    // Damage two kept records behind the page's back: one is not a record, one has a broken tasks.json.
    await page.evaluate(
      () =>
        new Promise<void>((ok, ko) => {
          const req = indexedDB.open('switchboard-built');
          req.onerror = () => ko(req.error);
          req.onsuccess = () => {
            const store = req.result.transaction('domains', 'readwrite').objectStore('domains');
            store.put({ name: 'broken', source: 'x.json', savedAt: 1, files: { 'tasks.json': 5 } });
            const get = store.get('tools');
            get.onsuccess = () => {
              store.put({ ...get.result, files: { ...get.result.files, 'tasks.json': '[{"id": ' } });
              store.transaction.oncomplete = () => ok();
            };
          };
        }),
    );
    await page.goto(`${url}#/browse?domain=carrier`);
    await page.reload();
    await page.waitForSelector('#built-skipped');
    const skipped = await page.$$eval('#built-skipped li', (l) =>
      l.map((x) => [x.getAttribute('data-name'), x.textContent]),
    );
    expect(skipped.map(([n]) => n)).toEqual(['broken', 'tools']);
    expect(skipped[0]![1]).toBe('broken: files["tasks.json"] is not text');
    expect(skipped[1]![1]).toMatch(/^tools: tools\/tasks\.json: /);
    // The page works: carrier is browsed, the good built domains are listed, the damaged ones are not.
    await page.waitForFunction(() => document.querySelector('.lede strong')?.textContent === 'carrier');
    const after = await page.$$eval('#domain option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(after).toEqual(expect.arrayContaining(['pets', 'mcp_tools']));
    expect(after).not.toContain('tools');
    expect(after).not.toContain('broken');
    await page.screenshot({ path: join(OUT, 'build-domain-skipped-1400.png'), fullPage: false });

    // Delete both from Browse's list: gone after another reload.
    for (const name of ['broken', 'tools']) {
      await page.click(`#built-domains li[data-name="${name}"] .delete-built`);
      await page.waitForSelector(`#built-domains li[data-name="${name}"]`, { state: 'detached', timeout: 10_000 });
    }
    await page.reload();
    await page.waitForSelector('#built-domains li[data-name="pets"]');
    expect(await page.locator('#built-skipped').count()).toBe(0);
    expect(await page.$$eval('#built-domains li', (l) => l.map((x) => x.getAttribute('data-name')))).toEqual([
      'mcp_tools',
      'openapi',
      'pets',
    ]);
    await page.click('#built-domains li[data-name="pets"] .open-built');
    await page.waitForFunction(() => document.querySelector('.lede strong')?.textContent === 'pets');
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);
});
