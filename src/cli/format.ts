/**
 * Plain-text tables for the terminal. Width counts East Asian wide characters as two columns so
 * Mandarin task names line up.
 */

/** Display width of a string in terminal columns. */
export function displayWidth(text: string): number {
  let w = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const wide =
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6);
    w += wide ? 2 : 1;
  }
  return w;
}

function pad(text: string, width: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return right ? fill + text : text + fill;
}

/**
 * Render rows as an aligned table. Columns whose header is in `numeric` are right-aligned.
 */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<string> = new Set(),
): string {
  const widths = headers.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => pad(c, widths[i]!, numeric.has(headers[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A reward or rate with three decimals, or `-` when absent or undefined (NaN). */
export function num(x: number | null | undefined): string {
  return x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(3);
}
