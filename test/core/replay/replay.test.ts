import { beforeAll, describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { ReplayInputError, checkEpisodes, trajectoryEpisode } from '../../../src/core/replay/episode.ts';
import { replayEpisodes } from '../../../src/core/replay/replay.ts';
import { Tau2Simulation, tau2SimulationEpisode } from '../../../src/core/replay/tau2-format.ts';
import type { Domain } from '../../../src/core/schema/domain.ts';
import type { TaskInput } from '../../../src/core/schema/task.ts';
import { Trajectory } from '../../../src/core/schema/trajectory.ts';
import { miniDomain } from '../../fixtures/mini-domain.ts';

/** Pay 10 off A1; judged partly by an NL assertion, so without a judge every reward is partial. */
const payNl: TaskInput = {
  id: 'pay-nl',
  user_scenario: { instructions: 'You want to pay 10 off your balance. Your phone is 5550001.' },
  evaluation_criteria: {
    actions: [
      { name: 'find_account', arguments: { phone: '5550001' } },
      { name: 'pay', arguments: { account_id: 'A1', amount: 10 } },
    ],
    nl_assertions: ['The agent is polite.'],
    reward_basis: ['DB', 'NL_ASSERTION'],
  },
};

let domain: Domain;
let runtime: DomainRuntime;
beforeAll(async () => {
  domain = miniDomain([payNl]);
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
});

const say = (role: 'assistant' | 'user', content: string | null, tool_calls: unknown[] | null = null) => ({
  role,
  content,
  tool_calls,
});
const call = (id: string, name: string, args: Record<string, unknown>, requestor?: 'user') => ({
  id,
  name,
  arguments: args,
  ...(requestor ? { requestor } : {}),
});
const result = (id: string, content: string, error = false, requestor: 'assistant' | 'user' = 'assistant') => ({
  role: 'tool',
  id,
  content,
  error,
  requestor,
});

/** tau2 run: the agent looks the caller up, tries a user tool (fails), pays (wrong recorded output); the caller checks the wallet. */
const paid = tau2SimulationEpisode(
  Tau2Simulation.parse({
    id: 'paid',
    task_id: 'pay-nl',
    termination_reason: 'user_stop',
    reward_info: { reward: 1.0, reward_breakdown: { DB: 1.0, NL_ASSERTION: 1.0 } },
    messages: [
      say('assistant', 'Hello, how can I help you today?'),
      say('user', 'I want to pay 10. My phone is 5550001.'),
      say('assistant', null, [call('f1', 'find_account', { phone: '5550001' })]),
      result('f1', '{"account_id": "A1", "name": "Ada", "balance": 30}'),
      say('assistant', null, [call('w0', 'check_wallet', {})]),
      result('w0', 'Error: Tool check_wallet not found', true),
      say('assistant', 'Shall I pay 10 off your balance?'),
      say('user', 'Yes.'),
      say('assistant', null, [call('p1', 'pay', { account_id: 'A1', amount: 10 })]),
      result('p1', '{"account_id": "A1", "paid": 100}'),
      say('user', 'Let me look at my wallet.', [call('u1', 'check_wallet', {}, 'user')]),
      result('u1', 'wallet: 50', false, 'user'),
      say('assistant', 'Done, your balance is now 20.'),
    ],
  }),
  'r.json',
  'simulations[0]',
);

/** One of our trajectories that stops after the lookup: the payment is missing. */
const unpaid = trajectoryEpisode(
  Trajectory.parse({
    schema_version: 1,
    id: 'mini/pay-nl/0/0',
    domain: 'mini',
    task_id: 'pay-nl',
    trial: 0,
    seed: 0,
    participants: { agent: 'test', user: 'test' },
    termination: 'agent_stop',
    valid: true,
    turns: [
      { role: 'user', text: 'Pay 10, phone 5550001.', t_ms: 0 },
      {
        role: 'assistant',
        text: '',
        tool_calls: [{ id: 't1', name: 'find_account', arguments: { phone: '5550001' } }],
        t_ms: 1,
      },
      {
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: 't1',
        name: 'find_account',
        arguments: { phone: '5550001' },
        content: '{"account_id":"A1","name":"Ada","balance":30}',
        error: false,
        t_ms: 2,
      },
      { role: 'assistant', text: 'Goodbye.', t_ms: 3 },
    ],
    started_at_ms: 0,
    ended_at_ms: 3,
    reward_info: {
      reward: 1,
      partial: true,
      basis: ['DB', 'NL_ASSERTION'],
      components: { DB: { score: 1 }, NL_ASSERTION: { score: null, judged: false } },
    },
  }),
  'runs.jsonl',
  'line 1',
);

/** A tau2 run cut off by max_steps with no reward recorded. */
const cut = tau2SimulationEpisode(
  Tau2Simulation.parse({
    id: 'cut',
    task_id: 'pay-nl',
    termination_reason: 'max_steps',
    messages: [say('user', 'Hello?')],
  }),
  'r.json',
  'simulations[1]',
);

describe('replayEpisodes', () => {
  it('replays each call by its side on a fresh database and compares outputs and rewards', async () => {
    const report = await replayEpisodes(runtime, [paid, unpaid, cut]);
    expect(report.calls).toEqual([
      {
        simulation_id: 'paid',
        index: 0,
        requestor: 'assistant',
        name: 'find_account',
        arguments: { phone: '5550001' },
        recorded: '{"account_id": "A1", "name": "Ada", "balance": 30}',
        ours: '{"account_id":"A1","name":"Ada","balance":30}',
        recorded_error: false,
        ours_error: false,
        equal: true,
      },
      {
        simulation_id: 'paid',
        index: 1,
        requestor: 'assistant',
        name: 'check_wallet',
        arguments: {},
        recorded: 'Error: Tool check_wallet not found',
        ours: 'Error: tool check_wallet is not available to the agent',
        recorded_error: true,
        ours_error: true,
        equal: true,
      },
      {
        simulation_id: 'paid',
        index: 2,
        requestor: 'assistant',
        name: 'pay',
        arguments: { account_id: 'A1', amount: 10 },
        recorded: '{"account_id": "A1", "paid": 100}',
        ours: '{"account_id":"A1","paid":10}',
        recorded_error: false,
        ours_error: false,
        equal: false,
      },
      {
        simulation_id: 'paid',
        index: 3,
        requestor: 'user',
        name: 'check_wallet',
        arguments: {},
        recorded: 'wallet: 50',
        ours: 'wallet: 50',
        recorded_error: false,
        ours_error: false,
        equal: true,
      },
      {
        simulation_id: 'mini/pay-nl/0/0',
        index: 0,
        requestor: 'assistant',
        name: 'find_account',
        arguments: { phone: '5550001' },
        recorded: '{"account_id":"A1","name":"Ada","balance":30}',
        ours: '{"account_id":"A1","name":"Ada","balance":30}',
        recorded_error: false,
        ours_error: false,
        equal: true,
      },
    ]);
    expect(
      report.rewards.map((r) => [r.simulation_id, r.recorded, r.ours, r.equal, r.partial, r.calls, r.calls_equal]),
    ).toEqual([
      ['paid', 1, 1, true, true, 4, 3],
      ['mini/pay-nl/0/0', 1, 0, false, true, 1, 1],
      ['cut', null, 0, null, true, 0, 0],
    ]);
    const [first, second, third] = report.rewards;
    expect(first!.ours_components).toEqual({ DB: 1, NL_ASSERTION: null, QUALITY: 1, ASSERTIONS: 1 });
    expect(first!.recorded_components).toEqual({ DB: 1, NL_ASSERTION: 1 });
    expect(first!.ours_notes).toEqual(['NL_ASSERTION: not judged (no judge)']);
    // The trajectory without the payment: A1 keeps its balance of 30 and no payment row exists.
    expect(second!.ours_components).toEqual({ DB: 0, NL_ASSERTION: null, QUALITY: 1, ASSERTIONS: 1 });
    expect(second!.recorded_components).toEqual({ DB: 1, NL_ASSERTION: null });
    expect(second!.ours_notes).toEqual([
      'DB: accounts[A1].balance: expected 20, got 30; payments: missing row {"account_id":"A1","amount":10}',
      'NL_ASSERTION: not judged (no judge)',
    ]);
    expect(third!.termination).toBe('max_steps');
    expect(third!.ours_notes.at(-1)).toMatch(/^episode ended on max_steps: reward 0/);
    expect(report.summary).toEqual({
      domain: 'mini',
      simulations: 3,
      calls: { total: 5, equal: 4, different: 1, percent_equal: 80, unanswered: 0 },
      rewards: { compared: 2, equal: 1, different: 1, not_recorded: 1, partial: 2, percent_equal: 50 },
      policy: { breaking: 0, breaking_passes: 0 },
      all_equal: false,
    });
  });

  it('reports everything equal for a faithful recording', async () => {
    const report = await replayEpisodes(runtime, [
      { ...paid, calls: paid.calls.filter((c) => c.name !== 'pay'), reward: null },
    ]);
    expect(report.summary.calls).toEqual({ total: 3, equal: 3, different: 0, percent_equal: 100, unanswered: 0 });
    expect(report.summary.rewards).toEqual({
      compared: 0,
      equal: 0,
      different: 0,
      not_recorded: 1,
      partial: 0,
      percent_equal: null,
    });
    expect(report.summary.all_equal).toBe(true);
  });
});

describe('checkEpisodes', () => {
  it('names the field of an episode from another domain or with an unknown task', () => {
    expect(() =>
      checkEpisodes(domain, [{ ...unpaid, domain: { name: 'carrier', file: 'runs.jsonl', field: 'line 1: domain' } }]),
    ).toThrow(new ReplayInputError('runs.jsonl', 'line 1: domain', 'recorded in domain "carrier", not mini'));
    expect(() => checkEpisodes(domain, [{ ...cut, task_id: '99' }])).toThrow(
      'r.json: simulations[1].task_id: unknown task "99" in domain mini',
    );
    expect(() => checkEpisodes(domain, [paid, unpaid, cut])).not.toThrow();
  });
});
