/**
 * Numbers as a text states them, for the number-aware `COMMUNICATE` rule of our own domains:
 * Arabic digits (`36.5`, `1,000`, `36.50元`), Mandarin numerals with or without currency units
 * (`三十六块五`, `三十六元五角`, `六十三点五`, `两百`), and English number words (`thirty-six
 * fifty`, `thirty-six dollars and fifty cents`, `thirty-six point five`, `two hundred`).
 *
 * Each function scans the text once, character by character or word by word (no backtracking
 * regular expressions). A number is never read out of the middle of a longer one: `136.5` is
 * 136.5 only, never 36.5. Values are plain JavaScript numbers; compare them with
 * {@link sameNumber}.
 */

/** True when two amounts are equal up to 1e-9 (binary rounding of decimals such as 36.5 + 0.05). */
export function sameNumber(a: number, b: number): boolean {
  return Math.abs(a - b) < 1e-9;
}

const ZH_DIGIT: Record<string, number> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const ZH_UNIT: Record<string, number> = { 十: 10, 百: 100, 千: 1000 };
const ZH_BIG: Record<string, number> = { 万: 10_000, 亿: 100_000_000 };

const isZhNumeral = (c: string) => c in ZH_DIGIT || c in ZH_UNIT || c in ZH_BIG;

/**
 * Value of a run of Mandarin numerals (no 点): `三十六` 36, `一百零五` 105, `两百五` 250 (a
 * trailing digit after a unit counts one unit lower), `十二` 12, `一三八` 138 (digits read one
 * by one). Null for an empty run.
 */
export function zhIntegerValue(run: string): number | null {
  const chars = [...run];
  if (chars.length === 0) return null;
  if (chars.every((c) => c in ZH_DIGIT)) return Number(chars.map((c) => ZH_DIGIT[c]).join(''));
  let total = 0;
  let section = 0;
  let digit: number | null = null;
  let lastUnit = 0;
  let zeroSeen = false;
  for (const c of chars) {
    if (c in ZH_DIGIT) {
      const d = ZH_DIGIT[c]!;
      if (d === 0) zeroSeen = true;
      digit = d;
    } else if (c in ZH_UNIT) {
      const u = ZH_UNIT[c]!;
      section += (digit ?? 1) * u;
      digit = null;
      lastUnit = u;
      zeroSeen = false;
    } else {
      const big = ZH_BIG[c]!;
      total += (section + (digit ?? 0)) * big;
      section = 0;
      digit = null;
      lastUnit = big;
      zeroSeen = false;
    }
  }
  // 两百五 = 250, 三千二 = 3200, 一万二 = 12000: a bare last digit right after a unit.
  const tail = digit === null ? 0 : !zeroSeen && lastUnit >= 100 ? (digit * lastUnit) / 10 : digit;
  return total + section + tail;
}

type ZhToken =
  | { kind: 'num'; value: number; integer: boolean; digits: number }
  | { kind: 'yuan' | 'jiao' | 'fen' }
  | { kind: 'gap' };

/**
 * A character that starts a Mandarin token in {@link zhTokens}: a digit, 十, or a currency unit
 * (百, 千, 万, 亿 and 点 count only inside or after a numeral). A text without one holds no
 * Mandarin number, and its Arabic numbers are each read as themselves.
 */
const ZH_TOKEN_START = new RegExp(`[${Object.keys(ZH_DIGIT).join('')}十元块角毛分]`);

/**
 * What {@link zhNumbers} gives for a text without {@link ZH_TOKEN_START}: each run of digits,
 * with a `.` decimal part when a digit follows the dot, as a number, in order (one pass of a
 * regular expression that never backtracks more than the dot). Skips the scan's array of every
 * character: `statedNumbers` of an English agent message 7.3 → 3.4 µs (three carrier-like
 * messages of 50–150 characters, 100,000 reads each way, Node 20).
 */
function arabicNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(ARABIC_NUMBER)) out.push(Number(m[0]));
  return out;
}
const ARABIC_NUMBER = /[0-9]+(?:\.[0-9]+)?/g;

