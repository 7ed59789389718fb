/**
 * Scripted participants: deterministic test doubles for the gate, tests and demos.
 * - {@link ReferenceAgent} converses and executes the task's reference solution, asking for
 *   confirmation before each write; an interrupted step is said again, or, after a backchannel,
 *   only its unheard rest.
 * - {@link NoopAgent} greets and never calls a tool (the gate's do-nothing agent).
 * - {@link ScriptedUser} states its requests (a tau2 reason for call in the first person), reveals facts only when asked, answers
 *   confirmations, runs its own user-tool actions when asked, and ends with `###STOP###`. As an
 *   imperfect caller (task fields `misremembers`, `withholds`, `false_claims`) it first gives a
 *   wrong value and corrects it when the agent checks, deflects a question until pressed, and
 *   makes a false claim it gives up when the agent says the records contradict it; with
 *   `change_of_mind` it answers the first confirmation question with a new value. As an outbound
 *   callee with a `negotiation` card it answers offers and threats by it (./negotiating.ts).
 *
 * All three derive what to do next from the turns so far (no hidden state), so an episode forked
 * from a saved point continues exactly as the original would.
 */
import { reasonForCall, type Action } from '../schema/task.ts';
import type { Turn } from '../schema/trajectory.ts';
import { toolsFor } from '../schema/domain.ts';
import { hasCue, phrasesFor } from './phrases.ts';
import { joinSpoken } from '../scoring/turns.ts';
import { negotiationReply } from './negotiating.ts';
import { planCall, PlanMemo } from './reference-plan.ts';
import { firstPersonRequest } from './spoken.ts';
import { STOP_TOKENS, type Agent, type EpisodeView, type ParticipantReply, type UserSimulator } from './types.ts';

/** Executes the reference solution; one plan step per assistant turn. */
export class ReferenceAgent implements Agent {
  readonly id = 'reference';
  private readonly plans = new PlanMemo();

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const plan = this.plans.plan(view.domain, view.task);
    // A reply the caller interrupted (barge-in) was not fully said and its tool calls did not
    // run: it does not use up its plan step, so the agent says or does it again.
    const done = view.turns.filter((t) => t.role === 'assistant' && !t.interrupted).length;
    const step = plan[done];
    if (!step) return { text: `${phrasesFor(view.domain.language).goodbye}${STOP_TOKENS.stop}` };
    if ('say' in step) return { text: unheardRest(view.turns, step.say) };
    return { text: '', tool_calls: [planCall(step.call)] };
  }
}

/**
 * What is left to say of `say` after the interruptions at the end of `turns`: after a
 * backchannel ("嗯", "mm-hm") or an urge ("get to the point") the agent carries on with what the
 * caller has not heard yet instead of starting over (policy rules on barge-in, e.g. carrier R11:
 * carry on after a backchannel, get to the point when urged), also across several such
 * barge-ins; after any other barge-in (correction, question, stop) it says the whole step again.
 */
function unheardRest(turns: readonly Turn[], say: string): string {
  let k = turns.length;
  while (k >= 2 && turns[k - 1]?.role === 'user' && (turns[k - 2] as { interrupted?: unknown }).interrupted) k -= 2;
  let rest = say;
  for (let i = k; i < turns.length; i += 2) {
    const cut = turns[i]!;
    const caller = turns[i + 1]!;
    const type = caller.role === 'user' ? caller.barge_in?.type : undefined;
    const carryOn = type === 'backchannel' || type === 'urge';
    if (cut.role === 'assistant' && cut.interrupted && carryOn && cut.interrupted.full_text === rest) {
      rest = rest.slice(cut.interrupted.cut_char).trim() || say;
    } else rest = say;
  }
  return rest;
}

/** Greets (or opens an outbound call), then only acknowledges. Never calls a tool. */
export class NoopAgent implements Agent {
  readonly id = 'noop';

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const first = !view.turns.some((t) => t.role === 'assistant');
    if (!first) return { text: phrasesFor(view.domain.language).noop };
    const { task, domain } = view;
    return { text: task.role === 'outbound' && task.opening ? task.opening : domain.greeting };
  }
}

/** How many consecutive content-free replies the scripted caller gives before hanging up. */
const MAX_ACKS = 3;

/** The scripted caller. See the module comment for its behaviour. */
export class ScriptedUser implements UserSimulator {
  readonly id = 'scripted';

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const { task, domain, turns } = view;
    const p = phrasesFor(domain.language);
    const scenario = task.user_scenario;
    const requests = scenario.requests?.length ? scenario.requests : [reasonText(view)];
    // Barge-ins were said over the agent by the channel, not by this script.
    const userTexts = turns
      .filter((t): t is Extract<Turn, { role: 'user' }> => t.role === 'user' && !t.barge_in)
      .map((t) => t.text);
    const lastTurn = turns[turns.length - 1];

    // Just ran a user tool: report it.
    if (lastTurn?.role === 'tool' && lastTurn.requestor === 'user') {
      const tool = toolsFor(domain, 'user').find((t) => t.name === lastTurn.name);
      return { text: p.didUserAction(tool?.spokenAs ?? lastTurn.name) };
    }
    const agentText = lastAssistantText(turns);
    const said = (s: string) => userTexts.includes(s);

