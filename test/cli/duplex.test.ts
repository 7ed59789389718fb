import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('switchboard run --duplex / --subset and switchboard metrics on our runs', () => {
  it('--subset backchannel: its own metric table, summary metrics, stereo WAV and labels; metrics re-reads the run', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-duplex-'));
    dirs.push(out);
    const io = capture();
    const code = await main(
      ['run', '--domain', 'carrier', '--subset', 'backchannel', '--task-ids', 'carrier-pay-balance-1', '--out', out],
      io,
    );
    expect(code).toBe(0);
    const lines = io.stdout.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith('Interaction metrics · subset backchannel'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]!.split(/\s{2,}/)).toEqual(['domain', 'L_R ↓', 'R_R ↑', 'S_BC ↑', 'calls']);
    // One call: every value rests on fewer than 10 events, so the table shows the counts.
    expect(lines[at + 3]!.split(/\s+/)).toEqual(['carrier', 'n=3', 'n=3', 'n=4', '1']);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    expect(summary.settings.duplex).toEqual({ subset: 'backchannel' });
    expect(summary.settings.channel).toMatchObject({ preset: 'clean', barge_in: 1, mix: { backchannel: 1 } });
    expect(summary.tasks[0].rewards).toEqual([1]);
    // Replies after 0, 2 and 1 tool calls: 0.6 s, 0.6 + 0.8 s and 0.6 + 0.4 s.
    const carrier = summary.interaction_metrics.domains.carrier;
    expect(carrier.response_latency_mean).toBeCloseTo((0.6 + 1.4 + 1.0) / 3, 12);
    expect(carrier).toMatchObject({ response_rate: 1, selectivity_backchannel: 1, agent_interruption_rate: 0 });
    expect(carrier.counts).toEqual({
      n_simulations: 1,
      response_total: 3,
      yield_total: 0,
      backchannel_total: 4,
      vocal_tic_total: 0,
      non_directed_total: 0,
      agent_interrupts_count: 0,
    });
    const t = Trajectory.parse(JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim()));
    const d = t.duplex!;
    expect(d.audio).toEqual({
      stereo: 'audio/carrier/carrier-pay-balance-1/0-0/call.stereo.wav',
      labels: 'audio/carrier/carrier-pay-balance-1/0-0/call.labels.txt',
    });
    const wav = new wavefile.WaveFile(new Uint8Array(await readFile(join(out, d.audio!.stereo))));
    expect((wav.fmt as { numChannels: number }).numChannels).toBe(2);
    expect((wav.data as { chunkSize: number }).chunkSize).toBe(d.total_ticks * 3200 * 2 * 2);
    const labels = (await readFile(join(out, d.audio!.labels), 'utf8')).trimEnd().split('\n');
    expect(labels.map((l) => l.split('\t').length)).toEqual(d.spans.map(() => 3));
    expect(labels.filter((l) => l.includes('caller backchannel'))).toHaveLength(4);
    const m = capture();
    expect(await main(['metrics', out, '--json'], m)).toBe(0);
    expect(JSON.parse(m.stdout).domains).toEqual(summary.interaction_metrics.domains);
  }, 120_000);

  it('bad input: an unknown subset exits 2; metrics of a turn-based run says it needs --duplex', async () => {
    const bad = capture();
    expect(await main(['run', '--domain', 'carrier', '--subset', 'nope'], bad)).toBe(2);
    expect(bad.stderr).toMatch(
      /--subset must be one of backchannel, user-interruption, talking-to-others, background-speech/,
    );
    const out = await mkdtemp(join(tmpdir(), 'sb-duplex-'));
    dirs.push(out);
    await writeFile(join(out, 'trajectories.jsonl'), '{"valid": true, "domain": "carrier"}\n');
    const none = capture();
    expect(await main(['metrics', out], none)).toBe(2);
    expect(none.stderr).toMatch(/no valid call has a tick timeline \(run with --duplex\)/);
    await writeFile(join(out, 'trajectories.jsonl'), '{"valid": true, "domain": "carrier", "duplex": {"spans": 3}}\n');
    const broken = capture();
    expect(await main(['metrics', join(out, 'trajectories.jsonl')], broken)).toBe(2);
    expect(broken.stderr).toMatch(/trajectories\.jsonl: line 1: duplex\.subset: /);
    // A folder holding run outputs (as `runs/` after `run --out runs/a`): the error names them.
    const parent = await mkdtemp(join(tmpdir(), 'sb-runs-'));
    dirs.push(parent);
    await mkdir(join(parent, 'a'));
    await writeFile(join(parent, 'a', 'trajectories.jsonl'), '');
    const runs = capture();
    expect(await main(['metrics', parent], runs)).toBe(2);
    expect(runs.stderr).toContain(
      `${parent}: no results.json in this folder or below it; a run's output is read when named itself, its --out folder or trajectories.jsonl (below it: ${join(parent, 'a')})`,
    );
  }, 60_000);
});

describe('GRPO rows of duplex calls', () => {
  it('groups --subset backchannel: each row carries its call’s interaction metrics beside an unchanged reward', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-duplex-'));
    dirs.push(dir);
    const args = ['groups', '--domain', 'carrier', '--granularity', 'conversation', '--k', '2'];
    const ids = ['--task-ids', 'carrier-pay-balance-1'];
    expect(await main([...args, ...ids, '--subset', 'backchannel', '--out', join(dir, 'd.jsonl')], capture())).toBe(0);
    expect(await main([...args, ...ids, '--out', join(dir, 't.jsonl')], capture())).toBe(0);
    const read = async (f: string) =>
      (await readFile(join(dir, f), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    const duplex = await read('d.jsonl');
    const turnBased = await read('t.jsonl');
    expect(duplex.map((r) => r.final_reward)).toEqual(turnBased.map((r) => r.final_reward));
    expect(duplex.map((r) => r.final_reward)).toEqual([1, 1]);
    expect(turnBased.map((r) => r.interaction_metrics)).toEqual([null, null]);
    for (const r of duplex) {
      expect(r.interaction_metrics).toMatchObject({ selectivity_backchannel: 1, response_rate: 1 });
      expect(r.interaction_metrics.counts).toMatchObject({ response_total: 3, backchannel_total: 4 });
    }
  }, 120_000);
});
