/**
 * Participant specs on the command line.
 * - Scripted: `--agent reference | noop`, `--user scripted`.
 * - Remote models: `<flavor>:<model>@<base-url>` with flavor `openai`, `vllm-omni` or `vllm`,
 *   e.g. `--agent vllm-omni:Qwen/Qwen3-Omni-30B-A3B-Instruct@http://127.0.0.1:8091/v1`,
 *   `--user openai:gpt-4o-mini@https://api.openai.com/v1`, `--judge openai:…`. A LoRA adapter
 *   is chosen by its served model name. The API key comes from the environment
 *   (`SWITCHBOARD_API_KEY`, else `OPENAI_API_KEY`) and is never written to trajectories.
 * - On-device models: `--agent local:<id>`, where `<id>` is an agent or a model of
 *   `models/manifest.json` (or of `$SWITCHBOARD_MODELS/manifest.json`), e.g.
 *   `local:whisper-base+qwen3-0.6b`; run in-process on the CPU. Its files must be in the models
 *   folder (`npm run models:fetch` on a machine with internet). `--user` / `--judge` take remote
 *   models only.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../core/participants/scripted.ts';
import type { Agent, Judge, UserSimulator } from '../core/participants/types.ts';
import { ModelAgent } from '../core/participants/model-agent.ts';
import type { TurnAudio } from '../core/participants/model-messages.ts';
import { ModelUser } from '../core/participants/model-user.ts';
import { ModelJudge } from '../core/participants/model-judge.ts';
import { MODEL_FLAVORS, type ModelClient, type RemoteFlavor, type SamplingParams } from '../core/ports/model-client.ts';
import { OpenAiModelClient } from '../adapters/shared/openai-client.ts';
import { modelsDir, nodeLocalModel } from '../adapters/node/local-model.ts';
import { LocalModelError } from '../adapters/shared/local-model-manifest.ts';
import { InputError } from '../core/errors.ts';
import { NoisyAgent } from '../core/participants/noisy.ts';
import { RealtimeAgent, type RealtimeDialect } from '../core/participants/realtime-agent.ts';
import { realTimers } from '../adapters/shared/timers.ts';
import { nodeRealtimeConnect } from '../adapters/node/realtime-ws.ts';
import { redactText, redactUrl } from '../adapters/shared/endpoint-secrets.ts';

const AGENTS: Record<string, () => Agent> = {
  reference: () => new ReferenceAgent(),
  noop: () => new NoopAgent(),
};
const USERS: Record<string, () => UserSimulator> = {
  scripted: () => new ScriptedUser(),
};

/** Settings shared by the model-backed participants of one run. */
export interface ModelSettings {
  /** Sampling flags given on the command line (the rest use the defaults). */
  sampling?: Partial<Omit<SamplingParams, 'seed'>>;
  /** Environment to read the API key from. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Give the agent the task's reference solution as teacher guidance (demonstrations only). */
  teacherGuidance?: boolean;
  /** Per-attempt timeout, ms. */
  timeoutMs?: number;
  /** Retries after the first attempt. */
  retries?: number;
  /** First backoff, ms. */
  backoffMs?: number;
  /** Issue 5: caller audio for a model agent (the degraded WAV of each caller turn). */
  userAudio?: TurnAudio;
  /**
   * Issue 17: ask a model agent for spoken audio in this voice (`run --agent-voice`; openai and
   * vllm-omni flavors). On the full-duplex timeline its audio is placed as it came, when it passes
   * the checks of `agentOwnAudio` (else the text is synthesized, and the span says why).
   */
  agentVoice?: string;
}

/** A parsed `<flavor>:<model>@<base-url>` spec. */
export interface ModelSpec {
  flavor: RemoteFlavor;
  model: string;
  baseURL: string;
}

/**
 * Parse `<flavor>:<model>@<base-url>`; the URL starts at the last `@http://` or `@https://`, so
 * model names may hold `@` and `/`. Returns null when `spec` does not start with a flavor.
 * @throws UsageError for a model spec without a model or an http(s) URL.
 */
export function parseModelSpec(spec: string): ModelSpec | null {
  const colon = spec.indexOf(':');
  const flavor = spec.slice(0, colon);
  if (colon < 0 || !(MODEL_FLAVORS as readonly string[]).includes(flavor)) return null;
  const rest = spec.slice(colon + 1);
  const at = Math.max(rest.lastIndexOf('@http://'), rest.lastIndexOf('@https://'));
  if (at <= 0) throw new UsageError(`model spec "${spec}" needs the form ${flavor}:<model>@<http(s) base URL>`);
  return { flavor: flavor as RemoteFlavor, model: rest.slice(0, at), baseURL: rest.slice(at + 1) };
}