    // First words: the first request (inbound reason for call, or the callee's reply), then any
    // false claim.
    if (userTexts.length === 0) {
      const claims = (scenario.false_claims ?? []).map((c) => c.claim);
      return { text: [requests[0]!, ...claims].join(p.sentenceSep) };
    }

    // Imperfect caller: a value given wrong is corrected once the agent checks it.
    const facts = scenario.facts ?? [];
    const factValue = (key: string) => facts.find((f) => f.key === key)?.value;
    for (const m of scenario.misremembers ?? []) {
      const value = factValue(m.fact);
      const correction = m.correction ?? value;
      if (value === undefined || correction === undefined || !said(m.wrong) || said(correction)) continue;
      const fact = facts.find((f) => f.key === m.fact)!;
      if (hasCue(agentText, m.check_cues) || hasCue(agentText, fact.cues)) return { text: correction };
    }
    // Imperfect caller: a claim the records contradict is given up once.
    for (const c of scenario.false_claims ?? []) {
      if (hasCue(agentText, c.contradict_cues) && !said(c.concede)) return { text: c.concede };
    }

    // Facts asked for and not yet given (a withheld fact is deflected until pressed; a
    // misremembered one is first given wrong).
    const asked = facts.filter((f) => hasCue(agentText, f.cues) && !userTexts.some((u) => u.includes(f.value)));
    if (asked.length > 0) {
      const answers = asked.map((f) => {
        const w = scenario.withholds?.find((x) => x.fact === f.key);
        if (w && !(said(w.deflect) && (w.press_cues === undefined || hasCue(agentText, w.press_cues))))
          return w.deflect;
        const m = scenario.misremembers?.find((x) => x.fact === f.key);
        if (m && !said(m.wrong)) return m.wrong;
        return f.value;
      });
      return { text: answers.join('，') };
    }

    // A caller-side action the agent asks for.
    const next = nextUserAction(task.evaluation_criteria?.actions ?? [], turns);
    if (next) {
      const spoken = toolsFor(domain, 'user').find((t) => t.name === next.name)?.spokenAs;
      if (spoken && agentText.includes(spoken)) {
        const n = turns.filter((t) => t.role === 'tool' && t.requestor === 'user').length;
        return {
          text: '',
          tool_calls: [{ id: `user-${n + 1}`, name: next.name, arguments: structuredClone(next.arguments) }],
        };
      }
    }

    // An outbound callee answers offers and threats by its negotiation card.
    const negotiated =
      scenario.negotiation &&
      negotiationReply(scenario.negotiation, agentText, userTexts, turns, p, domain.allowedConsequences);
    if (negotiated) return negotiated;

    // A confirmation question (a caller who changes its mind answers the first one with the new value).
    if (hasCue(agentText, p.confirmCues)) {
      const change = scenario.change_of_mind;
      if (change && !said(change.say)) return { text: change.say };
      const answered = userTexts.filter((u) => u === p.yes || u === p.no).length;
      const answer = scenario.confirmations?.[answered] ?? 'yes';
      return { text: answer === 'yes' ? p.yes : p.no };
    }

    // "Anything else?": the next request, or goodbye.
    if (hasCue(agentText, p.moreCues)) {
      // A request opens its turn (the first one may be followed by a false claim).
      const pending = requests.find((r) => !userTexts.some((u) => u.startsWith(r)));
      return { text: pending ?? `${p.done}${STOP_TOKENS.stop}` };
    }

    // Nothing to answer: acknowledge, and hang up when the call goes nowhere.
    let acks = 0;
    for (let i = userTexts.length - 1; i >= 0 && userTexts[i] === p.ack; i--) acks++;
    if (acks >= MAX_ACKS - 1) return { text: `${p.giveUp}${STOP_TOKENS.stop}` };
    return { text: p.ack };
  }
}

/**
 * The caller's opening request when the task lists no `requests`: its reason for call, which
 * tau2-style tasks write to the caller ("You want to…"), said in the first person ("I want to…").
 */
function reasonText(view: EpisodeView): string {
  const reason = reasonForCall(view.task);
  return view.domain.language.toLowerCase().startsWith('en') ? firstPersonRequest(reason) : reason;
}

function lastAssistantText(turns: readonly Turn[]): string {
  // Since the caller's last own turn: a reply finished after a barge-in is read whole.
  let text = '';
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.role === 'assistant' && t.text) text = joinSpoken(t.text, text);
    if ((t.role === 'user' && !t.barge_in) || (t.role === 'tool' && text)) break;
  }
  return text;
}

/** The caller's next reference action: the n-th user action, n = user tool calls made so far. */
function nextUserAction(actions: readonly Action[], turns: readonly Turn[]): Action | undefined {
  const done = turns.filter((t) => t.role === 'tool' && t.requestor === 'user').length;
  return actions.filter((a) => a.requestor === 'user')[done];
}
