/**
 * The request a trainer makes for token-faithful rollouts (`switchboard rollout` and the
 * `POST /rollout` route of `serve`), and the run that answers it: an {@link EndpointPool} over the
 * trainer's policy endpoints, a {@link ModelAgent} per sample, {@link rolloutGroups} for the rest.
 */
import { z } from 'zod';
import type { DomainRuntime } from '../../core/env/environment.ts';
import { ModelAgent } from '../../core/participants/model-agent.ts';
import type { TurnAudio } from '../../core/participants/model-messages.ts';
import type { Judge, UserSimulator } from '../../core/participants/types.ts';
import { steppingClock } from '../../core/ports/clock.ts';
import type { EpisodeChannel } from '../../core/rollout/channel-step.ts';
import type { DuplexSettings } from '../../core/duplex/turn-taking.ts';
import type { Trajectory } from '../../core/schema/trajectory.ts';
import { rolloutGroups, type FailedGroup, type RolloutGroup } from '../../core/training/policy-rollout.ts';
import { EndpointPool, type EndpointStats } from './endpoint-pool.ts';
import { OpenAiModelClient } from './openai-client.ts';

/** What a trainer asks for. Defaults: vLLM flavor, K = 4, sampling temperature 1, top-p 1, 1,024 tokens. */
export const RolloutRequest = z.strictObject({
  /** OpenAI-compatible base URLs serving the policy, e.g. `http://127.0.0.1:8000/v1`. */
  base_urls: z.array(z.url({ protocol: /^https?$/ })).min(1),
  /** Served base model name. */
  model: z.string().min(1),
  /** LoRA adapter name: sent as the model of every request (vLLM serves adapters by name). */
  lora: z.string().min(1).nullish(),
  flavor: z.enum(['vllm', 'vllm-omni', 'openai']).default('vllm'),
  sampling: z
    .strictObject({
      temperature: z.number().min(0).max(2).default(1),
      top_p: z.number().gt(0).max(1).default(1),
      top_k: z.number().int().nullable().default(null),
      max_tokens: z.number().int().min(1).default(1024),
    })
    .default({ temperature: 1, top_p: 1, top_k: null, max_tokens: 1024 }),
  /** Samples per group (per task). */
  k: z.number().int().min(2).default(4),
  /** Tasks; default every task of the domain. */
  task_ids: z.array(z.string()).min(1).nullish(),
  /** Base seed: sample i of every group uses seed + i. */
  seed: z.number().int().min(0).default(0),
  /** Label of the policy weights (e.g. the trainer's step), recorded on every turn. */
  policy_version: z.string().min(1),
  reward: z.enum(['final', 'shaped']).default('final'),
  /** Requests in flight per endpoint at most. */
  endpoint_concurrency: z.number().int().min(1).default(8),
  /** Groups run at once. */
  groups_in_flight: z.number().int().min(1).default(1),
  /**
   * With the phone channel on, what the policy gets for a caller turn: `audio` (the degraded WAV,
   * no transcript beside it) or `transcript` (text only, no audio: the words the channel let
   * through, cut at a dropout; for text policies). No effect without a channel.
   */
  caller_input: z.enum(['audio', 'transcript']).default('audio'),
  /** Per-request timeout, ms, and retries (see OpenAiModelClient). */
  timeout_ms: z.number().int().min(1).optional(),
  retries: z.number().int().min(0).max(20).optional(),
});
export type RolloutRequest = z.infer<typeof RolloutRequest>;

/** Everything the run needs besides the request. */
export interface RolloutRunContext {
  runtime: DomainRuntime;
  user: () => UserSimulator;
  judge?: Judge;
  channel?: EpisodeChannel;
  /**
   * Issue 17: every sample on the full-duplex timeline (needs `channel`); set by the command or
   * the server (`rollout --duplex`, `serve --duplex`), not by the request.
   */
  duplex?: DuplexSettings;
  /** Caller audio for the agent (the degraded WAV), with a channel. */
  userAudio?: TurnAudio;
  maxSteps?: number;
  apiKey?: string;
  /**
   * Which URLs a policy endpoint may redirect to: null to follow, else why not (the allow-list of
   * `POST /rollout`). Default: redirects followed as fetch does.
   */
  redirectRefusal?: (url: string) => string | null;
  skip?: ReadonlySet<string>;
  onGroup: (g: RolloutGroup) => void | Promise<void>;
  onFailed?: (f: FailedGroup) => void | Promise<void>;
  onEpisode?: (t: Trajectory) => void;
}

