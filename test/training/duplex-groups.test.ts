/**
 * Issue 17: the full-duplex timeline in milestone- and turn-level GRPO groups. A milestone of a
 * duplex call saves the timeline's state with the database; its forks go on on the timeline from
 * that tick. A fork with the source's seed and generator replays the source call bit for bit
 * (spans, metrics, stereo WAV); forks with other seeds keep the shared prefix and start at the
 * right tick. Each row carries the whole call's interaction metrics beside an unchanged reward.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { parquetReadObjects } from 'hyparquet';
import { grpoParquet } from '../../src/adapters/node/training-files.ts';
import { trlGrpoRows } from '../../src/core/training/trainer-formats.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import type { EpisodeChannel } from '../../src/core/rollout/channel-step.ts';
import { MemoryAudioStore } from '../../src/core/channel/audio-store.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import type { Trajectory, Turn } from '../../src/core/schema/trajectory.ts';
import {
  forkMilestone,
  grpoRows,
  milestoneGroups,
  runWithMilestones,
  scoreGroups,
  sourceEpisode,
  turnGroups,
  ReferenceContinuationAgent,
} from '../../src/core/training/index.ts';
import { MINI_NOW, miniDomain } from '../fixtures/mini-domain.ts';
import { SkipConfirmAgent } from './stochastic-agent.ts';

const TICK = 3200; // samples of a 200 ms tick at 16 kHz
let rt: DomainRuntime;
const clock = (_seed: number, fromMs?: number) => steppingClock(fromMs ?? MINI_NOW, 1000);
const user = () => new ScriptedUser();
const channel = (store = new MemoryAudioStore()): EpisodeChannel => ({
  tts: espeakTts(),
  renderer: nodeGraphRenderer,
  preset: 'clean',
  store,
});

beforeAll(async () => {
  rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
});

/** Turns without their timestamps (a fork's clock starts after the fork point). */
const untimed = (turns: readonly Turn[]) => turns.map(({ t_ms: _t, ...rest }) => rest);

/**
 * The response latencies of a duplex call derived from its turns: every caller turn the agent
 * answers is answered after the agent's 0.6 s wait plus 0.4 s per tool call the agent makes
 * before it speaks (docs/duplex.md's defaults). Returns [mean in s, count].
 */
function expectedResponses(turns: readonly Turn[]): [number | null, number] {
  const lat: number[] = [];
  for (let i = 0; i < turns.length; i++) {
    if (turns[i]!.role !== 'user' || !(turns[i] as { text: string }).text) continue;
    let calls = 0;
    for (let j = i + 1; j < turns.length; j++) {
      const t = turns[j]!;
      if (t.role === 'tool' && t.requestor === 'assistant') calls++;
      if (t.role === 'user') break;
      if (t.role === 'assistant' && t.text) {
        lat.push(0.6 + 0.4 * calls);
        break;
      }
    }
  }
  return [lat.length ? lat.reduce((a, b) => a + b, 0) / lat.length : null, lat.length];
}

