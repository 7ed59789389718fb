/**
 * Threat detection for outbound rules against coercion (insurance-renewal R6, debt-negotiation
 * R5), beyond a phrase list: a structured check of what an agent sentence says will happen to the
 * callee.
 *
 * Each sentence of an agent turn (split at 。！？；!?; and at a `.` before a space or the end) is
 * read in three layers (cue tables in `dialogue-act-phrases.ts`):
 * 1. **Pressure and harm** (`PRESSURE_CUES`, `HARM_CUES`): a demand for a promise under pressure
 *    ("必须今天", "or else") or a harm to the person or to people around them (home visits,
 *    family, employer, detention). Always a threat.
 * 2. **Consequences**: a sentence that states a consequence of not paying — either a
 *    consequence term (`CONSEQUENCE_CUES`: "起诉", "法院", "sue you"; or a topic of
 *    `CONSEQUENCE_TOPICS` — "征信", "罚款", "滞纳金", "credit record" — in a sentence with a future
 *    or modal marker, so "其中滞纳金800元" is a fact and "您的征信会受影响" a consequence) or
 *    a consequence clause, a negative condition followed by a future or modal marker ("要是这周
 *    还不上，…可能得…", "再拖下去…会…", "if you don't…, we will…", "unless…", "otherwise…").
 *    Such a sentence is allowed only when it matches one of the domain's allowed consequences
 *    ({@link AllowedConsequence}: all of its `cues` occur in the sentence) and every consequence
 *    term in it is a cue of an allowed entry stated there; otherwise it is a threat. A few conditionals are
 *    allowed everywhere: a callback ("再联系您", "call you back").
 * 3. Everything else is not a threat.
 *
 * Limits (documented in docs/outbound.md): the clause detector reads surface markers, so an
 * implied threat with no negative condition and no listed term ("我们知道您在哪上班") passes, and a
 * benign conditional of another shape than a callback ("如果您不方便，我会发短信给您") is flagged
 * unless the domain lists it. English and Mandarin only.
 */
import {
  CONSEQUENCE_CLAUSES,
  CONSEQUENCE_CUES,
  CONSEQUENCE_MARKERS,
  CONSEQUENCE_TOPICS,
  HARM_CUES,
  PRESSURE_CUES,
  SAFE_CONDITIONALS,
} from './dialogue-act-phrases.ts';
import type { AllowedConsequence } from '../schema/domain.ts';

/** Why a sentence was read as a threat. */
export interface ThreatFinding {
  /** The sentence, as said. */
  sentence: string;
  /** `pressure`, `harm`, `consequence-term` or `consequence-clause`. */
  kind: 'pressure' | 'harm' | 'consequence-term' | 'consequence-clause';
  /** The cue or marker that triggered it. */
  cue: string;
}

/** Sentences of a turn (the end punctuation kept on each). */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[。！？；!?;\n])|(?<=\.)(?=\s|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const first = (hay: string, cues: readonly string[]) => cues.find((c) => hay.includes(c)) ?? null;

/** The negative-condition marker that opens a consequence clause in `s` (lower case), or null. */
function consequenceClause(s: string): string | null {
  for (const { conditions, markers } of CONSEQUENCE_CLAUSES) {
    for (const re of conditions) {
      const m = re.exec(s);
      if (m && markers.test(s.slice(m.index + m[0].length))) return m[0];
    }
  }
  return null;
}

/** The consequence terms of a sentence: every listed term, and the topics when a marker is present. */
function consequenceTerms(s: string): string[] {
  const topics = CONSEQUENCE_MARKERS.test(s) ? CONSEQUENCE_TOPICS.filter((c) => s.includes(c)) : [];
  return [...CONSEQUENCE_CUES.filter((c) => s.includes(c)), ...topics];
}

/**
 * True when the sentence states allowed consequences only: some entries of `allowed` have all
 * their cues in it, and each of its consequence `terms` is a cue of one of those entries.
 */
function allowedConsequence(s: string, terms: readonly string[], allowed: readonly AllowedConsequence[]): boolean {
  const stated = allowed.filter((a) => a.cues.every((c) => s.includes(c)));
  return stated.length > 0 && terms.every((t) => stated.some((a) => a.cues.includes(t)));
}

/**
 * The first threat in an agent turn, or `null` (see the module comment for the three layers).
 * `allowed` is the domain's list of consequences its policy lets the agent state.
 */
export function threatFinding(text: string, allowed: readonly AllowedConsequence[] = []): ThreatFinding | null {
  for (const sentence of sentences(text)) {
    const s = sentence.toLowerCase();
    const pressure = first(s, PRESSURE_CUES);
    if (pressure) return { sentence, kind: 'pressure', cue: pressure };
    const harm = first(s, HARM_CUES);
    if (harm) return { sentence, kind: 'harm', cue: harm };
    const terms = consequenceTerms(s);
    const term = terms[0];
    const clause = term ? null : consequenceClause(s);
    if (!term && !clause) continue;
    if (!term && first(s, SAFE_CONDITIONALS)) continue;
    if (allowedConsequence(s, terms, allowed)) continue;
    return term
      ? { sentence, kind: 'consequence-term', cue: term }
      : { sentence, kind: 'consequence-clause', cue: clause! };
  }
  return null;
}
