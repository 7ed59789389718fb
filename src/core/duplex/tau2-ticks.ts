/**
 * tau2-bench full-duplex simulations (`ticks` of a simulation in its results files) read into
 * {@link MetricTick}s, so `switchboard metrics` measures tau2-bench's own runs with our code.
 * Field meanings follow tau2-bench's data model (a2c024725189): a chunk's `contains_speech`
 * defaults to true when absent; effects come from `source_effects` (burst noise, speech insert)
 * then `speech_effects` (dynamic muffling, speech insert); an insert of type `vocal_tic` is a
 * vocal tic, any other type speech not meant for the agent.
 */
import { z } from 'zod';
import { FileFieldError } from '../errors.ts';
import type { MetricEffect, MetricTick } from './segments.ts';

const Insert = z.object({ text: z.string().nullish(), type: z.string().nullish() }).nullish();

const Chunk = z
  .object({
    contains_speech: z.boolean().optional(),
    turn_taking_action: z.object({ action: z.string().nullish() }).nullish(),
    source_effects: z.object({ burst_noise_file: z.string().nullish(), speech_insert: Insert }).nullish(),
    speech_effects: z.object({ dynamic_muffling_enabled: z.boolean().nullish(), speech_insert: Insert }).nullish(),
  })
  .nullish();

const Tick = z.object({ agent_chunk: Chunk, user_chunk: Chunk });

/** A tau2-bench simulation as far as the metrics read it. */
const Simulation = z.object({
  id: z.string().optional(),
  task_id: z.union([z.string(), z.number()]).optional(),
  ticks: z.array(Tick).nullish(),
});

/** Results metadata as far as the metrics read it. */
const ResultsInfo = z.object({
  info: z.object({
    environment_info: z.object({ domain_name: z.string() }),
    audio_native_config: z.object({ tick_duration_seconds: z.number().positive().nullish() }).nullish(),
  }),
  simulations: z.array(z.unknown()).optional(),
});

type Chunk = z.infer<typeof Chunk>;
type Insert = z.infer<typeof Insert>;

function insertEffect(insert: Insert): MetricEffect[] {
  if (!insert) return [];
  const type = (insert.type ?? 'vocal_tic') === 'vocal_tic' ? 'vocal_tic' : 'non_directed_speech';
  return [{ type, text: insert.text ?? '', file: null }];
}

function effectsOf(chunk: NonNullable<Chunk>): MetricEffect[] {
  const out: MetricEffect[] = [];
  const src = chunk.source_effects;
  if (src?.burst_noise_file) out.push({ type: 'burst_noise', text: null, file: src.burst_noise_file });
  out.push(...insertEffect(src?.speech_insert));
  const sp = chunk.speech_effects;
  if (sp?.dynamic_muffling_enabled) out.push({ type: 'muffling', text: null, file: null });
  out.push(...insertEffect(sp?.speech_insert));
  return out;
}

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

function parse<T>(schema: z.ZodType<T>, value: unknown, file: string, prefix = ''): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issuePath(issue);
  throw new FileFieldError(
    file,
    `${prefix}${prefix && path && !path.startsWith('[') ? '.' : ''}${path}`,
    issue.message,
  );
}

/** One tau2-bench simulation's id, task and ticks (an empty list for a turn-based simulation). */
export interface Tau2Simulation {
  id: string;
  task_id: string;
  ticks: MetricTick[];
}

/**
 * Read one simulation object (from a `simulations/*.json` file or a results file's
 * `simulations[i]`).
 *
 * @throws FileFieldError naming `file` and the field when a tick is malformed.
 */
export function tau2Simulation(value: unknown, file: string, prefix = ''): Tau2Simulation {
  const sim = parse(Simulation, value, file, prefix);
  return {
    id: sim.id ?? '',
    task_id: sim.task_id === undefined ? '' : String(sim.task_id),
    ticks: (sim.ticks ?? []).map((t) => ({
      agentSpeech: t.agent_chunk ? (t.agent_chunk.contains_speech ?? true) : false,
      user: t.user_chunk
        ? {
            speech: t.user_chunk.contains_speech ?? true,
            action: t.user_chunk.turn_taking_action?.action ?? null,
            effects: effectsOf(t.user_chunk),
          }
        : null,
    })),
  };
}

/** What the metrics need from a results file: its domain, tick length and inline simulations. */
export interface Tau2ResultsInfo {
  domain: string;
  /** The experiment's recorded tick length in seconds, or null when it recorded none. */
  tick_duration_sec: number | null;
  /** Simulations written inline (the single-file format); absent in the folder format. */
  simulations: unknown[] | null;
}

/**
 * Read a results file's metadata.
 *
 * @throws FileFieldError naming `file` and the field (e.g. `info.environment_info.domain_name`).
 */
export function tau2ResultsInfo(value: unknown, file: string): Tau2ResultsInfo {
  const r = parse(ResultsInfo, value, file);
  return {
    domain: r.info.environment_info.domain_name,
    tick_duration_sec: r.info.audio_native_config?.tick_duration_seconds ?? null,
    simulations: r.simulations ?? null,
  };
}
