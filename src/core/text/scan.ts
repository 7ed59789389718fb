/**
 * Linear-time text scans for the checks that run on model and caller text (issue 11). The
 * regular expressions they replace (`[\s\p{P}]+$`, `\[[^\]\n]*\]\([^)\n]*\)`) backtrack from
 * every start position, which is quadratic in the length of a run of matching characters: a
 * 1 MB reply of commas or brackets stalled the process for minutes. Each function here reads
 * every character at most a fixed number of times.
 */

const SPACE_OR_PUNCT = /^[\s\p{P}]$/u;

/** {@link SPACE_OR_PUNCT} of each ASCII character, decided once by the same expression. */
const ASCII_SPACE_OR_PUNCT: readonly boolean[] = Array.from({ length: 128 }, (_, c) =>
  SPACE_OR_PUNCT.test(String.fromCharCode(c)),
);

function isSpaceOrPunct(ch: string): boolean {
  return SPACE_OR_PUNCT.test(ch);
}

/** {@link isSpaceOrPunct} of the code point `cp` (a table lookup for ASCII). */
function isSpaceOrPunctCode(cp: number): boolean {
  return cp < 128 ? ASCII_SPACE_OR_PUNCT[cp]! : SPACE_OR_PUNCT.test(String.fromCodePoint(cp));
}

/**
 * `text` without leading and/or trailing whitespace and Unicode punctuation (`\p{P}`), like
 * `replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '')` but linear. Characters are whole code points
 * (surrogate pairs are not split).
 */
export function trimPunctuation(text: string, sides: 'both' | 'end' = 'both'): string {
  let start = 0;
  if (sides === 'both') {
    while (start < text.length) {
      const cp = text.codePointAt(start)!;
      if (!isSpaceOrPunctCode(cp)) break;
      start += cp > 0xffff ? 2 : 1;
    }
  }
  let end = text.length;
  while (end > start) {
    const low = text.charCodeAt(end - 1);
    if (low < 128) {
      if (!ASCII_SPACE_OR_PUNCT[low]) break;
      end -= 1;
      continue;
    }
    const size = low >= 0xdc00 && low <= 0xdfff && end - 2 >= start ? 2 : 1;
    if (!isSpaceOrPunct(text.slice(end - size, end))) break;
    end -= size;
  }
  return text.slice(start, end);
}

/**
 * True when `text` holds a markdown link `[label](target)`: a `[`, then characters other than
 * `]` and line breaks, then `](`, then characters other than `)` and line breaks, then `)`.
 * The same as `/\[[^\]\n]*\]\([^)\n]*\)/.test(text)`, in one pass.
 */
export function hasMarkdownLink(text: string): boolean {
  let open = false; // a `[` since the last `]` or line break
  let stop = -1; // index of the first `)` or line break at or after the last search start
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') open = false;
    else if (c === '[') open = true;
    else if (c === ']') {
      if (open && text[i + 1] === '(') {
        if (stop < i + 2) {
          stop = i + 2;
          while (stop < text.length && text[stop] !== ')' && text[stop] !== '\n') stop++;
        }
        if (text[stop] === ')') return true;
      }
      open = false;
    }
  }
  return false;
}
