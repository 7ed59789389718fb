/**
 * Tiny encoder–decoder speech recognizers made in the test, in the layouts of the two
 * architectures transformers.js' `automatic-speech-recognition` pipeline runs as sequence to
 * sequence generation: Whisper (`WhisperForConditionalGeneration`: log-mel `input_features`, a
 * forced prompt `<|startoftranscript|> <|en|>|<|zh|> <|transcribe|> <|notimestamps|>`, decoded by
 * `WhisperTokenizer._decode_asr`) and Moonshine (`MoonshineForConditionalGeneration`: raw
 * `input_values`, prompt `<s>`, at most 6 new tokens per second of audio). Each is
 * `onnx/encoder_model.onnx` plus `onnx/decoder_model_merged.onnx` (with `use_cache_branch` and
 * a real decoder key/value cache), `config.json`, `generation_config.json`,
 * `preprocessor_config.json`, `tokenizer.json` and `tokenizer_config.json`.
 *
 * How they hear: the caller says one word per 100 ms ({@link TINY_S2S_WORD_MS}) as a pure tone
 * (word w at {@link tinySeq2SeqToneHz}), then silence. The encoder turns each 100 ms of audio into
 * one frame of token scores (the word whose tone is there; end-of-text when silent). The decoder
 * reads the frame of the token it is predicting: the position of its input token (past cache
 * length plus offset in the step) minus the prompt length minus one, so greedy decoding writes the
 * words in order and ends at the first silent frame.
 */
import { join } from 'node:path';
import {
  f32,
  FLOAT,
  INT64,
  intAttr,
  intsAttr,
  node,
  onnxModel,
  tensor,
  valueInfo,
  wordTokenizerJson,
  writeFiles,
} from './tiny-model.ts';

const BOOL = 9;

/** The words the tiny recognizers know, in token-id order (ids 0…). */
export const TINY_S2S_WORDS = ['pay', 'my', 'balance', 'bill', 'please'] as const;
/** One word (one encoder frame) lasts 100 ms. */
export const TINY_S2S_WORD_MS = 100;
export const TINY_S2S_RATE = 16_000;
/** Samples per word / encoder frame (1,600 at 16 kHz). */
const WORD = (TINY_S2S_RATE * TINY_S2S_WORD_MS) / 1000;
/** Length of {@link tinySeq2SeqSpeech}'s audio (2 s: Moonshine allows 6 tokens per whole second). */
export const TINY_S2S_SECONDS = 2;
/** Width of the decoder's key/value cache (one head). */
const KV = 4;

/**
 * The tone of word `w`: `400 + 200·w` Hz (400…1,200 Hz). A multiple of 40 Hz, so it sits on one
 * bin of Whisper's 400-point FFT at 16 kHz, and of 10 Hz, so a 100 ms frame holds whole cycles.
 */
export function tinySeq2SeqToneHz(w: number): number {
  return 400 + 200 * w;
}

/** Token ids of `text` (space-separated known words). @throws for a word the recognizers do not know. */
function wordIds(text: string): number[] {
  return text.split(' ').map((word) => {
    const id = (TINY_S2S_WORDS as readonly string[]).indexOf(word);
    if (id < 0) throw new Error(`the tiny recognizers cannot say ${JSON.stringify(word)}`);
    return id;
  });
}

/**
 * What the caller says to the tiny recognizers: each word of `text` as 100 ms of its tone
 * (amplitude 0.5) from the first sample, then silence up to {@link TINY_S2S_SECONDS} (16 kHz mono).
 */
export function tinySeq2SeqSpeech(text: string): Float32Array {
  const out = new Float32Array(TINY_S2S_RATE * TINY_S2S_SECONDS);
  wordIds(text).forEach((w, i) => {
    const hz = tinySeq2SeqToneHz(w);
    for (let n = 0; n < WORD; n++) out[i * WORD + n] = 0.5 * Math.sin((2 * Math.PI * hz * n) / TINY_S2S_RATE);
  });
  return out;
}

