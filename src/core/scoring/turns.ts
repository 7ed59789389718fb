/**
 * Read-only views of a trajectory shared by the scoring components: who issued a tool call,
 * which calls were agent writes, what the agent said. Kept in one place so every component
 * agrees on what "a successful agent write" or "an assistant text turn" is.
 */
import { canonicalJson } from '../env/state.ts';
import { splitReasoning, stripStopTokens } from '../participants/reply-text.ts';
import type { DomainDefinition } from '../schema/domain.ts';
import type { Requestor } from '../schema/task.ts';
import type { ToolTurn, Turn } from '../schema/trajectory.ts';

/** A tool turn together with its index in the trajectory. */
export interface IndexedToolTurn {
  index: number;
  turn: ToolTurn;
  /** Index of the assistant or user turn that issued the call; -1 when there is none. */
  callerIndex: number;
}

/** A non-empty spoken text with its turn index. */
export interface IndexedText {
  index: number;
  text: string;
}

/**
 * Every tool turn whose call ran, in order (answers to calls that never ran, `not_run`, are left
 * out), each with the index of the turn that issued it: the last earlier turn whose role is the
 * call's requestor (an assistant turn for agent tools, a user turn for user tools).
 */
export function toolTurns(turns: readonly Turn[], requestor?: Requestor): IndexedToolTurn[] {
  const out: IndexedToolTurn[] = [];
  const lastOf: Record<Requestor, number> = { assistant: -1, user: -1 };
  turns.forEach((turn, index) => {
    if (turn.role !== 'tool') {
      lastOf[turn.role] = index;
      return;
    }
    if ((requestor && turn.requestor !== requestor) || turn.not_run) return;
    out.push({ index, turn, callerIndex: lastOf[turn.requestor] });
  });
  return out;
}

/** Successful tool calls made by the agent. */
export function successfulAgentCalls(turns: readonly Turn[]): IndexedToolTurn[] {
  return toolTurns(turns, 'assistant').filter((t) => !t.turn.error);
}

/**
 * Successful agent calls that wrote: the call changed rows, or the tool is of kind `write`
 * (a write tool that happened to change nothing still performed the action the caller hears).
 */
export function agentWrites(turns: readonly Turn[], domain: DomainDefinition): IndexedToolTurn[] {
  const writeTools = new Set(domain.tools.filter((t) => t.kind === 'write').map((t) => t.name));
  return successfulAgentCalls(turns).filter((t) => t.turn.writes.length > 0 || writeTools.has(t.turn.name));
}

/**
 * Spoken text of a turn: reasoning (`<think>…</think>`) and the simulator's stop tokens
 * (`###STOP###` …, tolerant matching) removed. See `participants/reply-text.ts`.
 */
export function spokenText(text: string): string {
  return stripStopTokens(splitReasoning(text).text);
}

/** Non-empty spoken texts of one side, stop tokens removed, with their turn indices. */
export function textTurns(turns: readonly Turn[], role: 'assistant' | 'user'): IndexedText[] {
  const out: IndexedText[] = [];
  turns.forEach((turn, index) => {
    if (turn.role !== role) return;
    const text = spokenText(turn.text);
    if (text) out.push({ index, text });
  });
  return out;
}

const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);

/**
 * Join two pieces of one utterance said across an interruption: with a space when both sides of
 * the seam are letters or digits (`pay` + `30`), else directly (`36` + `.5`, Mandarin).
 */
export function joinSpoken(a: string, b: string): string {
  if (!a) return b;
  if (!b) return a;
  return isWordChar(a[a.length - 1]) && isWordChar(b[0]) ? `${a} ${b}` : `${a}${b}`;
}

/**
 * Utterances of one side: its spoken texts, where texts separated only by the other side's
 * barge-ins (and turns without speech) are one utterance (a reply interrupted by a backchannel
 * and then finished is heard whole). Index: the first turn of the utterance.
 */
export function utterances(turns: readonly Turn[], role: 'assistant' | 'user'): IndexedText[] {
  const out: IndexedText[] = [];
  let open: IndexedText | null = null;
  turns.forEach((turn, index) => {
    if (turn.role === 'tool') {
      open = null;
      return;
    }
    if (turn.role !== role) {
      if (!(turn.role === 'user' && turn.barge_in) && spokenText(turn.text)) open = null;
      return;
    }
    const text = spokenText(turn.text);
    if (!text) return;
    if (open) open.text = joinSpoken(open.text, text);
    else {
      open = { index, text };
      out.push(open);
    }
  });
  return out;
}

/**
 * Deep equality of JSON values (object key order ignored): `canonicalJson(a) ===
 * canonicalJson(b)`, without serializing when both are strings, booleans or finite numbers (whose
 * texts are equal exactly when the values are `===`).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isPlainScalar(a) && isPlainScalar(b)) return false;
  return canonicalJson(a) === canonicalJson(b);
}

/** A string, a boolean or a finite number: JSON text that no other such value shares (0 and -0 aside, which are `===`). */
function isPlainScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/** True when `args` has every key of `subset` with a deep-equal value. */
export function argsInclude(
  args: Readonly<Record<string, unknown>>,
  subset: Readonly<Record<string, unknown>> = {},
): boolean {
  return Object.entries(subset).every(([k, v]) => Object.hasOwn(args, k) && jsonEqual(args[k], v));
}

/** `name({"a":1})`: a call as it appears in details. */
export function showCall(name: string, args: Readonly<Record<string, unknown>>): string {
  return `${name}(${canonicalJson(args)})`;
}
