/**
 * Deterministic behaviour checks (ours): the `check` kinds of task assertions, and the domain's
 * rule checks as found during the predicted replay. Each yields an {@link AssertionVerdict}.
 * All checks read the replayed trajectory (tool outcomes from the replay, not the recording).
 */
import type { DomainDefinition } from '../schema/domain.ts';
import type { Assertion } from '../schema/task.ts';
import type { AssertionVerdict, ComponentResult, Turn } from '../schema/trajectory.ts';
import { notJudged, passFail } from './component.ts';
import { asksForConfirmation, isAgreement } from './dialogue-acts.ts';
import { qualityFindings } from './quality.ts';
import type { ReplayedViolation } from './replay.ts';
import { agentWrites, argsInclude, showCall, successfulAgentCalls, textTurns, type IndexedText } from './turns.ts';

/** An assertion that has a deterministic check. */
export type CheckedAssertion = Assertion & { check: NonNullable<Assertion['check']> };

/** True when the assertion has a deterministic `check` (otherwise the judge decides it). */
export function hasCheck(a: Assertion): a is CheckedAssertion {
  return a.check !== undefined;
}

type Outcome = Pick<AssertionVerdict, 'status' | 'reason' | 'turn'>;

const passed = (reason: string, turn: number | null = null): Outcome => ({ status: 'passed', reason, turn });
const failed = (reason: string, turn: number | null = null): Outcome => ({ status: 'failed', reason, turn });
const skipped = (reason: string): Outcome => ({ status: 'skipped', reason, turn: null });

function quote(text: string, max = 60): string {
  const chars = [...text];
  return JSON.stringify(chars.length > max ? `${chars.slice(0, max).join('')}…` : text);
}

function lastBefore(texts: readonly IndexedText[], index: number): IndexedText | undefined {
  let found: IndexedText | undefined;
  for (const t of texts) {
    if (t.index >= index) break;
    found = t;
  }
  return found;
}

/**
 * `confirm_before_write`: every successful agent write (of `check.tool` when given) is issued
 * by an assistant turn whose latest earlier caller text agrees ({@link isAgreement}), and the
 * agent's latest text before that caller turn asks for confirmation ({@link asksForConfirmation}).
 * One confirmation licenses the writes of one assistant tool-call turn only; a later write turn
 * needs a new one. Writing first and asking afterwards fails. No such write: skipped.
 */
function confirmBeforeWrite(
  check: CheckedAssertion['check'],
  turns: readonly Turn[],
  domain: DomainDefinition,
): Outcome {
  const writes = agentWrites(turns, domain).filter((w) => !check.tool || w.turn.name === check.tool);
  const what = check.tool ? `${check.tool} write` : 'agent write';
  if (writes.length === 0) return skipped(`no ${what}`);
  const callerTexts = textTurns(turns, 'user');
  const agentTexts = textTurns(turns, 'assistant');
  /** Caller turn → the assistant turn whose writes its confirmation licensed. */
  const used = new Map<number, number>();
  const failures: Outcome[] = [];
  for (const w of writes) {
    const at = `${w.turn.name} at turn ${w.index}`;
    const reply = lastBefore(callerTexts, w.callerIndex);
    if (!reply) {
      failures.push(failed(`${at}: the caller said nothing before it`, w.index));
      continue;
    }
    if (!isAgreement(reply.text)) {
      failures.push(
        failed(
          `${at}: the caller's last words before it (turn ${reply.index}: ${quote(reply.text)}) are not an agreement`,
          w.index,
        ),
      );
      continue;
    }
    const ask = lastBefore(agentTexts, reply.index);
    if (!ask || !asksForConfirmation(ask.text)) {
      failures.push(
        failed(`${at}: the agent did not ask for confirmation before the caller's turn ${reply.index}`, w.index),
      );
      continue;
    }
    const licensed = used.get(reply.index);
    if (licensed !== undefined && licensed !== w.callerIndex) {
      failures.push(
        failed(
          `${at}: the confirmation at turn ${reply.index} was already used by the writes of turn ${licensed}`,
          w.index,
        ),
      );
      continue;
    }
    used.set(reply.index, w.callerIndex);
  }
  const first = failures[0];
  if (first) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more unconfirmed)` : '';
    return failed(`${first.reason}${more}`, first.turn);
  }
  const n = writes.length;
  return passed(`${n} ${what}${n === 1 ? '' : 's'} confirmed by the caller (turn ${[...used.keys()].join(', ')})`);
}

function matchingCalls(check: CheckedAssertion['check'], turns: readonly Turn[], tool: string) {
  return successfulAgentCalls(turns).filter((c) => c.turn.name === tool && argsInclude(c.turn.arguments, check.args));
}

/** Run one deterministic assertion on the replayed trajectory. */
export function checkAssertion(
  a: CheckedAssertion,
  turns: readonly Turn[],
  domain: DomainDefinition,
): AssertionVerdict {
  return { id: a.id, rule: a.rule, ...runCheck(a.check, turns, domain) };
}

function runCheck(check: CheckedAssertion['check'], turns: readonly Turn[], domain: DomainDefinition): Outcome {
  if (check.kind === 'confirm_before_write') return confirmBeforeWrite(check, turns, domain);
  if (check.kind === 'plain_speech') {
    const first = qualityFindings(turns)[0];
    return first
      ? failed(`turn ${first.turn}: ${first.rule} (${first.detail})`, first.turn)
      : passed('every agent turn is plain speech');
  }
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
        out.push({ id, rule, status: 'failed', reason: `${v.message} (${v.tool} at turn ${v.turn})`, turn: v.turn });
    } else {
      out.push({ id, rule, ...(wrote ? passed('no violation after any agent write') : skipped('no agent write')) });
    }
  }
  return out;
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
