/**
 * The curriculum a trainer asks for: the sampling weights an evolve run wrote (`weights.json`,
 * format `switchboard.sampling-weights`: the SEC bandit's bins and each task's probability of
 * being sampled next, boundary tasks first). {@link readWeightsFile} reads and checks the file
 * (`evolve --previous`, `serve --weights`); {@link curriculumRoute} answers `GET /curriculum` on
 * both protocols of `serve`, reading the file afresh on every request so that a trainer sees the
 * weights of the latest round an evolve run wrote.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { checkSamplingWeights } from '../../core/evolution/weights-file.ts';
import type { SamplingWeights } from '../../core/evolution/weights.ts';
import { DomainFileError, fieldPath } from '../../core/schema/domain.ts';

/**
 * The weights file named by `path`: the file itself, or `weights.json` inside a folder (an
 * evolve run's `--out`).
 */
export async function weightsFilePath(path: string): Promise<string> {
  return (await stat(path).catch(() => null))?.isDirectory() ? join(path, 'weights.json') : path;
}

/**
 * Read and check a weights file.
 * @throws DomainFileError naming the file and the field of the first problem (unreadable, not
 *   JSON, a field that fails the schema)
 */
export async function readWeightsFile(file: string): Promise<SamplingWeights> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new DomainFileError(
      file,
      '',
      `cannot read the weights file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new DomainFileError(file, '', `not JSON (${(e as Error).message})`);
  }
  const r = checkSamplingWeights(doc);
  if (!r.ok) throw new DomainFileError(file, fieldPath(r.path), r.message);
  return r.weights;
}

/** An answer of the route: a status with the weights, or with an error message. */
export type CurriculumAnswer = { status: 200; weights: SamplingWeights } | { status: 400 | 404 | 503; error: string };

/**
 * `GET /curriculum[?top=n]`: the weights file as it is on disk now (200), its first `n` tasks
 * only with `top` (the bins unchanged); 404 when the server has no weights file, 400 for a bad
 * `top`, 503 when the file cannot be read or fails its check (the message names file and field).
 *
 * @param file the weights file (`serve --weights`), or undefined
 */
export function curriculumRoute(file: string | undefined): (url: URL) => Promise<CurriculumAnswer> {
  return async (url) => {
    if (!file)
      return { status: 404, error: 'no curriculum: start serve with --weights <weights.json or evolve --out folder>' };
    const top = url.searchParams.get('top');
    if (top !== null && !/^\d+$/.test(top)) return { status: 400, error: `top: a whole number, got "${top}"` };
    try {
      const weights = await readWeightsFile(file);
      return {
        status: 200,
        weights: top === null ? weights : { ...weights, tasks: weights.tasks.slice(0, Number(top)) },
      };
    } catch (e) {
      return { status: 503, error: (e as Error).message };
    }
  };
}
