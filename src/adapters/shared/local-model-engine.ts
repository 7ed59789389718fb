/**
 * On-device models through @huggingface/transformers: the loading and generation code shared by
 * the page's model worker (`workers/model.worker.ts`, WebGPU or WASM) and the Node adapter
 * (`src/adapters/node/local-model.ts`, in-process). Files come either from the models folder (a
 * path in Node, a URL path in the page) laid out as `models/manifest.json` says, with remote
 * downloads switched off, or from a host with the Hugging Face Hub's layout (`runtime.hub`), each
 * pinned file checked against the manifest's size and sha256 as it downloads.
 *
 * transformers.js has no tool-call parser: the generated text goes back as it is, and
 * {@link LocalModelClient} takes `<tool_call>` blocks out of it with our parser.
 */
import {
  AutoConfig,
  AutoModelForCTC,
  AutoModelForSpeechSeq2Seq,
  AutomaticSpeechRecognitionPipeline,
  AutoModelForAudioTextToText,
  AutoModelForCausalLM,
  AutoProcessor,
  AutoTokenizer,
  env,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  type Tensor,
} from '@huggingface/transformers';
import type { OpenAiToolSchema } from '../../core/schema/domain.ts';
import type { ModelMessage, SamplingParams } from '../../core/ports/model-client.ts';
import { decodeWav, resample } from '../../core/audio/wav.ts';
import { agentModels, type ManifestModel, type ResolvedLocalAgent } from './local-model-manifest.ts';
import { verifyingFetch } from './model-verify.ts';
import { splitReasoning } from '../../core/participants/reply-text.ts';

/** Where transformers.js runs: `cpu` (onnxruntime-node), `wasm` or `webgpu` (onnxruntime-web). */
export type LocalDevice = 'cpu' | 'wasm' | 'webgpu';

/** Where models come from and where they run. */
export interface LocalRuntime {
  /** The models folder: a directory in Node, a URL path (e.g. `/models/`) in the page. */
  modelsPath: string;
  device: LocalDevice;
  /**
   * Download from a host with the Hugging Face Hub's URL layout instead of the models folder
   * (`<host><repo>/resolve/<revision>/<path>`, each model's `repo` and `revision` from the
   * manifest), through transformers.js' own loading and browser cache (Cache API).
   */
  hub?: HubSource;
}

/** A Hub-layout host and a listener of download progress. */
export interface HubSource {
  /** Absolute URL ending in `/`, e.g. `https://huggingface.co/`. */
  host: string;
  onProgress?(p: DownloadProgress): void;
}

/** One file's download progress, bytes (transformers.js' `progress` events). */
export interface DownloadProgress {
  /** `<repo>/<path>`. */
  file: string;
  loaded: number;
  total: number;
}

/** transformers.js' own fetch, restored whenever files come from the models folder. */
const plainFetch = env.fetch;

/**
 * Point transformers.js at a Hub-layout host: remote models on, local files off, files cached in
 * the browser's Cache API where there is one, else (Node) in transformers.js' file cache
 * (`env.cacheDir`), which onnxruntime-node reads the model from. Files of `models` that the
 * manifest pins are checked as they download (size and sha256, {@link verifyingFetch}).
 */
export function useHub(host: string, models: readonly ManifestModel[] = []): void {
  env.fetch = verifyingFetch(models, host, plainFetch as typeof fetch);
  env.allowRemoteModels = true;
  env.allowLocalModels = false;
  env.remoteHost = host.endsWith('/') ? host : `${host}/`;
  env.remotePathTemplate = '{model}/resolve/{revision}/';
  const browser = typeof caches !== 'undefined';
  env.useBrowserCache = browser;
  env.useFSCache = !browser;
}

