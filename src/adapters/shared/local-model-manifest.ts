/**
 * The manifest of on-device models (`models/manifest.json`): which models the page and the CLI
 * may load locally, the exact files each needs (with sha256 and license), and which agents
 * (`--agent local:<id>`) are built from them. Weights are never committed; `npm run models:fetch`
 * downloads the listed files on a machine with internet and checks their sha256.
 *
 * Files of a model live in `<models folder>/<model id>/<path>`, which is where transformers.js
 * looks for `from_pretrained('<model id>')` with `env.localModelPath = <models folder>`.
 * No `node:*` imports: the page's model worker uses this module too.
 */
import { z } from 'zod';
import { InputError } from '../../core/errors.ts';

/** One file of a model. `sha256` is null while not pinned yet (`models:fetch --pin` fills it). */
export const ManifestFile = z.object({
  path: z
    .string()
    .min(1)
    .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'a relative path inside the model folder'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  /** Size in bytes, when known (for progress and a quick check). */
  size: z.number().int().nonnegative().nullable().default(null),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

/**
 * What a model does, as transformers.js names the task:
 * - `text-generation`: a chat LLM; tool calls are parsed from its text by us.
 * - `automatic-speech-recognition`: caller audio → text (whisper, moonshine).
 * - `audio-text-to-text`: takes caller audio and text, answers in text (ultravox, voxtral, gemma3n).
 * - `text-to-speech`: caller text → speech (`--tts local:<id>`; VITS / MMS-TTS: one ONNX graph
 *   `input_ids` → `waveform` at `config.json`'s `sampling_rate`, character tokenizer). Not an agent.
 */
export const LocalTask = z.enum([
  'text-generation',
  'automatic-speech-recognition',
  'audio-text-to-text',
  'text-to-speech',
]);
export type LocalTask = z.infer<typeof LocalTask>;

/** One model. */
export const ManifestModel = z.object({
  /** Our id, also its folder name under the models folder. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
  /** Hub repository the files come from (`owner/name`). */
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/),
  /** Commit of `repo` the files are taken from (40 hex digits), or a branch name while unpinned. */
  revision: z.string().min(1),
  task: LocalTask,
  /** transformers.js `dtype` the listed ONNX files are (`fp32`, `fp16`, `q8`, `q4`, `q4f16`), or per session. */
  dtype: z.union([z.string(), z.record(z.string(), z.string())]).default('fp32'),
  /** SPDX id of the weights' license. */
  license: z.string().min(1),
  files: z.array(ManifestFile).min(1),
  notes: z.string().optional(),
});
export type ManifestModel = z.infer<typeof ManifestModel>;

/**
 * An on-device agent: either one chat LLM (`llm`, text only), ASR + LLM (`asr` then `llm`), or
 * one audio-text-to-text model (`audio`).
 */
export const ManifestAgent = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/),
    llm: z.string().optional(),
    asr: z.string().optional(),
    audio: z.string().optional(),
  })
  .refine((a) => (a.audio ? !a.llm && !a.asr : !!a.llm), 'an agent is {llm}, {asr, llm} or {audio}');
export type ManifestAgent = z.infer<typeof ManifestAgent>;

export const ModelManifest = z
  .object({
    version: z.literal(1),
    models: z.array(ManifestModel),
    agents: z.array(ManifestAgent).default([]),
  })
  .superRefine((m, ctx) => {
    const ids = new Set<string>();
    for (const model of m.models) {
      if (ids.has(model.id)) ctx.addIssue({ code: 'custom', message: `duplicate model id ${model.id}` });
      ids.add(model.id);
    }
    const task = new Map(m.models.map((x) => [x.id, x.task]));
    for (const a of m.agents) {
      if (ids.has(a.id)) ctx.addIssue({ code: 'custom', message: `agent id ${a.id} is also a model id` });
      for (const [role, want] of [
        ['llm', 'text-generation'],
        ['asr', 'automatic-speech-recognition'],
        ['audio', 'audio-text-to-text'],
      ] as const) {
        const ref = a[role];
        if (ref !== undefined && task.get(ref) !== want)
          ctx.addIssue({
            code: 'custom',
            message: `agent ${a.id}: ${role} "${ref}" is not a ${want} model of the manifest`,
          });
      }
    }
  });
