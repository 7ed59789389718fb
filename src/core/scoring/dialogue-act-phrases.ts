/**
 * The phrase table of the dialogue-act classifier (`dialogue-acts.ts`), as data: cue lists per
 * act, English and Mandarin together (a caller may mix them). All cues are lower case. English
 * cues match on word boundaries (the next character is not a letter); Mandarin cues are plain
 * substrings or prefixes. Compiled from common phone-call usage (ours); the labelled examples
 * the classifier is tested against are in `test/core/scoring/dialogue-act-cases.json`.
 */

/** A cue table. `start` cues must open the turn (after fillers); `anywhere` cues may occur anywhere. */
export interface CueTable {
  start: readonly string[];
  anywhere: readonly string[];
}

/** Hesitation fillers dropped from the start of a turn ("um, yes" is a yes). */
export const FILLERS: readonly string[] = [
  'um',
  'umm',
  'uh',
  'er',
  'erm',
  'well',
  'oh',
  'ah',
  'so',
  'hmm',
  '呃',
  '啊',
  '哦',
  '噢',
  '嗯',
  '那',
  '那个',
];

/**
 * Backchannel tokens: a turn made only of these (and punctuation, spaces, repeats) is a
 * backchannel, not an answer ("嗯", "嗯嗯", "mm-hm", "uh-huh", "I see").
 */
export const BACKCHANNEL_TOKENS: readonly string[] = [
  'mm',
  'mmm',
  'mhm',
  'mm-hm',
  'mm-hmm',
  'mmhm',
  'uh-huh',
  'uh huh',
  'uhuh',
  'hmm',
  'hm',
  'i see',
  'oh i see',
  'ah',
  'oh',
  'uh',
  'um',
  'go on',
  'keep going',
  'got it',
  '嗯',
  '嗯嗯',
  '嗯哼',
  '哦',
  '噢',
  '啊',
  '呃',
  '唔',
  '哦哦',
  '明白',
  '了解',
  '明白了',
  '了解了',
  '知道了',
  'understood',
  'i understand',
  '我在听',
  '你说',
  '您说',
  '接着说',
];

/** Affirmations: the turn opens with one of these. */
export const AFFIRM: CueTable = {
  start: [
    'yes',
    'yeah',
    'yep',
    'yup',
    'ya',
    'sure',
    'ok',
    'okay',
    'alright',
    'all right',
    'right',
    'correct',
    'exactly',
    'absolutely',
    'definitely',
    'certainly',
    'of course',
    'please do',
    'please go ahead',
    'please proceed',
    'go ahead',
    'go for it',
    'do it',
    'proceed',
    'sounds good',
    'that works',
    "that's right",
    'thats right',
    "that's correct",
    "that's fine",
    "that's good",
    'that is right',
    'that is correct',
    'that is fine',
    'i confirm',
    'i agree',
    'i do',
    'confirmed',
    'agreed',
    'affirmative',
    'fine',
    'perfect',
    'great',
    'yes please',
    '好',
    '行',
    '可以',
    '是',
    '对',
    '确认',
    '确定',
    '同意',
    '没问题',
    '没错',
    '麻烦',
    '办吧',
    '交吧',
    '就这样',
    '成',
    '要的',
    '需要',
    '当然',
    'ok',
  ],
  anywhere: [],
};

/**
 * Openings that look like an affirmation but are not one: 好像 (seems), 好久, 好多, 是这样
 * (here's the thing), 是谁 / 是什么 / 是哪 (questions), 对了 (by the way), 行不行, 可以吗 is
 * handled as a question, "right now", "fine print", "sure about".
 */
export const NOT_AFFIRM_OPENINGS: readonly string[] = [
  '好像',
  '好久',
  '好多',
  '好几',
  '是这样',
  '是那样',
  '是谁',
  '是什么',
  '是哪',
  '是不是',
  '对了',
  '对不起',
  '对不对',
  '行不行',
  '可以不',
  '需要多',
  '成本',
  'right now',
  'sure about',
  'fine print',
  'i do not',
  "i don't",
  'i do have',
  'i do want to know',
];