describe('duplex milestone groups', () => {
  it('a fork with the source seed and generator replays the duplex call bit for bit, stereo WAV included', async () => {
    const task = rt.domain.tasks[0]!;
    const store = new MemoryAudioStore();
    const opts = {
      runtime: rt,
      agent: () => new SkipConfirmAgent(0.5),
      user,
      clock,
      channel: channel(store),
      duplex: {},
    };
    const { trajectory: source, milestones } = await runWithMilestones({ ...opts, task, seed: 1 });
    expect(source.valid).toBe(true);
    expect(milestones.length).toBeGreaterThan(0);
    for (const m of milestones) {
      const state = m.checkpoint.duplex!;
      expect(state.turns).toBe(m.checkpoint.turns.length);
      const [fork] = await forkMilestone({ ...opts, task, milestone: m, seeds: [1], exact: true });
      expect(fork!.valid).toBe(true);
      // The same turns; the fork's caller audio is stored under m<level>/.
      const moved = JSON.stringify(untimed(fork!.turns)).replaceAll(`"m${m.level}/audio/`, '"audio/');
      expect(JSON.parse(moved)).toEqual(untimed(source.turns));
      expect(moved).not.toBe(JSON.stringify(untimed(fork!.turns)));
      expect(fork!.reward_info!.reward).toBe(source.reward_info!.reward);
      const { audio: a, ...rec } = fork!.duplex!;
      const { audio: b, ...want } = source.duplex!;
      expect(rec).toEqual(want);
      // The fork's files go under m<level>/; its stereo WAV is the source's, byte for byte.
      expect(a!.stereo).toBe(`m${m.level}/${b!.stereo}`);
      expect(Buffer.from(store.getSync(a!.stereo)!).equals(Buffer.from(store.getSync(b!.stereo)!))).toBe(true);
    }
  }, 120_000);

  it('K forks per milestone start on the timeline at the saved tick; rows carry exact rewards and metrics', async () => {
    const task = rt.domain.tasks[0]!;
    const store = new MemoryAudioStore();
    const ch = channel(store);
    const opts = { runtime: rt, agent: () => new SkipConfirmAgent(0.5), user, clock, channel: ch, duplex: {} };
    const source = await sourceEpisode({ ...opts, task, seed: 0 });
    const saved = source!.milestones.map((m) => m.checkpoint.duplex!);
    const got = await milestoneGroups({ ...opts, tasks: [task], k: 4, seed: 0 });
    expect(got.groups.length).toBe(saved.length);
    for (const [gi, g] of got.groups.entries()) {
      const state = saved[gi]!;
      for (const s of g.samples) {
        const t = s.item;
        const d = t.duplex!;
        // The shared prefix is the milestone's, span for span.
        expect(d.spans.slice(0, state.spans.length)).toEqual(state.spans);
        // After a tool call the agent holds the floor: its next reply starts at the saved tick,
        // plus 0.4 s (2 ticks) per further tool call it makes first.
        expect(state.lastWho).toBe('agent');
        const next = d.spans.find((x) => x.who === 'agent' && x.turn! >= state.turns)!;
        const calls = t.turns.slice(state.turns, next.turn!).filter((x) => x.role === 'tool').length;
        expect(next.start_tick).toBe(state.lastEnd + 2 * calls);
        // Measured on the fork's stereo WAV: the prefix audio is the saved audio.
        const wav = store.getSync(d.audio!.stereo)!;
        expect(wav.length).toBe(44 + d.total_ticks * TICK * 4);
        const head = 44 + state.lastEnd * TICK * 4;
        const src = store.getSync(source!.trajectory.duplex!.audio!.stereo)!;
        expect(Buffer.from(wav.subarray(44, head)).equals(Buffer.from(src.subarray(44, head)))).toBe(true);
        expect(Buffer.from(wav.subarray(44, head)).some((b) => b !== 0)).toBe(true);
      }
    }
    const rows = grpoRows(rt.domain, scoreGroups(got.groups), {
      milestoneTurns: new Map(got.milestones.map((m) => [m.id, m.turns])),
    });
    expect(rows.length).toBe(4 * got.groups.length);
    const samples = got.groups.flatMap((g) => g.samples.map((s) => s.item as Trajectory));
    // The task reward is that of the same milestone groups without the timeline, sample for sample.
    const turnBased = await milestoneGroups({
      runtime: rt,
      agent: opts.agent,
      user,
      clock,
      tasks: [task],
      k: 4,
      seed: 0,
    });
    const plain = grpoRows(rt.domain, scoreGroups(turnBased.groups), {
      milestoneTurns: new Map(turnBased.milestones.map((m) => [m.id, m.turns])),
    });
    expect(plain.map((r) => [r.group_id, r.sample_index])).toEqual(rows.map((r) => [r.group_id, r.sample_index]));
    expect(plain.every((r) => r.interaction_metrics === null)).toBe(true);
    rows.forEach((r, i) => {
      const t = samples[i]!;
      expect(r.final_reward).toBe(plain[i]!.final_reward);
      const m = r.interaction_metrics as Record<string, unknown> & { counts: Record<string, number> };
      const [mean, n] = expectedResponses(t.turns);
      expect(m.response_latency_mean as number).toBeCloseTo(mean!, 12);
      expect([m.response_rate, m.agent_interruption_rate, m.counts.response_total]).toEqual([1, 0, n]);
      expect(m).toEqual(t.duplex!.metrics);
    });
    // The groups carry signal: some forks confirm before the write, some do not.
    expect(new Set(rows.map((r) => r.final_reward))).toEqual(new Set([0, 1]));
    expect(rows.map((r) => r.advantage)).toEqual(plain.map((r) => r.advantage));
    // Exported (Parquet read back by an independent reader, TRL GRPO JSONL): the metrics stay a
    // field of their own, the reward as it was; files without duplex rows gain no TRL field.
    const back = (await parquetReadObjects({ file: grpoParquet(rows) })) as Record<string, unknown>[];
    expect(back.map((o) => JSON.parse(o.interaction_metrics as string))).toEqual(
      rows.map((r) => r.interaction_metrics),
    );
    expect(back.map((o) => o.final_reward)).toEqual(plain.map((r) => r.final_reward));
    const plainBack = (await parquetReadObjects({ file: grpoParquet(plain) })) as Record<string, unknown>[];
    expect(plainBack.every((o) => o.interaction_metrics === null)).toBe(true);
    const trl = trlGrpoRows(rows);
    expect(trl.map((r) => [r.final_reward, r.interaction_metrics])).toEqual(
      rows.map((r) => [r.final_reward, r.interaction_metrics]),
    );
    expect(trlGrpoRows(plain).some((r) => 'interaction_metrics' in r)).toBe(false);
  }, 180_000);
});

