import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import type { EvolveReport, SamplingWeights, TaskIssuesFile } from '../../src/core/evolution/index.ts';
import { capture } from '../fixtures/cli-io.ts';
import { httpError, scriptedModels, startOpenAiServer } from '../fixtures/openai-server.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('switchboard evolve', () => {
  it('labels carrier tasks over two rounds and writes report, weights and trajectories', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    const args = ['evolve', '--domain', 'carrier', '--agent', 'noisy:0.3', '--k', '8', '--rounds', '2', '--out', dir];
    const io = capture();
    expect(await main(args, io)).toBe(0);
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
    expect(report.k).toBe(8);
    expect(report.agent).toBe('noisy:0.3');
    expect(report.rounds.map((r) => r.seed)).toEqual([0, 8]);
    expect(report.rounds.map((r) => r.labels.histogram)).toEqual([
      { always_pass: 9, boundary: 6, always_fail: 0, 'flaky-infra': 0 },
      { always_pass: 9, boundary: 6, always_fail: 0, 'flaky-infra': 0 },
    ]);
    expect(report.rounds.map((r) => r.labels.supply.outcome)).toEqual([0.4, 0.4]);
    // The table shows every round's histogram and the supply.
    const lines = io.stdout.split('\n');
    expect(lines[0]).toBe(
      'evolve carrier · agent noisy:0.3 · user scripted · K=8 · thresholds: always_pass ≥ 1, always_fail ≤ 0, min valid 4',
    );
    expect(lines[3]!.split(/\s+/)).toEqual(['0', '0', '9', '6', '0', '0', '0.917', '40%', '120', '0']);
    expect(lines[4]!.split(/\s+/)).toEqual(['1', '8', '9', '6', '0', '0', '0.858', '40%', '120', '0']);
    const weights = JSON.parse(await readFile(join(dir, 'weights.json'), 'utf8')) as SamplingWeights;
    expect(weights).toEqual(report.rounds[1]!.weights);
    expect(weights.round).toBe(1);
    expect(weights.tasks.slice(0, 6).every((t) => t.label === 'boundary')).toBe(true);
    // Round 1 continued the bandit from round 0: Q₁ = α r₁ + (1 − α) Q₀ in a bin filled both rounds.
    const [b0, b1] = [report.rounds[0]!.weights.bins, weights.bins].map((bins) => bins.find((b) => b.id === 'p=1')!);
    expect(b1!.q).toBe(0.5 * b1!.reward! + 0.5 * b0!.q);
    const trajectories = (await readFile(join(dir, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
    expect(trajectories).toHaveLength(240);

    // --previous continues from the written weights; --json prints the report.
    const again = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(again);
    const io2 = capture();
    const more = ['--task-ids', 'carrier-pay-then-change-1', '--previous', join(dir, 'weights.json'), '--json'];
    expect(await main([...args.slice(0, -1), again, ...more], io2)).toBe(0);
    const continued = JSON.parse(io2.stdout) as EvolveReport;
    expect(continued.rounds[0]!.labels.tasks.map((t) => t.task_id)).toEqual(['carrier-pay-then-change-1']);
    const untouched = continued.rounds[0]!.weights.bins.find((b) => b.id === 'p=1')!;
    expect(untouched).toMatchObject({ tasks: 0, p: 0, q: weights.bins.find((b) => b.id === 'p=1')!.q });
  });

  it('prints the verdict on each always-failed task', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    const io = capture();
    const args = [
      'evolve',
      '--domain',
      'carrier',
      '--agent',
      'noop',
      '--k',
      '2',
      '--task-ids',
      'carrier-pay-balance-1',
    ];
    expect(await main([...args, '--out', dir], io)).toBe(0);
    expect(io.stdout).toContain('\nalways-failed tasks:\n  round 0 carrier-pay-balance-1: hard\n');
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
    expect(report.rounds[0]!.attribution).toEqual([
      { task_id: 'carrier-pay-balance-1', verdict: 'hard', findings: [] },
    ]);
    expect(report.rounds[0]!.issues).toEqual([]);
  });

  it('--cross-policy runs other agents on the always-failed tasks (agreement found); sampling flags reach a model agent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    // A model that hangs up at once: it fails carrier-dispute-recent-1 another way than the noisy agents.
    const server = await startOpenAiServer(scriptedModels({ m: ['再见。###STOP###'] }));
    try {
      const io = capture();
      const args = [
        ...['evolve', '--domain', 'carrier', '--task-ids', 'carrier-dispute-recent-1', '--agent', 'noisy:1'],
        ...['--cross-policy', 'noisy:1', '--k', '2', '--seed', '5', '--out', dir, '--json'],
      ];
      expect(await main(args, io)).toBe(0);
      const report = JSON.parse(io.stdout) as EvolveReport;
      expect(report.cross_policies).toEqual(['noisy:1']);
      // carrier-dispute-recent-1's write has no numeric argument: both noisy agents always skip it.
      expect(report.rounds[0]!.attribution.map((a) => [a.verdict, a.findings.map((f) => f.kind)])).toEqual([
        ['broken', ['cross_policy_agreement']],
      ]);
      expect(report.rounds[0]!.attribution[0]!.findings[0]!.trajectory_ids).toEqual([
        'carrier/carrier-dispute-recent-1/0/5',
        'carrier/carrier-dispute-recent-1/1/6',
        'carrier/carrier-dispute-recent-1/0/5@noisy:1',
        'carrier/carrier-dispute-recent-1/1/6@noisy:1',
      ]);
      const lines = (await readFile(join(dir, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([
        'carrier/carrier-dispute-recent-1/0/5',
        'carrier/carrier-dispute-recent-1/0/5@noisy:1',
        'carrier/carrier-dispute-recent-1/1/6',
        'carrier/carrier-dispute-recent-1/1/6@noisy:1',
      ]);

      // A model cross-policy gets the sampling flags and the rollout seeds; it fails another way.
      const io2 = capture();
      const model = `vllm:m@${server.url}`;
      const flags = ['--temperature', '0.3', '--top-p', '0.9', '--max-tokens', '64'];
      expect(await main([...args.slice(0, 7), '--cross-policy', model, ...args.slice(9), ...flags], io2)).toBe(0);
      const again = JSON.parse(io2.stdout) as EvolveReport;
      expect(again.cross_policies).toEqual(['vllm:m']);
      expect(again.rounds[0]!.attribution.map((a) => [a.verdict, a.findings.map((f) => f.kind)])).toEqual([
        ['hard', []],
      ]);
      const sent = server.requests.map((r) => [r.body.temperature, r.body.top_p, r.body.max_tokens, r.body.seed]);
      expect(sent.sort((a, b) => a[3] - b[3])).toEqual([
        [0.3, 0.9, 64, 5],
        [0.3, 0.9, 64, 6],
      ]);
    } finally {
      await server.close();
    }
  });

  it('a cross-policy agent whose every rollout is invalid is named and left out of the agreement', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    // An endpoint that always answers 500: every rollout of that agent is broken by infrastructure.
    const server = await startOpenAiServer(() => httpError(500, 'upstream down'));
    try {
      const io = capture();
      const args = [
        ...['evolve', '--domain', 'carrier', '--task-ids', 'carrier-dispute-recent-1', '--agent', 'noisy:1'],
        ...['--cross-policy', 'noisy:1', '--cross-policy', `vllm:down@${server.url}`, '--k', '2', '--seed', '5'],
        ...['--model-retries', '0', '--out', dir],
      ];
      expect(await main(args, io)).toBe(0);
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
      expect(report.cross_policies).toEqual(['noisy:1', 'vllm:down']);
      const [verdict] = report.rounds[0]!.attribution;
      // The two noisy agents still agree; the broken endpoint is neither agreeing nor disagreeing.
      expect([verdict!.verdict, verdict!.findings.map((f) => f.kind), verdict!.invalid_policies]).toEqual([
        'broken',
        ['cross_policy_agreement'],
        ['vllm:down'],
      ]);
      expect(verdict!.findings[0]!.detail).toMatch(
        /^2 policies \(noisy:1, noisy:1\) fail every rollout the same way: /,
      );
      expect(io.stdout).toContain(
        '\n    vllm:down: every rollout invalid (infrastructure); not counted for cross-policy agreement\n',
      );
    } finally {
      await server.close();
    }
  });

  it('--repair-agent sends each broken task to the code agent; a garbage reply and a dead endpoint are refused and printed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    const server = await startOpenAiServer(scriptedModels({ junk: ['Sure! Here is the patch.'] }));
    try {
      const args = [
        ...['evolve', '--domain', 'carrier', '--task-ids', 'carrier-dispute-recent-1', '--agent', 'noisy:1'],
        ...['--cross-policy', 'noisy:1', '--k', '2', '--model-retries', '0', '--out', dir],
      ];
      const io = capture();
      expect(await main([...args, '--repair-agent', `openai:junk@${server.url}`], io)).toBe(0);
      expect(io.stdout).toContain(
        '\nmodel repairs of broken tasks:\n  round 0 carrier-dispute-recent-1: unparseable: not JSON: "Sure! Here is the patch."',
      );
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
      expect(report.rounds[0]!.repairs!.map((r) => [r.task_id, r.status])).toEqual([
        ['carrier-dispute-recent-1', 'unparseable'],
      ]);
      expect(report.summary.repaired).toEqual([]);
      // An endpoint that does not serve the model: a model error, reported, never a crash.
      const io2 = capture();
      expect(await main([...args, '--repair-agent', `openai:gone@${server.url}`], io2)).toBe(0);
      const again = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as EvolveReport;
      expect(again.rounds[0]!.repairs!.map((r) => r.status)).toEqual(['model_error']);
      expect(io2.stdout).toContain('  round 0 carrier-dispute-recent-1: model_error: ');
      // A spec that is not a model is a usage error naming the flag.
      const io3 = capture();
      expect(await main([...args, '--repair-agent', 'reference'], io3)).toBe(2);
      expect(io3.stderr).toContain('--repair-agent "reference"');
    } finally {
      await server.close();
    }
  });

  it('stores task issues beside the bank and carries them on with --previous (resolved when the task passes)', async () => {
    const first = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    const second = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(first, second);
    const base = ['evolve', '--domain', 'carrier', '--task-ids', 'carrier-dispute-recent-1', '--k', '2'];
    expect(await main([...base, '--agent', 'noisy:1', '--cross-policy', 'noisy:1', '--out', first], capture())).toBe(0);
    const stored = JSON.parse(await readFile(join(first, 'bank', 'issues.json'), 'utf8')) as TaskIssuesFile;
    expect(stored).toEqual({
      format: 'switchboard.task-issues',
      version: 1,
      domain: 'carrier',
      issues: [
        {
          id: 'carrier-dispute-recent-1#1',
          task_id: 'carrier-dispute-recent-1',
          finding: 'cross_policy_agreement',
          field: null,
          detail: expect.stringMatching(/^2 policies \(noisy:1, noisy:1\) fail every rollout the same way: /),
          status: 'open',
          resolution: null,
          evidence_trajectory: 'carrier/carrier-dispute-recent-1/0/0',
          evidence_trajectories: [
            'carrier/carrier-dispute-recent-1/0/0',
            'carrier/carrier-dispute-recent-1/1/1',
            'carrier/carrier-dispute-recent-1/0/0@noisy:1',
            'carrier/carrier-dispute-recent-1/1/1@noisy:1',
          ],
        },
      ],
    });
    // The next run (the run folder as --previous) passes the task with the reference agent: resolved.
    const io = capture();
    expect(await main([...base, '--agent', 'reference', '--previous', first, '--out', second, '--json'], io)).toBe(0);
    const report = JSON.parse(io.stdout) as EvolveReport;
    const carried = JSON.parse(await readFile(join(second, 'bank', 'issues.json'), 'utf8')) as TaskIssuesFile;
    expect(carried.issues).toEqual(report.rounds[0]!.issues);
    expect(carried.issues.map((i) => [i.id, i.status, i.resolution, i.evidence_trajectory])).toEqual([
      [
        'carrier-dispute-recent-1#1',
        'resolved',
        'round 0: the task is always_pass (pass rate 1)',
        'carrier/carrier-dispute-recent-1/0/0',
      ],
    ]);
    // A broken issues file: exit 2 naming the file and the field.
    await writeFile(
      join(second, 'bank', 'issues.json'),
      JSON.stringify({ ...carried, issues: [{ ...carried.issues[0], status: 'closed' }] }),
    );
    const bad = capture();
    expect(await main([...base, '--previous', join(second, 'weights.json'), '--out', first], bad)).toBe(2);
    expect(bad.stderr).toBe(
      `switchboard: ${join(second, 'bank', 'issues.json')}: issues[0].status: Invalid option: expected one of "open"|"resolved"\n`,
    );
  });

  it('refuses a bad noisy spec and a --previous that is not a weights file (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-evolve-'));
    dirs.push(dir);
    const io = capture();
    expect(await main(['evolve', '--domain', 'carrier', '--agent', 'noisy:2', '--out', dir], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: agent "noisy:2": noisy:<p>[,tell=<q>] needs an error probability p (and q) from 0 to 1\n',
    );
    await writeFile(join(dir, 'w.json'), '{"format": "other"}');
    const io2 = capture();
    const args = ['evolve', '--domain', 'carrier', '--previous', join(dir, 'w.json'), '--out', dir];
    expect(await main(args, io2)).toBe(2);
    expect(io2.stderr).toBe(
      `switchboard: ${join(dir, 'w.json')}: format: Invalid input: expected "switchboard.sampling-weights"\n`,
    );
  });
});
