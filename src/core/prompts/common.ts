/** Helpers shared by the prompt templates. */
import type { Turn } from '../schema/trajectory.ts';

/** English name of a BCP-47 language tag's language, for "speak …" lines (the tag itself when unknown). */
export function languageName(tag: string): string {
  const base = tag.toLowerCase().split('-')[0] ?? '';
  const names: Record<string, string> = {
    zh: 'Mandarin Chinese',
    en: 'English',
    fr: 'French',
    de: 'German',
    es: 'Spanish',
    ja: 'Japanese',
  };
  return names[base] ?? tag;
}

/** `- line` for each non-empty line. */
export function bullets(lines: readonly (string | null | undefined)[]): string {
  return lines
    .filter((l): l is string => typeof l === 'string' && l.trim() !== '')
    .map((l) => `- ${l.trim()}`)
    .join('\n');
}

/** A titled section, or '' when the body is empty. */
export function section(title: string, body: string | null | undefined): string {
  return body?.trim() ? `# ${title}\n${body.trim()}` : '';
}

/** Join non-empty sections with blank lines. */
export function joinSections(parts: readonly string[]): string {
  return parts.filter((p) => p !== '').join('\n\n');
}

/**
 * A numbered transcript, one line per turn: `[i] agent: …`, `[i] caller: …`, `[i] tool <name>
 * by agent|caller <arguments JSON> -> <result>`. The numbers are turn indices in the trajectory.
 */
export function renderTranscript(turns: readonly Turn[]): string {
  return turns
    .map((t, i) => {
      if (t.role === 'tool') {
        const by = t.requestor === 'assistant' ? 'agent' : 'caller';
        return `[${i}] tool ${t.name} by ${by} ${JSON.stringify(t.arguments)} -> ${t.content}`;
      }
      const who = t.role === 'assistant' ? 'agent' : 'caller';
      const calls = t.tool_calls.length ? ` (calls ${t.tool_calls.map((c) => c.name).join(', ')})` : '';
      return `[${i}] ${who}: ${t.text}${calls}`;
    })
    .join('\n');
}