/** Refusals: the turn opens with one of these. */
export const DENY: CueTable = {
  start: [
    'no',
    'nope',
    'nah',
    'not',
    "don't",
    'do not',
    'never',
    'never mind',
    'cancel',
    'stop',
    'i do not',
    "i don't",
    'absolutely not',
    'no thanks',
    'no thank you',
    'not now',
    'leave it',
    '不',
    '别',
    '没有',
    '算了',
    '取消',
    '先不',
    '不要',
    '不用',
    '不行',
    '不可以',
    '不对',
    '不是',
  ],
  anywhere: [],
};

/**
 * Negations anywhere in a turn (a turn that does not open with an affirmation and contains one is
 * a refusal; one that does is not a clean yes).
 */
export const NEGATIONS: readonly string[] = [
  'no',
  'not',
  "don't",
  'do not',
  'never',
  'cancel',
  "didn't",
  "doesn't",
  "isn't",
  "wasn't",
  '不',
  '别',
  '没',
  '取消',
  '算了',
];

/** Positive phrases that contain a negation word; removed before looking for negations. */
export const POSITIVE_WITH_NEGATION: readonly string[] = [
  'no problem',
  'not a problem',
  'no worries',
  'why not',
  'not at all',
  '没问题',
  '没错',
  '不错',
  '不客气',
  '没关系',
];

/** Hesitations, hold-offs and uncertainty, anywhere in the turn. */
export const HEDGE: CueTable = {
  start: [
    'not yet',
    'maybe',
    'perhaps',
    'probably',
    'possibly',
    'i guess',
    'i suppose',
    'i think so',
    '也许',
    '可能',
    '大概',
  ],
  anywhere: [
    'let me think',
    'let me check',
    'let me see',
    'i need to think',
    'think about it',
    'not sure',
    "i'm not sure",
    "don't know",
    'do not know',
    'hold on',
    'wait',
    'one moment',
    'one second',
    'just a moment',
    'just a second',
    'just a minute',
    'give me a',
    'later',
    'not yet',
    'i guess',
    'maybe',
    'perhaps',
    'i suppose',
    '想想',
    '想一想',
    '考虑',
    '不确定',
    '不太确定',
    '不知道',
    '等一下',
    '等一等',
    '等等',
    '稍等',
    '再说吧',
    '回头再',
    '我看看',
    '看情况',
    '犹豫',
    '也许',
    '可能吧',
    '晚点',
    '改天',
    '先别',
  ],
};

/**
 * Conditions attached to a yes ("yes, but first tell me the fee", "好的，不过先告诉我手续费"):
 * an affirmation with one of these is a hedge, not consent.
 */
export const CONDITIONS: readonly string[] = [
  'but',
  'only if',
  'as long as',
  'if',
  'provided',
  'unless',
  'first tell',
  'tell me first',
  'before you',
  'before that',
  'after you',
  'on condition',
  '但',
  '不过',
  '可是',
  '只是',
  '如果',
  '只要',
  '前提',
  '除非',
  '先告诉',
  '先说',
  '先查',
  '先问',
  '先确认',
  '先帮我查',
  '之前先',
];

/**
 * Questions: a turn ending with `?`, `？` or a question particle (吗 呢 么 嘛), or containing one of
 * these question words.
 */
export const QUESTION: CueTable = {
  start: [
    'how',
    'what',
    'why',
    'when',
    'where',
    'which',
    'who',
    'whose',
    'is there',
    'are there',
    'is it',
    'is that',
    'can you',
    'could you',
    'would you',
    'will it',
    'will there',
    'do you',
    'does it',
    'did you',
    'can i',
    'should i',
  ],
  anywhere: [
    'how much',
    'how many',
    'how long',
    'what is',
    "what's",
    'is there a fee',
    '多少',
    '为什么',
    '怎么',
    '哪个',
    '哪里',
    '哪儿',
    '哪张',
    '哪笔',
    '几点',
    '几号',
    '是不是',
    '有没有',
    '能不能',
    '可不可以',
    '会不会',
    '要不要',
    '对不对',
    '行不行',
    '什么',
  ],
};

/** Question words' look-alikes removed before looking for question words (没什么 = nothing). */
export const NOT_QUESTIONS: readonly string[] = ['没什么', '不怎么', '什么都'];

/** Sentence-final question particles (Mandarin), checked at the end of the turn. */
export const QUESTION_PARTICLES: readonly string[] = ['吗', '呢', '么', '嘛'];