/** A vocabulary: the words, then the special tokens (in the given order). */
interface Vocab {
  tokens: readonly string[];
  eos: number;
  /** Token ids of the prompt the generation starts from (its length sets the decoder's offset). */
  promptLength: number;
}

/**
 * The merged decoder: `input_ids`, `encoder_hidden_states` [batch, frames, vocab], the cache and
 * `use_cache_branch` → `logits` = 10 × the encoder frame each position predicts (clamped to the
 * last frame), `present.0.decoder.*` = past cache plus the new tokens' embeddings,
 * `present.0.encoder.*` = the encoder states (transformers.js keeps the first step's).
 */
function decoderOnnx(v: Vocab): Uint8Array {
  const V = v.tokens.length;
  const emb = new Float32Array(V * KV);
  for (let i = 0; i < emb.length; i++) emb[i] = ((i * 13) % 7) / 7;
  const scalar = (name: string, x: bigint) => tensor(name, INT64, [], new Uint8Array(new BigInt64Array([x]).buffer));
  const one = (name: string, x: bigint) => tensor(name, INT64, [1], new Uint8Array(new BigInt64Array([x]).buffer));
  const nodes = [
    node('Shape', ['past_key_values.0.decoder.key'], ['past_len'], [intAttr('start', 2), intAttr('end', 3)]),
    node('Shape', ['input_ids'], ['step_len'], [intAttr('start', 1), intAttr('end', 2)]),
    node('Add', ['past_len', 'step_len'], ['end_len']),
    node('Squeeze', ['past_len'], ['from']),
    node('Squeeze', ['end_len'], ['to']),
    node('Range', ['from', 'to', 'step_one'], ['positions']),
    node('Sub', ['positions', 'prompt_offset'], ['wanted']),
    node('Shape', ['encoder_hidden_states'], ['frames'], [intAttr('start', 1), intAttr('end', 2)]),
    node('Sub', ['frames', 'last_one'], ['last_frame']),
    node('Min', ['wanted', 'last_frame'], ['frame']),
    node('Gather', ['encoder_hidden_states', 'frame'], ['scores'], [intAttr('axis', 1)]),
    node('Mul', ['scores', 'sharpen'], ['logits']),
    node('Gather', ['embed_tokens', 'input_ids'], ['hidden'], [intAttr('axis', 0)]),
    node('Unsqueeze', ['hidden', 'head_axis'], ['kv_new']),
    node('Concat', ['past_key_values.0.decoder.key', 'kv_new'], ['present.0.decoder.key'], [intAttr('axis', 2)]),
    node('Concat', ['past_key_values.0.decoder.value', 'kv_new'], ['present.0.decoder.value'], [intAttr('axis', 2)]),
    node('Unsqueeze', ['encoder_hidden_states', 'head_axis'], ['present.0.encoder.key']),
    node('Unsqueeze', ['encoder_hidden_states', 'head_axis'], ['present.0.encoder.value']),
  ];
  return onnxModel('tiny_seq2seq_decoder', [
    ...nodes,
    scalar('step_one', 1n),
    scalar('prompt_offset', BigInt(v.promptLength - 1)),
    one('last_one', 1n),
    one('head_axis', 1n),
    tensor('sharpen', FLOAT, [], f32(Float32Array.of(10))),
    tensor('embed_tokens', FLOAT, [V, KV], f32(emb)),
    valueInfo(11, 'input_ids', INT64, ['batch_size', 'decoder_sequence_length']),
    valueInfo(11, 'encoder_hidden_states', FLOAT, ['batch_size', 'encoder_sequence_length', V]),
    ...['key', 'value'].flatMap((k) => [
      valueInfo(11, `past_key_values.0.decoder.${k}`, FLOAT, ['batch_size', 1, 'past_decoder_sequence_length', KV]),
      valueInfo(11, `past_key_values.0.encoder.${k}`, FLOAT, ['batch_size', 1, 'encoder_sequence_length_out', V]),
    ]),
    valueInfo(11, 'use_cache_branch', BOOL, [1]),
    valueInfo(12, 'logits', FLOAT, ['batch_size', 'decoder_sequence_length', V]),
    ...['key', 'value'].flatMap((k) => [
      valueInfo(12, `present.0.decoder.${k}`, FLOAT, ['batch_size', 1, 'present_decoder_sequence_length', KV]),
      valueInfo(12, `present.0.encoder.${k}`, FLOAT, ['batch_size', 1, 'encoder_sequence_length_out', V]),
    ]),
  ]);
}

