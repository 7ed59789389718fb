import { describe, expect, it } from 'vitest';
import { ReplayInputError } from '../../../src/core/replay/episode.ts';
import {
  Tau2Results,
  Tau2Simulation,
  tau2ResultsEpisodes,
  tau2SimulationEpisode,
  tau2Termination,
} from '../../../src/core/replay/tau2-format.ts';

/** A tau2 SimulationRun with the given messages (other fields as tau2 writes them). */
function simulation(messages: unknown[], extra: Record<string, unknown> = {}) {
  return Tau2Simulation.parse({
    id: 'sim-1',
    task_id: 7,
    trial: 2,
    start_time: '2025-01-01T00:00:00',
    end_time: '2025-01-01T00:01:00',
    duration: 60.0,
    termination_reason: 'user_stop',
    reward_info: {
      reward: 0.0,
      reward_breakdown: { DB: 0.0, COMMUNICATE: 1.0 },
      db_check: { db_match: false, db_reward: 0.0 },
    },
    messages,
    ...extra,
  });
}

describe('tau2 results → recorded episodes', () => {
  it('pairs tool messages with the calls they answer by id, in execution order, and keeps the user side', () => {
    const sim = simulation([
      { role: 'system', content: 'policy' },
      { role: 'assistant', content: 'Hello', tool_calls: null, turn_idx: 0 },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', name: 'find_account', arguments: { phone: '5550001' }, requestor: 'assistant' },
          { id: 'c2', name: 'find_account', arguments: { phone: '0' }, requestor: 'assistant' },
        ],
      },
      // Answered in the other order: ids decide.
      { role: 'tool', id: 'c2', content: 'Error: no account with phone 0', requestor: 'assistant', error: true },
      { role: 'tool', id: 'c1', content: '{"account_id": "A1"}', requestor: 'assistant', error: false },
      // A user message whose tool call carries no requestor: the message's role decides.
      { role: 'user', content: 'let me check', tool_calls: [{ id: 'u1', name: 'check_wallet', arguments: {} }] },
      { role: 'tool', id: 'u1', content: 'wallet: 50', requestor: 'user' },
    ]);
    const ep = tau2SimulationEpisode(sim, 'r.json', 'simulations[0]');
    expect(ep).toMatchObject({
      simulation_id: 'sim-1',
      task_id: '7',
      trial: 2,
      termination: 'user_stop',
      recorded_termination: 'user_stop',
      reward: 0,
      reward_components: { DB: 0, COMMUNICATE: 1 },
      unanswered: [],
    });
    expect(ep.turns).toEqual([
      { role: 'assistant', text: 'Hello', tool_calls: [], t_ms: 0 },
      {
        role: 'assistant',
        text: '',
        tool_calls: [
          { id: 'c1', name: 'find_account', arguments: { phone: '5550001' } },
          { id: 'c2', name: 'find_account', arguments: { phone: '0' } },
        ],
        t_ms: 1,
      },
      {
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: 'c2',
        name: 'find_account',
        arguments: { phone: '0' },
        content: 'Error: no account with phone 0',
        error: true,
        writes: [],
        t_ms: 2,
      },
      {
        role: 'tool',
        requestor: 'assistant',
        tool_call_id: 'c1',
        name: 'find_account',
        arguments: { phone: '5550001' },
        content: '{"account_id": "A1"}',
        error: false,
        writes: [],
        t_ms: 3,
      },
      { role: 'user', text: 'let me check', tool_calls: [{ id: 'u1', name: 'check_wallet', arguments: {} }], t_ms: 4 },
      {
        role: 'tool',
        requestor: 'user',
        tool_call_id: 'u1',
        name: 'check_wallet',
        arguments: {},
        content: 'wallet: 50',
        error: false,
        writes: [],
        t_ms: 5,
      },
    ]);
    expect(ep.calls).toEqual([
      {
        turn: 2,
        requestor: 'assistant',
        id: 'c2',
        name: 'find_account',
        arguments: { phone: '0' },
        output: 'Error: no account with phone 0',
        error: true,
      },
      {
        turn: 3,
        requestor: 'assistant',
        id: 'c1',
        name: 'find_account',
        arguments: { phone: '5550001' },
        output: '{"account_id": "A1"}',
        error: false,
      },
      { turn: 5, requestor: 'user', id: 'u1', name: 'check_wallet', arguments: {}, output: 'wallet: 50', error: false },
    ]);
  });

  it('reads a MultiToolMessage, pairs empty ids by position, and lists calls never answered', () => {
    const sim = simulation([
      {
        role: 'assistant',
        content: 'one moment',
        tool_calls: [
          { id: '', name: 'a', arguments: { n: 1 } },
          { id: '', name: 'b', arguments: { n: 2 } },
          { id: 'late', name: 'c', arguments: {} },
        ],
      },
      {
        role: 'tool',
        tool_messages: [
          { role: 'tool', id: '', content: null },
          { role: 'tool', id: '', content: '2' },
        ],
      },
    ]);
    const ep = tau2SimulationEpisode(sim, 'r.json', '');
    expect(ep.calls.map((c) => [c.name, c.output, c.turn])).toEqual([
      ['a', null, 1],
      ['b', '2', 2],
    ]);
    // A missing output is kept as null for the comparison; the turn shows empty text.
    expect(ep.turns[1]).toMatchObject({ role: 'tool', content: '' });
    expect(ep.unanswered).toEqual([{ name: 'c', arguments: {}, requestor: 'assistant' }]);
  });

  it('rejects a tool message that answers no call, naming the file and field', () => {
    const sim = simulation([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'a', arguments: {} }] },
      { role: 'tool', id: 'c9', content: 'x' },
    ]);
    expect(() => tau2SimulationEpisode(sim, 'r.json', 'simulations[4]')).toThrow(
      new ReplayInputError(
        'r.json',
        'simulations[4].messages[1].id',
        'tool message "c9" answers no pending tool call (pending: "c1")',
      ),
    );
    const orphan = simulation([{ role: 'tool', id: 'c1', content: 'x' }]);
    expect(() => tau2SimulationEpisode(orphan, 'r.json', '')).toThrow(
      'r.json: messages[0].id: tool message "c1" answers no tool call',
    );
  });

  it('reads full-duplex runs from ticks, joining the text chunks of one side', () => {
    const sim = simulation([], {
      messages: null,
      ticks: [
        { tick_id: 0, timestamp: 't0', agent_chunk: { role: 'assistant', content: 'Hel' } },
        { tick_id: 1, timestamp: 't1', agent_chunk: { role: 'assistant', content: 'lo there.' } },
        { tick_id: 2, timestamp: 't2', user_chunk: { role: 'user', content: 'Pay ten.' } },
        {
          tick_id: 3,
          timestamp: 't3',
          agent_chunk: null,
          agent_tool_calls: [
            { id: 'p1', name: 'pay', arguments: { account_id: 'A1', amount: 10 }, requestor: 'assistant' },
          ],
          agent_tool_results: [
            { id: 'p1', role: 'tool', content: '{"paid": 10}', requestor: 'assistant', error: false },
          ],
          user_chunk: { role: 'user', content: null },
        },
      ],
    });
    const ep = tau2SimulationEpisode(sim, 'r.json', '');
    expect(ep.turns.map((t) => (t.role === 'tool' ? `tool:${t.content}` : `${t.role}:${t.text}`))).toEqual([
      'assistant:Hello there.',
      'user:Pay ten.',
      'assistant:',
      'tool:{"paid": 10}',
    ]);
    expect(ep.calls).toHaveLength(1);
  });

  it('maps termination reasons so that the reward stays the same', () => {
    expect(
      [
        'user_stop',
        'agent_stop',
        'max_steps',
        'too_many_errors',
        'timeout',
        'agent_error',
        'context_window_exceeded',
        'whatever',
      ].map(tau2Termination),
    ).toEqual([
      'user_stop',
      'agent_stop',
      'max_steps',
      'too_many_errors',
      'max_steps',
      'infrastructure_error',
      'infrastructure_error',
      'infrastructure_error',
    ]);
  });

  it('takes the domain from info.environment_info and each simulation in order', () => {
    const results = Tau2Results.parse({
      timestamp: 'x',
      info: { environment_info: { domain_name: 'airline', policy: '' }, num_trials: 1 },
      tasks: [],
      simulations: [
        { id: 's0', task_id: '1', termination_reason: 'agent_stop', messages: [], reward_info: null },
        { id: 's1', task_id: '2', termination_reason: 'max_steps', messages: [] },
      ],
    });
    const eps = tau2ResultsEpisodes(results, 'r.json');
    expect(eps.map((e) => [e.simulation_id, e.file, e.where, e.domain, e.reward, e.termination])).toEqual([
      [
        's0',
        'r.json',
        'simulations[0]',
        { name: 'airline', file: 'r.json', field: 'info.environment_info.domain_name' },
        null,
        'agent_stop',
      ],
      [
        's1',
        'r.json',
        'simulations[1]',
        { name: 'airline', file: 'r.json', field: 'info.environment_info.domain_name' },
        null,
        'max_steps',
      ],
    ]);
  });
});