/** Cues of an agent turn asking for confirmation, besides a question mark. */
export const CONFIRM_REQUEST_CUES: readonly string[] = [
  '确认',
  '是否',
  '可以吗',
  '好吗',
  '行吗',
  '对吗',
  '要不要',
  '需要我',
  'confirm',
  'shall i',
  'should i',
  'would you like',
  'do you want',
  'ok to',
  'okay to',
  'go ahead',
  'proceed',
];

/**
 * Threat detection (`threats.ts`), layer 1: pressure for a promise, always a threat ("必须今天",
 * "不还就", "or else"). Lower case; plain substrings.
 */
export const PRESSURE_CUES: readonly string[] = [
  '不还就',
  '不交就',
  '不续就',
  '必须今天',
  '今天必须',
  '今天就得',
  '后果自负',
  '别怪我',
  'or else',
  'you have no choice',
  'you must pay today',
];

/**
 * Threat detection, layer 1: harm to the callee's person or to people around them (home visits,
 * detention, family, employer, neighbours: telling third parties about a debt), always a threat.
 */
export const HARM_CUES: readonly string[] = [
  '上门',
  '去你家',
  '去您家',
  '到你家',
  '拘留',
  '坐牢',
  '抓你',
  '抓起来',
  '你家人',
  '您家人',
  '你的家人',
  '您的家人',
  '你单位',
  '您单位',
  '你们单位',
  '你同事',
  '您同事',
  '你邻居',
  '您邻居',
  '你孩子',
  '您孩子',
  '孩子学校',
  'arrest',
  'jail',
  'prison',
  'your family',
  'your employer',
  'your boss',
  'your neighbo',
  'your kids',
  'your children',
  'your door',
  'your home',
];

/**
 * Threat detection, layer 2: terms of a consequence held over the callee (a lawsuit, a court,
 * a blacklist, a policy lapsing at once). A sentence with one is a threat unless it states a
 * consequence the domain allows (`AllowedConsequence`) covering every such term in it.
 */
export const CONSEQUENCE_CUES: readonly string[] = [
  '起诉',
  '告你',
  '法院',
  '黑名单',
  '马上失效',
  'sue you',
  'to court',
  'in court',
  'blacklist',
];

/**
 * Threat detection, layer 2: topics that are facts in a plain statement ("其中滞纳金800元",
 * "免除滞纳金") and a consequence with a future or modal marker ("您的征信会受影响"). In a sentence
 * with a marker they count as {@link CONSEQUENCE_CUES}.
 */
export const CONSEQUENCE_TOPICS: readonly string[] = [
  '征信',
  '罚款',
  '滞纳金',
  'credit record',
  'credit report',
  'be fined',
  'a fine',
  'late fee',
];

/**
 * Future or modal markers that make a {@link CONSEQUENCE_TOPICS} topic a stated consequence (not
 * the agent's own "我将为您…", which announces an action).
 */
export const CONSEQUENCE_MARKERS: RegExp =
  /会|(?<!我)将|可能|恐怕|要被|就要|得|让你|让您|叫你|\b(?:will|won't|could|might|may|going to|gonna)\b|'ll\b/;

/**
 * Threat detection, layer 2: consequence clauses — a negative condition (not paying, not renewing,
 * delay) followed later in the sentence by a future or modal marker. Mandarin and English.
 */
export const CONSEQUENCE_CLAUSES: readonly { conditions: readonly RegExp[]; markers: RegExp }[] = [
  {
    conditions: [
      /(?:如果|要是|假如|假若|若是|万一)[^，,。]{0,12}?(?:不|没|拖|逾期|拒绝)/,
      /再不/,
      /再拖/,
      /一直不/,
      /不然/,
      /否则/,
      /不[^，,。]{1,8}的话/,
    ],
    markers: /会|(?<!我)将|就要|就得|得去|只能|可能|恐怕|后果|让你|让您|叫你/,
  },
  {
    conditions: [/\bif\b[^,.]{0,40}?(?:n't|\bnot\b|\bnever\b|\bfail|\brefuse|\bmiss)/, /\bunless\b/, /\botherwise\b/],
    markers: /\b(?:will|won't|could|might|may|going to|gonna|have to|has to)\b|'ll\b/,
  },
];

/** Conditionals allowed in every domain: the agent offers to call back ("如果您不方便，我会再联系您"). */
export const SAFE_CONDITIONALS: readonly string[] = [
  '再联系您',
  '再联系你',
  '再打给您',
  '再打给你',
  '回访',
  'call you back',
  'call back',
];
