/**
 * Consent before a write (the `confirm_before_write` check, used by the scorer, the rule checks'
 * report and the turn rubric). Consent is an explicit affirmative reply, as a whole caller turn,
 * to an agent turn that proposed that operation with its key values:
 *
 * - the reply is the caller's last spoken turn before the assistant turn that issued the write;
 *   it is not a barge-in (a backchannel or anything said while the agent was still talking is
 *   never a reply), and its dialogue act ({@link classifyDialogueAct}) is `affirm`. A hedge, a
 *   question back, a conditional yes, a denial or a backchannel is not consent. A reply labelled
 *   `other` (no cue) is ambiguous: a judge may decide it (`judged`), otherwise it is not consent;
 * - the proposal is the agent's last spoken turn before the reply (with the turns before it the
 *   caller only interrupted with barge-ins: a proposal finished after a backchannel is one
 *   proposal); it asks for confirmation
 *   ({@link asksForConfirmation}), names the operation when the tool declares `operationCues`,
 *   states every numeric argument of the write (amounts; digits, Mandarin or English words, see
 *   `spoken-numbers.ts`) and names no other id of the same shape than the write's id arguments
 *   (`B10009` proposed, `B10008` written: unconfirmed; an id described in words is not checked);
 * - one consent licenses the writes of one assistant turn only, and within it the first write
 *   the proposal matches plus further writes of the same tool with other arguments the proposal
 *   also matches. A second, different write in the same turn is unconfirmed, as is a repeat of
 *   the same call.
 */
import type { JudgeItem } from '../participants/types.ts';
import type { DomainDefinition, ToolDefinition } from '../schema/domain.ts';
import type { Turn, UserTurn } from '../schema/trajectory.ts';
import { asksForConfirmation, classifyDialogueAct } from './dialogue-acts.ts';
import { sameNumber, statedNumbers } from './spoken-numbers.ts';
import { agentWrites, type IndexedText, type IndexedToolTurn, joinSpoken, jsonEqual, textTurns } from './turns.ts';

/** The verdict on one write. */
export interface ConsentFinding {
  write: IndexedToolTurn;
  confirmed: boolean;
  /** Index of the caller turn taken as the reply, or null when there was none. */
  reply: number | null;
  /** Why it is (un)confirmed, naming turns. */
  reason: string;
}

/** Options of {@link consentFindings}. */
export interface ConsentOptions {
  /** Only writes of this tool (the check's `tool`). */
  tool?: string;
  /**
   * A judge's verdicts on ambiguous replies (dialogue act `other`), by caller turn index: true
   * when the judge found an explicit yes to the proposal. See {@link ambiguousConsentItems}.
   */
  judged?: ReadonlyMap<number, boolean>;
}

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

const ID_VALUE = /^[A-Za-z]{1,4}\d+$/;

/** Letters and digit count of an id-like value (`B10008` → `B#5`). */
const idShape = (id: string) => `${id.replace(/\d/g, '').toUpperCase()}#${id.replace(/\D/g, '').length}`;

/** Why the proposal does not match the write's key values, or null when it does. */
export function proposalMismatch(
  proposal: string,
  call: { name: string; arguments: Record<string, unknown> },
  tool: Pick<ToolDefinition, 'operationCues'> | undefined,
): string | null {
  const lower = proposal.toLowerCase();
  const cues = tool?.operationCues ?? [];
  if (cues.length && !cues.some((c) => lower.includes(c.toLowerCase())))
    return `does not name the operation ${call.name}`;
  const said = statedNumbers(proposal);
  const ids = [...proposal.matchAll(/\b[A-Za-z]{1,4}\d+\b/g)].map((m) => m[0].toUpperCase());
  for (const [key, value] of Object.entries(call.arguments)) {
    if (typeof value === 'number' && !said.some((n) => sameNumber(n, value))) return `does not state ${key} ${value}`;
    if (typeof value === 'string' && ID_VALUE.test(value)) {
      const v = value.toUpperCase();
      const other = ids.find((id) => id !== v && idShape(id) === idShape(v));
      if (other && !ids.includes(v)) return `names ${other}, not ${key} ${value}`;
    }
  }
  return null;
}

/**
 * The agent's proposal the caller's turn `reply` answers: its last spoken turn before `reply`,
 * together with the agent's spoken turns before it back to the previous caller turn that was not
 * a barge-in (a proposal the caller interrupted with a backchannel and the agent then finished
 * is one proposal). Index: the last of those turns.
 */
function proposalBefore(
  turns: readonly Turn[],
  agentTexts: readonly IndexedText[],
  callerTexts: readonly IndexedText[],
  reply: number,
): IndexedText | undefined {
  const last = lastBefore(agentTexts, reply);
  if (!last) return undefined;
  let from = -1;
  for (const c of callerTexts) {
    if (c.index >= last.index) break;
    if (!(turns[c.index] as UserTurn).barge_in) from = c.index;
  }
  const parts = agentTexts.filter((a) => a.index > from && a.index <= last.index).map((a) => a.text);
  return { index: last.index, text: parts.reduce(joinSpoken, '') };
}

interface Reply {
  text: IndexedText;
  turn: UserTurn;
}

