/**
 * Issue 11, item 2: the linear replacements of quadratic patterns behave exactly like the
 * patterns they replace (checked against the old regular expressions on random short strings
 * over the characters that matter), and each check handles the 1 MB adversarial corpus.
 * Speed itself is measured by `npm run bench` (bench/text-checks.ts), not asserted here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heardPart } from '../../src/core/channel/text-cut.ts';
import { statedValues } from '../../src/core/participants/model-user.ts';
import { formattingMarks, sentences } from '../../src/core/scoring/quality.ts';
import { hasMarkdownLink, trimPunctuation } from '../../src/core/text/scan.ts';
import { ADVERSARIAL_STRINGS } from '../fixtures/attacks/strings/adversarial.ts';
import { TEXT_CHECKS } from '../../bench/text-checks.ts';

/** Strings over the characters the patterns look at. */
const text = (chars: string[]) => fc.array(fc.constantFrom(...chars), { maxLength: 24 }).map((a) => a.join(''));
const OLD_LINK = /\[[^\]\n]*\]\([^)\n]*\)/;
const OLD_TRIM = /^[\s\p{P}]+|[\s\p{P}]+$/gu;
const OLD_TRIM_END = /[\s\p{P}]+$/u;

describe('linear text scans', () => {
  it('hasMarkdownLink agrees with the markdown-link pattern', () => {
    expect(hasMarkdownLink('see [the bill](https://x.y/b) now')).toBe(true);
    expect(hasMarkdownLink('[a]\n(b)')).toBe(false);
    expect(hasMarkdownLink('[a](b\n)')).toBe(false);
    expect(hasMarkdownLink('[a] (b)')).toBe(false);
    expect(hasMarkdownLink('[a](b [c](d)')).toBe(true);
    fc.assert(
      fc.property(text(['[', ']', '(', ')', '\n', 'a', ' ']), (s) => hasMarkdownLink(s) === OLD_LINK.test(s)),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('trimPunctuation agrees with the trim pattern, whole code points kept', () => {
    expect(trimPunctuation(' ,,Hello, world!! ')).toBe('Hello, world');
    expect(trimPunctuation('……好的。', 'end')).toBe('……好的');
    expect(trimPunctuation('😀!')).toBe('😀');
    fc.assert(
      // ASCII symbols ($ ~ ^ ` | + < = >) are \p{S}, not \p{P}: kept; a lone surrogate is neither.
      fc.property(
        text([',', '.', ' ', '\n', '\t', 'a', '好', '。', '😀', '-', '¥', '\u2028', '$', '~', '_', '`', '\ud800']),
        (s) => {
          return (
            trimPunctuation(s) === s.replace(OLD_TRIM, '') && trimPunctuation(s, 'end') === s.replace(OLD_TRIM_END, '')
          );
        },
      ),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('statedValues finds ids only from the start of a letter run, as before', () => {
    expect(statedValues('bill B10008 and abcC1002, call 158 6745 2301 on 2025-03-15 for 63.50')).toEqual([
      '2025-03-15',
      'B10008',
      'ABCC1002',
      '15867452301',
      '63.5',
    ]);
    const old = (s: string) => [...s.matchAll(/[A-Za-z]+\d{2,}/g)].map((m) => m[0]);
    const now = (s: string) => [...s.matchAll(/(?<![A-Za-z])[A-Za-z]+\d{2,}/g)].map((m) => m[0]);
    fc.assert(
      fc.property(text(['a', 'B', '1', '2', ' ', '-']), (s) => JSON.stringify(old(s)) === JSON.stringify(now(s))),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('quality and channel helpers give the same answers on ordinary text', () => {
    expect(formattingMarks('Please see [this](http://x)')).toEqual(['markdown link', 'url']);
    expect(sentences('Hello, there!! ...Your bill is ¥21.10. OK?')).toEqual([
      'hello, there',
      'your bill is ¥21.10',
      'ok',
    ]);
    expect(heardPart('I want to pay the, ', 19)).toBe('I want to pay the');
  });

  it('every text check returns on every adversarial string (64 KB here; 1 MB in npm run bench)', () => {
    // Behaviour, not speed: each check gives its answer (the benchmark prints the times).
    for (const kind of ADVERSARIAL_STRINGS) {
      const s = kind.build(1 << 16);
      expect(s.length, kind.name).toBeGreaterThan((1 << 16) - 16);
      for (const [name, check] of TEXT_CHECKS) expect(() => check(s), `${name} on ${kind.name}`).not.toThrow();
    }
  });
});
