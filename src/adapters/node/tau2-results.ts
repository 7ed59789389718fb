/**
 * Read a recording to replay (Node): a tau2-bench results file or our own trajectories. The
 * format is told from the content, not the file name:
 * - a JSON object with `simulations`: tau2-bench `Results` (what `tau2 run` saves);
 * - a folder, or a `results.json` next to a `simulations/` folder: tau2-bench's directory format
 *   (voice runs), metadata in `results.json` and one `SimulationRun` per file in `simulations/`,
 *   read in file-name order as tau2-bench does;
 * - a JSON object with `termination_reason` and `messages`/`ticks` but no `schema_version`: one
 *   tau2 `SimulationRun` (a file of tau2's directory format), or an array of them;
 * - a JSON object with `schema_version`: one of our trajectories, or an array of them;
 * - several lines of JSON: our trajectories, one per line (`switchboard run --out`'s
 *   `trajectories.jsonl`).
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { z } from 'zod';
import { fieldPath } from '../../core/schema/domain.ts';
import { jsonlLines } from './jsonl.ts';
import { Trajectory } from '../../core/schema/trajectory.ts';
import { ReplayInputError, fieldAt, trajectoryEpisode, type RecordedEpisode } from '../../core/replay/episode.ts';
import {
  Tau2Results,
  Tau2Simulation,
  tau2ResultsEpisodes,
  tau2SimulationEpisode,
} from '../../core/replay/tau2-format.ts';

/** What a recording file holds. */
export type RecordingFormat = 'tau2-results' | 'tau2-results-dir' | 'tau2-simulations' | 'switchboard-trajectories';

/** A parsed recording: its episodes in file order. */
export interface Recording {
  /** The file as named by the caller (used in messages). */
  file: string;
  format: RecordingFormat;
  episodes: RecordedEpisode[];
}

const EXPECTED =
  'expected a tau2-bench results file or Switchboard trajectories (JSON, or JSONL with one trajectory per line)';

function validate<S extends z.ZodType>(schema: S, value: unknown, file: string, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ReplayInputError(file, fieldAt(where, fieldPath(issue.path)), issue.message);
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A tau2 `SimulationRun` rather than one of our trajectories. */
function looksLikeTau2Simulation(x: unknown): boolean {
  return isObject(x) && !('schema_version' in x) && 'termination_reason' in x && ('messages' in x || 'ticks' in x);
}

function trajectories(values: readonly unknown[], file: string, where: (i: number) => string): Recording {
  const episodes = values.map((v, i) => trajectoryEpisode(validate(Trajectory, v, file, where(i)), file, where(i)));
  return { file, format: 'switchboard-trajectories', episodes };
}

function fromJson(doc: unknown, file: string): Recording {
  if (Array.isArray(doc)) {
    if (doc.length === 0) throw new ReplayInputError(file, '', `empty list: ${EXPECTED}`);
    if (looksLikeTau2Simulation(doc[0])) {
      const episodes = doc.map((v, i) =>
        tau2SimulationEpisode(validate(Tau2Simulation, v, file, `[${i}]`), file, `[${i}]`),
      );
      return { file, format: 'tau2-simulations', episodes };
    }
    return trajectories(doc, file, (i) => `[${i}]`);
  }
  if (!isObject(doc)) throw new ReplayInputError(file, '', `a JSON ${doc === null ? 'null' : typeof doc}: ${EXPECTED}`);
  if (!('simulations' in doc) && ('simulation_index' in doc || ('info' in doc && 'tasks' in doc))) {
    throw new ReplayInputError(
      file,
      'simulations',
      `missing: this looks like the results.json of tau2-bench's directory format; pass the folder, or keep its simulations/ folder next to it`,
    );
  }
  if ('simulations' in doc) {
    const results = validate(Tau2Results, doc, file, '');
    return { file, format: 'tau2-results', episodes: tau2ResultsEpisodes(results, file) };
  }
  if (looksLikeTau2Simulation(doc)) {
    return {
      file,
      format: 'tau2-simulations',
      episodes: [tau2SimulationEpisode(validate(Tau2Simulation, doc, file, ''), file, '')],
    };
  }
  if ('schema_version' in doc || 'turns' in doc) return trajectories([doc], file, () => '');
  throw new ReplayInputError(
    file,
    '',
    `no "simulations" (tau2-bench results) and no "schema_version" (trajectory): ${EXPECTED}`,
  );
}

/**
 * Parse a recording from its text.
 *
 * @param file the name used in messages.
 * @throws ReplayInputError naming `file` and the first bad field (zod's message), or the first
 *   line that is not JSON; also for an empty file or one holding no episode.
 */
export function parseRecording(file: string, text: string): Recording {
  const body = text.replace(/^\uFEFF/, '');
  if (!body.trim()) throw new ReplayInputError(file, '', `empty file: ${EXPECTED}`);
  let recording: Recording;
  const whole = tryJson(body);
  if (whole.ok) recording = fromJson(whole.value, file);
  else {
    const filled = body
      .split(/\r?\n/)
      .map((line, i) => ({ line, n: i + 1 }))
      .filter((l) => l.line.trim());
    if (filled.length < 2) throw new ReplayInputError(file, '', `not valid JSON (${whole.message})`);
    const values = filled.map((l) => {
      const one = tryJson(l.line);
      if (!one.ok) throw new ReplayInputError(file, `line ${l.n}`, `not valid JSON (${one.message})`);
      return one.value;
    });
    recording = trajectories(values, file, (i) => `line ${filled[i]!.n}`);
  }
  if (recording.episodes.length === 0) throw new ReplayInputError(file, '', 'holds no simulation to replay');
  return recording;
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder, not a file' : (e as Error).message;
    throw new ReplayInputError(path, '', `cannot read (${why})`);
  }
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new ReplayInputError(file, '', `not valid JSON (${(e as Error).message})`);
  }
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

