/**
 * How the scripted participants put task data into words: the caller's reason for calling in
 * the first person, and a write's arguments as a person would read them out (labels, money with
 * its currency, dates in words, ids without underscores). English and Mandarin; deterministic.
 */

/** Words after which "you" is an object ("told you", "help you", "to you"), lower-case. */
const OBJECT_AFTER = new Set([
  'told',
  'tell',
  'tells',
  'help',
  'helps',
  'helped',
  'ask',
  'asks',
  'asked',
  'give',
  'gives',
  'gave',
  'let',
  'lets',
  'allow',
  'allows',
  'allowed',
  'call',
  'called',
  'show',
  'shows',
  'showed',
  'send',
  'sends',
  'sent',
  'offer',
  'offers',
  'offered',
  'charge',
  'charged',
  'remind',
  'contact',
  'contacts',
  'to',
  'for',
  'with',
  'about',
  'from',
  'of',
  'at',
  'by',
  'than',
  'against',
  'on',
  'without',
  'cause',
  'caused',
  'causes',
  'make',
  'made',
  'makes',
  'save',
  'saves',
  'saved',
  'inform',
  'informed',
  'assure',
  'assured',
  'refund',
  'refunded',
  'pay',
  'paid',
  'owe',
  'owes',
  'transfer',
  'transferred',
  'assist',
  'provide',
  'provided',
  'compensate',
  'compensated',
  'notify',
  'notified',
  'email',
  'emailed',
  'text',
  'texted',
  'book',
  'booked',
  'get',
  'got',
]);

/** "you <verb>" forms that change with the person. */
const VERB_FORMS: Readonly<Record<string, string>> = { are: 'am', were: 'was', "'re": "'m", '’re': '’m' };

function matchCase(word: string, like: string): string {
  return like[0] === like[0]!.toUpperCase() ? word[0]!.toUpperCase() + word.slice(1) : word;
}

/** Words after which "you" is an object when it does not start a clause ("you to", "you the"). */
const OBJECT_BEFORE = new Set(['to', 'the', 'a', 'an', 'most', 'more', 'money', 'some', 'any', 'it', 'them']);

/** Words after which "you" starts a clause (a subject). */
const SUBJECT_AFTER = new Set([
  'that',
  'because',
  'if',
  'when',
  'and',
  'but',
  'so',
  'since',
  'while',
  'which',
  'who',
  'as',
]);

/**
 * A sentence or parenthesis that directs the performance instead of stating the request: it
 * names the agent, tells how to act ("insist", "become angry", "when asked", "respond exactly",
 * "do not reveal") or sets up a test of the agent ("try to get it to").
 */
const DIRECTION =
  /\b(the agent|(?:a )?customer service agent|human agent|mention|abruptly|halfway through|pretend|make up|make sure|swear|insist|be insistent|become angry|when asked|respond exactly|reveal|try to get it|interacting with)\b/i;