/** How transformers.js names model `m` and loads it: its folder id locally, `repo` at `revision` from a hub. */
function source(
  m: ManifestModel,
  hub: HubSource | undefined,
): { name: string; opts: { revision?: string; progress_callback?: (e: unknown) => void } } {
  if (!hub) return { name: m.id, opts: {} };
  const progress = hub.onProgress;
  return {
    name: m.repo,
    opts: {
      revision: m.revision,
      ...(progress
        ? {
            progress_callback: (e: unknown) => {
              const x = e as { status?: string; name?: string; file?: string; loaded?: number; total?: number };
              if (x.status === 'progress' && typeof x.loaded === 'number' && typeof x.total === 'number')
                progress({ file: `${x.name ?? m.repo}/${x.file ?? ''}`, loaded: x.loaded, total: x.total });
            },
          }
        : {}),
    },
  };
}

/** One generation request (the part of a `ModelRequest` an on-device model uses). */
export interface LocalGenerateRequest {
  messages: readonly ModelMessage[];
  tools?: readonly OpenAiToolSchema[];
  sampling: SamplingParams;
  /**
   * BCP-47 language of the conversation (the domain's `language`, e.g. `zh-CN`): the caller audio
   * is transcribed in it by a multilingual Whisper recognizer; absent: transformers.js' default
   * (English).
   */
  language?: string;
}

/** What the model generated, before tool calls are parsed out. */
export interface LocalGeneration {
  /** Decoded text without special tokens; `<think>` blocks removed. */
  text: string;
  token_ids: number[];
  prompt_token_ids: number[];
  /** `stop` at an end token, `length` at `max_tokens`. */
  finish_reason: 'stop' | 'length';
  /**
   * What the ASR model heard in each caller audio part of the request, in order (ASR + LLM
   * agents; empty otherwise). The LLM saw these in place of the audio.
   */
  transcripts: string[];
}

/** A loaded on-device agent. */
export interface LocalEngine {
  generate(request: LocalGenerateRequest): Promise<LocalGeneration>;
  dispose(): Promise<void>;
}

/**
 * Point transformers.js at local files only: no hub downloads (`allowRemoteModels = false`),
 * `localModelPath` = the models folder, and no caches of downloaded files.
 */
export function useLocalModelsOnly(modelsPath: string): void {
  env.fetch = plainFetch;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = modelsPath.endsWith('/') ? modelsPath : `${modelsPath}/`;
  env.useBrowserCache = false;
  env.useFSCache = false;
}

type ChatMessage = {
  role: string;
  content: string;
  tool_calls?: { type: 'function'; function: { name: string; arguments: unknown } }[];
};
type Transcriber = (audio: Float32Array) => Promise<string>;

/**
 * Whisper's language code for BCP-47 tag `tag`: the primary subtag, lower case, with the
 * ISO 639-3 Mandarin / Cantonese codes folded into Whisper's `zh` / `yue` (Whisper names its
 * languages by ISO 639-1 code, see transformers.js' `WHISPER_LANGUAGE_MAPPING`).
 */
export function whisperLanguage(tag: string): string {
  const primary = tag.split(/[-_]/)[0]!.toLowerCase();
  return primary === 'cmn' ? 'zh' : primary;
}

/**
 * Generation options for transcribing in `language` (BCP-47) with a model of `config`: a
 * multilingual Whisper (`generation_config.is_multilingual`) gets transformers.js' own
 * `language` (see {@link whisperLanguage}) and `task: 'transcribe'`, which force the decoder's
 * prefix `<|startoftranscript|> <|lang|> <|transcribe|>`; English-only Whisper, Moonshine and CTC
 * models take no language (none, or transformers.js refuses or ignores it).
 */
export function asrOptions(
  modelType: string,
  generationConfig: { is_multilingual?: boolean } | null | undefined,
  language: string | undefined,
): { language?: string; task?: 'transcribe' } {
  if (!language || modelType !== 'whisper' || !generationConfig?.is_multilingual) return {};
  return { language: whisperLanguage(language), task: 'transcribe' };
}

