/**
 * Ids a model may propose (task ids, rule ids, tool names) and ids a domain file may hold. Task
 * and rule ids end up in file names, report keys and SQL comments, so a proposed id is held to a
 * short safe pattern, and a hand-written one may at least not climb out of a folder.
 */

/**
 * Shape of an id a model proposes: a letter or digit, then up to 63 letters, digits, `_ . : -`
 * (no `/`, no `\`, no spaces); ids containing `..` are refused as well ({@link unsafeModelId}).
 */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * Why a model-proposed id is unsafe, or null when it is safe: it must match
 * {@link MODEL_ID_PATTERN} and not contain `..`.
 */
export function unsafeModelId(id: string): string | null {
  if (!MODEL_ID_PATTERN.test(id))
    return `"${id.slice(0, 80)}" is not a safe id (1-64 characters: a letter or digit, then letters, digits, _ . : -)`;
  if (id.includes('..')) return `"${id}" contains "..", which could name a parent folder`;
  return null;
}

/**
 * Why an id read from a domain file could escape a folder when used in a path, or null: it may not
 * contain `/`, `\`, `..` or control characters. Looser than {@link unsafeModelId}, since imported
 * ids such as tau2's telecom `[mobile_data_issue]…[PERSONA:None]` hold brackets.
 */
export function pathUnsafeId(id: string): string | null {
  if (/[/\\]/.test(id)) return 'contains a path separator (/ or \\)';
  if (id.includes('..')) return 'contains ".."';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'contains a control character';
  return null;
}