/** Numerals (Mandarin or Arabic, with 点 or `.` decimals), currency units and gaps, in order. */
function zhTokens(text: string): ZhToken[] {
  const out: ZhToken[] = [];
  const chars = [...text];
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '元' || c === '块') {
      out.push({ kind: 'yuan' });
      i++;
    } else if (c === '角' || c === '毛') {
      out.push({ kind: 'jiao' });
      i++;
    } else if (c === '分') {
      out.push({ kind: 'fen' });
      i++;
    } else if (c in ZH_DIGIT || c === '十') {
      let run = '';
      while (i < chars.length && isZhNumeral(chars[i]!)) run += chars[i++];
      let frac = '';
      if (chars[i] === '点' && i + 1 < chars.length && chars[i + 1]! in ZH_DIGIT) {
        i++;
        while (i < chars.length && chars[i]! in ZH_DIGIT) frac += String(ZH_DIGIT[chars[i++]!]);
      }
      const whole = zhIntegerValue(run) ?? 0;
      out.push({
        kind: 'num',
        value: frac ? Number(`${whole}.${frac}`) : whole,
        integer: !frac,
        digits: [...run].length,
      });
    } else if (c >= '0' && c <= '9') {
      let run = '';
      while (i < chars.length && /[0-9]/.test(chars[i]!)) run += chars[i++];
      let integer = true;
      if (chars[i] === '.' && /[0-9]/.test(chars[i + 1] ?? '')) {
        run += chars[i++];
        while (i < chars.length && /[0-9]/.test(chars[i]!)) run += chars[i++];
        integer = false;
      }
      out.push({ kind: 'num', value: Number(run), integer, digits: run.length });
    } else {
      if (out[out.length - 1]?.kind !== 'gap') out.push({ kind: 'gap' });
      i++;
    }
  }
  return out;
}

/**
 * Amounts stated in Mandarin: a number followed by 元 or 块, then optionally 角/毛 and 分
 * amounts (`三十六元五角` 36.5, `三十六块五毛二分` 36.52, `三十六块零五分` 36.05), or a bare
 * single numeral right after 块/元 meaning 角 (`三十六块五` 36.5, `36块5` 36.5); a number
 * followed by 角/毛 or 分 alone (`五毛` 0.5). Numbers without a unit count as themselves
 * (`六十三点五` 63.5, `两百` 200). A number that is part of a composed amount is not reported on
 * its own (`三十六块五` gives 36.5, not 36).
 */
export function zhNumbers(text: string): number[] {
  if (!ZH_TOKEN_START.test(text)) return arabicNumbers(text);
  const t = zhTokens(text);
  const out: number[] = [];
  const at = (k: number) => t[k];
  const isNum = (k: number): k is number => at(k)?.kind === 'num';
  const num = (k: number) => (at(k) as Extract<ZhToken, { kind: 'num' }>).value;
  let i = 0;
  while (i < t.length) {
    if (!isNum(i)) {
      i++;
      continue;
    }
    const unit = at(i + 1)?.kind;
    if (unit === 'yuan') {
      let value = num(i);
      let k = i + 2;
      if (isNum(k) && at(k + 1)?.kind === 'jiao') {
        value += num(k) / 10;
        k += 2;
        if (isNum(k)) {
          value += num(k) / 100;
          k += at(k + 1)?.kind === 'fen' ? 2 : 1;
        }
      } else if (isNum(k) && at(k + 1)?.kind === 'fen') {
        value += num(k) / 100;
        k += 2;
      } else if (isNum(k)) {
        const n = at(k) as Extract<ZhToken, { kind: 'num' }>;
        // 三十六块五: one bare digit after 块 is 角.
        if (n.integer && n.digits === 1) {
          value += n.value / 10;
          k += 1;
        }
      }
      out.push(Math.round(value * 100) / 100);
      i = k;
    } else if (unit === 'jiao') {
      let value = num(i) / 10;
      let k = i + 2;
      if (isNum(k)) {
        value += num(k) / 100;
        k += at(k + 1)?.kind === 'fen' ? 2 : 1;
      }
      out.push(Math.round(value * 100) / 100);
      i = k;
    } else if (unit === 'fen') {
      out.push(num(i) / 100);
      i += 2;
    } else {
      out.push(num(i));
      i++;
    }
  }
  return out;
}

const EN_ONES: Record<string, number> = {
  zero: 0,
  oh: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
};
const EN_TEENS: Record<string, number> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const EN_TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const EN_SCALE: Record<string, number> = { hundred: 100, thousand: 1000, million: 1_000_000 };
const DOLLAR_WORDS = new Set(['dollar', 'dollars', 'buck', 'bucks', 'yuan', 'kuai', 'rmb', 'euro', 'euros']);
const CENT_WORDS = new Set(['cent', 'cents']);

