/**
 * {@link ModelJudge}: NL assertions and behaviour assertions without a deterministic check,
 * judged by a model in one call with a fixed, versioned prompt.
 */
import type { ModelClient, SamplingParams } from '../ports/model-client.ts';
import { JUDGE_PROMPT_VERSION, JUDGE_SYSTEM, renderJudgePrompt } from '../prompts/judge.ts';
import type { Domain } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import type { Turn } from '../schema/trajectory.ts';
import { JudgeError, ModelBehaviourError } from './model-errors.ts';
import type { Judge, JudgeItem, JudgeVerdict } from './types.ts';

/** Options of {@link ModelJudge}. */
export interface ModelJudgeOptions {
  /** Independent judgements per item; the verdict is the majority (ties: not met). Default 1. */
  n?: number;
  /** Sampling. Default temperature 0, top_p 1, max_tokens 2048; judgement i uses seed `seed + i` (default seed 0). */
  sampling?: Partial<SamplingParams>;
  /** Extra attempts when a reply is not the JSON asked for. Default 1. */
  parseRetries?: number;
}

/**
 * A model judge. Each of the `n` judgements is one request holding every item; the reply must be
 * `{"verdicts": [{"id", "met", "turn", "reason"}]}` with one verdict per item (see
 * {@link parseVerdicts}). With n > 1 the reason says how many judgements agreed, and the
 * evidence turn and reason come from the first judgement that agrees with the majority.
 *
 * @throws JudgeError (an InfrastructureError) when a judgement stays unparseable after the
 *   retries; ModelEndpointError when the endpoint fails. Never a failed assertion.
 */
export class ModelJudge implements Judge {
  readonly id: string;
  private readonly n: number;
  private readonly sampling: SamplingParams;

  constructor(
    private readonly client: ModelClient,
    private readonly options: ModelJudgeOptions = {},
  ) {
    this.n = Math.max(1, Math.floor(options.n ?? 1));
    this.id = `${client.id}#${JUDGE_PROMPT_VERSION}${this.n > 1 ? `x${this.n}` : ''}`;
    this.sampling = { temperature: 0, top_p: 1, top_k: null, max_tokens: 2048, seed: 0, ...options.sampling };
  }

  async judge(
    items: readonly JudgeItem[],
    view: { domain: Domain; task: Task; turns: readonly Turn[] },
  ): Promise<JudgeVerdict[]> {
    if (items.length === 0) return [];
    const prompt = renderJudgePrompt(view.domain, view.task, view.turns, items);
    const runs: JudgeVerdict[][] = [];
    for (let i = 0; i < this.n; i++) runs.push(await this.once(prompt, items, view.turns.length, i));
    return items.map((item, k) => {
      const votes = runs.map((r) => r[k]!);
      const yes = votes.filter((v) => v.met).length;
      const met = yes * 2 > this.n;
      const pick = votes.find((v) => v.met === met)!;
      const agreed = met ? yes : this.n - yes;
      return {
        id: item.id,
        met,
        turn: pick.turn,
        reason: this.n > 1 ? `${agreed}/${this.n} judgements agree: ${pick.reason}` : pick.reason,
      };
    });
  }

  private async once(
    prompt: string,
    items: readonly JudgeItem[],
    turnCount: number,
    i: number,
  ): Promise<JudgeVerdict[]> {
    const retries = this.options.parseRetries ?? 1;
    let last: Error | null = null;
    for (let attempt = 0; attempt <= retries; attempt++) {
      const seed = this.sampling.seed === null ? null : this.sampling.seed + i + attempt * 1000;
      const res = await this.client.complete({
        messages: [
          { role: 'system', content: JUDGE_SYSTEM },
          { role: 'user', content: prompt },
        ],
        sampling: { ...this.sampling, seed },
        json: true,
      });
      try {
        return parseVerdicts(res.text, items, turnCount);
      } catch (e) {
        if (!(e instanceof ModelBehaviourError)) throw e;
        last = e;
      }
    }
    throw new JudgeError(`judge ${this.id}: ${last?.message ?? 'no verdicts'}`);
  }
}

/**
 * Parse a judge reply: a JSON object (optionally inside a ```json fence or surrounded by text)
 * with `verdicts`, one per item, in any order. `turn` must be null or an index in [0,
 * turnCount); `met` a boolean (or "true"/"false"); `reason` a string.
 *
 * @returns verdicts in the order of `items`
 * @throws ModelBehaviourError describing the first problem.
 */
export function parseVerdicts(text: string, items: readonly JudgeItem[], turnCount: number): JudgeVerdict[] {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new ModelBehaviourError('judge reply holds no JSON object');
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(start, end + 1));
  } catch (e) {
    throw new ModelBehaviourError(`judge reply is not valid JSON (${(e as Error).message})`);
  }
  const list = (doc as { verdicts?: unknown } | null)?.verdicts;
  if (!Array.isArray(list)) throw new ModelBehaviourError('judge reply has no "verdicts" list');
  const byId = new Map<string, JudgeVerdict>();
  for (const raw of list) {
    const v = raw as Record<string, unknown>;
    if (typeof v !== 'object' || v === null || typeof v.id !== 'string') continue;
    const met = v.met === true || v.met === 'true' ? true : v.met === false || v.met === 'false' ? false : null;
    if (met === null) throw new ModelBehaviourError(`verdict ${v.id}: "met" must be true or false`);
    const turn = v.turn === null || v.turn === undefined ? null : v.turn;
    if (turn !== null && !(Number.isInteger(turn) && (turn as number) >= 0 && (turn as number) < turnCount)) {
      throw new ModelBehaviourError(
        `verdict ${v.id}: "turn" must be null or a turn index from 0 to ${turnCount - 1}, got ${JSON.stringify(turn)}`,
      );
    }
    byId.set(v.id, {
      id: v.id,
      met,
      turn: turn as number | null,
      reason: typeof v.reason === 'string' ? v.reason : '',
    });
  }
  return items.map((item) => {
    const v = byId.get(item.id);
    if (!v) throw new ModelBehaviourError(`judge reply has no verdict for ${item.id}`);
    return v;
  });
}
