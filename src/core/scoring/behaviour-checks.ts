/**
 * Deterministic behaviour checks (ours): the `check` kinds of task assertions, and the domain's
 * rule checks as found during the predicted replay. Each yields an {@link AssertionVerdict}.
 * All checks read the replayed trajectory (tool outcomes from the replay, not the recording).
 */
import type { DomainDefinition } from '../schema/domain.ts';
import type { Assertion } from '../schema/task.ts';
import type { AssertionVerdict, ComponentResult, RewardInfo, Turn } from '../schema/trajectory.ts';
import { notJudged, passFail } from './component.ts';
import { consentFindings } from './consent.ts';
import { communicates } from './communicate.ts';
import { qualityFindings } from './quality.ts';
import { threatFinding } from './threats.ts';
import type { ReplayedViolation } from './replay.ts';
import { agentWrites, argsInclude, showCall, successfulAgentCalls, toolTurns, utterances } from './turns.ts';

/** An assertion that has a deterministic check. */
export type CheckedAssertion = Assertion & { check: NonNullable<Assertion['check']> };

/** True when the assertion has a deterministic `check` (otherwise the judge decides it). */
export function hasCheck(a: Assertion): a is CheckedAssertion {
  return a.check !== undefined;
}

type Outcome = Pick<AssertionVerdict, 'status' | 'reason' | 'turn'>;

/** Options of {@link checkAssertion}. */
export interface CheckOptions {
  /** A judge's verdicts on ambiguous consent replies, by caller turn (see `consent.ts`). */
  judgedConsent?: ReadonlyMap<number, boolean>;
}

const passed = (reason: string, turn: number | null = null): Outcome => ({ status: 'passed', reason, turn });
const failed = (reason: string, turn: number | null = null): Outcome => ({ status: 'failed', reason, turn });
const skipped = (reason: string): Outcome => ({ status: 'skipped', reason, turn: null });

/**
 * `confirm_before_write`: every successful agent write (of `check.tool` when given) is confirmed
 * by the caller's consent ({@link consentFindings}: an explicit yes, as a whole turn and not a
 * barge-in, to an agent turn that proposed that write with its key values; one consent licenses
 * only the write(s) it answered). No such write: skipped.
 */