/** One cardinal number read from words, with the index of the word after it. */
interface Cardinal {
  value: number;
  end: number;
}

/**
 * Read one cardinal starting at word `i` ("thirty six", "two hundred and five", "one thousand
 * two hundred"). Stops before a word that cannot continue it: a ones word after a ones or teens
 * word, a tens or teens word after anything but a scale word, `and` not after a scale word.
 */
function cardinalAt(words: readonly string[], i: number): Cardinal | null {
  let total = 0;
  let current = 0;
  let last: 'ones' | 'teens' | 'tens' | 'scale' | null = null;
  let k = i;
  for (; k < words.length; k++) {
    const w = words[k]!;
    if (w === 'oh' && last === null) break;
    if (w in EN_ONES && w !== 'oh') {
      if (last === 'ones' || last === 'teens') break;
      current += EN_ONES[w]!;
      last = 'ones';
    } else if (w in EN_TEENS) {
      if (last !== null && last !== 'scale') break;
      current += EN_TEENS[w]!;
      last = 'teens';
    } else if (w in EN_TENS) {
      if (last !== null && last !== 'scale') break;
      current += EN_TENS[w]!;
      last = 'tens';
    } else if (w in EN_SCALE && last !== null && last !== 'scale') {
      const s = EN_SCALE[w]!;
      if (s === 100) current *= 100;
      else {
        total += current * s;
        current = 0;
      }
      last = 'scale';
    } else if (!(w === 'and' && last === 'scale' && k + 1 < words.length && isSmallNumberWord(words[k + 1]!))) {
      // Only an "and" between a scale and a small number word (`one hundred and five`) is skipped.
      break;
    }
  }
  return last === null ? null : { value: total + current, end: k };
}

const isSmallNumberWord = (w: string) => (w in EN_ONES && w !== 'oh') || w in EN_TEENS || w in EN_TENS;

/**
 * Amounts stated in English words: `thirty-six fifty` 36.5 (a whole amount followed by a
 * two-digit number under 100 is dollars and cents), `thirty-six dollars and fifty cents` 36.5,
 * `thirty-six dollars fifty` 36.5, `fifty cents` 0.5, `thirty-six point five` 36.5, `two
 * hundred` 200. A number that is part of a composed amount is not reported on its own.
 */
export function enNumbers(text: string): number[] {
  const words = text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean);
  const out: number[] = [];
  let i = 0;
  while (i < words.length) {
    const first = cardinalAt(words, i);
    if (!first) {
      i++;
      continue;
    }
    let value = first.value;
    let k = first.end;
    if (words[k] === 'point') {
      let frac = '';
      let j = k + 1;
      while (j < words.length && words[j]! in EN_ONES) frac += String(EN_ONES[words[j++]!]);
      if (frac) {
        out.push(Number(`${value}.${frac}`));
        i = j;
        continue;
      }
    }
    if (words[k] !== undefined && CENT_WORDS.has(words[k]!)) {
      out.push(value / 100);
      i = k + 1;
      continue;
    }
    const dollars = words[k] !== undefined && DOLLAR_WORDS.has(words[k]!);
    if (dollars) k++;
    const and = words[k] === 'and';
    const cents = cardinalAt(words, and ? k + 1 : k);
    const centsWord = cents && words[cents.end] !== undefined && CENT_WORDS.has(words[cents.end]!);
    // "thirty-six fifty" / "thirty-six dollars fifty" / "… and fifty cents": cents after the amount.
    if (cents && cents.value < 100 && (centsWord || (!and && (dollars || (cents.value >= 10 && value < 1000))))) {
      value += cents.value / 100;
      k = centsWord ? cents.end + 1 : cents.end;
    }
    out.push(Math.round(value * 100) / 100);
    i = k;
  }
  return out;
}

/** Every number the text states, in digits, Mandarin numerals or English words. */
export function statedNumbers(text: string): number[] {
  // Thousands separators first (`1,000` is 1000; `30,50` stays two numbers). The Mandarin scan
  // reads Arabic digits too, so `36块5` is 36.5 and never 36.
  const plain = text.replace(/(\d),(?=\d{3}(?!\d))/g, '$1');
  return [...zhNumbers(plain), ...enNumbers(plain)];
}