/** The caller turn a write at assistant turn `issuer` answers: the last spoken caller turn before it. */
function replyBefore(turns: readonly Turn[], callerTexts: readonly IndexedText[], issuer: number): Reply | null {
  const text = lastBefore(callerTexts, issuer);
  return text ? { text, turn: turns[text.index] as UserTurn } : null;
}

/**
 * Judge items for the ambiguous replies (act `other`) that would license a write: id
 * `consent@<caller turn>`, asking whether that turn is an explicit yes to the operation the
 * agent proposed just before it. Empty when every reply is decided by its cues.
 */
export function ambiguousConsentItems(turns: readonly Turn[], domain: DomainDefinition, tool?: string): JudgeItem[] {
  const callerTexts = textTurns(turns, 'user');
  const out = new Map<number, JudgeItem>();
  for (const w of agentWrites(turns, domain)) {
    if (tool && w.turn.name !== tool) continue;
    const reply = replyBefore(turns, callerTexts, w.callerIndex);
    if (!reply || reply.turn.barge_in || out.has(reply.text.index)) continue;
    if (classifyDialogueAct(reply.text.text).act !== 'other') continue;
    out.set(reply.text.index, {
      id: `consent@${reply.text.index}`,
      text: `Turn ${reply.text.index} (${quote(reply.text.text)}) is the caller's explicit, unconditional yes to the operation the agent proposed just before it, with the values the agent stated.`,
    });
  }
  return [...out.values()];
}

/** Caller turn → judged consent, from judge verdicts on {@link ambiguousConsentItems}. */
export function judgedConsent(verdicts: ReadonlyMap<string, { met: boolean }>): Map<number, boolean> {
  const out = new Map<number, boolean>();
  for (const [id, v] of verdicts) {
    const m = /^consent@(\d+)$/.exec(id);
    if (m) out.set(Number(m[1]), v.met);
  }
  return out;
}

/** One finding per successful agent write (of `options.tool` when given), in order. */
export function consentFindings(
  turns: readonly Turn[],
  domain: DomainDefinition,
  options: ConsentOptions = {},
): ConsentFinding[] {
  const writes = agentWrites(turns, domain).filter((w) => !options.tool || w.turn.name === options.tool);
  const callerTexts = textTurns(turns, 'user');
  const agentTexts = textTurns(turns, 'assistant');
  const tools = new Map(domain.tools.map((t) => [t.name, t]));
  /** Caller turn → the assistant turn whose writes it licensed. */
  const used = new Map<number, number>();
  /** Assistant turn → the writes licensed in it so far. */
  const licensed = new Map<number, IndexedToolTurn[]>();
  const out: ConsentFinding[] = [];
  for (const w of writes) {
    const at = `${w.turn.name} at turn ${w.index}`;
    const no = (reason: string, reply: number | null = null) =>
      out.push({ write: w, confirmed: false, reply, reason: `${at}: ${reason}` });
    const reply = replyBefore(turns, callerTexts, w.callerIndex);
    if (!reply) {
      no('the caller said nothing before it');
      continue;
    }
    const r = reply.text.index;
    const said = `the caller's last words before it (turn ${r}: ${quote(reply.text.text)})`;
    if (reply.turn.barge_in) {
      no(`${said} were a ${reply.turn.barge_in.type} barge-in while the agent was talking, not a reply`, r);
      continue;
    }
    const act = classifyDialogueAct(reply.text.text);
    const byJudge = act.act === 'other' && options.judged?.get(r) === true;
    if (act.act !== 'affirm' && !byJudge) {
      const why = act.act === 'other' ? (options.judged ? 'judged not a yes' : 'ambiguous, no judge') : act.reason;
      no(`${said} are not consent (${act.act}: ${why})`, r);
      continue;
    }
    const proposal = proposalBefore(turns, agentTexts, callerTexts, r);
    if (!proposal || !asksForConfirmation(proposal.text)) {
      no(`the agent did not ask for confirmation before the caller's turn ${r}`, r);
      continue;
    }
    const earlier = used.get(r);
    if (earlier !== undefined && earlier !== w.callerIndex) {
      no(`the consent at turn ${r} was already used by the writes of turn ${earlier}`, r);
      continue;
    }
    const mismatch = proposalMismatch(proposal.text, w.turn, tools.get(w.turn.name));
    if (mismatch) {
      no(`the proposal the caller agreed to (turn ${proposal.index}: ${quote(proposal.text)}) ${mismatch}`, r);
      continue;
    }
    const before = licensed.get(w.callerIndex) ?? [];
    const first = before[0];
    if (first && first.turn.name !== w.turn.name) {
      no(`a second, different write on the one consent at turn ${r} (it licensed ${first.turn.name})`, r);
      continue;
    }
    if (before.some((b) => jsonEqual(b.turn.arguments, w.turn.arguments))) {
      no(`repeats a write the consent at turn ${r} already licensed`, r);
      continue;
    }
    used.set(r, w.callerIndex);
    licensed.set(w.callerIndex, [...before, w]);
    out.push({
      write: w,
      confirmed: true,
      reply: r,
      reason: `${at}: confirmed by turn ${r}${byJudge ? ' (judged)' : ''} to the proposal at turn ${proposal.index}`,
    });
  }
  return out;
}