function client(spec: ModelSpec, settings: ModelSettings): OpenAiModelClient {
  const env = settings.env ?? process.env;
  const apiKey = env.SWITCHBOARD_API_KEY || env.OPENAI_API_KEY || undefined;
  return new OpenAiModelClient({
    ...spec,
    ...(apiKey ? { apiKey } : {}),
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.retries !== undefined ? { maxRetries: settings.retries } : {}),
    ...(settings.backoffMs !== undefined ? { backoffMs: settings.backoffMs } : {}),
  });
}

function refuseLocal(spec: string): void {
  if (spec.startsWith('local:')) throw new UsageError(`"${spec}": on-device models (local:) can be the agent only`);
}

function agentOptions(settings: ModelSettings) {
  return {
    ...(settings.sampling ? { sampling: settings.sampling } : {}),
    ...(settings.teacherGuidance ? { teacherGuidance: 'reference' as const } : {}),
    ...(settings.userAudio ? { userAudio: settings.userAudio } : {}),
    ...(settings.agentVoice ? { voice: settings.agentVoice } : {}),
  };
}

/**
 * A factory for the agent named by `spec`. Throws with the known names for an unknown one.
 * For `local:<id>` the manifest and model files are checked now; the models load on the first
 * turn and are shared by every agent the factory makes (one generation at a time).
 * `noisy:<p>` is the noisy reference policy ({@link NoisyAgent}) erring on each write with probability p;
 * `noisy:<p>,tell=<q>` also leaves out each item it must tell with probability q.
 */
export function agentFactory(spec: string, settings: ModelSettings = {}): () => Agent {
  if (spec.startsWith('local:')) {
    let local: ReturnType<typeof nodeLocalModel>;
    try {
      local = nodeLocalModel(spec.slice('local:'.length), modelsDir(settings.env ?? process.env));
    } catch (e) {
      if (e instanceof LocalModelError) throw new UsageError(e.message);
      throw e;
    }
    const c = local.client;
    return () => new ModelAgent(c, agentOptions(settings));
  }
  const realtime = /^(realtime|realtime-beta):(.*)$/s.exec(spec);
  if (realtime) return realtimeAgentFactory(realtime[1] === 'realtime' ? 'ga' : 'beta', realtime[2]!, settings);
  const model = parseModelSpec(spec);
  if (model) {
    const c = client(model, settings);
    return () => new ModelAgent(c, agentOptions(settings));
  }
  if (spec.startsWith('noisy:') && !settings.teacherGuidance) {
    const [pText = '', tellText] = spec.slice('noisy:'.length).split(',tell=');
    const p = Number(pText);
    const tell = tellText === undefined ? 0 : Number(tellText);
    if (pText === '' || !(p >= 0 && p <= 1) || tellText === '' || !(tell >= 0 && tell <= 1))
      throw new UsageError(`agent "${spec}": noisy:<p>[,tell=<q>] needs an error probability p (and q) from 0 to 1`);
    return () => new NoisyAgent(tell > 0 ? { p, tell } : { p });
  }
  if (settings.teacherGuidance)
    throw new UsageError('--teacher-guidance needs a model agent (<flavor>:<model>@<url> or local:<id>)');
  const f = Object.hasOwn(AGENTS, spec) ? AGENTS[spec] : undefined;
  if (!f)
    throw new UsageError(
      `unknown agent "${spec}" (known: ${Object.keys(AGENTS).join(', ')}, noisy:<p>, <flavor>:<model>@<url>, local:<id>, realtime:<ws-url>)`,
    );
  return f;
}

/**
 * `realtime:<ws(s)-url>` / `realtime-beta:<ws(s)-url>`: a voice agent behind an
 * OpenAI-Realtime-compatible WebSocket server ({@link RealtimeAgent}), one session per rollout.
 * The API key (SWITCHBOARD_API_KEY, else OPENAI_API_KEY) goes in `Authorization: Bearer`; with
 * the phone channel on it hears each caller turn's degraded audio. `--model-timeout` is its idle
 * timeout while a reply is awaited, `--model-retries` its reconnects.
 * @throws UsageError for a URL that is not ws: or wss:, or with --teacher-guidance.
 */
