/**
 * Policy rules. A policy is Markdown; a rule is a list item or paragraph that starts with its id
 * in bold or brackets: `- **R3** Payments …`, `- [R3] Payments …` or `R3: Payments …`.
 */

/** One rule of a policy. */
export interface PolicyRule {
  /** `R` followed by digits, e.g. `R7`. */
  id: string;
  /** The rule's text, without its id. */
  text: string;
}

const RULE_LINE = /^\s*(?:[-*]\s+)?(?:\*\*(R\d+)\*\*|\[(R\d+)\]|(R\d+)[:：.])\s*(.*)$/;

/** Extract rules with ids. Throws on a duplicate id. */
export function parsePolicy(markdown: string): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const line of markdown.split(/\r?\n/)) {
    const m = RULE_LINE.exec(line);
    if (!m) continue;
    const id = (m[1] ?? m[2] ?? m[3])!;
    if (seen.has(id)) throw new Error(`policy: rule ${id} is defined twice`);
    seen.add(id);
    rules.push({ id, text: (m[4] ?? '').trim() });
  }
  return rules;
}