/** Per-token bias of an encoder frame: 0 for words, `eos` for end-of-text, −100 for other special tokens. */
function frameBias(v: Vocab, eos: number): Float32Array {
  const bias = new Float32Array(v.tokens.length).fill(-100);
  bias.fill(0, 0, TINY_S2S_WORDS.length);
  bias[v.eos] = eos;
  return bias;
}

/** Ids of the special tokens (all after the words). */
function specialIds(v: Vocab): number[] {
  return v.tokens.map((_, i) => i).slice(TINY_S2S_WORDS.length);
}

// ---------------------------------------------------------------- Moonshine

const MOONSHINE: Vocab = { tokens: [...TINY_S2S_WORDS, '<unk>', '<s>', '</s>'], eos: 7, promptLength: 1 };

/**
 * Moonshine's encoder: `input_values` [batch, samples] → `last_hidden_state` [batch, frames,
 * vocab]. A strided Conv (kernel = stride = 1,600 samples) projects each frame on the cosine and
 * sine of every word's tone, Mul squares them, a MatMul adds each pair into that word's energy
 * (0.25 for a tone of amplitude 0.5), and end-of-text scores 0.1 (so it wins on silence).
 */
function moonshineEncoderOnnx(): Uint8Array {
  const W = TINY_S2S_WORDS.length;
  const V = MOONSHINE.tokens.length;
  const kernel = new Float32Array(2 * W * WORD);
  const pairs = new Float32Array(2 * W * V);
  for (let w = 0; w < W; w++) {
    const hz = tinySeq2SeqToneHz(w);
    for (let n = 0; n < WORD; n++) {
      const x = (2 * Math.PI * hz * n) / TINY_S2S_RATE;
      kernel[2 * w * WORD + n] = (2 / WORD) * Math.cos(x);
      kernel[(2 * w + 1) * WORD + n] = (2 / WORD) * Math.sin(x);
    }
    pairs[2 * w * V + w] = 1;
    pairs[(2 * w + 1) * V + w] = 1;
  }
  return onnxModel('tiny_moonshine_encoder', [
    node('Unsqueeze', ['input_values', 'channel_axis'], ['audio']),
    node('Conv', ['audio', 'tones'], ['proj'], [intsAttr('kernel_shape', [WORD]), intsAttr('strides', [WORD])]),
    node('Transpose', ['proj'], ['proj_t'], [intsAttr('perm', [0, 2, 1])]),
    node('Mul', ['proj_t', 'proj_t'], ['power']),
    node('MatMul', ['power', 'pairs'], ['energy']),
    node('Add', ['energy', 'bias'], ['last_hidden_state']),
    tensor('channel_axis', INT64, [1], new Uint8Array(new BigInt64Array([1n]).buffer)),
    tensor('tones', FLOAT, [2 * W, 1, WORD], f32(kernel)),
    tensor('pairs', FLOAT, [2 * W, V], f32(pairs)),
    tensor('bias', FLOAT, [V], f32(frameBias(MOONSHINE, 0.1))),
    valueInfo(11, 'input_values', FLOAT, ['batch_size', 'num_samples']),
    valueInfo(12, 'last_hidden_state', FLOAT, ['batch_size', 'encoder_sequence_length', V]),
  ]);
}

/**
 * Write the tiny Moonshine recognizer into `<modelsDir>/<id>/` (fp32 file names). Returns the
 * files written, relative to the model folder.
 */
