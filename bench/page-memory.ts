/**
 * The page's memory with 16 rollouts at once (issue 15, item 1), in chromium (the e2e harness: a
 * production build served from 127.0.0.1, Debian chromium headless, --disable-gpu): tau2-airline
 * opened from its data folder in Browse, then a Batch of 16 tasks × 2 trials (reference agent,
 * scripted caller) with 1 worker (one rollout at a time) and with 16 workers (16 rollouts at once,
 * each worker its own runtime and sql.js database). Sampled every {@link EVERY_MS} ms while the
 * batch runs; the figures are the peaks:
 *
 * - JS heap of the page's main thread (CDP `Runtime.getHeapUsage`, used bytes);
 * - JS memory of the page's window and of its workers (`performance.measureUserAgentSpecificMemory()`,
 *   summed over the workers alive at the sample). It needs a cross-origin isolated page: the bench
 *   adds COOP/COEP headers to every response it serves, and chromium runs with
 *   `ForceEagerMeasureMemory` so a measurement returns without waiting for a garbage collection;
 * - resident memory of every chromium process of this browser (browser, renderer, utility), the
 *   sum of VmRSS and of Pss (`/proc/<pid>/smaps_rollup`: shared pages split between the processes
 *   that map them, so the Pss sum does not count the shared libraries 7 times).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { testData } from '../test/fixtures/data.ts';
import { buildPage, launch, serve } from '../test/e2e/harness.ts';

const EVERY_MS = 250;
const TASKS = 16;
const TRIALS = 2;
const MIB = 1024 * 1024;

/** Pids of the processes descended from this one (chromium and its helpers). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of /proc/<pid>/stat, after the parenthesised command name.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, p] of parent)
      if (p === pid) {
        out.push(child);
        walk(child);
      }
  };
  walk(root);
  return out;
}

/** Sum of VmRSS and of Pss (bytes) over the chromium processes below this process. */
function chromiumMemory(): { rss: number; pss: number; processes: number } {
  let rss = 0;
  let pss = 0;
  let processes = 0;
  for (const pid of descendants(process.pid)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) continue;
      const kib = (text: string, field: string) =>
        Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
      rss += kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
      pss += kib(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
      processes++;
    } catch {
      // Gone, or not readable.
    }
  }
  return { rss, pss, processes };
}

/**
 * In the page: the JS memory of its window and of its dedicated workers (bytes, by
 * `measureUserAgentSpecificMemory`; `count` workers measured), or zeros when the page is not
 * cross-origin isolated.
 */
async function jsMemory(): Promise<{ window: number; workers: number; count: number }> {
  type Breakdown = { bytes: number; attribution: { scope: string; url: string }[] };
  const perf = performance as unknown as { measureUserAgentSpecificMemory?: () => Promise<{ breakdown: Breakdown[] }> };
  if (!crossOriginIsolated || !perf.measureUserAgentSpecificMemory) return { window: 0, workers: 0, count: 0 };
  const { breakdown } = await perf.measureUserAgentSpecificMemory();
  const out = { window: 0, workers: 0, count: 0 };
  for (const b of breakdown) {
    if (b.attribution.some((a) => a.scope === 'DedicatedWorkerGlobalScope')) {
      out.workers += b.bytes;
      out.count++;
    } else if (b.attribution.some((a) => a.scope === 'Window')) out.window += b.bytes;
  }
  return out;
}

interface Peaks {
  mainHeap: number;
  pageJs: number;
  workerHeap: number;
  workers: number;
  rss: number;
  pss: number;
  processes: number;
  rollouts: string;
  ms: number;
}