/** A sentence that only makes sense after the one before it ("If not, …", "If that doesn't work, …"). */
const CONTINUATION = /^\s*(if (not|so|that|it|there)\b|otherwise\b|\()/i;

/**
 * The sentences of `paragraph` a caller says: directions left out, and with them a sentence that
 * continues a left-out one (a bare parenthesis, "If not, …", "If that is not possible, …"); a
 * kept sentence's "then" after a left-out one goes ("You then want" → "You want").
 */
function spokenSentences(paragraph: string): string[] {
  const kept: string[] = [];
  let dropped = false;
  for (const x of sentencesOf(paragraph)) {
    if (DIRECTION.test(x) || (dropped && CONTINUATION.test(x)) || /^[\s.!?]*$/.test(x)) {
      dropped = true;
      continue;
    }
    kept.push(dropped ? x.replace(/^(\s*\w+) then\b/, '$1') : x);
    dropped = false;
  }
  return kept;
}

function sentencesOf(paragraph: string): string[] {
  const text = paragraph
    // A directing parenthesis goes; its full stop stays unless the sentence before already ended.
    .replace(/\s*\([^()]*\)\.?/g, (m, at: number, all: string) => {
      if (!DIRECTION.test(m)) return m;
      return m.endsWith('.') && !/[.!?]\s*$/.test(all.slice(0, at)) ? '.' : '';
    })
    .replace(/\s+/g, ' ')
    .trim();
  return text.match(/[^.!?]+[.!?]*\s*/g) ?? [];
}

/**
 * Turn tau2-style caller instructions, written to the caller ("You want to cancel reservation
 * EHGLP3."), into what the caller says ("I want to cancel reservation EHGLP3."). One paragraph is
 * spoken: the first that still has a sentence once those directing the performance rather than
 * stating the request are left out (sentences or parentheses naming "the agent", "mention",
 * "abruptly", "halfway through", "pretend", "make up", "make sure", "swear"); later paragraphs
 * are background. "you" becomes "I" as a subject and "me" as an object (after a verb or
 * preposition such as "told", "help", "to", or before "to", "the", …); "your" → "my",
 * "yours" → "mine", "yourself" → "myself"; "you are/were/'re" → "I am/was/'m"; "(First,) try to"
 * → "I would like to"; "contacting (customer service) to" → "calling to".
 *
 * @param text English instructions.
 */
export function firstPersonRequest(text: string): string {
  const paragraphs = text.trim().split(/\n\s*\n/);
  let spoken = '';
  for (const paragraph of paragraphs) {
    const kept = spokenSentences(paragraph);
    if (kept.length > 0) {
      spoken = kept.join('').trim();
      break;
    }
  }
  if (!spoken) spoken = paragraphs[0]!.replace(/\s+/g, ' ').trim();
  spoken = spoken.replace(/(^|[.!?] )(?:First, )?[Tt]ry to\b/g, '$1I would like to');
  const tokens = spoken.split(/(\s+)/);
  const out: string[] = [];
  let prevWord = '';
  let clauseStart = true;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (/^\s*$/.test(tok)) {
      out.push(tok);
      continue;
    }
    const m = /^([("“]*)([A-Za-z’']+)(.*)$/.exec(tok);
    if (!m) {
      out.push(tok);
      prevWord = '';
      clauseStart = /[.!?:;,]$/.test(tok);
      continue;
    }
    const [, lead, word, tail] = m as unknown as [string, string, string, string];
    const lower = word.toLowerCase();
    const next = tokens[i + 2];
    const nextWord = next ? /^([A-Za-z]+)(.*)$/.exec(next) : null;
    let replaced = word;
    if (lower === 'your') replaced = matchCase('my', word);
    else if (lower === 'yours') replaced = matchCase('mine', word);
    else if (lower === 'yourself') replaced = matchCase('myself', word);
    else if (/^you(['’](re|ve|ll|d))?$/.test(lower)) {
      const contraction = lower.slice(3);
      const object =
        contraction === '' &&
        !clauseStart &&
        !SUBJECT_AFTER.has(prevWord) &&
        (OBJECT_AFTER.has(prevWord) ||
          /[.!?:;,)]$/.test(tail) ||
          OBJECT_BEFORE.has(nextWord?.[1]?.toLowerCase() ?? ''));
      if (object) replaced = 'me';
      else {
        replaced = `I${VERB_FORMS[contraction] ?? contraction}`;
        // "you are" → "I am", "you were" → "I was".
        const form = nextWord ? VERB_FORMS[nextWord[1]!.toLowerCase()] : undefined;
        if (contraction === '' && form) tokens[i + 2] = form + nextWord![2]!;
      }
    }
    out.push(lead + replaced + tail);
    prevWord = lower;
    clauseStart = /[.!?:;,]$/.test(tail);
  }
  return (
    out
      .join('')
      .replace(/\bI am contacting (customer service |customer support )?to\b/g, 'I am calling to')
      // "you …, and are" / "but are": the subject was "you", now "I".
      .replace(/(\bI\b[^.!?]*?\b(?:and|but)) are\b/g, '$1 am')
      .replace(/\bI first ask about\b/g, 'First, I would like to know')
      .replace(/\bI contact (customer service|customer support) because\b/g, 'I am calling because')
  );
}

/** Words per language for reading arguments out. */
interface Reading {
  /** Label said before an argument's value, by argument name; '' for none. */
  labels: Readonly<Record<string, string>>;
  money(amount: number): string;
  date(year: number, month: number, day: number): string;
  /** Date of an object field (`date` of a flight): en "on May 19, 2024". */
  onDate(date: string): string;
  /** Date of birth (`dob` of a passenger): en "born April 5, 1990". */
  born(date: string): string;
  /** Label of a one-item list ("items" → "item"). */
  singular(label: string): string;
  list(items: readonly string[]): string;
  /** Label of an argument not in `labels`. */
  fallbackLabel(name: string): string;
  yes: string;
  no: string;
  sep: string;
  labelSep: string;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const en: Reading = {
  labels: {
    user_id: 'for',
    customer_id: 'customer',
    payment_id: 'paying with',
    payment_method_id: 'paying with',
    reservation_id: 'reservation',
    order_id: 'order',
    item_ids: 'items',
    new_item_ids: 'new items',
    bill_id: 'bill',
    charge_id: 'charge',
    plan_id: 'plan',
    cabin: 'in',
    origin: 'from',
    destination: 'to',
    flight_type: '',
    total_baggages: 'bags in total',
    nonfree_baggages: 'paid bags',
  },
  money: (n) => `$${Number.isInteger(n) ? n : n.toFixed(2)}`,
  date: (y, m, d) => `${MONTHS[m - 1]} ${d}, ${y}`,
  onDate: (d) => `on ${d}`,
  born: (d) => `born ${d}`,
  singular: (label) => label.replace(/s$/, ''),
  list: (items) => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`),
  fallbackLabel: (name) => name.replace(/_ids?$/, '').replace(/_/g, ' '),
  yes: 'yes',
  no: 'no',
  sep: ', ',
  labelSep: ' ',
};

const zh: Reading = {
  labels: {
    user_id: '用户',
    customer_id: '客户',
    bill_id: '账单',
    amount: '金额',
    charge_id: '费用',
    plan_id: '套餐',
    order_id: '订单',
    reason: '原因',
    payment_method_id: '支付方式',
    payment_id: '支付方式',
    months: '期数',
    hardship: '困难减免方案',
    monthly_amount: '月供',
  },
  money: (n) => `${n}元`,
  date: (y, m, d) => `${y}年${m}月${d}日`,
  onDate: (d) => d,
  born: (d) => `出生于${d}`,
  singular: (label) => label,
  list: (items) => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join('、')}和${items.at(-1)}`),
  fallbackLabel: () => '',
  yes: '是',
  no: '否',
  sep: '，',
  labelSep: '',
};

/** Argument names that hold money. */
const MONEY = /(^|_)(amount|price|balance|fee|cost|refund)s?$/;

function readScalar(value: unknown, key: string, r: Reading, words: Words): string {
  if (typeof value === 'string' && Object.hasOwn(words, value)) return words[value]!;
  if (typeof value === 'boolean') return value ? r.yes : r.no;
  if (typeof value === 'number') return MONEY.test(key) ? r.money(value) : String(value);
  const s = String(value);
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (date) return r.date(Number(date[1]), Number(date[2]), Number(date[3]));
  return s.replace(/_/g, ' ');
}

/** Words for argument values, by value (a tool's `spokenValues`). */
type Words = Readonly<Record<string, string>>;

function readValue(value: unknown, key: string, r: Reading, words: Words): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return r.list(value.map((v) => readValue(v, key, r, words)).filter(Boolean));
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) =>
        k === 'date'
          ? r.onDate(readScalar(v, k, r, words))
          : k === 'dob'
            ? r.born(readScalar(v, k, r, words))
            : readValue(v, k, r, words),
      )
      .filter(Boolean)
      .join(' ');
  }
  return readScalar(value, key, r, words);
}

