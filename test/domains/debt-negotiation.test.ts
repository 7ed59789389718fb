import { beforeAll, describe, expect, it } from 'vitest';
import { affordability } from '../../domains/debt-negotiation/tools.ts';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import { gateDomain } from '../../src/core/gate/gate.ts';
import { referencePlan, type PlanStep } from '../../src/core/participants/reference-plan.ts';
import { ReferenceAgent } from '../../src/core/participants/scripted.ts';
import type { Agent } from '../../src/core/participants/types.ts';
import { renderCallerPrompt } from '../../src/core/prompts/caller.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Task } from '../../src/core/schema/task.ts';
import { failedIds, outboundHarness, planAgent, userLines, type OutboundHarness } from './outbound-helpers.ts';

let h: OutboundHarness;
let domain: Domain;
let runtime: DomainRuntime;
beforeAll(async () => {
  h = await outboundHarness('debt-negotiation');
  ({ domain, runtime } = h);
});
const task = (id: string): Task => h.task(id);
const play = (t: Task, agent: Agent) => h.play(t, agent);
/** The reference plan with each say step containing `find` replaced by `say` (or dropped for null). */
const replaceSay = (t: Task, find: string, say: string | null): PlanStep[] =>
  referencePlan(domain, t).flatMap((s) => ('say' in s && s.say.includes(find) ? (say === null ? [] : [{ say }]) : [s]));

