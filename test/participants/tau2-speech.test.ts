/**
 * The scripted caller and the reference agent on a real tau2-bench airline task: the caller
 * speaks in the first person, the agent reads the write's arguments out as a person would.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

it('tau2-airline task 11 reads as a phone call', async () => {
  const out = await mkdtemp(join(tmpdir(), 'sb-tau2-speech-'));
  dirs.push(out);
  const args = ['run', '--domain', 'tau2-airline', '--data', testData('airline'), '--task-ids', '11', '--out', out];
  expect(await main(args, capture())).toBe(0);
  const t = JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim()) as {
    turns: { role: string; text?: string }[];
  };
  expect(t.turns.filter((x) => x.role !== 'tool' && x.text).map((x) => `${x.role}: ${x.text}`)).toEqual([
    'assistant: Hi! How can I help you today?',
    'user: I want to remove passenger Sophia from my upcoming round trip flights from LAS to DEN, departure May 19, return is May 20.',
    'assistant: I will change the flights of the reservation: reservation GV1N64, in basic economy, flights HAT003 on May 19, 2024 and HAT290 on May 20, 2024, paying with gift card 1642017. Do you confirm?',
    'user: Yes, please go ahead.',
    'assistant: Just so you know: 5244. Is there anything else I can help you with?',
    'user: No, that is all. Thank you, goodbye.',
  ]);
});
