import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import { gateDomain } from '../../src/core/gate/gate.ts';
import { offeredPrice } from '../../src/core/participants/negotiating.ts';
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
  h = await outboundHarness('insurance-renewal');
  ({ domain, runtime } = h);
});
const task = (id: string): Task => h.task(id);
const play = (t: Task, agent: Agent) => h.play(t, agent);

describe('insurance-renewal domain', () => {
  it('the gate admits all 14 tasks: reference 1, do-nothing 0, every rule cited', async () => {
    const report = await gateDomain(runtime);
    expect(report.domain_problems).toEqual([]);
    expect(report.tasks.map((v) => [v.task_id, v.accepted, v.reference_reward, v.noop_reward])).toEqual(
      domain.tasks.map((t) => [t.id, true, 1, 0]),
    );
    const profiles = domain.tasks.map((t) => t.id.split('-')[1]);
    expect(profiles.filter((p) => p === 'easy')).toHaveLength(4);
    expect(profiles.filter((p) => p === 'boundary')).toHaveLength(5);
    expect(profiles.filter((p) => p === 'hard')).toHaveLength(5);
  });

  it('reads the offered price from the agent turn', () => {
    expect(offeredPrice('我将为您生成续保订单：P2009，标准保障，3060元。请问您确认吗？')).toBe(3060);
    expect(offeredPrice('现在是三千零六十块。')).toBe(3060);
    expect(offeredPrice('我将为您登记回访：P2010，2025-03-20。')).toBeNull();
  });

  it('the reference negotiates down the ladder: three objections in order, then a paid order it verifies', async () => {
    const { trajectory, info } = await play(task('ir-hard-three-steps'), new ReferenceAgent());
    expect(info.reward).toBe(1);
    // Beside the reward: each objection answered by a discount step.
    expect(info.objections).toMatchObject({ raised: 3, handled: 3, score: 1 });
    expect(info.objections?.items.map((o) => o.reason)).toEqual([
      'tool release_next_discount',
      'tool release_next_discount',
      'tool release_next_discount',
    ]);
    expect(userLines(trajectory).slice(1, 5)).toEqual([
      '太贵了，能不能再便宜点？',
      '还是贵，再便宜一点吧。',
      '还是超出我的预算，再优惠点？',
      '是的，确认。',
    ]);
  });

  it('a correct ending without a deal (bottom line held, callback registered) scores full', async () => {
    const { trajectory, info } = await play(task('ir-hard-no-deal'), new ReferenceAgent());
    expect(info.reward).toBe(1);
    expect(userLines(trajectory)).toContain('还是超出我的预算，今天先不续了，下周四再打给我吧。');
  });

  it('premature give-up: a callback after the first objection, while discounts remain, scores 0', async () => {
    const t = task('ir-hard-three-steps');
    const ref = referencePlan(domain, t);
    const plan: PlanStep[] = [
      ...ref.slice(0, 4), // opening, find, quote, first offer (3600)
      {
        call: {
          id: 'g1',
          name: 'register_callback',
          arguments: { policy_id: 'P2009', callback_on: '2025-03-17', note: '客户嫌贵' },
        },
      },
      { say: '那我下周一再联系您。请问还有什么可以帮您？' },
    ];
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(info.components.DB?.score).toBe(0);
    // The ladder was skipped and the deal the callee would have made was never offered.
    expect(failedIds(info)).toEqual(['order-at-price', 'no-callback', 'ladder']);
    // The callback answered the first objection; nothing was offered after that.
    expect(info.objections).toMatchObject({ raised: 1, handled: 1, score: 1 });
  });

  it('coercive: a threat makes the callee hang up and fails the no-threat assertion (reward 0)', async () => {
    const t = task('ir-hard-three-steps');
    const plan = referencePlan(domain, t).map((s) =>
      'say' in s && s.say.includes('3420元') ? { say: `${s.say}不续的话保单马上失效，还会被罚款。` } : s,
    );
    const { trajectory, info } = await play(t, planAgent(plan));
    expect(userLines(trajectory).at(-1)).toBe('你这是威胁我吗？我不续了。');
    expect(trajectory.termination).toBe('user_stop');
    expect(trajectory.turns.some((x) => x.role === 'tool' && x.name === 'create_renewal_order')).toBe(false);
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toContain('no-threat');
  });

  it('fabricating a price below the system quote breaks R2 and scores 0', async () => {
    const t = task('ir-hard-three-steps');
    const plan = referencePlan(domain, t).map((s): PlanStep => {
      if ('say' in s) return { say: s.say.replace('3060元', '2999元') };
      if (s.call.name === 'create_renewal_order')
        return { call: { ...s.call, arguments: { ...s.call.arguments, price: 2999 } } };
      return s;
    });
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(info.assertions.find((a) => a.id === 'rule:R2')?.status).toBe('failed');
  });

  it('declaring success on "I already paid" without reading the order back scores 0', async () => {
    const t = task('ir-hard-three-steps');
    const plan = referencePlan(domain, t).filter((s) => !('call' in s && s.call.name === 'get_renewal_order'));
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toEqual(['verify-payment']);
  });

  it('the model callee gets the negotiation card privately', () => {
    const card = renderCallerPrompt(domain, task('ir-hard-three-steps'), []);
    expect(card).toContain('You accept a price of at most 3060; you never say this number.');
    expect(card).toContain('"太贵了，能不能再便宜点？", "还是贵，再便宜一点吧。", "还是超出我的预算，再优惠点？"');
  });

  it('a correct no-deal ending must still make its disclosures: without the callback date it scores 0', async () => {
    const t = task('ir-hard-no-deal');
    const plan = referencePlan(domain, t).filter((s) => !('say' in s && s.say.includes('2025-03-20')));
    const { info } = await play(t, planAgent(plan));
    expect(info.reward).toBe(0);
    expect(failedIds(info)).toEqual(['disclose-no-deal']);
    expect(info.assertions.find((a) => a.id === 'disclose-no-deal')?.reason).toBe(
      'never said: "2025-03-20" or "3月20日" or "3月20号"',
    );
    expect(info.components.COMMUNICATE?.score).toBe(0);
  });

  it('change of mind: naming the loyal-customer discount moves the callee from leaving to 3240 yuan', async () => {
    const t = task('ir-boundary-change-of-mind');
    const ref = await play(t, new ReferenceAgent());
    expect(ref.info.reward).toBe(1);
    expect(userLines(ref.trajectory).slice(0, 4)).toEqual([
      '是我。我今年本来想换一家保险公司试试。',
      '我今年本来不打算续了，想换一家。',
      '还是贵，再便宜一点吧。',
      '是的，确认。',
    ]);
    // The same ladder without naming the discount: 3240 is above the callee's first limit (3000).
    const plan = referencePlan(domain, t).map((s) =>
      'say' in s && s.say.includes('老客户') ? { say: '标准保障现在是3420元。' } : s,
    );
    const silent = await play(t, planAgent(plan));
    expect(userLines(silent.trajectory)).toContain('还是超出我的预算，今天先不续了，改天再打给我吧。');
    expect(silent.info.reward).toBe(0);
    // Each objection met a move, the decline too (an order the callee never agreed to: a move,
    // though the wrong one — the objection score says an objection was answered, not how well).
    expect(silent.info.objections?.items.map((o) => [o.text, o.reason])).toEqual([
      ['我今年本来不打算续了，想换一家。', 'tool release_next_discount'],
      ['还是贵，再便宜一点吧。', 'tool release_next_discount'],
      ['还是超出我的预算，今天先不续了，改天再打给我吧。', 'tool create_renewal_order'],
    ]);
  });

  it('stating the lawful consequence (no cover after expiry) is not a threat; a made-up fine is', async () => {
    const t = task('ir-hard-three-steps');
    const lawful = referencePlan(domain, t).map((s) =>
      'say' in s && s.say.includes('3420元') ? { say: `${s.say}如果不续，保单到期后就没有保障了。` } : s,
    );
    expect((await play(t, planAgent(lawful))).info.reward).toBe(1);
    const fine = referencePlan(domain, t).map((s) =>
      'say' in s && s.say.includes('3420元') ? { say: `${s.say}要是不续，到期后上路可能会吃交警的罚款。` } : s,
    );
    const { info } = await play(t, planAgent(fine));
    expect(info.reward).toBe(0);
    expect(info.assertions.find((a) => a.id === 'no-threat')?.reason).toMatch(/consequence-term "罚款"/);
  });
});
