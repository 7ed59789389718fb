/**
 * Replays every reference solution of the 164 tau2 tasks (50 airline, 114 retail) on a fresh
 * environment, in order, and checks which calls fail against the golden list
 * test/golden/tau2-reference-failures.json (see test/golden/README.md for its provenance).
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Tau2DomainName } from '../../src/adapters/node/tau2-loader.ts';
import { call, tau2Runtime } from './tau2-helpers.ts';

interface GoldenFailure {
  task_id: string;
  action_index: number;
  action_id: string;
  tool: string;
  kind: 'read' | 'write';
  on_purpose: boolean;
  why: string;
}

const golden = JSON.parse(readFileSync(new URL('../golden/tau2-reference-failures.json', import.meta.url), 'utf8')) as {
  airline: GoldenFailure[];
  retail: GoldenFailure[];
};

async function replayFailures(name: Tau2DomainName) {
  const { domain, runtime } = await tau2Runtime(name);
  const failures: {
    task_id: string;
    action_index: number;
    action_id: string;
    tool: string;
    kind: string | null;
    error: string;
  }[] = [];
  let calls = 0;
  for (const task of domain.tasks) {
    const env = await runtime.open(task);
    for (const [i, action] of (task.evaluation_criteria?.actions ?? []).entries()) {
      const out = await call(env, action.name, action.arguments);
      calls += 1;
      if (out.error) {
        failures.push({
          task_id: task.id,
          action_index: i,
          action_id: action.action_id ?? '',
          tool: action.name,
          kind: out.kind,
          error: out.content,
        });
      }
    }
    await env.close();
  }
  return { failures, calls, tasks: domain.tasks.length };
}

describe('tau2 reference solutions replay', () => {
  it('airline: all 50 reference solutions replay without a failed call', async () => {
    const { failures, calls, tasks } = await replayFailures('tau2-airline');
    expect(tasks).toBe(50);
    expect(calls).toBe(142); // reference actions in airline tasks.json
    expect(failures).toEqual(golden.airline);
  });

  it('retail: exactly the golden calls fail, reads on purpose and two writes', async () => {
    const { failures, calls, tasks } = await replayFailures('tau2-retail');
    expect(tasks).toBe(114);
    expect(calls).toBe(550); // reference actions in retail tasks.json
    expect(
      failures.map(({ task_id, action_index, action_id, tool, kind }) => ({
        task_id,
        action_index,
        action_id,
        tool,
        kind,
      })),
    ).toEqual(
      golden.retail.map(({ task_id, action_index, action_id, tool, kind }) => ({
        task_id,
        action_index,
        action_id,
        tool,
        kind,
      })),
    );
    // The golden list says why each fails; the messages agree with it.
    const byKey = new Map(failures.map((f) => [`${f.task_id}/${f.action_index}`, f.error]));
    for (const g of golden.retail) {
      const error = byKey.get(`${g.task_id}/${g.action_index}`)!;
      const expected = g.why.match(
        /(Product not found|User not found|Order not found|Non-delivered order cannot be exchanged|Insufficient gift card balance)/,
      )![1]!;
      expect(error.startsWith(`Error: ${expected}`)).toBe(true);
    }
    expect(golden.retail.filter((g) => !g.on_purpose).map((g) => `${g.task_id}/${g.tool}`)).toEqual([
      '64/exchange_delivered_order_items',
      '105/exchange_delivered_order_items',
    ]);
  });
});

/**
 * The gold replay of scoring calls tools with their successful results discarded
 * (`ToolContext.resultDiscarded`): a tool may then skip building its result, but must fail with
 * the same message and write the same rows. Every reference action of every task is called on two
 * environments side by side, as is, and with every string argument replaced by an id no table
 * holds (so each tool's not-found paths are taken too).
 */
async function compareDiscarded(name: Tau2DomainName) {
  const { domain, runtime } = await tau2Runtime(name);
  let calls = 0;
  let skipped = 0;
  let failed = 0;
  for (const task of domain.tasks) {
    const full = await runtime.open(task);
    const discarded = await runtime.open(task);
    try {
      for (const [i, action] of (task.evaluation_criteria?.actions ?? []).entries()) {
        const wrong = Object.fromEntries(
          Object.entries(action.arguments).map(([k, v]) => [k, typeof v === 'string' ? 'no-such-id' : v]),
        );
        for (const args of [wrong, action.arguments]) {
          const call = { id: `a${i}`, name: action.name, arguments: args };
          const a = await full.call(call, action.requestor, i);
          const b = await discarded.call(call, action.requestor, i, { result: false });
          calls += 1;
          expect({ error: b.error, writes: b.writes, violations: b.violations, kind: b.kind }).toEqual({
            error: a.error,
            writes: a.writes,
            violations: a.violations,
            kind: a.kind,
          });
          if (a.error) {
            failed += 1;
            expect(b.content).toBe(a.content);
          } else if (b.content !== a.content) {
            expect(b.content).toBe('');
            skipped += 1;
          }
        }
      }
      expect(await discarded.changes()).toEqual(await full.changes());
    } finally {
      await full.close();
      await discarded.close();
    }
  }
  return { calls, skipped, failed };
}

describe('tau2 tools with their results discarded (the gold replay of scoring)', () => {
  it('airline: every reference call fails, writes and changes the state as with its result', async () => {
    const { calls, skipped, failed } = await compareDiscarded('tau2-airline');
    expect(calls).toBe(2 * 142);
    // Successes whose result was skipped; failures (nearly every call with an unknown id).
    expect({ skipped, failed }).toEqual({ skipped: 160, failed: 121 });
  });

  it('retail: every reference call fails, writes and changes the state as with its result', async () => {
    const { calls, skipped, failed } = await compareDiscarded('tau2-retail');
    expect(calls).toBe(2 * 550);
    expect({ skipped, failed }).toEqual({ skipped: 449, failed: 564 });
  });
});