/** How the run went. */
export interface RolloutSummary {
  groups: number;
  failed: FailedGroup[];
  skipped: number;
  endpoints: EndpointStats[];
  /**
   * `all`: every completion carried prompt and completion token ids; `none`: no endpoint gave any
   * (not vLLM, or an older vLLM without `return_token_ids`) and `prompt_token_ids`,
   * `completion_token_ids` and `loss_mask` are null; `partial`: some did.
   */
  token_ids: 'all' | 'partial' | 'none';
  /** Agent turns whose token data did not line up and was dropped (each has a `token_warning`). */
  token_warnings: number;
}

/**
 * The tasks of a request.
 * @throws Error naming the unknown task ids.
 */
export function requestTasks(runtime: DomainRuntime, req: RolloutRequest) {
  if (!req.task_ids) return runtime.domain.tasks;
  const unknown = req.task_ids.filter((id) => !runtime.domain.tasks.some((t) => t.id === id));
  if (unknown.length) throw new Error(`unknown task ids: ${unknown.join(', ')}`);
  return req.task_ids.map((id) => runtime.domain.tasks.find((t) => t.id === id)!);
}

/** Run a rollout request. @throws Error for unknown task ids (before anything runs). */
export async function runRolloutRequest(req: RolloutRequest, ctx: RolloutRunContext): Promise<RolloutSummary> {
  const tasks = requestTasks(ctx.runtime, req);
  const served = req.lora ?? req.model;
  const pool = new EndpointPool(
    req.base_urls.map(
      (baseURL) =>
        new OpenAiModelClient({
          flavor: req.flavor,
          baseURL,
          model: served,
          ...(ctx.apiKey ? { apiKey: ctx.apiKey } : {}),
          ...(ctx.redirectRefusal ? { redirectRefusal: ctx.redirectRefusal } : {}),
          ...(req.timeout_ms !== undefined ? { timeoutMs: req.timeout_ms } : {}),
          ...(req.retries !== undefined ? { maxRetries: req.retries } : {}),
        }),
    ),
    { capPerEndpoint: req.endpoint_concurrency },
  );
  let warnings = 0;
  const { done, failed } = await rolloutGroups({
    runtime: ctx.runtime,
    tasks,
    k: req.k,
    seed: req.seed,
    agent: () =>
      new ModelAgent(pool, {
        sampling: req.sampling,
        ...(ctx.userAudio && req.caller_input === 'audio' ? { userAudio: ctx.userAudio } : {}),
      }),
    user: ctx.user,
    ...(ctx.judge ? { judge: ctx.judge } : {}),
    clock: () => steppingClock(ctx.runtime.domain.now, 1000),
    ...(ctx.channel ? { channel: ctx.channel } : {}),
    ...(ctx.duplex ? { duplex: ctx.duplex } : {}),
    ...(ctx.maxSteps ? { maxSteps: ctx.maxSteps } : {}),
    policyVersion: req.policy_version,
    reward: req.reward,
    groupsInFlight: req.groups_in_flight,
    ...(ctx.skip ? { skip: ctx.skip } : {}),
    onGroup: (g) => {
      for (const s of g.samples) warnings += s.turns.filter((t) => t.token_warning).length;
      return ctx.onGroup(g);
    },
    ...(ctx.onFailed ? { onFailed: ctx.onFailed } : {}),
    ...(ctx.onEpisode ? { onEpisode: ctx.onEpisode } : {}),
  });
  const endpoints = pool.stats();
  const answered = endpoints.reduce((n, e) => n + e.requests - e.failures, 0);
  const withIds = endpoints.reduce((n, e) => n + e.with_token_ids, 0);
  return {
    groups: done,
    failed,
    skipped: tasks.length - done - failed.length,
    endpoints,
    token_ids: withIds === 0 ? 'none' : withIds >= answered ? 'all' : 'partial',
    token_warnings: warnings,
  };
}
