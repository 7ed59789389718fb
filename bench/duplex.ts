/**
 * Full-duplex benchmark (issue 17): one 3-minute `--duplex` call with speech on both sides
 * (espeak-ng) and the `regular` channel preset, barge-ins and backchannels at 0.3. Scripted
 * participants talk in fixed English sentences until the call's time axis passes 180 s. Prints
 * the call's length, the wall time and the real-time factor (wall time ÷ call length; below 1
 * is faster than real time) with this machine's core count and load, and this process's CPU time.
 */
import { cpus, loadavg } from 'node:os';
import { DomainRuntime } from '../src/core/env/environment.ts';
import { steppingClock } from '../src/core/ports/clock.ts';
import { runEpisode } from '../src/core/rollout/episode.ts';
import type { Agent, UserSimulator } from '../src/core/participants/types.ts';
import { sqlJsFactory } from '../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../src/adapters/node/load-domain.ts';
import { espeakTts } from '../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../src/adapters/node/audio/renderer.ts';
import { MemoryAudioStore } from '../src/core/channel/audio-store.ts';

const CALL_S = 180;
const AGENT_LINES = [
  'Thank you for calling. I can help with your bill today, let me look at the details of your account.',
  'I see two charges from last month, one for the data plan and one for an international call.',
  'The data plan renews on the first of every month, and the price has not changed since March.',
];
const CALLER_LINES = [
  'Sure, I wanted to ask about the extra charge on my last bill.',
  'Right, and what was the international call? I do not remember making one.',
  'OK, can you tell me how to avoid that in the future?',
];

/** Wall time and real-time factor of one 3-minute duplex call. */
export async function duplexBenchLines(): Promise<string[]> {
  const domain = await loadBuiltinDomain('carrier');
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  let said = 0;
  // The caller stops after enough exchanges for about 3 minutes (about 10.5 s each, with the
  // restarts after barge-ins); the call's real length on the axis is printed.
  const exchanges = Math.round(CALL_S / 10.5);
  const agent: Agent = {
    id: 'bench-agent',
    respond: async () => ({ text: AGENT_LINES[said++ % AGENT_LINES.length]! }),
  };
  const user: UserSimulator = {
    id: 'bench-caller',
    respond: async () => ({
      text: said >= exchanges ? 'Thanks, goodbye. ###STOP###' : CALLER_LINES[said % CALLER_LINES.length]!,
    }),
  };
  const store = new MemoryAudioStore();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const t = await runEpisode({
    runtime,
    task: domain.tasks[0]!,
    agent,
    user,
    seed: 1,
    maxSteps: 1000,
    clock: steppingClock(domain.now, 1000),
    channel: { tts: espeakTts(), renderer: nodeGraphRenderer, preset: 'regular', store, bargeIn: 0.3 },
    duplex: {},
  });
  const wallS = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpuS = (c.user + c.system) / 1e6;
  const d = t.duplex;
  if (!t.valid || !d) throw new Error(`bench duplex call failed: ${t.invalid_reason ?? 'no timeline'}`);
  const callS = (d.total_ticks * d.turn_taking.tick_ms) / 1000;
  const overlaps = d.spans.filter((s) => s.kind === 'backchannel').length;
  const yields = d.spans.filter((s) => s.yielded).length;
  return [
    `call: ${callS.toFixed(1)} s on the time axis (${d.total_ticks} ticks of ${d.turn_taking.tick_ms} ms), ${t.turns.length} turns, ${overlaps} backchannels, ${yields} yields; channel regular`,
    `wall time: ${wallS.toFixed(1)} s · real-time factor ${(wallS / callS).toFixed(3)} (wall ÷ call; ${(callS / wallS).toFixed(1)}× real time) on ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
    `CPU time of this process: ${cpuS.toFixed(1)} s (${(callS / cpuS).toFixed(1)}× real time; espeak-ng runs in child processes, not counted)`,
  ];
}
