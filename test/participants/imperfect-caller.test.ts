import { beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { checkCallerFacts } from '../../src/core/participants/model-user.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Agent, ParticipantReply } from '../../src/core/participants/types.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { CALLER_PROMPT_VERSION, renderCallerPrompt } from '../../src/core/prompts/caller.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Task, type TaskInput } from '../../src/core/schema/task.ts';
import type { Trajectory } from '../../src/core/schema/trajectory.ts';

let domain: Domain;
let runtime: DomainRuntime;
beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  runtime = await DomainRuntime.create(domain, await sqlJsFactory());
});
const task = (id: string): Task => domain.tasks.find((t) => t.id === id)!;

/** An agent that speaks from a fixed list, one entry per turn. */
function listAgent(replies: ParticipantReply[]): Agent {
  let i = 0;
  return { id: 'list', respond: async () => replies[i++] ?? { text: '再见。###STOP###' } };
}

function spoken(t: Trajectory): string[] {
  return t.turns.filter((x) => x.role === 'user').map((x) => (x.role === 'user' ? x.text : ''));
}

describe('imperfect callers (scripted, deterministic)', () => {
  it('misremembers the phone number, then corrects it when the agent cannot find the account', async () => {
    const agent = listAgent([
      { text: '您好，这里是客服。' },
      { text: '请问您的手机号码是多少？' },
      { text: '', tool_calls: [{ id: 'c1', name: 'find_customer_by_phone', arguments: { phone: '13090918860' } }] },
      { text: '这个号码查不到账户，请您核对一下。' },
      { text: '', tool_calls: [{ id: 'c2', name: 'find_customer_by_phone', arguments: { phone: '13090918806' } }] },
      { text: '找到了。请问还有什么可以帮您？' },
    ]);
    const t = await runEpisode({
      runtime,
      task: task('carrier-misremember-phone-1'),
      agent,
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(0, 1),
    });
    expect(spoken(t)).toEqual([
      '喂，你好，我想用话费余额交一下二月份的账单。',
      '13090918860',
      '哦不好意思，我说反了，是13090918806。',
      '没有了，谢谢，再见。',
    ]);
    const tools = t.turns.filter((x) => x.role === 'tool').map((x) => (x.role === 'tool' ? x.error : null));
    expect(tools).toEqual([true, false]);
  });

  it('asking for the fact again also counts as checking a misremembered value', async () => {
    const agent = listAgent([
      { text: '您好。' },
      { text: '请问您的手机号码是多少？' },
      { text: '麻烦再说一遍您的手机号？' },
    ]);
    const t = await runEpisode({
      runtime,
      task: task('carrier-misremember-phone-1'),
      agent,
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(0, 1),
    });
    expect(spoken(t).slice(1, 3)).toEqual(['13090918860', '哦不好意思，我说反了，是13090918806。']);
  });

  it('withholds the phone number until pressed, and gives up a false claim the records contradict', async () => {
    const agent = listAgent([
      { text: '您好，这里是客服。' },
      { text: '请问您的手机号码是多少？' },
      { text: '请问您的手机号码是多少？' },
      { text: '我必须用手机号才能查到您的账户，请问您的手机号码是多少？' },
      { text: '', tool_calls: [{ id: 'c1', name: 'find_customer_by_phone', arguments: { phone: '18511628484' } }] },
      { text: '', tool_calls: [{ id: 'c2', name: 'get_payments', arguments: { customer_id: 'C1026' } }] },
      { text: '系统里未查到您二月份的缴费记录，账单 38 元还没有缴。' },
      { text: '请问还有什么可以帮您？' },
    ]);
    const t = await runEpisode({
      runtime,
      task: task('carrier-withhold-false-claim-1'),
      agent,
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(0, 1),
    });
    expect(spoken(t)).toEqual([
      '你好，我收到短信说二月份话费没交，这是怎么回事？我上周就已经交过了。',
      '手机号就不用报了吧，你们直接查一下不行吗？',
      // Asked again without saying why: still withheld.
      '手机号就不用报了吧，你们直接查一下不行吗？',
      '18511628484',
      '是吗？那可能是我记错了，我回去再找找。',
      '没有了，谢谢，再见。',
    ]);
  });

  it('without press_cues any repeated question presses; the correction defaults to the value', async () => {
    const base = task('carrier-pay-balance-1');
    const t2 = Task.parse({
      ...(structuredClone(base) as unknown as TaskInput),
      id: 'imperfect-defaults',
      user_scenario: {
        ...base.user_scenario,
        withholds: [{ fact: 'phone', deflect: '先不说。' }],
        misremembers: [{ fact: 'phone', wrong: '15867452310', check_cues: ['查不到'] }],
      },
    });
    const agent = listAgent([
      { text: '您好。' },
      { text: '您的手机号？' },
      { text: '您的手机号？' },
      { text: '查不到这个号码。' },
    ]);
    const t = await runEpisode({
      runtime,
      task: t2,
      agent,
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(0, 1),
    });
    expect(spoken(t).slice(1, 4)).toEqual(['先不说。', '15867452310', '15867452301']);
  });

  it('the reference agent runs through the new carrier tasks with the imperfect caller', async () => {
    const { ReferenceAgent } = await import('../../src/core/participants/scripted.ts');
    const mis = await runEpisode({
      runtime,
      task: task('carrier-misremember-phone-1'),
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 3,
      clock: steppingClock(0, 1),
    });
    expect(spoken(mis).slice(0, 3)).toEqual([
      '喂，你好，我想用话费余额交一下二月份的账单。',
      '13090918860',
      '是的，确认。',
    ]);
    const claim = await runEpisode({
      runtime,
      task: task('carrier-withhold-false-claim-1'),
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 3,
      clock: steppingClock(0, 1),
    });
    expect(spoken(claim)).toEqual([
      '你好，我收到短信说二月份话费没交，这是怎么回事？我上周就已经交过了。',
      '手机号就不用报了吧，你们直接查一下不行吗？',
      '是吗？那可能是我记错了，我回去再找找。',
    ]);
  });
});

