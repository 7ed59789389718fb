/**
 * Issue 17 item 4 in the page: the realtime voice agent (an OpenAI-Realtime-compatible WebSocket
 * server, here our fake one in Node) chosen in the Watch and Batch forms of a real chromium. The
 * call goes through our tools and scoring over the browser's WebSocket: exact transcript (an
 * unknown tool call becomes an error tool message, the episode goes on), reward 1. The key typed
 * in the form reaches the server as a subprotocol, and neither it nor the URL is in the share link
 * or the stored call. The agent hears the caller: each caller turn goes to the server as PCM16
 * appends at its session's 24 kHz (the degraded WAV with channel audio, espeak-ng speech
 * without), never as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Turn, UserTurn } from '../../src/core/schema/trajectory.ts';
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
    // The agent heard the caller: every caller turn it answered went as audio (espeak-ng in the
    // page, the caller's voice; the call has no channel), none as text.
    const events = server.received.at(-1)!;
    const userTexts = events.filter(
      (e) => e.type === 'conversation.item.create' && (e.item as { role?: string }).role === 'user',
    );
    expect(userTexts).toHaveLength(0);
    const heard = server.conversations.at(-1)!.filter((i) => i.role === 'user');
    expect(heard.length).toBe(3);
    for (const i of heard) expect(i.audioBytes! % 2 === 0 && i.audioBytes! > 24_000).toBe(true);
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

  it('Watch with channel audio: the server gets each caller turn as 24 kHz PCM16 appends of exactly its degraded audio', async () => {
    const page = await openPage(context, url, pageErrors, '#/watch');
    await page.waitForSelector('#task');
    await page.selectOption('#task', TASK);
    await page.selectOption('#pace', '0');
    await page.check('#channel-audio');
    await chooseRealtime(page, '#agent');
    const before = server.received.length;
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 60_000 });
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('1');
    expect(server.received.length).toBe(before + 1);
    const events = server.received.at(-1)!;
    // The stored call: each caller turn's degraded WAV lasts `duration_ms` (16 samples per ms).
    const records = JSON.parse(await storedRecords(page)) as { trajectory?: { turns: Turn[] } | null }[];
    const t = records.map((r) => r.trajectory).find((x) => x?.turns.some((y) => y.role === 'user' && y.audio))!;
    const lastReply = t.turns.map((x) => x.role).lastIndexOf('assistant');
    const spoken = t.turns.filter((x, i): x is UserTurn => x.role === 'user' && !!x.audio && i < lastReply);
    expect(spoken.length).toBe(3);
    // At 24 kHz that is round(16 · duration_ms · 24000 / 16000) samples of 2 bytes, in appends of
    // at most 500 ms (24,000 bytes), then one commit per turn; no caller text.
    const want = spoken.map((x) => Math.round((x.audio!.duration_ms * 16 * 24_000) / 16_000) * 2);
    expect(
      server.conversations
        .at(-1)!
        .filter((i) => i.role === 'user')
        .map((i) => i.audioBytes),
    ).toEqual(want);
    const runs: number[][] = [[]];
    for (const e of events) {
      if (e.type === 'input_audio_buffer.append') runs.at(-1)!.push(Buffer.from(String(e.audio), 'base64').length);
      if (e.type === 'input_audio_buffer.commit') runs.push([]);
    }
    runs.pop();
    expect(runs.map((r) => r.reduce((a, b) => a + b, 0))).toEqual(want);
    for (const r of runs) {
      expect(r.slice(0, -1).every((n) => n === 24_000)).toBe(true);
      expect(r.at(-1)!).toBeGreaterThan(0);
      expect(r.at(-1)!).toBeLessThanOrEqual(24_000);
    }
    expect(
      events.filter((e) => e.type === 'conversation.item.create' && (e.item as { role?: string }).role === 'user'),
    ).toHaveLength(0);
    await page.close();
  }, 120_000);

  it('Watch against a server that floods its greeting with endless audio: cut at 120 s, response.cancel sent once, the call valid and scored 0 by QUALITY', async () => {
    const flooding = await startRealtimeServer(
      planReplies(domain, TASK, [], (r, ctx) => (ctx.assistantTurns === 0 ? { ...r, flood: { kind: 'audio' } } : r)),
    );
    cleanup.push(() => flooding.close());
    const page = await openPage(context, url, pageErrors, '#/watch');
    await page.waitForSelector('#task');
    await page.selectOption('#task', TASK);
    await page.selectOption('#pace', '0');
    await page.selectOption('#agent', 'realtime');
    await page.fill('input[name="realtime-url"]', flooding.url.replace(/\?.*$/, ''));
    await page.fill('input[name="realtime-model"]', 'fake-realtime');
    await page.click('#run');
    await page.waitForSelector('#termination', { timeout: 90_000 });
    expect(await page.textContent('#termination')).toContain('user_stop');
    expect(await page.getAttribute('#reward-breakdown .reward-value', 'data-reward')).toBe('0');
    // The greeting went on past 120 s of audio: cut there, cancelled once; the rest of the call as the reference.
    expect(flooding.received.map((events) => events.filter((e) => e.type === 'response.cancel').length)).toEqual([1]);
    expect(flooding.flooded[0]).toBeGreaterThan(1195);
    const records = JSON.parse(await storedRecords(page)) as {
      trajectory?: { turns: Turn[]; valid: boolean } | null;
    }[];
    const t = records.map((r) => r.trajectory).find((x) => x?.turns[0]?.role === 'assistant' && 'capped' in x.turns[0]);
    expect(t?.valid).toBe(true);
    expect(t!.turns[0]).toMatchObject({
      text: domain.greeting,
      capped: { limit: 'audio_s', max: 120, ended: 'done' },
      generation: { finish_reason: 'cancelled; cut at the audio_s limit' },
    });
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
    // Each rollout's agent heard the caller as audio, never as text.
    for (const [i, events] of server.received.slice(before).entries()) {
      expect(events.filter((e) => e.type === 'input_audio_buffer.commit')).toHaveLength(3);
      expect(server.conversations[before + i]!.filter((x) => x.role === 'user' && x.text !== undefined)).toHaveLength(
        0,
      );
    }
    const row = page.locator('#batch-results tbody tr', { hasText: TASK });
    // Valid, passed, mean reward, pass^1, pass^2, difficulty.
    expect(await row.locator('td').allTextContents()).toEqual(['2', '2', '1', '1', '1', 'always passed']);
    await page.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