function realtimeAgentFactory(dialect: RealtimeDialect, url: string, settings: ModelSettings): () => Agent {
  if (!/^wss?:\/\/[^/\s]/i.test(url))
    throw new UsageError(
      `agent "realtime:${redactText(url)}": needs a ws:// or wss:// URL, e.g. realtime:wss://host/v1/realtime?model=<m>`,
    );
  if (settings.teacherGuidance) throw new UsageError('--teacher-guidance needs a chat model agent, not a realtime one');
  const env = settings.env ?? process.env;
  const apiKey = env.SWITCHBOARD_API_KEY || env.OPENAI_API_KEY || undefined;
  const connect = nodeRealtimeConnect({
    ...(apiKey ? { apiKey } : {}),
    ...(settings.timeoutMs !== undefined ? { idleTimeoutMs: settings.timeoutMs } : {}),
  });
  return () =>
    new RealtimeAgent({
      url,
      connect,
      timers: realTimers,
      endpoint: redactUrl(url),
      dialect,
      ...(settings.userAudio ? { userAudio: settings.userAudio } : {}),
      ...(settings.retries !== undefined ? { retries: settings.retries } : {}),
    });
}

/** A factory for the simulated caller named by `spec`. */
export function userFactory(spec: string, settings: ModelSettings = {}): () => UserSimulator {
  refuseLocal(spec);
  const model = parseModelSpec(spec);
  if (model) {
    const c = client(model, settings);
    return () => new ModelUser(c, settings.sampling ? { sampling: settings.sampling } : {});
  }
  const f = Object.hasOwn(USERS, spec) ? USERS[spec] : undefined;
  if (!f) throw new UsageError(`unknown user "${spec}" (known: ${Object.keys(USERS).join(', ')})`);
  return f;
}

/**
 * A remote model client for a role that needs one (`<flavor>:<model>@<base-url>`; the task
 * editor of `propose`). `role` names the option in the error.
 * @throws UsageError for anything but a remote model spec
 */
export function modelClientFor(spec: string, role: string, settings: ModelSettings = {}): ModelClient {
  refuseLocal(spec);
  const model = parseModelSpec(spec);
  if (!model)
    throw new UsageError(`${role} "${spec}": expected <flavor>:<model>@<url> with flavor ${MODEL_FLAVORS.join(', ')}`);
  return client(model, settings);
}

/**
 * The judge named by `spec` (model specs only; the judge samples at temperature 0, judgement i
 * with seed `seed + i`). `n` judgements per item, majority verdict (`--judge-n`; default 1).
 */
export function judgeFor(spec: string, settings: ModelSettings = {}, n = 1): Judge {
  refuseLocal(spec);
  const model = parseModelSpec(spec);
  if (!model)
    throw new UsageError(
      `unknown judge "${spec}" (expected <flavor>:<model>@<url> with flavor ${MODEL_FLAVORS.join(', ')})`,
    );
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--judge-n must be a whole number from 1, not ${n}`);
  const max = settings.sampling?.max_tokens;
  return new ModelJudge(client(model, settings), {
    ...(max !== undefined ? { sampling: { max_tokens: max } } : {}),
    ...(n > 1 ? { n } : {}),
  });
}

/** Add `--judge <spec>` and `--judge-n <n>` (the same on `run`, `groups` and `serve`). */
export function withJudgeOptions(cmd: Command, what = 'NL and unchecked assertions'): Command {
  return cmd
    .option('--judge <spec>', `judge for ${what}: <flavor>:<model>@<base-url>`)
    .option(
      '--judge-n <n>',
      'judgements per assertion, majority verdict, ties not met (default 1)',
      numberOption('--judge-n', 1, 99, true),
    );
}

/**
 * The judge of `--judge` / `--judge-n`, or undefined without `--judge`.
 * @throws UsageError for `--judge-n` without `--judge`, or a bad judge spec.
 */
export function judgeFromFlags(
  opts: { judge?: string; judgeN?: number },
  settings: ModelSettings = {},
): Judge | undefined {
  if (opts.judgeN !== undefined && !opts.judge) throw new UsageError('--judge-n needs --judge');
  return opts.judge ? judgeFor(opts.judge, settings, opts.judgeN ?? 1) : undefined;
}

/** A commander parser for a number option in [min, max]. */
export function numberOption(name: string, min: number, max: number, integer = false) {
  return (value: string) => {
    const n = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : NaN;
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(
        `${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`,
      );
    }
    return n;
  };
}

/** A mistake in the command line (an {@link InputError}): printed without a stack trace, exit code 2. */
export class UsageError extends InputError {
  override name = 'UsageError';
}