/** Caller speech for ASR: WAV → mono float at 16 kHz. */
function audioAt16k(base64: string): Float32Array {
  const wav = decodeWav(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
  return wav.sampleRate === 16_000 ? wav.samples : resample(wav.samples, wav.sampleRate, 16_000);
}

function jsonOrText(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/**
 * Chat-template messages. Assistant tool calls keep their arguments as objects (Qwen-style
 * templates print them back as `<tool_call>` JSON); user audio becomes its transcript through
 * `transcribe`, or a fixed `[caller audio]` marker when there is none.
 */
async function chatMessages(messages: readonly ModelMessage[], transcribe: Transcriber | null): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user' && typeof m.content !== 'string') {
      const parts: string[] = [];
      for (const p of m.content) {
        if (p.type === 'text') parts.push(p.text);
        else parts.push(transcribe ? await transcribe(audioAt16k(p.base64)) : '[caller audio]');
      }
      out.push({ role: 'user', content: parts.join(' ').trim() });
    } else if (m.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: m.content ?? '',
        ...(m.tool_calls?.length
          ? {
              tool_calls: m.tool_calls.map((c) => ({
                type: 'function' as const,
                function: { name: c.name, arguments: jsonOrText(c.arguments) },
              })),
            }
          : {}),
      });
    } else if (m.role === 'tool') out.push({ role: 'tool', content: m.content });
    else out.push({ role: m.role, content: m.content as string });
  }
  return out;
}

/** transformers.js generation options from our sampling (greedy at temperature 0). */
export function generationOptions(s: SamplingParams): Record<string, unknown> {
  const sample = s.temperature > 0;
  return {
    max_new_tokens: s.max_tokens,
    do_sample: sample,
    ...(sample ? { temperature: s.temperature, top_p: s.top_p, ...(s.top_k !== null ? { top_k: s.top_k } : {}) } : {}),
  };
}

function ids(t: Tensor): number[] {
  return Array.from(t.data as BigInt64Array, Number);
}

/**
 * The ASR model as a transcriber: transformers.js's `automatic-speech-recognition` pipeline,
 * which picks the decoding by `config.json`'s `model_type` (whisper / moonshine: encoder-decoder
 * generation; wav2vec2 / hubert / … CTC: one encoder pass, greedy labels collapsed by the
 * tokenizer's CTC decoder). Assembled from its parts rather than with `pipeline()`, which in
 * transformers.js 4.3.2 reads `config.json` at `main` to list the files whatever `revision` says
 * (a pinned revision must be the only one read).
 */
async function loadTranscriber(m: ManifestModel, device: LocalDevice, hub?: HubSource): Promise<LocalTranscriber> {
  const { name, opts } = source(m, hub);
  const config = await AutoConfig.from_pretrained(name, opts);
  const type = config.model_type ?? '';
  const model = [AutoModelForSpeechSeq2Seq, AutoModelForCTC].find((c) => c.supports(type));
  if (!model) throw new Error(`${m.id}: transformers.js has no speech recognition model of type "${type}"`);
  const [tokenizer, processor, loaded] = await Promise.all([
    AutoTokenizer.from_pretrained(name, opts),
    AutoProcessor.from_pretrained(name, opts),
    model.from_pretrained(name, { ...opts, config, device, dtype: m.dtype as never }),
  ]);
  const asr = new AutomaticSpeechRecognitionPipeline({
    task: 'automatic-speech-recognition',
    model: loaded,
    tokenizer,
    processor,
  } as never);
  const generationConfig = (loaded as { generation_config?: { is_multilingual?: boolean } }).generation_config;
  return {
    async transcribe(audio, language) {
      const r = (await asr(audio, asrOptions(type, generationConfig, language) as never)) as
        | { text: string }
        | { text: string }[];
      return (Array.isArray(r) ? r.map((x) => x.text).join(' ') : r.text).trim();
    },
    dispose: () => asr.dispose(),
  };
}

/** A loaded speech recognizer: 16 kHz mono samples in, text out. */
export interface LocalTranscriber {
  /**
   * What the recognizer hears in `audio` (16 kHz mono), trimmed; `language` (BCP-47, the
   * domain's) is the language a multilingual Whisper decodes in (see {@link asrOptions}).
   */
  transcribe(audio: Float32Array, language?: string): Promise<string>;
  dispose(): Promise<void>;
}

