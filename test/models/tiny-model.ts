/**
 * A tiny causal language model made in the test, in the layout transformers.js loads from a
 * local models folder: `config.json`, `generation_config.json`, `tokenizer.json`,
 * `tokenizer_config.json` and `onnx/model.onnx`.
 *
 * The ONNX file is written by a small protobuf writer here (field numbers from onnx.proto). The
 * graph is a 2-layer "llama" decoder with a real key/value cache: each layer's `present.<i>.key`
 * / `.value` is the past cache with the new tokens' embeddings appended on the sequence axis, so
 * transformers.js threads the cache through generation exactly as for a real model. Its logits
 * are a bigram table (`logits = L[input_ids]`), so greedy decoding follows a chain we choose.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// ---------------------------------------------------------------- protobuf writer

type Field = Uint8Array;

function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Varint field (wire type 0). */
function int(field: number, n: number | bigint): Field {
  return Uint8Array.from([...varint((field << 3) | 0), ...varint(n)]);
}
/** Length-delimited field (wire type 2). */
function bytes(field: number, data: Uint8Array): Field {
  return concat([Uint8Array.from([...varint((field << 3) | 2), ...varint(data.length)]), data]);
}
function str(field: number, s: string): Field {
  return bytes(field, new TextEncoder().encode(s));
}
function msg(field: number, parts: readonly Field[]): Field {
  return bytes(field, concat(parts));
}

export const FLOAT = 1;
export const INT64 = 7;

/** A graph input or output: name, element type, shape (numbers fixed, strings symbolic). */
export function valueInfo(field: number, name: string, elem: number, shape: readonly (number | string)[]): Field {
  const dims = shape.map((d) => msg(1, [typeof d === 'number' ? int(1, d) : str(2, d)]));
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, elem), msg(2, dims)])])]);
}

export function tensor(name: string, elem: number, dims: readonly number[], raw: Uint8Array): Field {
  return msg(5, [...dims.map((d) => int(1, d)), int(2, elem), str(8, name), bytes(9, raw)]);
}

export function node(
  op: string,
  inputs: readonly string[],
  outputs: readonly string[],
  attrs: readonly Field[] = [],
): Field {
  return msg(1, [
    ...inputs.map((i) => str(1, i)),
    ...outputs.map((o) => str(2, o)),
    str(3, `${op}_${outputs[0]}`),
    str(4, op),
    ...attrs,
  ]);
}

export function intAttr(name: string, value: number): Field {
  return msg(5, [str(1, name), int(3, value), int(20, 2)]);
}

export function intsAttr(name: string, values: readonly number[]): Field {
  return msg(5, [str(1, name), ...values.map((v) => int(8, v)), int(20, 7)]);
}