describe('duplex turn groups', () => {
  it('each candidate is placed on the source timeline and the continuation goes on from there; rows carry the whole call metrics', async () => {
    const task = rt.domain.tasks[0]!;
    const ch = channel();
    const opts = { runtime: rt, agent: () => new SkipConfirmAgent(0.5), user, clock, channel: ch, duplex: {} };
    const source = (await sourceEpisode({ ...opts, task, seed: 0, decisionStates: true }))!;
    const states = source.timeline_states!;
    const points = source.trajectory.turns.flatMap((t, i) => (t.role === 'assistant' ? [i] : []));
    expect([...states.keys()]).toEqual(points);
    const continuation = { agent: () => new ReferenceContinuationAgent(), user, clock };
    const turnOpts = {
      runtime: rt,
      task,
      trajectory: source.trajectory,
      agent: opts.agent,
      k: 4,
      seed: 1,
      continuation,
    };
    const withTimeline = await turnGroups({ ...turnOpts, duplex: { channel: ch, settings: {}, states } });
    const plain = await turnGroups(turnOpts);
    expect(withTimeline.groups.length).toBe(points.length);
    const rows = grpoRows(rt.domain, scoreGroups(withTimeline.groups));
    const plainRows = grpoRows(rt.domain, scoreGroups(plain.groups));
    // The task reward is unchanged by the timeline; the metrics are a separate field.
    expect(rows.map((r) => [r.final_reward, r.advantage])).toEqual(plainRows.map((r) => [r.final_reward, r.advantage]));
    expect(plainRows.every((r) => r.interaction_metrics === null)).toBe(true);
    for (const [gi, g] of withTimeline.groups.entries()) {
      for (const [si, s] of g.samples.entries()) {
        const r = rows[gi * 4 + si]!;
        const c = s.item.score.continuation!;
        const m = r.interaction_metrics as Record<string, unknown> & { counts: Record<string, number> };
        expect(m).toEqual(c.interaction_metrics);
        // The whole call: the context's answered caller turns count, not only the continuation's.
        const [, before] = expectedResponses([
          ...source.trajectory.turns.slice(0, s.item.turn),
          { role: 'assistant', text: 'x', tool_calls: [], t_ms: 0 } as Turn,
        ]);
        expect(m.counts.response_total).toBeGreaterThanOrEqual(before);
        // A candidate that ends the call has no continuation: the call is the context and the
        // candidate, and its metrics follow from those turns exactly.
        if (s.item.candidate.ended) {
          const [mean, n] = expectedResponses(s.item.score.turns);
          expect(m.counts.response_total).toBe(n);
          expect(m.response_latency_mean as number).toBeCloseTo(mean!, 12);
        }
      }
    }
  }, 240_000);
});

describe('switchboard groups --duplex at milestone and turn level', () => {
  const TASK = 'carrier-pay-balance-1';
  const run = async (dir: string, name: string, more: string[]) => {
    const out = join(dir, `${name}.jsonl`);
    const io = capture();
    const code = await main(
      ['groups', '--domain', 'carrier', '--task-ids', TASK, '--k', '2', '--out', out, ...more],
      io,
    );
    expect(code, io.stderr).toBe(0);
    return readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  };

  it('rows carry the whole call metrics of the reference call; rewards and advantages as without --duplex', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-groups-duplex-'));
    /** Milestone group ids of the rows written to `milestone.jsonl`. */
    const rows = (d: string) =>
      readFileSync(join(d, 'milestone.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).group_id as string);
    for (const g of ['milestone', 'turn']) {
      const got = await run(dir, g, ['--granularity', g, '--duplex', '--preset', 'clean']);
      const plain = await run(dir, `${g}-plain`, ['--granularity', g]);
      expect(got.length).toBeGreaterThan(0);
      expect(got.map((r) => [r.group_id, r.final_reward, r.advantage])).toEqual(
        plain.map((r) => [r.group_id, r.final_reward, r.advantage]),
      );
      expect(plain.every((r) => r.interaction_metrics === null)).toBe(true);
      // Every fork and continuation plays the reference call: three answered caller turns, after
      // 0.6 s, 0.6 + 0.4 s and 0.6 + 2 × 0.4 s (docs/duplex.md's defaults): L_R = 1.0 s.
      for (const r of got) {
        expect(r.interaction_metrics.response_latency_mean).toBeCloseTo(1, 12);
        expect([r.interaction_metrics.response_rate, r.interaction_metrics.counts.response_total]).toEqual([1, 3]);
      }
    }
    // The milestone forks' files sit under m<level>/ beside the rows: caller turns and the call.
    // Only the turns after the fork point are spoken again (the milestone's turns are shared).
    const levels = readdirSync(dir).filter((f) => /^m\d+$/.test(f));
    expect(levels.length).toBe(new Set(rows(dir)).size);
    for (const m of levels) {
      const files = readdirSync(join(dir, m, 'audio', 'carrier', TASK, '0-1'));
      expect(files).toContain('call.stereo.wav');
      expect(files).toContain('call.labels.txt');
      expect(files).toContain('turn-013.degraded.wav');
      expect(files).not.toContain('turn-001.degraded.wav');
    }
  }, 300_000);
});