/**
 * Load speech recognizer `m` alone (the page's microphone turns) from the models folder or, with
 * `runtime.hub`, from a Hub-layout host (pinned files checked as they download).
 * @throws (rejects) when a file is missing, refused or the model cannot be loaded.
 */
export async function loadLocalTranscriber(m: ManifestModel, runtime: LocalRuntime): Promise<LocalTranscriber> {
  if (runtime.hub) useHub(runtime.hub.host, [m]);
  else useLocalModelsOnly(runtime.modelsPath);
  return loadTranscriber(m, runtime.device, runtime.hub);
}

/**
 * Load an agent's models from the models folder (or, with `runtime.hub`, from a Hub-layout host)
 * and return its engine. Models are loaded with the manifest's `dtype`; without `hub` nothing is
 * fetched from the network.
 * @throws (rejects) when a file is missing or a model cannot be loaded.
 */
export async function loadLocalEngine(agent: ResolvedLocalAgent, runtime: LocalRuntime): Promise<LocalEngine> {
  const { device, hub } = runtime;
  if (hub) useHub(hub.host, agentModels(agent));
  else useLocalModelsOnly(runtime.modelsPath);
  const asr = agent.asr ? await loadTranscriber(agent.asr, device, hub) : null;
  const main = agent.llm ?? agent.audio;
  if (!main) throw new Error(`on-device agent ${agent.id} has no language model`);
  const { name, opts: from } = source(main, hub);
  const opts = { device, dtype: main.dtype as never, ...from };
  const tokenizer: PreTrainedTokenizer = await AutoTokenizer.from_pretrained(name, from);
  const isAudio = agent.audio !== null;
  const model: PreTrainedModel = isAudio
    ? await AutoModelForAudioTextToText.from_pretrained(name, opts)
    : await AutoModelForCausalLM.from_pretrained(name, opts);
  const processor = isAudio ? await AutoProcessor.from_pretrained(name, from) : null;

  return {
    async generate(request) {
      const transcripts: string[] = [];
      const transcribe: Transcriber | null = asr
        ? async (audio) => {
            const text = await asr.transcribe(audio, request.language);
            transcripts.push(text);
            return text;
          }
        : null;
      const chat = await chatMessages(request.messages, transcribe);
      const prompt = tokenizer.apply_chat_template(
        chat as never,
        {
          ...(request.tools?.length ? { tools: request.tools as never } : {}),
          add_generation_prompt: true,
          tokenize: false,
          enable_thinking: false,
        } as never,
      ) as unknown as string;
      let inputs: Record<string, Tensor>;
      if (processor) {
        // Audio-text-to-text: the latest caller audio goes to the processor with the prompt.
        const parts = [...request.messages]
          .reverse()
          .flatMap((m) => (m.role === 'user' && typeof m.content !== 'string' ? m.content : []));
        const part = parts.find((p) => p.type === 'audio');
        inputs = await (processor as unknown as (t: string, a?: Float32Array) => Promise<Record<string, Tensor>>)(
          prompt,
          part && part.type === 'audio' ? audioAt16k(part.base64) : undefined,
        );
      } else {
        inputs = tokenizer(prompt, { add_special_tokens: false }) as unknown as Record<string, Tensor>;
      }
      const promptIds = ids(inputs.input_ids!);
      const out = (await model.generate({ ...inputs, ...generationOptions(request.sampling) } as never)) as Tensor;
      const all = ids(out);
      const gen = all.slice(promptIds.length);
      const eos = new Set(
        [model.generation_config?.eos_token_id, (model.config as { eos_token_id?: number | number[] }).eos_token_id]
          .flat()
          .filter((x): x is number => typeof x === 'number'),
      );
      const stopped = gen.length > 0 && eos.has(gen[gen.length - 1]!);
      const decoded = tokenizer.decode(gen, { skip_special_tokens: true });
      const text = splitReasoning(decoded).text.trim();
      return {
        text,
        token_ids: gen,
        prompt_token_ids: promptIds,
        finish_reason: stopped || gen.length < request.sampling.max_tokens ? 'stop' : 'length',
        transcripts,
      };
    },
    async dispose() {
      await model.dispose();
      await asr?.dispose();
    },
  };
}
