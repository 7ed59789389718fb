/**
 * Issue 17: a runaway agent reply on the duplex timeline. A fake OpenAI-compatible endpoint
 * answers every request with 1 MB of text; the reply is cut to MAX_REPLY_CHARS for the
 * trajectory (QUALITY fails it) and only its first MAX_SPOKEN_AGENT_CHARS are spoken, the rest
 * marked unspoken on the span and in the labels, so a call cannot cost minutes of synthesis.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { MAX_SPOKEN_AGENT_CHARS } from '../../src/core/duplex/timeline.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { completion, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';

const MODEL = 'runaway-test';
/** 1 MB of English words (5-character words and spaces). */
const HUGE = 'words '.repeat(1_000_000 / 6);
let server: TestServer;

beforeAll(async () => {
  server = await startOpenAiServer(() => ({ json: completion({ model: MODEL, content: HUGE }) }));
});
afterAll(() => server.close());

describe('a 1 MB agent reply on the duplex timeline', () => {
  it(`is spoken only up to ${MAX_SPOKEN_AGENT_CHARS} characters, the rest marked unspoken; the call stays valid`, async () => {
    const out = mkdtempSync(join(tmpdir(), 'sb-runaway-'));
    const io = capture();
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--task-ids',
        'carrier-pay-balance-1',
        '--agent',
        `openai:${MODEL}@${server.url}`,
        '--duplex',
        '--max-steps',
        '6',
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(code, io.stderr).toBe(0);
    const [t] = readFileSync(join(out, 'trajectories.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(t!.valid).toBe(true);
    expect(t!.reward_info!.reward).toBe(0);
    const agent = t!.duplex!.spans.filter((s) => s.who === 'agent');
    expect(agent.length).toBeGreaterThan(0);
    for (const s of agent) {
      // 166 words of "words " end within 1,000 characters: 996 characters spoken (trailing space trimmed: 995).
      expect(s.text.trim()).toBe('words '.repeat(166).trim());
      expect(s.unspoken_chars).toBe(16_000 - s.text.length);
      // About 70 s of English speech at most (200 ms ticks), not the 11 minutes of the whole cut reply.
      expect((s.end_tick - s.start_tick) * 0.2).toBeLessThan(90);
    }
    const dir = join(out, 'audio', 'carrier', 'carrier-pay-balance-1', '0-0');
    expect(readdirSync(dir)).toContain('call.labels.txt');
    expect(readFileSync(join(dir, 'call.labels.txt'), 'utf8')).toContain(
      `[${16_000 - agent[0]!.text.length} more characters not spoken]`,
    );
  }, 300_000);
});