describe('imperfect callers in the LLM caller prompt', () => {
  it('renders each behaviour from the task fields, and only when present', () => {
    const tools: never[] = [];
    const p = renderCallerPrompt(domain, task('carrier-withhold-false-claim-1'), tools);
    expect(CALLER_PROMPT_VERSION).toBe('caller-v2');
    expect(p).toContain(
      '# How you get things wrong on this call (play it naturally, never say it is an act)\n' +
        '- You do not want to give your phone at first; when asked, say something like "手机号就不用报了吧，你们直接查一下不行吗？". Give it only when the agent asks again and explains why it is needed (for example: 必须, 需要, 才能).\n' +
        '- You believe this, and say it early in the call: "我上周就已经交过了。". It is not true. When the agent tells you the records show otherwise, accept it: "是吗？那可能是我记错了，我回去再找找。".',
    );
    const m = renderCallerPrompt(domain, task('carrier-misremember-phone-1'), tools);
    expect(m).toContain(
      '- The first time you are asked for your phone, say "13090918860" (you misremember it). When the agent says it cannot find it or asks you to check, correct yourself: "哦不好意思，我说反了，是13090918806。".',
    );
    expect(renderCallerPrompt(domain, task('carrier-pay-balance-1'), tools)).not.toContain('How you get things wrong');
  });

  it('the wrong value and the claim are part of the task, so the fact check does not flag them', () => {
    expect(checkCallerFacts('我的号码是 13090918860。', task('carrier-misremember-phone-1'), [])).toEqual([]);
    expect(checkCallerFacts('我的号码是 13090918861。', task('carrier-misremember-phone-1'), [])).toEqual([
      '13090918861',
    ]);
  });
});