function confirmBeforeWrite(
  check: CheckedAssertion['check'],
  turns: readonly Turn[],
  domain: DomainDefinition,
  options: CheckOptions,
): Outcome {
  const what = check.tool ? `${check.tool} write` : 'agent write';
  const findings = consentFindings(turns, domain, {
    ...(check.tool ? { tool: check.tool } : {}),
    ...(options.judgedConsent ? { judged: options.judgedConsent } : {}),
  });
  if (findings.length === 0) return skipped(`no ${what}`);
  const failures = findings.filter((f) => !f.confirmed);
  const first = failures[0];
  if (first) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more unconfirmed)` : '';
    return failed(`${first.reason}${more}`, first.write.index);
  }
  const n = findings.length;
  const replies = [...new Set(findings.map((f) => f.reply))];
  return passed(`${n} ${what}${n === 1 ? '' : 's'} confirmed by the caller (turn ${replies.join(', ')})`);
}

/**
 * `read_after_write`: a successful agent call of `check.tool` (arguments including `check.args`)
 * comes after the last successful write of `check.after` (any side; absent: the last write of
 * either side). Ordered on purpose: "verify after payment" needs the read after the write. No
 * such write: skipped.
 */
function readAfterWrite(check: CheckedAssertion['check'], turns: readonly Turn[], domain: DomainDefinition): Outcome {
  const tool = check.tool!;
  const writeTools = new Set(
    [...domain.tools, ...(domain.userTools ?? [])].filter((t) => t.kind === 'write').map((t) => t.name),
  );
  const writes = toolTurns(turns).filter(
    (t) =>
      !t.turn.error &&
      (check.after ? t.turn.name === check.after : t.turn.writes.length > 0 || writeTools.has(t.turn.name)),
  );
  const last = writes[writes.length - 1];
  if (!last) return skipped(`no ${check.after ?? 'write'}`);
  const wanted = showCall(tool, check.args ?? {});
  const read = matchingCalls(check, turns, tool).find((c) => c.index > last.index);
  const write = `the last ${last.turn.name} (turn ${last.index})`;
  return read
    ? passed(`${wanted} at turn ${read.index} after ${write}`, read.index)
    : failed(`no successful call matching ${wanted} after ${write}`, last.index);
}

function matchingCalls(check: CheckedAssertion['check'], turns: readonly Turn[], tool: string) {
  return successfulAgentCalls(turns).filter((c) => c.turn.name === tool && argsInclude(c.turn.arguments, check.args));
}

/** Run one deterministic assertion on the replayed trajectory. */
export function checkAssertion(
  a: CheckedAssertion,
  turns: readonly Turn[],
  domain: DomainDefinition,
  options: CheckOptions = {},
): AssertionVerdict {
  return { id: a.id, rule: a.rule, ...runCheck(a.check, turns, domain, options) };
}

function runCheck(
  check: CheckedAssertion['check'],
  turns: readonly Turn[],
  domain: DomainDefinition,
  options: CheckOptions,
): Outcome {
  if (check.kind === 'confirm_before_write') return confirmBeforeWrite(check, turns, domain, options);
  if (check.kind === 'plain_speech') {
    const first = qualityFindings(turns)[0];
    return first
      ? failed(`turn ${first.turn}: ${first.rule} (${first.detail})`, first.turn)
      : passed('every agent turn is plain speech');
  }
  if (check.kind === 'no_threat') return noThreat(turns, domain);
  if (check.kind === 'disclosed') return disclosed(check, turns);
  const tool = check.tool;
  if (!tool) return failed(`malformed check: ${check.kind} needs "tool"`);
  const wanted = showCall(tool, check.args ?? {});
  switch (check.kind) {
    case 'tool_called': {
      const hit = matchingCalls(check, turns, tool)[0];
      return hit
        ? passed(`${wanted} called at turn ${hit.index}`, hit.index)
        : failed(`no successful call matching ${wanted}`);
    }
    case 'tool_not_called': {
      const hit = matchingCalls(check, turns, tool)[0];
      return hit
        ? failed(`${wanted} called at turn ${hit.index}`, hit.index)
        : passed(`no successful call matching ${wanted}`);
    }
    case 'read_after_write':
      return readAfterWrite(check, turns, domain);
    case 'read_before_write': {
      const firstWrite = agentWrites(turns, domain)[0];
      if (!firstWrite) return skipped('no agent write');
      // The read's result must be in before the assistant turn that issued the write.
      const read = matchingCalls(check, turns, tool).find((c) => c.index < firstWrite.callerIndex);
      const write = `the first write (${firstWrite.turn.name} at turn ${firstWrite.index})`;
      return read
        ? passed(`${wanted} at turn ${read.index} before ${write}`, read.index)
        : failed(`no successful call matching ${wanted} before ${write}`, firstWrite.index);
    }
  }
}

/**
 * `no_threat`: fails at the first assistant turn with a threat ({@link threatFinding}: pressure,
 * harm, or a consequence the domain's `allowedConsequences` do not allow).
 */
function noThreat(turns: readonly Turn[], domain: DomainDefinition): Outcome {
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i]!;
    const f = t.role === 'assistant' && t.text ? threatFinding(t.text, domain.allowedConsequences) : null;
    if (f) return failed(`turn ${i}: threatens the callee (${f.kind} "${f.cue}" in "${f.sentence}")`, i);
  }
  return passed('no agent turn threatens the callee');
}

/**
 * `disclosed`: every item of `check.says` (a list of alternative wordings) is said in some
 * assistant utterance, numbers as numbers (`communicates`, `numbers` semantics: "7200" is said
 * by "七千二百元"). Fails naming the first item not said.
 */
function disclosed(check: CheckedAssertion['check'], turns: readonly Turn[]): Outcome {
  const says = check.says ?? [];
  if (says.length === 0) return failed('malformed check: disclosed needs "says"');
  const said = utterances(turns, 'assistant').map((u) => u.text);
  const missing = says.find((alts) => !said.some((text) => alts.some((a) => communicates(text, a, 'numbers'))));
  return missing
    ? failed(`never said: ${missing.map((a) => JSON.stringify(a)).join(' or ')}`)
    : passed(`said all ${says.length} required disclosure(s)`);
}

/**
 * Verdicts of the domain's rule checks (id `rule:<R>`): one failed verdict per violation found
 * during the predicted replay, naming the turn; a rule without violations passed when the agent
 * changed rows at all, and is skipped when it did not (the checks run only after agent writes).
 */
export function ruleVerdicts(
  domain: DomainDefinition,
  violations: readonly ReplayedViolation[],
  turns: readonly Turn[],
): AssertionVerdict[] {
  const wrote = successfulAgentCalls(turns).some((c) => c.turn.writes.length > 0);
  const out: AssertionVerdict[] = [];
  const rules = [...new Set([...(domain.ruleChecks ?? []).map((r) => r.rule), ...violations.map((v) => v.rule)])];
  for (const rule of rules) {
    const broken = violations.filter((v) => v.rule === rule);
    const id = `rule:${rule}`;
    if (broken.length) {
      for (const v of broken)
        out.push({
          id,
          rule,
          status: 'failed',
          reason: `${v.message} (${v.tool} at turn ${v.turn}${v.refused ? ', refused by the tool' : ''})`,
          turn: v.turn,
        });
    } else {
      out.push({ id, rule, ...(wrote ? passed('no violation after any agent write') : skipped('no agent write')) });
    }
  }
  return out;
}

/**
 * The failed rule-check verdicts of a scored episode (ids `rule:<R>`, see {@link ruleVerdicts}):
 * writes of the agent that broke the domain's executable policy, refused attempts included.
 */
export function ruleBreaks(info: Pick<RewardInfo, 'assertions'>): AssertionVerdict[] {
  return info.assertions.filter((v) => v.id.startsWith('rule:') && v.status === 'failed');
}

/**
 * Score `ASSERTIONS` from all verdicts (deterministic, judged and rule checks): 0 when any
 * failed; otherwise `null` and not judged when some could not be judged (the reward becomes
 * partial), else 1. Details: one line per failed or not-judged verdict.
 */
export function scoreAssertions(verdicts: readonly AssertionVerdict[]): ComponentResult {
  const failedOnes = verdicts.filter((v) => v.status === 'failed');
  const unjudged = verdicts.filter((v) => v.status === 'not_judged');
  const details = [...failedOnes, ...unjudged].map(
    (v) => `${v.id} (${v.rule}) ${v.status}${v.turn === null ? '' : ` at turn ${v.turn}`}: ${v.reason}`,
  );
  if (failedOnes.length) return { score: 0, details, judged: unjudged.length === 0 };
  return unjudged.length ? notJudged(details) : passFail(true, details);
}
