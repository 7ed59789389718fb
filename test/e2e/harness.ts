/**
 * End-to-end harness: build the page with vite into a temp folder, serve it from 127.0.0.1 with
 * a tiny static server, and drive Debian's chromium through playwright-core with a fresh
 * profile (and Debian's firefox-esr through puppeteer-core over WebDriver BiDi). Nothing leaves
 * the machine.
 */
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium (`apt-get install chromium`). */
export const CHROMIUM = '/usr/bin/chromium';
/** Debian's Firefox ESR (`apt-get install firefox-esr`). */
export const FIREFOX = '/usr/bin/firefox-esr';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wav': 'audio/wav',
};

/**
 * Build the page into a fresh temp folder; returns the folder. `replace` swaps source modules
 * (path from the repository root → absolute path of the stand-in), e.g. a pin of test data.
 */
export async function buildPage(replace: Readonly<Record<string, string>> = {}): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'switchboard-e2e-dist-'));
  const alias = Object.entries(replace).map(([from, to]) => ({
    find: new RegExp(`^.*${from.replace(/^.*\//, '/').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    replacement: to,
  }));
  await build({
    root: ROOT,
    logLevel: 'error',
    build: { outDir, emptyOutDir: true, sourcemap: false },
    ...(alias.length ? { resolve: { alias } } : {}),
  });
  return outDir;
}

/**
 * Serve `dir` on 127.0.0.1 (a free port). `mounts` serve more folders under URL prefixes
 * (e.g. `{ '/models/': folder }`); a file missing there is a 404, not the page.
 */
export async function serve(
  dir: string,
  mounts: Readonly<Record<string, string>> = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      let path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const mount = Object.keys(mounts).find((m) => path.startsWith(m));
      const root = resolve(mount ? mounts[mount]! : dir);
      if (mount) path = path.slice(mount.length);
      let file = normalize(join(root, path));
      if (!file.startsWith(root + sep) && file !== root) {
        res.writeHead(403).end();
        return;
      }
      const info = await stat(file).catch(() => null);
      if (!info || info.isDirectory()) {
        if (mount) {
          res.writeHead(404).end();
          return;
        }
        file = join(root, 'index.html');
      }
      const body = await readFile(file).catch(() => null);
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      res.end(body);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no server address');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * A chromium with a fresh profile folder; `close` removes the folder. `extraArgs` add switches
 * (e.g. Chromium's fake microphone: `--use-file-for-fake-audio-capture=<wav>`).
 */
export async function launch(
  extraArgs: readonly string[] = [],
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the end-to-end tests`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), 'switchboard-e2e-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** A headless Firefox ESR (WebDriver BiDi, puppeteer-core) with a fresh profile folder; `close` removes the folder. */
export async function launchFirefox(): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(FIREFOX)) {
    throw new Error(
      `${FIREFOX} is missing: install Debian's Firefox ESR (apt-get install -y firefox-esr) to run the Firefox end-to-end test`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), 'switchboard-e2e-firefox-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    userDataDir: profile,
    defaultViewport: { width: 1400, height: 1000 },
    extraPrefsFirefox: { 'app.update.enabled': false, 'browser.shell.checkDefaultBrowser': false },
  });
  return {
    browser,
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Open `url + hash` in a new tab of `context`, recording uncaught page errors in `errors` (the
 * tests assert it stays empty).
 */
export async function openPage(context: BrowserContext, url: string, errors: string[], hash = ''): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}${hash}`);
  return page;
}

/** What {@link chromiumSession} sets up beyond the plain page. */
export interface ChromiumSessionOptions {
  /** Source modules swapped in the build (as {@link buildPage}). */
  replace?: Readonly<Record<string, string>>;
  /** More folders served under URL prefixes (as {@link serve}). */
  mounts?: Readonly<Record<string, string>>;
  /** Extra chromium switches (as {@link launch}). */
  args?: readonly string[];
}

/**
 * Build the page, serve it and start chromium: the usual setup of a chromium e2e file.
 * `close` stops the browser and the server and removes the build, in that order.
 */
export async function chromiumSession(
  options: ChromiumSessionOptions = {},
): Promise<{ url: string; context: BrowserContext; close(): Promise<void> }> {
  const dist = await buildPage(options.replace);
  const server = await serve(dist, options.mounts);
  const browser = await launch(options.args);
  return {
    url: server.url,
    context: browser.context,
    async close() {
      for (const step of [browser.close, server.close, () => rm(dist, { recursive: true, force: true })])
        await step().catch(() => undefined);
    },
  };
}

/**
 * Every record the page keeps in its IndexedDB database `db` (default `switchboard`; all object
 * stores, Blobs left out), as one JSON string: for asserting that no secret is stored.
 */
export function storedRecords(page: Page, db = 'switchboard'): Promise<string> {
  return page.evaluate(
    (name) =>
      new Promise<string>((ok, ko) => {
        const req = indexedDB.open(name);
        req.onerror = () => ko(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const names = [...db.objectStoreNames];
          const tx = db.transaction(names, 'readonly');
          const all: unknown[] = [];
          let left = names.length;
          for (const n of names) {
            const r = tx.objectStore(n).getAll();
            r.onsuccess = () => {
              all.push(...r.result.filter((x: unknown) => !(x instanceof Blob)));
              if (--left === 0) ok(JSON.stringify(all));
            };
          }
        };
      }),
    db,
  );
}

/** Every transcript line as `role: text` (tool turns as `tool: name ok|error`). */
export async function transcript(page: Page, id = 'transcript'): Promise<string[]> {
  return page.$$eval(`#${id} > li`, (items) =>
    items.map((li) => {
      const role = li.getAttribute('data-role');
      if (role === 'tool')
        return `tool: ${li.querySelector('code.call')?.textContent?.replace(/\(.*$/, '')} ${li.querySelector('.badge')?.textContent}`;
      const text = li.querySelector('p.text')?.textContent ?? '';
      const calls = [...li.querySelectorAll('p.calls code')].map((c) => c.textContent).join(' ');
      return `${role}: ${text}${calls ? `→ ${calls}` : ''}`;
    }),
  );
}

/** carrier-pay-balance-1 played by the reference agent and the scripted caller, as {@link transcript} reads it. */
export const PAY_BALANCE_TRANSCRIPT = [
  'assistant: 您好，这里是畅联通信客服，请问有什么可以帮您？',
  'user: 你好，我想用话费余额把二月份的账单交了。',
  'assistant: 请问您的手机号码是多少？',
  'user: 15867452301',
  'assistant: → find_customer_by_phone({"phone":"15867452301"})',
  'tool: find_customer_by_phone ok',
  'assistant: → get_bills({"customer_id":"C1002"})',
  'tool: get_bills ok',
  'assistant: 我将为您用话费余额缴纳账单：客户C1002，账单B10008，金额63.5元。请问您确认吗？',
  'user: 是的，确认。',
  'assistant: → pay_bill_from_balance({"customer_id":"C1002","bill_id":"B10008","amount":63.5})',
  'tool: pay_bill_from_balance ok',
  'assistant: 跟您说明一下：63.5；36.5。请问还有什么可以帮您？',
  'user: 没有了，谢谢，再见。',
];