export function f32(a: Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A ModelProto (IR version 8, opset 17) around one graph's fields. */
export function onnxModel(graphName: string, graph: readonly Field[]): Uint8Array {
  return concat([
    int(1, 8),
    str(2, 'switchboard-test'),
    msg(7, [...graph, str(2, graphName)]),
    msg(8, [str(1, ''), int(2, 17)]),
  ]);
}

// ---------------------------------------------------------------- the tiny model

/** The vocabulary, by id. Words are whole tokens (WordPiece over whitespace-split text). */
export const TINY_VOCAB = [
  '[UNK]',
  '<|im_start|>',
  '<|im_end|>',
  'assistant',
  'user',
  'system',
  'tool',
  'Let',
  'me',
  'check.',
  '<tool_call>',
  '{"name":',
  '"get_bills",',
  '"arguments":',
  '{"customer_id":',
  '"C1002"}}',
  '</tool_call>',
  'Your',
  'bill',
  'is',
  'paid.',
  '###STOP###',
  // What the tiny ASR model hears (see TINY_ASR_TEXT): known words, so its transcript reaches
  // the LLM as real tokens rather than [UNK].
  'pay',
  'my',
  'balance',
] as const;

export const TINY_EOS = 2;
const HIDDEN = 4;
const LAYERS = 2;

/**
 * Greedy successor of each token id: after `assistant` the model says "Let me check." and calls
 * `get_bills` for C1002; after a `tool` turn it says "Your bill is paid." and ends the call;
 * everything else ends the reply.
 */
export const TINY_NEXT: Readonly<Record<number, number>> = {
  3: 7, // assistant → Let
  7: 8,
  8: 9,
  9: 10,
  10: 11,
  11: 12,
  12: 13,
  13: 14,
  14: 15,
  15: 16,
  16: TINY_EOS,
  6: 17, // tool → Your
  17: 18,
  18: 19,
  19: 20,
  20: 21, // paid. → ###STOP###
  21: TINY_EOS,
};

/** The ONNX bytes of the tiny model. */
export function tinyOnnx(): Uint8Array {
  const V = TINY_VOCAB.length;
  const logits = new Float32Array(V * V);
  for (let t = 0; t < V; t++) {
    const next = TINY_NEXT[t] ?? TINY_EOS;
    for (let u = 0; u < V; u++) logits[t * V + u] = u === next ? 10 : -((u * 7 + t * 3) % 5) / 10;
  }
  const emb = new Float32Array(V * HIDDEN);
  for (let i = 0; i < emb.length; i++) emb[i] = ((i * 37) % 11) / 11 - 0.5;
  const axes = new BigInt64Array([1n]);

  const nodes: Field[] = [
    node('Gather', ['lm_table', 'input_ids'], ['logits'], [intAttr('axis', 0)]),
    node('Gather', ['embed_tokens', 'input_ids'], ['hidden'], [intAttr('axis', 0)]),
    node('Unsqueeze', ['hidden', 'head_axis'], ['kv_new']),
  ];
  const inputs: Field[] = [
    valueInfo(11, 'input_ids', INT64, ['batch_size', 'sequence_length']),
    valueInfo(11, 'attention_mask', INT64, ['batch_size', 'total_sequence_length']),
    valueInfo(11, 'position_ids', INT64, ['batch_size', 'sequence_length']),
  ];
  const outputs: Field[] = [valueInfo(12, 'logits', FLOAT, ['batch_size', 'sequence_length', V])];
  for (let l = 0; l < LAYERS; l++) {
    for (const kind of ['key', 'value']) {
      inputs.push(
        valueInfo(11, `past_key_values.${l}.${kind}`, FLOAT, ['batch_size', 1, 'past_sequence_length', HIDDEN]),
      );
      outputs.push(valueInfo(12, `present.${l}.${kind}`, FLOAT, ['batch_size', 1, 'total_sequence_length', HIDDEN]));
      nodes.push(
        node('Concat', [`past_key_values.${l}.${kind}`, 'kv_new'], [`present.${l}.${kind}`], [intAttr('axis', 2)]),
      );
    }
  }
  return onnxModel('tiny_llama', [
    ...nodes,
    tensor('lm_table', FLOAT, [V, V], f32(logits)),
    tensor('embed_tokens', FLOAT, [V, HIDDEN], f32(emb)),
    tensor('head_axis', INT64, [1], new Uint8Array(axes.buffer)),
    ...inputs,
    ...outputs,
  ]);
}

/**
 * A chat template in the Qwen style, with whitespace between words so each is one token. A bigram
 * model sees only the last prompt token, so after a tool result the generation prompt is
 * `<|im_start|> tool` (standing in for the attention a real model has): the reply then reports
 * the result instead of calling the tool again.
 */
const CHAT_TEMPLATE =
  "{% for m in messages %}<|im_start|> {{ m.role }} {{ m.content }} <|im_end|> {% endfor %}{% if add_generation_prompt %}<|im_start|> {% if messages[-1].role == 'tool' %}tool{% else %}assistant{% endif %}{% endif %}";

/**
 * A `tokenizer.json` whose tokens are whole words (WordPiece over whitespace-split text), with the
 * tokens of `specialIds` marked special. The subword prefix is not `##`, so a word such as
 * `###STOP###` stays one whole word when decoded.
 */
export function wordTokenizerJson(tokens: readonly string[], specialIds: readonly number[], unk: string): string {
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specialIds.map((id) => ({
      id,
      content: tokens[id],
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '@@', cleanup: false },
    model: {
      type: 'WordPiece',
      unk_token: unk,
      continuing_subword_prefix: '@@',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(tokens.map((w, i) => [w, i])),
    },
  });
}

/**
 * Write the tiny model into `<modelsDir>/<id>/`, the layout transformers.js expects for
 * `from_pretrained(id)` with `env.localModelPath = modelsDir`. Returns the files written
 * (relative to the model folder).
 */
export function writeTinyModel(modelsDir: string, id: string): string[] {
  const dir = join(modelsDir, id);
  const files: Record<string, string | Uint8Array> = {
    'config.json': JSON.stringify({
      model_type: 'llama',
      architectures: ['LlamaForCausalLM'],
      vocab_size: TINY_VOCAB.length,
      hidden_size: HIDDEN,
      num_hidden_layers: LAYERS,
      num_attention_heads: 1,
      num_key_value_heads: 1,
      head_dim: HIDDEN,
      bos_token_id: 1,
      eos_token_id: TINY_EOS,
    }),
    'generation_config.json': JSON.stringify({ bos_token_id: 1, eos_token_id: TINY_EOS, do_sample: false }),
    'tokenizer.json': wordTokenizerJson(TINY_VOCAB, [1, 2], '[UNK]'),
    'tokenizer_config.json': JSON.stringify({
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: '<|im_start|>',
      eos_token: '<|im_end|>',
      unk_token: '[UNK]',
      pad_token: '<|im_end|>',
      model_max_length: 512,
      chat_template: CHAT_TEMPLATE,
    }),
    'onnx/model.onnx': tinyOnnx(),
  };
  return writeFiles(dir, files);
}

export function writeFiles(dir: string, files: Record<string, string | Uint8Array>): string[] {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
  return Object.keys(files);
}

// ---------------------------------------------------------------- the tiny CTC speech recognizer

/**
 * CTC labels of the tiny recognizer, by id, as a wav2vec2 vocabulary has them: `<pad>` is the
 * CTC blank, `|` the word delimiter, then the letters it can hear.
 */
export const TINY_ASR_VOCAB = [
  '<pad>',
  '<s>',
  '</s>',
  '<unk>',
  '|',
  'p',
  'a',
  'y',
  'm',
  'b',
  'l',
  'n',
  'c',
  'e',
] as const;
/** Samples per output frame (20 ms at 16 kHz, wav2vec2's frame rate). */
export const TINY_ASR_FRAME = 320;
export const TINY_ASR_RATE = 16_000;
/** What {@link tinyAsrSpeech} says. No letter follows itself: transformers.js drops special blanks before collapsing repeats. */
export const TINY_ASR_TEXT = 'pay my balance';

/**
 * The tone of each label: label `c` (1…) is a sine at DFT bin `4 + 2c` of a frame, i.e.
 * `(4 + 2c) · 50` Hz (300…1,500 Hz); every frame holds a whole number of its cycles.
 */
export function tinyAsrToneHz(label: number): number {
  return ((4 + 2 * label) * TINY_ASR_RATE) / TINY_ASR_FRAME;
}

/**
 * The ONNX bytes of the tiny recognizer, a wav2vec2-for-CTC stand-in: `input_values` [batch,
 * samples] → `logits` [batch, frames, labels]. A strided Conv (kernel = stride = one frame) takes
 * each frame's cosine and sine projections at every label's tone (a DFT at those bins), Mul
 * squares them, a MatMul adds each cos²+sin² pair into that label's energy (phase-independent),
 * and a bias on `<pad>` makes silent frames the CTC blank.
 */
export function tinyAsrOnnx(): Uint8Array {
  const V = TINY_ASR_VOCAB.length;
  const F = TINY_ASR_FRAME;
  const kernel = new Float32Array(2 * V * F);
  const pairs = new Float32Array(2 * V * V);
  for (let c = 1; c < V; c++) {
    const bin = 4 + 2 * c;
    for (let n = 0; n < F; n++) {
      const w = (2 * Math.PI * bin * n) / F;
      kernel[2 * c * F + n] = (2 / F) * Math.cos(w);
      kernel[(2 * c + 1) * F + n] = (2 / F) * Math.sin(w);
    }
    pairs[2 * c * V + c] = 1;
    pairs[(2 * c + 1) * V + c] = 1;
  }
  const bias = new Float32Array(V);
  bias[0] = 0.1;
  const axes = new BigInt64Array([1n]);
  return onnxModel('tiny_ctc', [
    node('Unsqueeze', ['input_values', 'channel_axis'], ['audio']),
    node('Conv', ['audio', 'dft'], ['proj'], [intsAttr('kernel_shape', [F]), intsAttr('strides', [F])]),
    node('Transpose', ['proj'], ['proj_t'], [intsAttr('perm', [0, 2, 1])]),
    node('Mul', ['proj_t', 'proj_t'], ['power']),
    node('MatMul', ['power', 'pairs'], ['energy']),
    node('Add', ['energy', 'blank_bias'], ['logits']),
    tensor('channel_axis', INT64, [1], new Uint8Array(axes.buffer)),
    tensor('dft', FLOAT, [2 * V, 1, F], f32(kernel)),
    tensor('pairs', FLOAT, [2 * V, V], f32(pairs)),
    tensor('blank_bias', FLOAT, [V], f32(bias)),
    valueInfo(11, 'input_values', FLOAT, ['batch_size', 'sequence_length']),
    valueInfo(12, 'logits', FLOAT, ['batch_size', 'frames', V]),
  ]);
}

/**
 * Synthetic caller speech the tiny recognizer transcribes as `text` (letters of
 * {@link TINY_ASR_VOCAB}, spaces as `|`): a silent frame, then per character two frames of its
 * tone and one silent frame (16 kHz mono).
 */
export function tinyAsrSpeech(text: string = TINY_ASR_TEXT): Float32Array {
  const F = TINY_ASR_FRAME;
  const labels = [...text].map((ch) => {
    const id = (TINY_ASR_VOCAB as readonly string[]).indexOf(ch === ' ' ? '|' : ch);
    if (id < 4) throw new Error(`the tiny recognizer cannot say ${JSON.stringify(ch)}`);
    return id;
  });
  const out = new Float32Array(F * (1 + 3 * labels.length));
  labels.forEach((label, i) => {
    const start = F * (1 + 3 * i);
    const hz = tinyAsrToneHz(label);
    for (let n = 0; n < 2 * F; n++) out[start + n] = 0.5 * Math.sin((2 * Math.PI * hz * n) / TINY_ASR_RATE + i);
  });
  return out;
}

/**
 * Write the tiny recognizer into `<modelsDir>/<id>/` in a wav2vec2 model's layout
 * (`config.json` with `model_type: wav2vec2`, a `Wav2Vec2FeatureExtractor`
 * `preprocessor_config.json`, a CTC-decoder `tokenizer.json`, `onnx/model.onnx`), which
 * transformers.js's `automatic-speech-recognition` pipeline runs as `Wav2Vec2ForCTC`. Returns
 * the files written.
 */
export function writeTinyAsrModel(modelsDir: string, id: string): string[] {
  const vocab = Object.fromEntries(TINY_ASR_VOCAB.map((w, i) => [w, i]));
  return writeFiles(join(modelsDir, id), {
    'config.json': JSON.stringify({
      model_type: 'wav2vec2',
      architectures: ['Wav2Vec2ForCTC'],
      vocab_size: TINY_ASR_VOCAB.length,
      pad_token_id: 0,
      bos_token_id: 1,
      eos_token_id: 2,
      ctc_loss_reduction: 'mean',
    }),
    'preprocessor_config.json': JSON.stringify({
      feature_extractor_type: 'Wav2Vec2FeatureExtractor',
      feature_size: 1,
      sampling_rate: TINY_ASR_RATE,
      padding_side: 'right',
      padding_value: 0,
      do_normalize: true,
      return_attention_mask: false,
    }),
    'tokenizer.json': JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [0, 1, 2, 3].map((i) => ({
        id: i,
        content: TINY_ASR_VOCAB[i],
        single_word: false,
        lstrip: true,
        rstrip: true,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: { type: 'CTC', pad_token: '<pad>', word_delimiter_token: '|', cleanup: true },
      model: { type: 'WordLevel', vocab, unk_token: '<unk>' },
    }),
    'tokenizer_config.json': JSON.stringify({
      tokenizer_class: 'Wav2Vec2CTCTokenizer',
      bos_token: '<s>',
      eos_token: '</s>',
      unk_token: '<unk>',
      pad_token: '<pad>',
      word_delimiter_token: '|',
      do_lower_case: false,
    }),
    'onnx/model.onnx': tinyAsrOnnx(),
  });
}

// ---------------------------------------------------------------- the tiny VITS text-to-speech model

/**
 * Tokens of the tiny TTS model, by id: `<pad>` (id 0, silent, never produced for text), then
 * every character it speaks. The tokenizer lower-cases text and drops any other character.
 */
export const TINY_TTS_VOCAB = ['<pad>', ' ', "'", ...'abcdefghijklmnopqrstuvwxyz0123456789'] as const;
/** The tiny model's native rate: not 16 kHz, so the adapter must resample. */
export const TINY_TTS_RATE = 24_000;
/** Samples per character at {@link TINY_TTS_RATE} (100 ms; 1,600 samples at 16 kHz). */
export const TINY_TTS_BURST = 2_400;

/** The tone of token `id` (≥ 1): `200 + 50·id` Hz (250…2,050 Hz), a whole number of cycles per 100 ms. */
export function tinyTtsToneHz(id: number): number {
  return 200 + 50 * id;
}

/** The token ids the tiny TTS tokenizer makes of `text` (what the model speaks, in order). */
export function tinyTtsTokens(text: string): number[] {
  return [...text.toLowerCase()].map((ch) => (TINY_TTS_VOCAB as readonly string[]).indexOf(ch)).filter((id) => id > 0);
}

/**
 * The ONNX bytes of the tiny TTS model, a VITS stand-in with its interface: `input_ids` [batch,
 * tokens] → `waveform` [batch, samples]. A Gather takes each token's row of a burst table (a
 * {@link TINY_TTS_BURST}-sample sine at {@link tinyTtsToneHz}, amplitude `amplitude`, 0.5 unless
 * given) and a Reshape concatenates the bursts, so `samples = tokens × TINY_TTS_BURST` exactly.
 */
export function tinyTtsOnnx(amplitude = 0.5): Uint8Array {
  const V = TINY_TTS_VOCAB.length;
  const L = TINY_TTS_BURST;
  const table = new Float32Array(V * L);
  for (let id = 1; id < V; id++) {
    const hz = tinyTtsToneHz(id);
    for (let n = 0; n < L; n++) table[id * L + n] = amplitude * Math.sin((2 * Math.PI * hz * n) / TINY_TTS_RATE);
  }
  const shape = new BigInt64Array([0n, -1n]);
  return onnxModel('tiny_vits', [
    node('Gather', ['bursts', 'input_ids'], ['frames'], [intAttr('axis', 0)]),
    node('Reshape', ['frames', 'flat_shape'], ['waveform']),
    tensor('bursts', FLOAT, [V, L], f32(table)),
    tensor('flat_shape', INT64, [2], new Uint8Array(shape.buffer)),
    valueInfo(11, 'input_ids', INT64, ['batch_size', 'sequence_length']),
    valueInfo(12, 'waveform', FLOAT, ['batch_size', 'num_samples']),
  ]);
}

/**
 * Write the tiny TTS model into `<modelsDir>/<id>/` in an MMS-TTS (VITS) model's layout:
 * `config.json` (`model_type: vits`, `sampling_rate`), a character `tokenizer.json` (lower-case,
 * drop unknown characters, split into characters, one id each), `tokenizer_config.json`
 * (`VitsTokenizer`) and `onnx/model.onnx`, which transformers.js's `text-to-speech` pipeline runs
 * as `VitsModel`, with bursts of `amplitude` (default 0.5; 1 is full scale). Returns the files written.
 */
export function writeTinyTtsModel(modelsDir: string, id: string, amplitude = 0.5): string[] {
  const vocab = Object.fromEntries(TINY_TTS_VOCAB.map((w, i) => [w, i]));
  return writeFiles(join(modelsDir, id), {
    'config.json': JSON.stringify({
      model_type: 'vits',
      architectures: ['VitsModel'],
      vocab_size: TINY_TTS_VOCAB.length,
      sampling_rate: TINY_TTS_RATE,
      pad_token_id: 0,
    }),
    'tokenizer.json': JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [
        { id: 0, content: '<pad>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      ],
      normalizer: {
        type: 'Sequence',
        normalizers: [{ type: 'Lowercase' }, { type: 'Replace', pattern: { Regex: "[^ 'a-z0-9]" }, content: '' }],
      },
      pre_tokenizer: { type: 'Split', pattern: { Regex: '.' }, behavior: 'Isolated', invert: false },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab, unk_token: '<pad>' },
    }),
    'tokenizer_config.json': JSON.stringify({
      tokenizer_class: 'VitsTokenizer',
      pad_token: '<pad>',
      unk_token: '<pad>',
      add_blank: false,
      normalize: true,
      model_max_length: 4096,
    }),
    'onnx/model.onnx': tinyTtsOnnx(amplitude),
  });
}
