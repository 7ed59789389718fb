/**
 * Every tool turn and reward info of the reference episodes (reference agent, scripted caller,
 * seed 0, the domain's clock) of tau2-airline, tau2-retail and tau2-telecom (base split), against
 * test/golden/tau2-reference-turns.json: per task, a SHA-256 of the tool turns (name, arguments,
 * content, error, writes) and of the reward info as JSON. It holds the tools' outputs, write logs
 * and scores byte for byte while their implementations are made faster (the golden's provenance
 * is in test/golden/README.md). A change that is meant needs a new golden file and a note there:
 * `SWITCHBOARD_REFERENCE_TURNS_OUT=<file>` writes the digests of this run to `<file>`.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTau2Domain, type Tau2DomainName } from '../../src/adapters/node/tau2-loader.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { fixedClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import { evaluate } from '../../src/core/scoring/index.ts';
import { testData } from '../fixtures/data.ts';

const GOLDEN = new URL('../golden/tau2-reference-turns.json', import.meta.url);
const DOMAINS = ['tau2-airline', 'tau2-retail', 'tau2-telecom'] as const;
type Digests = Record<string, { tool_turns: number; tasks: Record<string, { turns: string; reward: string }> }>;

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

async function digests(name: Tau2DomainName): Promise<Digests[string]> {
  const domain = await loadTau2Domain(name, testData(name.slice('tau2-'.length) as 'airline' | 'retail' | 'telecom'));
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  try {
    const tasks: Digests[string]['tasks'] = {};
    let toolTurns = 0;
    for (const task of domain.tasks) {
      const t = await runEpisode({
        runtime,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 0,
        clock: fixedClock(domain.now),
      });
      const tools = t.turns.filter((turn) => turn.role === 'tool');
      toolTurns += tools.length;
      const reward = await evaluate(runtime, task, t.turns, { termination: t.termination });
      tasks[task.id] = { turns: sha(tools), reward: sha(reward) };
    }
    return { tool_turns: toolTurns, tasks };
  } finally {
    await runtime.close();
  }
}

describe('tau2 reference episodes', () => {
  it('give the golden tool turns and reward infos, task by task', async () => {
    const now: Digests = {};
    for (const name of DOMAINS) now[name] = await digests(name);
    const out = process.env.SWITCHBOARD_REFERENCE_TURNS_OUT;
    if (out) writeFileSync(out, `${JSON.stringify(now, null, 1)}\n`);
    const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Digests;
    for (const name of DOMAINS) {
      const changed = Object.keys(golden[name]!.tasks).filter(
        (id) => JSON.stringify(now[name]!.tasks[id]) !== JSON.stringify(golden[name]!.tasks[id]),
      );
      expect({ domain: name, changed, tool_turns: now[name]!.tool_turns }).toEqual({
        domain: name,
        changed: [],
        tool_turns: golden[name]!.tool_turns,
      });
      expect(Object.keys(now[name]!.tasks)).toEqual(Object.keys(golden[name]!.tasks));
    }
  }, 300_000);
});