export function writeTinyMoonshine(modelsDir: string, id: string): string[] {
  return writeFiles(join(modelsDir, id), {
    'config.json': JSON.stringify({
      model_type: 'moonshine',
      architectures: ['MoonshineForConditionalGeneration'],
      is_encoder_decoder: true,
      vocab_size: MOONSHINE.tokens.length,
      hidden_size: KV,
      encoder_num_hidden_layers: 1,
      decoder_num_hidden_layers: 1,
      encoder_num_attention_heads: 1,
      decoder_num_attention_heads: 1,
      encoder_num_key_value_heads: 1,
      decoder_num_key_value_heads: 1,
      bos_token_id: 6,
      decoder_start_token_id: 6,
      eos_token_id: 7,
      pad_token_id: 7,
    }),
    'generation_config.json': JSON.stringify({
      bos_token_id: 6,
      decoder_start_token_id: 6,
      eos_token_id: 7,
      pad_token_id: 7,
      max_length: 64,
    }),
    'preprocessor_config.json': JSON.stringify({
      feature_extractor_type: 'Wav2Vec2FeatureExtractor',
      feature_size: 1,
      sampling_rate: TINY_S2S_RATE,
      padding_side: 'right',
      padding_value: 0,
      do_normalize: false,
      return_attention_mask: false,
    }),
    'tokenizer.json': wordTokenizerJson(MOONSHINE.tokens, specialIds(MOONSHINE), '<unk>'),
    'tokenizer_config.json': JSON.stringify({
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: '<s>',
      eos_token: '</s>',
      unk_token: '<unk>',
      model_max_length: 512,
    }),
    'onnx/encoder_model.onnx': moonshineEncoderOnnx(),
    'onnx/decoder_model_merged.onnx': decoderOnnx(MOONSHINE),
  });
}

// ---------------------------------------------------------------- Whisper

const WHISPER: Vocab = {
  tokens: [
    ...TINY_S2S_WORDS,
    '<|endoftext|>',
    '<|startoftranscript|>',
    '<|en|>',
    '<|transcribe|>',
    '<|notimestamps|>',
    '<|zh|>',
  ],
  eos: 5,
  promptLength: 4,
};
/** Whisper's STFT: 400-point FFT, hop 160 (10 ms). */
const N_FFT = 400;
const HOP = 160;
const MEL_PER_WORD = WORD / HOP;

/**
 * The preprocessor's filter bank, one "mel" filter per word, [words][201]: filter w passes only
 * the FFT bin of word w's tone (`hz / 40`), so `input_features` row w is that tone's log power.
 */
function wordFilters(): number[][] {
  return TINY_S2S_WORDS.map((_, w) => {
    const row = new Array<number>(N_FFT / 2 + 1).fill(0);
    row[(tinySeq2SeqToneHz(w) * N_FFT) / TINY_S2S_RATE] = 1;
    return row;
  });
}

/**
 * Whisper's encoder: `input_features` [batch, words, STFT frames] (Whisper's normalized log10
 * power, silence at the floor 2 below the loudest) → `last_hidden_state` [batch, frames, vocab].
 * A strided Conv (kernel = stride = 10 STFT frames) averages each word's row over the 7 STFT
 * frames whose 25 ms window lies inside the 100 ms word; end-of-text scores the mean of all rows
 * plus 0.5 (it wins on silence, loses by at least 1.1 to a word's tone), other special tokens −100.
 */
function whisperEncoderOnnx(): Uint8Array {
  const W = TINY_S2S_WORDS.length;
  const V = WHISPER.tokens.length;
  const K = MEL_PER_WORD;
  const inside = [2, 3, 4, 5, 6, 7, 8];
  const weight = new Float32Array(V * W * K);
  for (const k of inside) {
    for (let w = 0; w < W; w++) {
      weight[(w * W + w) * K + k] = 1 / inside.length;
      weight[(WHISPER.eos * W + w) * K + k] = 1 / (inside.length * W);
    }
  }
  return onnxModel('tiny_whisper_encoder', [
    node(
      'Conv',
      ['input_features', 'frames', 'bias'],
      ['scores'],
      [intsAttr('kernel_shape', [K]), intsAttr('strides', [K])],
    ),
    node('Transpose', ['scores'], ['last_hidden_state'], [intsAttr('perm', [0, 2, 1])]),
    tensor('frames', FLOAT, [V, W, K], f32(weight)),
    tensor('bias', FLOAT, [V], f32(frameBias(WHISPER, 0.5))),
    valueInfo(11, 'input_features', FLOAT, ['batch_size', W, 'feature_frames']),
    valueInfo(12, 'last_hidden_state', FLOAT, ['batch_size', 'encoder_sequence_length', V]),
  ]);
}