const Tau2ResultsMeta = Tau2Results.partial({ simulations: true });

/**
 * tau2-bench's directory format: `results.json` (metadata) and `simulations/<id>.json`.
 * `given` is the path named by the caller (the folder or its results.json).
 */
async function readTau2Dir(given: string, metaFile: string, simsDir: string): Promise<Recording> {
  const meta = validate(Tau2ResultsMeta, parseJson(metaFile, await readText(metaFile)), metaFile, '');
  const named = meta.info?.environment_info?.domain_name;
  const domain = named ? { name: named, file: metaFile, field: 'info.environment_info.domain_name' } : null;
  const names = (await readdir(simsDir)).filter((n) => n.endsWith('.json')).sort();
  const episodes = [];
  for (const name of names) {
    const file = join(simsDir, name);
    const sim = validate(Tau2Simulation, parseJson(file, await readText(file)), file, '');
    episodes.push(tau2SimulationEpisode(sim, file, '', domain));
  }
  if (episodes.length === 0) throw new ReplayInputError(simsDir, '', 'holds no simulation file (*.json) to replay');
  return { file: given, format: 'tau2-results-dir', episodes };
}

/**
 * Read and parse a recording: a file (see {@link parseRecording}) or tau2-bench's directory
 * format (a folder holding `results.json` and `simulations/`, or a `results.json` with a
 * `simulations/` folder beside it: tau2-bench's own rule).
 * @throws ReplayInputError naming the file (a simulation file for the directory format) when it
 *   cannot be read or is malformed.
 */
export async function readRecording(path: string): Promise<Recording> {
  if (await isFolder(path)) {
    const simsDir = join(path, 'simulations');
    if (!(await isFolder(simsDir))) {
      throw new ReplayInputError(
        path,
        '',
        'is a folder without simulations/: expected a file, or a tau2-bench results folder',
      );
    }
    return readTau2Dir(path, join(path, 'results.json'), simsDir);
  }
  const beside = join(dirname(path), 'simulations');
  if (path.endsWith('.json') && (await isFolder(beside))) {
    const text = await readText(path);
    // tau2's rule, except that a complete results file (with its simulations) is read as it is.
    const doc = parseJson(path, text);
    if (isObject(doc) && !('simulations' in doc) && ('simulation_index' in doc || 'info' in doc))
      return readTau2Dir(path, path, beside);
    return parseRecording(path, text);
  }
  return (await readTrajectoryLines(path)) ?? parseRecording(path, await readText(path));
}

/**
 * Our trajectories as JSON Lines, read line by line (a `run --out` file may be larger than one
 * string can hold). Null when the file is not that (its first line is not a trajectory, or it has
 * a single line, or it cannot be read): the caller then reads it whole, which names the problem.
 * @throws ReplayInputError naming the first later line that is not JSON or not a trajectory.
 */
async function readTrajectoryLines(path: string): Promise<Recording | null> {
  const values: unknown[] = [];
  const where: string[] = [];
  try {
    for await (const { n, line } of jsonlLines(path)) {
      const one = tryJson(line);
      if (values.length === 0 && !(one.ok && isObject(one.value) && 'schema_version' in one.value)) return null;
      if (!one.ok) throw new ReplayInputError(path, `line ${n}`, `not valid JSON (${one.message})`);
      values.push(one.value);
      where.push(`line ${n}`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code) return null;
    throw e;
  }
  return values.length < 2 ? null : trajectories(values, path, (i) => where[i]!);
}
