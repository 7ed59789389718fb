/**
 * tau2-telecom against tau2-bench's own telecom code: the golden file
 * test/golden/tau2-telecom-parity.json (see test/golden/README.md) holds what tau2's Python tools
 * returned and the hashes tau2 computed of both databases — after each base task's setup, after
 * its reference solution replayed as a conversation (state sync after each call), in tau2's
 * evaluator gold environment (no sync between calls), and after probe conversations that call
 * every agent and caller tool with error cases. Here the same calls run on our domain.
 * Also: the lossless import of db.toml, the lazy split loading, malformed files, the gate's
 * known-issue report, and the scripted caller driving the caller's tools in a run.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain, type Tau2Domain } from '../../src/adapters/node/tau2-loader.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { gateDomain } from '../../src/core/gate/gate.ts';
import { DomainFileError } from '../../src/core/schema/domain.ts';
import { goldState } from '../../src/core/scoring/replay.ts';
import { tau2DbHash } from '../../src/core/tau2/db-hash.ts';
import type { PyJson } from '../../src/core/tau2/py-json.ts';
import { exportTelecomDb } from '../../domains/tau2-telecom/db-toml.ts';
import { telecomHashes } from '../../domains/tau2-telecom/env.ts';
import { testData } from '../fixtures/data.ts';
import { capture } from '../fixtures/cli-io.ts';
import { main } from '../../src/cli/main.ts';

interface Hashes {
  db: string;
  user_db: string;
}
interface RecordedCall {
  requestor: 'assistant' | 'user';
  name: string;
  arguments: Record<string, unknown>;
  content: string;
  error: boolean;
}
interface Golden {
  pristine: Hashes;
  agent_tools: string[];
  user_tools: string[];
  tasks: {
    id: string;
    init: Hashes;
    reference: { content: string; error: boolean }[];
    replay: Hashes;
    env_assertions: boolean[];
    gold: Hashes;
    gold_errors: unknown[];
  }[];
  probes: { task_id: string; calls: RecordedCall[]; final: Hashes }[];
}

const golden = JSON.parse(
  await readFile(new URL('../golden/tau2-telecom-parity.json', import.meta.url), 'utf8'),
) as Golden;
const edges = JSON.parse(await readFile(new URL('../golden/tau2-telecom-edges.json', import.meta.url), 'utf8')) as Pick<
  Golden,
  'probes'
>;
const DIR = testData('telecom');

let domain: Tau2Domain;
let runtime: DomainRuntime;
beforeAll(async () => {
  domain = await loadTau2Domain('tau2-telecom', DIR);
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
});

const task = (id: string) => domain.tasks.find((t) => t.id === id)!;
let seq = 0;
const callOf = (name: string, args: Record<string, unknown>) => ({ id: `c${++seq}`, name, arguments: args });

describe('tau2-telecom data', () => {
  it("loads the base split only (114 of 2,285 tasks) with every split listed and tau2's joined policy", () => {
    expect(domain.tasks).toHaveLength(114);
    expect(domain.tasks.map((t) => t.id)).toEqual(golden.tasks.map((t) => t.id));
    expect(Object.fromEntries(Object.entries(domain.splits).map(([k, v]) => [k, v.length]))).toEqual({
      small: 20,
      train: 74,
      test: 40,
      full: 2285,
      base: 114,
    });
    expect(domain.policy.startsWith('<main_policy>\n# Telecom Agent Policy')).toBe(true);
    expect(domain.policy).toContain('\n</main_policy>\n<tech_support_policy>\n');
    expect(domain.policy.endsWith('\n</tech_support_policy>')).toBe(true);
    expect(domain.tools.map((t) => t.name).sort()).toEqual(golden.agent_tools);
    expect((domain.userTools ?? []).map((t) => t.name).sort()).toEqual(golden.user_tools);
  });

  it('loads another split on request and refuses an unknown one', async () => {
    const small = await loadTau2Domain('tau2-telecom', DIR, undefined, { split: 'small' });
    expect(small.tasks).toHaveLength(20);
    await expect(loadTau2Domain('tau2-telecom', DIR, undefined, { split: 'huge' })).rejects.toThrow(
      'unknown task split "huge"; known splits: small, train, test, full, base',
    );
  });

  it('imports db.toml losslessly and hashes both fresh databases as tau2 does', async () => {
    const env = await runtime.open();
    try {
      const state = await env.exportState();
      const source = exportTelecomDb(state, 'source');
      expect(source.db).toEqual(parseToml(await readFile(join(DIR, 'db.toml'), 'utf8')));
      const model = exportTelecomDb(state, 'model');
      expect({
        db: await tau2DbHash(model.db as PyJson),
        user_db: await tau2DbHash(model.user_db as PyJson),
      }).toEqual(golden.pristine);
      expect(await telecomHashes(env.reader)).toEqual(golden.pristine);
    } finally {
      await env.close();
    }
  });

  it('refuses malformed files naming the file and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-telecom-'));
    await cp(DIR, dir, { recursive: true });
    const db = await readFile(join(DIR, 'db.toml'), 'utf8');
    await writeFile(join(dir, 'db.toml'), db.replace('status = "Active"', 'status = "Dormant"'), { mode: 0o644 });
    const e = await loadTau2Domain('tau2-telecom', dir).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DomainFileError);
    expect((e as DomainFileError).message).toMatch(/db\.toml: lines\[0\]\.status: Invalid option/);
    await writeFile(join(dir, 'db.toml'), db, { mode: 0o644 });
    await writeFile(join(dir, 'user_db.toml'), '[device]\nbattery_level = "full"\n', { mode: 0o644 });
    expect(((await loadTau2Domain('tau2-telecom', dir).catch((x: unknown) => x)) as Error).message).toMatch(
      /user_db\.toml: device\.battery_level: Invalid input: expected number/,
    );
    await writeFile(join(dir, 'user_db.toml'), '[device\n', { mode: 0o644 });
    expect(((await loadTau2Domain('tau2-telecom', dir).catch((x: unknown) => x)) as Error).message).toMatch(
      /user_db\.toml: line 1: not valid TOML/,
    );
  });
});

describe('tau2-telecom parity with tau2-bench', () => {
  it("every base task starts from tau2's states; its reference solution gives tau2's outputs, states and assertions", async () => {
    const mismatches: string[] = [];
    for (const g of golden.tasks) {
      const t = task(g.id);
      const env = await runtime.open(t);
      try {
        const init = await telecomHashes(env.reader);
        if (init.db !== g.init.db || init.user_db !== g.init.user_db) mismatches.push(`${g.id}: initial state`);
        for (const [i, a] of (t.evaluation_criteria?.actions ?? []).entries()) {
          const out = await env.call(callOf(a.name, a.arguments), a.requestor);
          if (out.content !== g.reference[i]!.content || out.error !== g.reference[i]!.error)
            mismatches.push(`${g.id}: action ${i} ${a.name}: ${JSON.stringify(out.content)}`);
        }
        const replay = await telecomHashes(env.reader);
        if (replay.db !== g.replay.db || replay.user_db !== g.replay.user_db)
          mismatches.push(`${g.id}: replayed state`);
        const fns = domain.envFunctions!;
        const met: boolean[] = [];
        for (const a of t.evaluation_criteria?.env_assertions ?? [])
          met.push((await fns[a.func_name]!(env.reader, a.arguments)) === a.assert_value);
        if (JSON.stringify(met) !== JSON.stringify(g.env_assertions)) mismatches.push(`${g.id}: env assertions ${met}`);
      } finally {
        await env.close();
      }
      // The gold replay (scoring's, without sync between calls, as tau2's evaluator).
      const gold = exportTelecomDb(await goldState(runtime, t), 'model');
      const goldHashes = { db: await tau2DbHash(gold.db as PyJson), user_db: await tau2DbHash(gold.user_db as PyJson) };
      if (goldHashes.db !== g.gold.db || goldHashes.user_db !== g.gold.user_db) mismatches.push(`${g.id}: gold state`);
    }
    expect(mismatches).toEqual([]);
    // tau2's gold and replayed states differ on 71 of the 114 tasks: its known DB-check issue.
    expect(golden.tasks.filter((g) => g.gold.user_db !== g.replay.user_db || g.gold.db !== g.replay.db)).toHaveLength(
      71,
    );
  }, 120_000);

  it("replays tau2-recorded tool calls of both sides with tau2's outputs, errors and final states", async () => {
    const mismatches: string[] = [];
    let calls = 0;
    for (const p of [...golden.probes, ...edges.probes]) {
      const env = await runtime.open(task(p.task_id));
      try {
        for (const c of p.calls) {
          calls += 1;
          const out = await env.call(callOf(c.name, c.arguments), c.requestor);
          if (out.content !== c.content || out.error !== c.error)
            mismatches.push(`${c.requestor} ${c.name}(${JSON.stringify(c.arguments)}): ${JSON.stringify(out.content)}`);
        }
        const final = await telecomHashes(env.reader);
        if (final.db !== p.final.db || final.user_db !== p.final.user_db) mismatches.push(`${p.task_id}: final state`);
      } finally {
        await env.close();
      }
    }
    expect(mismatches).toEqual([]);
    expect(calls).toBe(1330 + 9);
    // Numeric edges: Python's rounding of "$2.675" and its inf.
    expect(
      edges.probes[0]!.calls.slice(0, 2).map((c) => (JSON.parse(c.content) as { message: string }).message),
    ).toEqual([
      'Successfully added 0.125 GB of data for line L1002 for $0.25',
      'Successfully added 1.3375 GB of data for line L1002 for $2.67',
    ]);
    const probe = golden.probes[0]!.calls;
    // Spot checks of Python-shaped outputs: numbers as strings in dicts, float repr, TypeError texts.
    expect(probe.find((c) => c.name === 'refuel_data')!.content).toBe(
      '{"message": "Successfully added 2.0 GB of data for line L1002 for $4.00", "new_data_refueling_gb": "2.0", "charge": "4.0"}',
    );
    expect(probe.find((c) => c.name === 'get_customer_by_phone' && c.error && !c.arguments.phone_number)!.content).toBe(
      "Error: TelecomTools.get_customer_by_phone() missing 1 required positional argument: 'phone_number'",
    );
  }, 60_000);
});

describe('tau2-telecom in the gate and in runs', () => {
  it("admits every base task and reports the 71 whose reference tau2's DB check fails", async () => {
    const report = await gateDomain(runtime);
    expect(report.accepted).toBe(true);
    expect(report.tasks.every((t) => t.reference_reward === 1 && t.noop_reward === 0)).toBe(true);
    const known = report.tasks.filter((t) => t.known_issues?.length).map((t) => t.task_id);
    const expected = golden.tasks.filter((g) => g.gold.user_db !== g.replay.user_db || g.gold.db !== g.replay.db);
    expect(known).toEqual(expected.map((g) => g.id));
    expect(report.tasks.find((t) => t.task_id === known[0])!.known_issues![0]).toMatch(
      /^the benchmark's DB check fails the reference solution itself \(DB is not in this task's reward basis\): user_/,
    );
  }, 180_000);

  it('replays a tau2-bench results file: every tool message of both sides and every reward equal', async () => {
    const io = capture();
    const file = fileURLToPath(new URL('../fixtures/tau2-results-telecom.json', import.meta.url));
    expect(await main(['replay', file, '--domain', 'tau2-telecom', '--data', DIR, '--json'], io)).toBe(0);
    const report = JSON.parse(io.stdout) as {
      summary: { calls: { total: number; equal: number }; rewards: { compared: number; equal: number } };
      rewards: { simulation_id: string; recorded: number; ours: number }[];
    };
    expect([report.summary.calls, report.summary.rewards]).toEqual([
      expect.objectContaining({ total: 11, equal: 11 }),
      expect.objectContaining({ compared: 3, equal: 3 }),
    ]);
    expect(report.rewards.map((r) => [r.simulation_id, r.recorded, r.ours])).toEqual([
      ['sim-a-fixed', 1, 1],
      ['sim-b-half-fixed', 0, 0],
      ['sim-c-reference-db-mismatch', 1, 1],
    ]);
  }, 60_000);

  it('runs a task from the command line: the scripted caller works the phone for the reference agent', async () => {
    const id = '[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]';
    const out = await mkdtemp(join(tmpdir(), 'sb-telecom-run-'));
    const io = capture();
    expect(
      await main(['run', '--domain', 'tau2-telecom', '--data', DIR, '--task-ids', id, '--out', out, '--json'], io),
    ).toBe(0);
    const summary = JSON.parse(io.stdout) as { tasks: { task_id: string; rewards: number[] }[] };
    expect(summary.tasks).toEqual([expect.objectContaining({ task_id: id, rewards: [1] })]);
    const trajectory = JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).split('\n')[0]!) as {
      turns: { role: string; requestor?: string; name?: string; content?: string }[];
    };
    expect(trajectory.turns.filter((t) => t.role === 'tool').map((t) => [t.requestor, t.name, t.content])).toEqual([
      ['user', 'toggle_airplane_mode', golden.tasks[0]!.reference[0]!.content],
      ['user', 'toggle_roaming', golden.tasks[0]!.reference[1]!.content],
    ]);
  }, 60_000);
});