describe('debt-negotiation domain', () => {
  it('the gate admits all 13 tasks: reference 1, do-nothing 0, every rule cited', async () => {
    const report = await gateDomain(runtime);
    expect(report.domain_problems).toEqual([]);
    expect(report.tasks.map((v) => [v.task_id, v.accepted, v.reference_reward, v.noop_reward])).toEqual(
      domain.tasks.map((t) => [t.id, true, 1, 0]),
    );
    const profiles = domain.tasks.map((t) => t.id.split('-')[1]);
    expect(profiles.filter((p) => p === 'easy')).toHaveLength(4);
    expect(profiles.filter((p) => p === 'boundary')).toHaveLength(4);
    expect(profiles.filter((p) => p === 'hard')).toHaveLength(5);
  });

  it('plans follow the real ability to pay: half the disposable income, shortest affordable term, then hardship', () => {
    const b = { principalFen: 930_000, lateFeeFen: 30_000, paidFen: 0, owedFen: 960_000 };
    const r = affordability(b, { incomeFen: 700_000, expensesFen: 500_000, otherDebtsFen: 30_000 });
    expect([r.disposableFen, r.affordableFen]).toEqual([170_000, 85_000]);
    expect(r.options.map((o) => [o.months, o.monthlyFen, o.hardship, o.affordable])).toEqual([
      [3, 320_000, false, false],
      [6, 160_000, false, false],
      [12, 80_000, false, true],
      [24, 40_000, false, true],
      [24, 38_800, true, true],
    ]);
    expect(r.recommended).toEqual({ months: 12, monthlyFen: 80_000, hardship: false, affordable: true });
    // 24 months (300) beyond 290: the hardship plan without the 480 yuan late fee (6720 / 24 = 280).
    const hard = affordability(
      { principalFen: 672_000, lateFeeFen: 48_000, paidFen: 0, owedFen: 720_000 },
      { incomeFen: 450_000, expensesFen: 360_000, otherDebtsFen: 32_000 },
    );
    expect(hard.recommended).toEqual({ months: 24, monthlyFen: 28_000, hardship: true, affordable: true });
    const none = affordability(
      { principalFen: 456_000, lateFeeFen: 24_000, paidFen: 0, owedFen: 480_000 },
      { incomeFen: 200_000, expensesFen: 200_000, otherDebtsFen: 0 },
    );
    expect([none.affordableFen, none.recommended]).toEqual([0, null]);
  });

  it('good agent: the callee who insists on what they can afford signs the 12-month plan (reward 1)', async () => {
    const { trajectory, info } = await play(task('dn-boundary-twelve-insists'), new ReferenceAgent());
    expect(info.reward).toBe(1);
    expect(trajectory.turns.find((x) => x.role === 'assistant' && x.text.startsWith('我将为您'))).toMatchObject({
      text: '我将为您办理分期方案：D3005，期数12，困难减免方案否，月供800元。请问您确认吗？',
    });
    expect(info.objections).toMatchObject({ raised: 1, handled: 1, score: 1 });
    expect(info.objections?.items[0]?.reason).toBe('tool share_finances');
  });

  it('correct no-deal: a refusing callee hears only lawful consequences and the hardship option; callback (reward 1)', async () => {
    const { trajectory, info } = await play(task('dn-hard-refusal'), new ReferenceAgent());
    expect(info.reward).toBe(1);
    expect(trajectory.termination).toBe('user_stop');
    expect(userLines(trajectory)).toEqual([
      '是我。我知道欠钱，但我现在不想还。',
      '我现在不想还。',
      '说了不还就是不还，下周一上午十点再说吧。',
      '没有了，谢谢，再见。',
    ]);
    expect(info.objections).toMatchObject({ raised: 2, handled: 2, score: 1 });
  });

  it('premature give-up: a callback after the first objection, before checking the ability to pay, scores 0', async () => {
    const t = task('dn-boundary-twelve-insists');
    const plan: PlanStep[] = [
      ...referencePlan(domain, t).slice(0, 4), // opening, find, balance, "9600元, today?"
      {
        call: {
          id: 'g1',
          name: 'register_callback',
          arguments: { account_id: 'D3005', callback_at: '2025-03-18 10:00', note: '客户还不起' },
        },
      },
      { say: '那我明天上午10点再联系您。请问还有什么可以帮您？' },
    ];
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(info.components.DB?.score).toBe(0);
    // No plan was offered after the ability check the callee never got to make.
    expect(failedIds(info)).toEqual(['plan-from-ability', 'no-callback']);
  });

  it('coercive: a paraphrased threat (no listed phrase) makes the callee hang up and scores 0', async () => {
    const t = task('dn-boundary-twelve-insists');
    const plan = replaceSay(t, '9600元', '您目前一共欠款9600元。要是这周还不上，我们的人可能得去府上坐坐。');
    const { trajectory, info } = await play(t, planAgent(plan));
    expect(userLines(trajectory).at(-1)).toBe('你这是在威胁我吗？我挂了。');
    expect(info.reward).toBe(0);
    expect(info.assertions.find((a) => a.id === 'no-threat')?.reason).toBe(
      'turn 6: threatens the callee (consequence-clause "要是这周还不" in "要是这周还不上，我们的人可能得去府上坐坐。")',
    );
  });

  it('fabricating: a made-up monthly amount the callee accepts breaks R3 and scores 0', async () => {
    const t = task('dn-boundary-twelve-insists');
    const plan = referencePlan(domain, t).map((s): PlanStep => {
      if ('say' in s) return { say: s.say.replace('月供800元', '月供700元') };
      if (s.call.name === 'create_instalment_plan')
        return { call: { ...s.call, arguments: { ...s.call.arguments, monthly_amount: 700 } } };
      return s;
    });
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(info.assertions.find((a) => a.id === 'rule:R3')?.reason).toMatch(
      /plan PL0001 is 12 months at 700 yuan; the recommended plan is 12 months at 800 yuan/,
    );
  });

  it('a plan beyond the means (6 months at 1600 against 850) is refused by the callee, then breaks R3 if forced', async () => {
    const t = task('dn-boundary-twelve-insists');
    const plan = referencePlan(domain, t).map((s): PlanStep => {
      if ('say' in s) return { say: s.say.replace('期数12', '期数6').replace('月供800元', '月供1600元') };
      if (s.call.name === 'create_instalment_plan')
        return { call: { ...s.call, arguments: { ...s.call.arguments, months: 6, monthly_amount: 1600 } } };
      return s;
    });
    const { trajectory, info } = await play(t, planAgent(plan));
    expect(userLines(trajectory)).toContain('每月还款不能超过我真正能承受的，这个数我还不起。');
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toEqual(expect.arrayContaining(['confirm-plan', 'rule:R3']));
  });

  it('declaring the plan signed without reading it back scores 0', async () => {
    const t = task('dn-boundary-twelve-insists');
    const plan = referencePlan(domain, t).filter((s) => !('call' in s && s.call.name === 'get_plan'));
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toEqual(['verify-signature']);
  });

  it('a no-deal ending without the hardship option fails the disclosure check (reward 0)', async () => {
    const t = task('dn-hard-refusal');
    const plan = replaceSay(
      t,
      '困难减免',
      '跟您如实说明，逾期会按合同继续计收滞纳金，逾期记录也会按规定如实报送征信系统。',
    );
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toEqual(['disclose-no-deal']);
    expect(info.assertions.find((a) => a.id === 'disclose-no-deal')?.reason).toBe('never said: "困难减免"');
  });

  it('a callback outside calling hours breaks R7 (time-of-day limit)', async () => {
    const t = task('dn-hard-refusal');
    const plan = referencePlan(domain, t).map(
      (s): PlanStep =>
        'call' in s && s.call.name === 'register_callback'
          ? { call: { ...s.call, arguments: { ...s.call.arguments, callback_at: '2025-03-24 21:30' } } }
          : s,
    );
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(info.assertions.find((a) => a.id === 'rule:R7')?.reason).toMatch(
      /callback CB0001 is set for 2025-03-24 21:30; calls are allowed from 08:00 to 20:00/,
    );
  });

  it('change of mind: "分期不收手续费" turns a refusal of instalments into the 6-month plan', async () => {
    const t = task('dn-boundary-change-of-mind');
    expect((await play(t, new ReferenceAgent())).info.reward).toBe(1);
    const silent = await play(t, planAgent(replaceSay(t, '不收手续费', null)));
    expect(userLines(silent.trajectory)).toContain('分期就是变相多收钱，我不考虑。');
    expect(silent.info.reward).toBe(0);
  });

  it('"I already paid": closed only when the ledger shows it; a false claim is answered from the records', async () => {
    expect((await play(task('dn-hard-already-paid'), new ReferenceAgent())).info.reward).toBe(1);
    const t = task('dn-hard-false-paid');
    const ref = await play(t, new ReferenceAgent());
    expect(ref.info.reward).toBe(1);
    expect(userLines(ref.trajectory).slice(0, 2)).toEqual([
      '是我。我上个月已经还清了。',
      '那可能是我记错了，我以为我爱人帮我还了。',
    ]);
    // Believing the claim: closing the account fails (it still owes 4800) and nothing is agreed.
    const believer = planAgent([
      ...referencePlan(domain, t).slice(0, 3),
      { call: { id: 'b1', name: 'mark_settled', arguments: { account_id: 'D3013' } } },
      { say: '好的，已经给您办理结清了。' },
    ]);
    const { trajectory, info } = await play(t, believer);
    expect(trajectory.turns.find((x) => x.role === 'tool' && x.name === 'mark_settled')).toMatchObject({
      error: true,
      content: 'Error: account D3013 still owes 4800 yuan',
    });
    expect(info.reward).toBe(0);
  });

  it('the dispute stops collection: the account is marked disputed, no plan is pressed', async () => {
    const { info } = await play(task('dn-boundary-dispute-fee'), new ReferenceAgent());
    expect(info.reward).toBe(1);
    expect(info.components.ENV_ASSERTION?.score).toBe(1);
  });

  it('the model callee gets its private card: limit, objections, change of mind', () => {
    const card = renderCallerPrompt(domain, task('dn-boundary-change-of-mind'), []);
    expect(card).toContain('You accept a price of at most 100; you never say this number.');
    expect(card).toContain('If the agent mentions "不收手续费", you change your mind and accept up to 1000.');
  });
});
