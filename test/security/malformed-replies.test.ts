/**
 * Issue 11, items 2 and 3 end to end: `switchboard run --out` with a model agent whose endpoint
 * sends each malformed reply of the corpus (test/fixtures/attacks/replies/). The run exits 0,
 * every rollout is valid, the reply becomes what the corpus says (an error tool message, a cut
 * reply), and trajectories.jsonl holds it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonl } from '../../src/adapters/node/training-files.ts';
import { main } from '../../src/cli/main.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { completion, startOpenAiServer } from '../fixtures/openai-server.ts';
import { MALFORMED_REPLIES } from '../fixtures/attacks/replies/malformed.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('malformed model replies through run --out', () => {
  it.each(MALFORMED_REPLIES.map((r) => [r.name, r] as const))('%s', async (_n, r) => {
    const goodbye = JSON.stringify(completion({ model: 'attacker', content: 'Goodbye. ###STOP###' }));
    const first = goodbye.replace(/"message":\{[^}]*\}/, `"message":${r.message}`);
    const server = await startOpenAiServer((_body, i) => ({
      raw: i === 0 ? first : goodbye,
      headers: { 'content-type': 'application/json' },
    }));
    try {
      const out = await mkdtemp(join(tmpdir(), 'sb-malformed-'));
      dirs.push(out);
      const io = capture();
      const code = await main(
        [
          'run',
          '--domain',
          'carrier',
          '--agent',
          `openai:attacker@${server.url}`,
          '--task-ids',
          'carrier-pay-balance-1',
          '--out',
          out,
          '--json',
        ],
        io,
      );
      expect(code, io.stderr).toBe(0);
      const [t] = await readJsonl(join(out, 'trajectories.jsonl'), Trajectory);
      expect(t!.valid, t!.invalid_reason ?? '').toBe(true);
      const tool = t!.turns.find((x) => x.role === 'tool');
      expect(tool && tool.role === 'tool' ? tool.content : null).toBe(r.tool);
      const said = t!.turns[0]!;
      if (r.oversize) {
        expect(said.role === 'assistant' && [said.text.length, said.oversize !== undefined]).toEqual([
          r.oversize,
          true,
        ]);
        expect(t!.reward_info?.components.QUALITY?.score).toBe(0);
      }
    } finally {
      await server.close();
    }
  });
});
