import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import type { BankManifest, EvolveReport } from '../../src/core/evolution/index.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'sb-harden-'));
  dirs.push(d);
  return d;
};

describe('switchboard evolve --harden', () => {
  it('hardens always-passed carrier tasks, writes the bank, and a later run reads it', async () => {
    const dir = await tmp();
    const io = capture();
    const args = ['evolve', '--domain', 'carrier', '--agent', 'noisy:0.2,tell=0.1', '--k', '8', '--rounds', '2'];
    expect(await main([...args, '--harden', '--out', dir], io)).toBe(0);
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
    expect(report.rounds.map((r) => [r.labels.histogram.always_pass, r.labels.histogram.boundary])).toEqual([
      [6, 9],
      [3, 12],
    ]);
    expect(io.stdout).toContain(
      '  round 0 carrier-transfer-human-1~misremembered_value.0: admitted (the caller first gives phone as 18377459102 (digits swapped; the right value is 13877459102))',
    );
    expect(io.stderr).toBe(`wrote report.json, weights.json, trajectories.jsonl and bank/ to ${dir}\n`);
    const manifest = JSON.parse(await readFile(join(dir, 'bank', 'manifest.json'), 'utf8')) as BankManifest;
    expect(manifest.tasks.filter((t) => t.origin === 'base')).toHaveLength(15);
    const own = manifest.tasks.filter((t) => t.origin === 'bank');
    expect(own).toHaveLength(9);
    expect(own[8]).toMatchObject({
      task_id: 'carrier-transfer-human-1~misremembered_value.0~near_duplicate_record.8',
      version: 1,
      parent: { task_id: 'carrier-transfer-human-1~misremembered_value.0', version: 1 },
      generation: 2,
    });
    expect(own[8]!.changes.map((c) => c.by)).toEqual(['hard-pattern:near_duplicate_record']);

    // The bank's tasks run as the domain's: the reference passes the second-generation variant.
    const again = await tmp();
    const io2 = capture();
    const variant = own[8]!.task_id;
    const more = ['--bank', join(dir, 'bank'), '--task-ids', variant, '--agent', 'reference', '--k', '2', '--json'];
    expect(await main(['evolve', '--domain', 'carrier', ...more, '--out', again], io2)).toBe(0);
    const r = JSON.parse(io2.stdout) as EvolveReport;
    expect(r.rounds[0]!.labels.tasks.map((t) => [t.task_id, t.label])).toEqual([[variant, 'always_pass']]);

    // A bank for another domain, or a malformed task in it, is refused naming file and field.
    const bad = await tmp();
    await cp(join(dir, 'bank'), bad, { recursive: true });
    await writeFile(join(bad, 'manifest.json'), JSON.stringify({ ...manifest, domain: 'tau2-retail' }));
    const io3 = capture();
    expect(await main(['evolve', '--domain', 'carrier', '--bank', bad, '--out', again], io3)).toBe(2);
    expect(io3.stderr).toBe(
      `switchboard: ${join(bad, 'manifest.json')}: domain: the bank is for domain "tau2-retail", not "carrier"\n`,
    );
    await writeFile(join(bad, 'tasks.json'), '[{"id": 3}]');
    const io4 = capture();
    expect(await main(['evolve', '--domain', 'carrier', '--bank', bad, '--out', again], io4)).toBe(2);
    expect(io4.stderr).toBe(
      `switchboard: ${join(bad, 'tasks.json')}: [0].user_scenario: Invalid input: expected object, received undefined\n`,
    );
    const io5 = capture();
    expect(await main([...args, '--harden', '--patterns', 'nope', '--out', again], io5)).toBe(2);
    expect(io5.stderr).toMatch(/^switchboard: --patterns: unknown task pattern "nope" \(known: db_contradicts_claim, /);
  });
});

describe('switchboard evolve --harden on tau2-retail: a derived bank', { tags: ['tau2-data'] }, () => {
  it('writes variants of tau2 tasks to the bank and leaves the tau2 task file alone', async () => {
    const dir = await tmp();
    const data = testData('retail');
    const before = await readFile(join(data, 'tasks.json'), 'utf8');
    const args = ['evolve', '--domain', 'tau2-retail', '--data', data, '--task-ids', '0,1', '--k', '2'];
    expect(await main([...args, '--harden', '--out', dir], capture())).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, 'bank', 'manifest.json'), 'utf8')) as BankManifest;
    expect(manifest.domain).toBe('tau2-retail');
    expect(manifest.tasks.filter((t) => t.origin === 'bank').map((t) => [t.task_id, t.parent])).toEqual([
      ['0~db_contradicts_claim.0', { task_id: '0', version: 1 }],
      ['1~misremembered_value.0', { task_id: '1', version: 1 }],
    ]);
    expect(await readFile(join(data, 'tasks.json'), 'utf8')).toBe(before);
  });
});

describe('switchboard evolve --harden-channel', () => {
  it('moves always-passed tasks up the channel ladder, one round at a time, and says so', async () => {
    const dir = await tmp();
    const io = capture();
    const args = ['evolve', '--domain', 'carrier', '--agent', 'noisy:0.3', '--k', '4', '--rounds', '2'];
    const ids = ['--task-ids', 'carrier-pay-balance-1,carrier-bill-inquiry-1'];
    expect(await main([...args, ...ids, '--preset', 'clean', '--harden-channel', '--out', dir], io)).toBe(0);
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
    expect(report.rounds.map((r) => r.labels.tasks.map((t) => [t.task_id, t.successes]))).toEqual([
      [
        ['carrier-pay-balance-1', 4],
        ['carrier-bill-inquiry-1', 4],
      ],
      [
        ['carrier-pay-balance-1~harsher_channel.0', 1],
        ['carrier-bill-inquiry-1~harsher_channel.0', 4],
      ],
    ]);
    expect(io.stdout).toContain(
      [
        '  round 0 carrier-pay-balance-1~harsher_channel.0: admitted (channel clean → control)',
        '  round 0 carrier-bill-inquiry-1~harsher_channel.0: admitted (channel clean → control)',
        '  round 1 carrier-bill-inquiry-1~harsher_channel.0~harsher_channel.4: admitted (channel control → regular)',
      ].join('\n'),
    );
    expect(report.summary.hardened[2]!.channel).toEqual({
      from: { preset: 'control', barge_in: 0 },
      to: { preset: 'regular', barge_in: 0 },
    });
  }, 120_000);

  it('refuses without a preset and with a barge-in off the ladder', async () => {
    const dir = await tmp();
    const base = ['evolve', '--domain', 'carrier', '--k', '1', '--harden-channel', '--out', dir];
    const a = capture();
    expect(await main(base, a)).toBe(2);
    expect(a.stderr).toBe('switchboard: --harden-channel needs the phone channel: give --preset\n');
    const b = capture();
    expect(await main([...base, '--preset', 'clean', '--barge-in', '0.2'], b)).toBe(2);
    expect(b.stderr).toBe(
      'switchboard: --harden-channel: channel level {"preset":"clean","barge_in":0.2} is not on the harsher_channel ladder (--barge-in must be one of its steps)\n',
    );
  });
});