/** Run the batch with `workers` workers on an open tau2-airline Batch view; peaks while it runs. */
async function batchPeaks(page: Page, workers: number): Promise<Peaks> {
  const cdp = await page.context().newCDPSession(page);
  await page.click('text=none');
  const ids = (await page.$$eval('input[name="task"]', (els) => els.map((e) => (e as HTMLInputElement).value))).slice(
    0,
    TASKS,
  );
  for (const id of ids) await page.check(`input[name="task"][value="${id}"]`);
  await page.fill('#trials', String(TRIALS));
  await page.fill('#workers', String(workers));
  await page.selectOption('#batch-agent', 'reference');
  const peaks: Peaks = {
    mainHeap: 0,
    pageJs: 0,
    workerHeap: 0,
    workers: 0,
    rss: 0,
    pss: 0,
    processes: 0,
    rollouts: '',
    ms: 0,
  };
  const done = () =>
    page.evaluate(
      () =>
        / · (done|cancelled)$/.test(document.querySelector('#batch-status')?.textContent ?? '') ||
        !!document.querySelector('.batch [role="alert"]'),
    );
  const t0 = performance.now();
  await page.click('#batch-run');
  do {
    const { usedSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
    const js = await page.evaluate(jsMemory);
    const m = chromiumMemory();
    peaks.mainHeap = Math.max(peaks.mainHeap, usedSize);
    peaks.pageJs = Math.max(peaks.pageJs, js.window);
    peaks.workerHeap = Math.max(peaks.workerHeap, js.workers);
    peaks.workers = Math.max(peaks.workers, js.count);
    peaks.rss = Math.max(peaks.rss, m.rss);
    peaks.pss = Math.max(peaks.pss, m.pss);
    peaks.processes = Math.max(peaks.processes, m.processes);
    await page.waitForTimeout(EVERY_MS);
  } while (!(await done()));
  peaks.ms = performance.now() - t0;
  peaks.rollouts = (await page.textContent('#batch-status')) ?? '';
  if (await page.locator('.batch [role="alert"]').count())
    throw new Error(`batch failed: ${await page.textContent('.batch [role="alert"]')}`);
  await cdp.detach();
  return peaks;
}

/** Lines of the page-memory benchmark, or why it was skipped. */
export async function pageMemoryLines(): Promise<string[]> {
  let airline: string;
  try {
    airline = testData('airline').replace(/\/$/, '');
  } catch (e) {
    return [`  tau2-bench airline data not found: skipped (${(e as Error).message.split('\n')[0]})`];
  }
  const dist = await buildPage();
  const server = await serve(dist);
  const browser = await launch(['--enable-blink-features=ForceEagerMeasureMemory']);
  // Cross-origin isolation, for measureUserAgentSpecificMemory.
  await browser.context.route(`${server.url}**`, async (route) => {
    const response = await route.fetch();
    await route.fulfill({
      response,
      headers: {
        ...response.headers(),
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
      },
    });
  });
  const lines: string[] = [];
  try {
    for (const workers of [1, TASKS]) {
      const page = await browser.context.newPage();
      await page.goto(`${server.url}#/browse`);
      await page.waitForSelector('#tau2-folder');
      await page.setInputFiles('#tau2-folder', airline);
      await page.waitForFunction(
        () => document.querySelector('.lede strong')?.textContent === 'tau2-airline',
        undefined,
        {
          timeout: 60_000,
        },
      );
      await page.click('a[data-view="batch"]');
      await page.waitForSelector('#batch-run');
      const before = chromiumMemory();
      const p = await batchPeaks(page, workers);
      const mib = (b: number) => `${(b / MIB).toFixed(0)} MiB`;
      lines.push(
        `  ${String(workers).padStart(2)} worker${workers > 1 ? 's' : ' '} (${workers} rollout${workers > 1 ? 's' : ''} at once; ${p.rollouts}, ${(p.ms / 1000).toFixed(1)} s): peak JS heap of the main thread ${mib(p.mainHeap)} (CDP) · JS memory of the window ${mib(p.pageJs)}, of the workers ${mib(p.workerHeap)} (up to ${p.workers} workers measured at once, the page’s own runtime worker included) · chromium processes (${p.processes}) RSS ${mib(p.rss)}, PSS ${mib(p.pss)} (before the batch: RSS ${mib(before.rss)}, PSS ${mib(before.pss)})`,
      );
      await page.close();
    }
  } finally {
    await browser.close();
    await server.close();
    await rm(dist, { recursive: true, force: true });
  }
  lines.push(
    `  (sampled every ${EVERY_MS} ms; tau2-airline ${TASKS} tasks × ${TRIALS} trials, reference agent, scripted caller)`,
  );
  return lines;
}