/**
 * A tool call's arguments read out: `label value` per argument, in argument order, e.g.
 * `reservation GV1N64, in basic economy, flights HAT003 on May 19, 2024 and HAT290 on May 20,
 * 2024, paying with gift card 1642017` or `客户C1002，账单B10008，金额63.5元`.
 *
 * @param language BCP-47 tag: Mandarin for `zh*`, English otherwise.
 * @param words how to say particular values (the tool's `spokenValues`), e.g. enum values.
 */
export function spokenArguments(
  args: Readonly<Record<string, unknown>>,
  language: string,
  words: Readonly<Record<string, string>> = {},
): string {
  const r = language.toLowerCase().startsWith('zh') ? zh : en;
  return Object.entries(args)
    .map(([key, value]) => {
      const said = readValue(value, key, r, words);
      if (!said) return '';
      const plural = r.labels[key] ?? r.fallbackLabel(key);
      const label = Array.isArray(value) && value.length === 1 ? r.singular(plural) : plural;
      return label ? `${label}${r.labelSep}${said}` : said;
    })
    .filter(Boolean)
    .join(r.sep);
}

/**
 * Join phrase parts without saying a word twice where they meet: when `head` ends with the word
 * `tail` starts with (case-insensitive), or with the same two or more Chinese characters, it is
 * said once (`我将为您` + `为您变更套餐` → `我将为您变更套餐`; `I will ` + `will pay` → `I will pay`).
 */
export function joinOnce(head: string, tail: string): string {
  const h = head.trimEnd();
  const lastWord = /([A-Za-z']+)$/.exec(h)?.[1];
  const firstWord = /^([A-Za-z']+)\b/.exec(tail)?.[1];
  if (lastWord && firstWord && lastWord.toLowerCase() === firstWord.toLowerCase()) {
    return head + tail.slice(firstWord.length).trimStart();
  }
  for (let k = Math.min(head.length, tail.length); k >= 2; k--) {
    const overlap = tail.slice(0, k);
    if (/^[\u4e00-\u9fff]+$/.test(overlap) && head.endsWith(overlap)) return head + tail.slice(k);
  }
  return head + tail;
}
