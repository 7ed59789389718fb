/**
 * The bench's line for a section whose tau2-bench side is not measured (issue 15 item 1: say
 * clearly what is skipped): it names the section's own command and the Python packages its script
 * needs (the channel section's hint used to give the tau2 section's command and pydantic).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tau2AnchorLines, tau2DataMissing, tau2DataRoot, tau2Src } from '../../bench/tau2-anchor.ts';
import { tau2CacheDir } from '../../src/adapters/node/tau2-data.ts';
import { tau2WritesLines } from '../../bench/tau2-writes.ts';

const saved = process.env.SWITCHBOARD_TAU2_SRC;
afterEach(() => {
  if (saved === undefined) delete process.env.SWITCHBOARD_TAU2_SRC;
  else process.env.SWITCHBOARD_TAU2_SRC = saved;
});

const how = (section: string, needs: string) =>
  `to measure it in this run: \`git clone https://github.com/sierra-research/tau2-bench /tmp/tau2-bench && git -C /tmp/tau2-bench checkout a2c024725189\` (the commit of the data; or \`git archive\` of a local copy), then \`SWITCHBOARD_TAU2_SRC=/tmp/tau2-bench npm run bench -- ${section}\` (${needs})`;

describe('bench: where tau2-bench is not measured', () => {
  it('unset: says so, with the asking section’s command and packages', () => {
    delete process.env.SWITCHBOARD_TAU2_SRC;
    expect(tau2Src('channel', 'python3 with numpy and scipy')).toEqual({
      missing: `tau2-bench's Python not measured (SWITCHBOARD_TAU2_SRC not set); ${how('channel', 'python3 with numpy and scipy')}`,
    });
    expect(tau2Src()).toEqual({
      missing: `tau2-bench's Python not measured (SWITCHBOARD_TAU2_SRC not set); ${how('tau2', 'python3 with pydantic 2; tau2’s LLM and UI dependencies are not needed')}`,
    });
  });

  it('a folder without tau2-bench: names it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-no-tau2-'));
    try {
      process.env.SWITCHBOARD_TAU2_SRC = dir;
      expect(tau2Src('tau2-writes')).toEqual({
        missing: `tau2-bench's Python not measured: SWITCHBOARD_TAU2_SRC=${dir} has no tau2/domains/airline/tools.py nor src/tau2/…; ${how('tau2-writes', 'python3 with pydantic 2; tau2’s LLM and UI dependencies are not needed')}`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('no tau2 data: the tau2 and tau2-writes sections each print one line saying so and how to get it, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-no-tau2-data-'));
    try {
      const line = `  tau2 data not found at ${dir}: skipped (run \`npx switchboard data tau2\` to download it into ${tau2CacheDir()}, or set SWITCHBOARD_TAU2_DATA to a folder holding airline/ and retail/)`;
      expect(tau2DataMissing(dir)).toBe(line);
      expect(await tau2AnchorLines(dir)).toEqual([line]);
      // It threw "Error: Error: …/airline/: no such tau2-bench data folder" from a child process.
      expect(await tau2WritesLines(dir)).toEqual([line]);
      // SWITCHBOARD_TAU2_DATA, which the CLI reads, is where the bench looks first too.
      expect(tau2DataRoot({ SWITCHBOARD_TAU2_DATA: dir })).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