export type ModelManifest = z.infer<typeof ModelManifest>;

/** An agent resolved to its models. */
export interface ResolvedLocalAgent {
  id: string;
  llm: ManifestModel | null;
  asr: ManifestModel | null;
  audio: ManifestModel | null;
}

/**
 * Thrown for an id the manifest does not know, or a model missing from the models folder.
 * Caller: an {@link InputError}; name the id and suggest `npm run models:fetch -- <id>`.
 */
export class LocalModelError extends InputError {
  override name = 'LocalModelError';
}

/** Parse manifest JSON. @throws LocalModelError with zod's message when it does not fit. */
export function parseManifest(json: unknown): ModelManifest {
  const r = ModelManifest.safeParse(json);
  if (!r.success)
    throw new LocalModelError(
      `models/manifest.json: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/**
 * Resolve `local:<id>`'s id: an agent of the manifest, or a model used alone (a
 * `text-generation` model as a text-only agent, an `audio-text-to-text` model as an audio agent).
 * @throws LocalModelError naming the known ids.
 */
export function resolveLocalAgent(manifest: ModelManifest, id: string): ResolvedLocalAgent {
  const byId = new Map(manifest.models.map((m) => [m.id, m]));
  const agent = manifest.agents.find((a) => a.id === id);
  if (agent) {
    const get = (ref: string | undefined) => (ref === undefined ? null : byId.get(ref)!);
    return { id, llm: get(agent.llm), asr: get(agent.asr), audio: get(agent.audio) };
  }
  const model = byId.get(id);
  if (model?.task === 'text-generation') return { id, llm: model, asr: null, audio: null };
  if (model?.task === 'audio-text-to-text') return { id, llm: null, asr: null, audio: model };
  const usable = [
    ...manifest.agents.map((a) => a.id),
    ...manifest.models.filter((m) => m.task === 'text-generation' || m.task === 'audio-text-to-text').map((m) => m.id),
  ];
  throw new LocalModelError(`unknown on-device agent "${id}" (manifest has: ${usable.join(', ') || 'nothing'})`);
}

/**
 * Resolve `--tts local:<id>`'s id: a `text-to-speech` model of the manifest.
 * @throws LocalModelError naming the manifest's TTS models.
 */
export function resolveLocalTts(manifest: ModelManifest, id: string): ManifestModel {
  const model = manifest.models.find((m) => m.id === id);
  if (model?.task === 'text-to-speech') return model;
  const usable = manifest.models.filter((m) => m.task === 'text-to-speech').map((m) => m.id);
  throw new LocalModelError(`unknown on-device TTS model "${id}" (manifest has: ${usable.join(', ') || 'nothing'})`);
}

/**
 * Resolve a speech recognizer's id (the page's microphone): an `automatic-speech-recognition`
 * model of the manifest.
 * @throws LocalModelError naming the manifest's recognizers.
 */
export function resolveLocalAsr(manifest: ModelManifest, id: string): ManifestModel {
  const model = manifest.models.find((m) => m.id === id);
  if (model?.task === 'automatic-speech-recognition') return model;
  const usable = manifest.models.filter((m) => m.task === 'automatic-speech-recognition').map((m) => m.id);
  throw new LocalModelError(
    `unknown on-device speech recognizer "${id}" (manifest has: ${usable.join(', ') || 'nothing'})`,
  );
}

/** The models an agent needs, each once. */
export function agentModels(agent: ResolvedLocalAgent): ManifestModel[] {
  return [agent.asr, agent.llm, agent.audio].filter((m): m is ManifestModel => m !== null);
}
