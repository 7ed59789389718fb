/**
 * tau2-telecom in the page's rollout worker (driven in Node): a telecom data folder opened from
 * disk or downloaded is recognized and loaded (base split), its tools of both sides are described,
 * and a reference call runs with the scripted caller working their phone.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { createRolloutService } from '../../src/adapters/browser/rollout-service.ts';
import { testData } from '../fixtures/data.ts';

const service = createRolloutService(() => sqlJsFactory());
const DIR = testData('telecom');

async function folderTexts(skip: readonly string[] = []): Promise<Record<string, string>> {
  const names = (await readdir(DIR)).filter((n) => /\.(toml|json|md)$/.test(n) && !skip.includes(n));
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await readFile(join(DIR, n), 'utf8')])));
}

describe('tau2-telecom in the page worker', () => {
  it('refuses a telecom folder without its user database, naming the file', async () => {
    await expect(service.openTau2(await folderTexts(['user_db.toml']), 'telecom')).rejects.toThrow(
      "telecom: not tau2-bench's telecom data folder (missing user_db.toml)",
    );
  });

  it('opens the folder, describes both sides, and runs a reference call to reward 1', async () => {
    expect(await service.openTau2(await folderTexts(), 'telecom')).toEqual({ name: 'tau2-telecom', tasks: 114 });
    const d = await service.describe('tau2-telecom');
    expect(d.tools.filter((t) => t.side === 'agent')).toHaveLength(13);
    expect(d.tools.filter((t) => t.side === 'user')).toHaveLength(30);
    expect(d.tables.find((t) => t.name === 'user_device')?.rows).toBe(1);
    const t = await service.runCall(
      {
        domain: 'tau2-telecom',
        taskId: '[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]',
        seed: 0,
        preset: 'clean',
        agent: { kind: 'reference' },
        user: { kind: 'scripted' },
      },
      () => undefined,
    );
    expect(t.reward_info?.reward).toBe(1);
    expect(t.turns.filter((x) => x.role === 'tool').map((x) => (x.role === 'tool' ? x.name : ''))).toEqual([
      'toggle_airplane_mode',
      'toggle_data',
    ]);
  }, 60_000);
});
