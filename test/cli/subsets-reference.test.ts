import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { SUBSET_NAMES } from '../../src/core/duplex/turn-taking.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

// The sandbox's own reference agent with the scripted caller must solve every carrier task in
// every Full-Duplex-Bench-style subset (espeak-ng speech, the regular channel, seed 0): a 0 here
// is the scripted caller or a check being wrong, not the agent (QA found carrier-change-plan-1 at
// 0 in user-interruption: an urge answered by the rest of the greeting counted as "starting over"
// was the reference's fault; a "correction" giving the caller's phone number for a customer id
// was the caller's).
describe('reference agent over every carrier task in each duplex subset', () => {
  for (const subset of SUBSET_NAMES)
    it(`${subset}: reward 1 on all 15 carrier tasks`, async () => {
      const out = await mkdtemp(join(tmpdir(), `sb-subset-${subset}-`));
      dirs.push(out);
      const io = capture();
      const code = await main(
        ['run', '--domain', 'carrier', '--subset', subset, '--preset', 'regular', '--out', out],
        io,
      );
      expect(code, io.stderr).toBe(0);
      const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
      const rewards = Object.fromEntries(
        (summary.tasks as { task_id: string; rewards: number[] }[]).map((t) => [t.task_id, t.rewards]),
      );
      expect(Object.keys(rewards)).toHaveLength(15);
      expect(rewards).toEqual(Object.fromEntries(Object.keys(rewards).map((id) => [id, [1]])));
    }, 600_000);
});
