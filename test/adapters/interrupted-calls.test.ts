import { describe, expect, it } from 'vitest';
import {
  INTERRUPTED_REASON,
  interruptedTrajectory,
  markInterrupted,
  trajectoriesJsonl,
  type StoredRecord,
  type TrajectoryStore,
} from '../../src/adapters/browser/trajectory-store.ts';
import { Trajectory, type Turn } from '../../src/core/schema/trajectory.ts';

/** The store's contract over a Map (IndexedDB itself is exercised by test/e2e/security.test.ts). */
function memoryStore(records: StoredRecord[]): TrajectoryStore & { rows: Map<string, StoredRecord> } {
  const rows = new Map(records.map((r) => [r.key, r]));
  return {
    rows,
    async put(r) {
      rows.set(r.key, structuredClone(r));
    },
    async list(limit = 500) {
      return [...rows.values()].sort((a, b) => b.savedAt - a.savedAt).slice(0, limit);
    },
    async get(k) {
      return rows.get(k);
    },
    async clear() {
      rows.clear();
    },
    async putAudio() {},
    async audioOf() {
      return new Map();
    },
  };
}

const turns: Turn[] = [
  { role: 'assistant', text: '您好', t_ms: 1_000 },
  { role: 'user', text: '我想改套餐', t_ms: 2_000 },
] as Turn[];

const record = (key: string, status: StoredRecord['status'], owner?: string): StoredRecord => ({
  key,
  savedAt: 10,
  source: 'call',
  status,
  ...(owner ? { owner } : {}),
  domain: 'carrier',
  task_id: 'carrier-change-plan-1',
  seed: 5,
  agent: 'reference',
  user: 'scripted',
  turns,
  trajectory: null,
});

describe('calls interrupted by a closed page', () => {
  it('become invalid trajectories with their turns, never scored', () => {
    const t = interruptedTrajectory(record('k1', 'running', 'gone'));
    expect(Trajectory.parse(t)).toEqual({
      schema_version: 1,
      id: 'k1',
      domain: 'carrier',
      task_id: 'carrier-change-plan-1',
      trial: 0,
      seed: 5,
      participants: { agent: 'reference', user: 'scripted' },
      termination: 'infrastructure_error',
      valid: false,
      invalid_reason: INTERRUPTED_REASON,
      turns: Trajectory.parse(t).turns,
      started_at_ms: 1_000,
      ended_at_ms: 2_000,
      reward_info: null,
    });
    expect(t.turns).toBe(turns);
    expect(interruptedTrajectory({ ...record('k0', 'running'), turns: [] })).toMatchObject({
      started_at_ms: 0,
      ended_at_ms: 0,
    });
  });

  it('answer the calls of a reply cut short as not run, the reply kept as sent', () => {
    const calls = ['c0', 'c1', 'c2'].map((id) => ({ id, name: 'lookup_bill', arguments: { month: id } }));
    const cut = [
      ...turns,
      { role: 'assistant', text: '', tool_calls: calls, t_ms: 3_000 },
      {
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: 'c0',
        name: 'lookup_bill',
        arguments: { month: 'c0' },
        content: '{}',
        error: false,
        writes: [],
        t_ms: 4_000,
      },
    ] as Turn[];
    const t = Trajectory.parse(interruptedTrajectory({ ...record('k2', 'running', 'gone'), turns: cut }));
    expect(t.turns.slice(2, 4)).toEqual(cut.slice(2));
    expect(t.turns.slice(4)).toEqual(
      ['c1', 'c2'].map((id) => ({
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: id,
        name: 'lookup_bill',
        arguments: { month: id },
        content: `Error: not run: the episode ended (infrastructure_error: ${INTERRUPTED_REASON}) before this call ran`,
        error: true,
        writes: [],
        t_ms: 4_000,
        not_run: 'infrastructure_error',
      })),
    );
    expect(t.ended_at_ms).toBe(4_000);
  });

  it('are marked when their page is gone, not when it is open in another tab', async () => {
    const done = { ...record('done', 'done', 'gone'), trajectory: interruptedTrajectory(record('x', 'done')) };
    const store = memoryStore([
      record('closed', 'running', 'gone'),
      record('other-tab', 'running', 'alive'),
      record('old-version', 'running'),
      done,
    ]);
    expect((await markInterrupted(store, (o) => o === 'alive')).sort()).toEqual(['closed', 'old-version']);
    expect(store.rows.get('closed')).toMatchObject({ status: 'interrupted', turns, savedAt: 10 });
    expect(store.rows.get('closed')!.trajectory!.invalid_reason).toBe(INTERRUPTED_REASON);
    expect(store.rows.get('other-tab')).toMatchObject({ status: 'running', trajectory: null });
    expect(store.rows.get('done')).toEqual(done);
    // A second visit finds nothing more to mark; the export holds the interrupted calls.
    expect(await markInterrupted(store, () => false)).toEqual(['other-tab']);
    const jsonl = trajectoriesJsonl(await store.list());
    expect(
      jsonl
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id)
        .sort(),
    ).toEqual(['closed', 'old-version', 'other-tab', 'x']);
  });
});