/**
 * Token ids of the tiny Whisper's special tokens (after the words): the forced prefix is
 * `sot, <language>, transcribe, notimestamps`, the language `en` or `zh`.
 */
export const TINY_WHISPER_IDS = (() => {
  const id0 = TINY_S2S_WORDS.length;
  return { eot: id0, sot: id0 + 1, en: id0 + 2, transcribe: id0 + 3, notimestamps: id0 + 4, zh: id0 + 5 };
})();

/**
 * Write the tiny Whisper recognizer into `<modelsDir>/<id>/` (multilingual layout: language and
 * task tokens; 2 s chunks instead of 30 s; fp32 file names). Returns the files written.
 */
export function writeTinyWhisper(modelsDir: string, id: string): string[] {
  const ids = TINY_WHISPER_IDS;
  return writeFiles(join(modelsDir, id), {
    'config.json': JSON.stringify({
      model_type: 'whisper',
      architectures: ['WhisperForConditionalGeneration'],
      is_encoder_decoder: true,
      vocab_size: WHISPER.tokens.length,
      d_model: KV,
      num_mel_bins: TINY_S2S_WORDS.length,
      encoder_layers: 1,
      decoder_layers: 1,
      encoder_attention_heads: 1,
      decoder_attention_heads: 1,
      max_source_positions: (TINY_S2S_SECONDS * 1000) / TINY_S2S_WORD_MS,
      max_target_positions: 64,
      bos_token_id: ids.eot,
      eos_token_id: ids.eot,
      pad_token_id: ids.eot,
      decoder_start_token_id: ids.sot,
    }),
    'generation_config.json': JSON.stringify({
      bos_token_id: ids.eot,
      eos_token_id: ids.eot,
      pad_token_id: ids.eot,
      decoder_start_token_id: ids.sot,
      is_multilingual: true,
      lang_to_id: { '<|en|>': ids.en, '<|zh|>': ids.zh },
      task_to_id: { transcribe: ids.transcribe },
      no_timestamps_token_id: ids.notimestamps,
      max_length: 64,
    }),
    'preprocessor_config.json': JSON.stringify({
      feature_extractor_type: 'WhisperFeatureExtractor',
      processor_class: 'WhisperProcessor',
      feature_size: TINY_S2S_WORDS.length,
      sampling_rate: TINY_S2S_RATE,
      hop_length: HOP,
      n_fft: N_FFT,
      chunk_length: TINY_S2S_SECONDS,
      n_samples: TINY_S2S_RATE * TINY_S2S_SECONDS,
      nb_max_frames: (TINY_S2S_RATE * TINY_S2S_SECONDS) / HOP,
      padding_side: 'right',
      padding_value: 0,
      return_attention_mask: false,
      mel_filters: wordFilters(),
    }),
    'tokenizer.json': wordTokenizerJson(WHISPER.tokens, specialIds(WHISPER), '<|endoftext|>'),
    'tokenizer_config.json': JSON.stringify({
      tokenizer_class: 'WhisperTokenizer',
      bos_token: '<|endoftext|>',
      eos_token: '<|endoftext|>',
      unk_token: '<|endoftext|>',
      pad_token: '<|endoftext|>',
      model_max_length: 64,
    }),
    'onnx/encoder_model.onnx': whisperEncoderOnnx(),
    'onnx/decoder_model_merged.onnx': decoderOnnx(WHISPER),
  });
}
