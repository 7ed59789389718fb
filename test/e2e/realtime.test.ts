/**
 * Issue 17 item 4 in the page: the realtime voice agent (an OpenAI-Realtime-compatible WebSocket
 * server, here our fake one in Node) chosen in the Watch and Batch forms of a real chromium. The
 * call goes through our tools and scoring over the browser's WebSocket: exact transcript (an
 * unknown tool call becomes an error tool message, the episode goes on), reward 1. The key typed
 * in the form reaches the server as a subprotocol, and neither it nor the URL is in the share link
 * or the stored call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { planReplies, startRealtimeServer, type RealtimeTestServer } from '../fixtures/realtime-server.ts';
import { chromiumSession, openPage, PAY_BALANCE_TRANSCRIPT, storedRecords, transcript } from './harness.ts';

const TASK = 'carrier-pay-balance-1';
const KEY = 'ek-short-lived-test-key';
let url = '';
let context: BrowserContext;
let domain: Domain;
let server: RealtimeTestServer;
const cleanup: (() => Promise<void>)[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  server = await startRealtimeServer(
    planReplies(domain, TASK, [{ at: 4, reply: { calls: [{ name: 'teleport_money', arguments: '{"amount": 5}' }] } }]),
  );
  cleanup.push(() => server.close());
  const session = await chromiumSession();
  cleanup.push(session.close);
  ({ url, context } = session);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

/** Choose the realtime agent and fill its form: the server's URL without the model, the model, the key. */
async function chooseRealtime(page: Page, select: string): Promise<void> {
  await page.selectOption(select, 'realtime');
  await page.fill('input[name="realtime-url"]', server.url.replace(/\?.*$/, ''));
  await page.fill('input[name="realtime-model"]', 'fake-realtime');
  await page.fill('input[name="realtime-key"]', KEY);
}

describe('the realtime agent in the page (chromium, fake OpenAI-Realtime server)', () => {
  it('Watch: plays the call through our tools and scoring over the browser WebSocket; the key goes only to the server', async () => {
    const page = await openPage(context, url, pageErrors, '#/watch');
    await page.waitForSelector('#task');
    await page.selectOption('#task', TASK);
    await page.selectOption('#pace', '0');
    await chooseRealtime(page, '#agent');
    expect(await page.textContent('[data-endpoint="realtime"] .key-origin')).toBe(
      `sent only to ${new URL(server.url).origin}, as a WebSocket subprotocol (use a short-lived key)`,
    );
    const before = server.received.length;
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 60_000 });
    // The reference call with the unknown tool's call (and its error message) after get_bills.
    expect(await transcript(page)).toEqual([
      ...PAY_BALANCE_TRANSCRIPT.slice(0, 8),
      'assistant: → teleport_money({"amount":5})',
      'tool: teleport_money error',
      ...PAY_BALANCE_TRANSCRIPT.slice(8),
    ]);
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    // One session for the call, opened with the model in the URL and the key as a subprotocol.
    expect(server.received.length).toBe(before + 1);
    expect(server.headers.at(-1)!['sec-websocket-protocol']).toBe(`realtime, openai-insecure-api-key.${KEY}`);
    expect(server.received.at(-1)!.filter((e) => e.type === 'response.create').length).toBe(8);
    // The share link names the agent by kind only: no URL, no key.
    const link = (await page.getAttribute('#share-link', 'href'))!;
    expect(new URL(link).hash).toContain('agent=realtime');
    expect(link).not.toContain(String(new URL(server.url).port));
    expect(link).not.toContain(KEY);
    // The stored call (IndexedDB) names the agent by its URL (credentials redacted) and holds no key.
    const stored = await storedRecords(page);
    expect(stored).toContain('"agent":"realtime:ws://127.0.0.1');
    expect(stored).not.toContain(KEY);
    await page.close();
  }, 120_000);

  it('Batch: two rollouts of the task with the realtime agent, both scored 1', async () => {
    const page = await openPage(context, url, pageErrors, '#/batch');
    await page.waitForSelector('#batch-run');
    await page.click('text=none');
    await page.check(`input[value="${TASK}"]`);
    await page.fill('#trials', '2');
    await page.fill('#workers', '1');
    await chooseRealtime(page, '#batch-agent');
    const before = server.received.length;
    await page.click('#batch-run');
    await page.waitForFunction(
      () => document.querySelector('#batch-status')?.textContent?.includes('done'),
      undefined,
      {
        timeout: 90_000,
      },
    );
    expect(await page.textContent('#batch-status')).toBe('2 / 2 rollouts · done');
    expect(server.received.length).toBe(before + 2);
    const row = page.locator('#batch-results tbody tr', { hasText: TASK });
    // Valid, passed, mean reward, pass^1, pass^2, difficulty.
    expect(await row.locator('td').allTextContents()).toEqual(['2', '2', '1', '1', '1', 'always passed']);
    await page.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
