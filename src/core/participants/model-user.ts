/**
 * {@link ModelUser}: the simulated caller as a model, and {@link checkCallerFacts}, the check
 * that it does not invent values outside its task.
 */
import { DEFAULT_SAMPLING, type ModelClient, type ModelResponse, type SamplingParams } from '../ports/model-client.ts';
import { CALLER_PROMPT_VERSION, renderCallerPrompt } from '../prompts/caller.ts';
import type { Task } from '../schema/task.ts';
import type { ParticipantCard, ToolCall, Turn } from '../schema/trajectory.ts';
import { SimulatorError } from './model-errors.ts';
import { callerMessages, episodeCallIds, generationOf, participantCard } from './model-messages.ts';
import { replyToolCalls } from './model-tool-calls.ts';
import { replyTooLong } from '../rollout/limits.ts';
import type { EpisodeView, ParticipantReply, UserSimulator } from './types.ts';

/** Options of {@link ModelUser}. */
export interface ModelUserOptions {
  /** Sampling; `seed` is replaced by the rollout's seed when the episode gives one. */
  sampling?: Partial<SamplingParams>;
  /** Check stated values against the task ({@link checkCallerFacts}). Default true. */
  factCheck?: boolean;
  stream?: boolean;
  /**
   * Requests repeated (with seed + 1, + 2, …) after an empty reply (no text, no tool call)
   * before the caller counts as broken. Default 2.
   */
  emptyRetries?: number;
}

/**
 * A simulated caller backed by a model, prompted from the task ({@link renderCallerPrompt}). It
 * may call the domain's user tools. Every reply's text is checked with {@link checkCallerFacts}.
 *
 * @throws SimulatorError (an InfrastructureError: the episode is invalid and resampled, never
 *   scored against the agent) when the caller states a value its task does not contain, replies
 *   with more than `MAX_REPLY_CHARS` characters (src/core/rollout/limits.ts; not fact-checked
 *   then), is cut at the token limit (`finish_reason: "length"`), or is empty (no text, no tool
 *   call) on every one of 1 + `emptyRetries` requests.
 * @throws ModelEndpointError from the client when the endpoint fails.
 */
export class ModelUser implements UserSimulator {
  readonly id: string;
  private readonly sampling: SamplingParams;

  constructor(
    private readonly client: ModelClient,
    private readonly options: ModelUserOptions = {},
  ) {
    this.id = client.id;
    this.sampling = { ...DEFAULT_SAMPLING, ...options.sampling };
  }

  get card(): ParticipantCard {
    return participantCard(this.client, this.sampling, CALLER_PROMPT_VERSION, null);
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    const system = renderCallerPrompt(view.domain, view.task, view.tools);
    const seed = view.seed ?? this.sampling.seed;
    const attempts = 1 + (this.options.emptyRetries ?? 2);
    let res: ModelResponse | null = null;
    for (let i = 0; i < attempts; i++) {
      const r = await this.client.complete({
        messages: callerMessages(system, view.turns),
        ...(view.tools.length ? { tools: view.tools } : {}),
        // A retry after an empty reply asks for another sample: seed + i.
        sampling: { ...this.sampling, seed: seed === null ? null : seed + i },
        ...(this.options.stream ? { stream: true } : {}),
      });
      // A caller cut at the token limit may be half a sentence or half a tool call: never speech.
      if (r.finish_reason === 'length')
        throw new SimulatorError(
          `simulator error: the caller's reply was cut at the token limit (finish_reason "length", ${this.sampling.max_tokens} tokens)`,
        );
      if (r.text.trim() || r.tool_calls.length) {
        res = r;
        break;
      }
    }
    if (!res)
      throw new SimulatorError(`simulator error: the caller model returned an empty reply ${attempts} times in a row`);
    const tooLong = replyTooLong(res.text);
    if (tooLong) throw new SimulatorError(`simulator error: the caller's ${tooLong}`);
    if (this.options.factCheck !== false) {
      const invented = checkCallerFacts(res.text, view.task, view.turns);
      if (invented.length) {
        throw new SimulatorError(
          `simulator error: the caller stated ${invented.map((v) => JSON.stringify(v)).join(', ')}, not in its task or the call so far`,
        );
      }
    }
    const calls = replyToolCalls(episodeCallIds(res, view.turns.length));
    return { text: res.text, tool_calls: calls as ToolCall[], generation: generationOf(res) };
  }
}

/** Digit groups joined by one space or dash (`158 6745 2301`, `158-6745-2301`) become one number. */
function joinDigitGroups(text: string): string {
  return text.replace(/(\d)[ -](?=\d)/g, '$1');
}

/**
 * Values a text states that a fact check looks at: ISO dates (`2025-03-15`), ids (letters then at
 * least two digits: `B10008`, `C1002`), and numbers with a decimal point or at least three digits
 * (amounts, phone numbers). Numbers are normalized (`63.50` → `63.5`). Small whole numbers (one
 * or two digits: counts, months) and numbers written in words are not checked.
 */
export function statedValues(text: string): string[] {
  const out: string[] = [];
  let t = text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, (d) => {
    out.push(d);
    return ' ';
  });
  t = joinDigitGroups(t);
  // Matches start only where a letter run starts: without the lookbehind, a long run of letters
  // is re-scanned from each of its letters (quadratic).
  t = t.replace(/(?<![A-Za-z])[A-Za-z]+\d{2,}/g, (id) => {
    out.push(id.toUpperCase());
    return ' ';
  });
  for (const m of t.matchAll(/\d+(?:\.\d+)?/g)) {
    const n = m[0];
    if (!n.includes('.') && n.length < 3) continue;
    out.push(n.includes('.') ? String(Number(n)) : n);
  }
  return [...new Set(out)];
}

/**
 * The values (see {@link statedValues}) in a caller's `text` that appear neither in its task's
 * user scenario (and outbound opening) nor in what the caller has heard or seen so far (agent
 * speech, results of its own tools, its earlier turns). Empty when the caller invented nothing.
 */
export function checkCallerFacts(text: string, task: Task, turns: readonly Turn[]): string[] {
  const allowed = new Set<string>();
  const add = (s: string) => statedValues(s).forEach((v) => allowed.add(v));
  add(JSON.stringify(task.user_scenario));
  if (task.opening) add(task.opening);
  for (const t of turns) {
    if (t.role === 'assistant' || t.role === 'user') add(t.text);
    else if (t.requestor === 'user') add(`${JSON.stringify(t.arguments)} ${t.content}`);
  }
  return statedValues(text).filter((v) => !allowed.has(v));
}
