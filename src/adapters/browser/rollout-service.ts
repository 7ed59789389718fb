/**
 * What `workers/rollout.worker.ts` serves to the page through comlink: built-in domains over
 * sql.js in the worker's own thread ({@link DomainRuntime} per domain), one call at a time with
 * live scoring, and task batches through the core's `runBatch`. Platform-neutral apart from the
 * sql.js loader it is given, so Node tests drive it directly.
 */
import { DomainRuntime } from '../../core/env/environment.ts';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../../core/participants/scripted.ts';
import {
  InfrastructureError,
  STOP_TOKENS,
  type Agent,
  type EpisodeView,
  type ParticipantReply,
  type UserSimulator,
} from '../../core/participants/types.ts';
import { steppingClock } from '../../core/ports/clock.ts';
import type { SqlDbFactory } from '../../core/ports/sql-db.ts';
import { runBatch, type TaskSummary } from '../../core/rollout/batch.ts';
import { runEpisode } from '../../core/rollout/episode.ts';
import { evaluate, replayGold } from '../../core/scoring/index.ts';
import { toolSchema, type Domain, type ToolDefinition } from '../../core/schema/domain.ts';
import type { Task } from '../../core/schema/task.ts';
import type { Trajectory, Turn, UserTurn } from '../../core/schema/trajectory.ts';
import { ident } from '../../core/env/write-log.ts';
import { builtinDomainNames, loadBrowserDomain, tau2SchemaText } from './domains.ts';
import { gateDomain, type GateReport } from '../../core/gate/gate.ts';
import type { AgentReport } from '../../core/build-domain/agent-step.ts';
import type { ModelClient, ModelResponse } from '../../core/ports/model-client.ts';
import { liveScore } from './live-score.ts';
import { realTimers } from '../shared/timers.ts';
import {
  agentSpeechName,
  type AgentSpec,
  type BatchJob,
  type EndpointSettings,
  type CallEvent,
  type CallSpec,
  type CallerAnswer,
  type CallerPrompt,
  type ChannelHost,
  type DomainInfo,
  type NoiseFile,
  type TableRows,
  type ToolInfo,
} from './rollout-types.ts';
import { noiseName, noiseRecording, splitNoiseBank } from '../../core/channel/noise-bank.ts';
import type { EpisodeChannel } from '../../core/rollout/channel-step.ts';
import type { Tts } from '../../core/ports/tts.ts';
import type { DownloadProgress } from '../shared/local-model-engine.ts';
import { SPEECH_RATE_HZ } from '../../core/audio/pcm.ts';
// Static: the worker's channel code imports it statically anyway (a dynamic import moved nothing).
import { encodeWav } from '../../core/audio/wav.ts';

/** The worker's API. Every method's arguments and results are plain data or comlink proxies. */
export interface RolloutService {
  /** Names of the built-in domains. */
  domainNames(): Promise<string[]>;
  /** Policy, rules, tools, tasks and tables of a domain (builds its database on first use). */
  describe(domain: string): Promise<DomainInfo>;
  /**
   * Rows of one table of the domain's database as a fresh episode sees it: the seed, plus the
   * task's initial-state rows when `taskId` is given. At most `limit` rows (default 200).
   */
  tableRows(domain: string, table: string, options?: { taskId?: string; limit?: number }): Promise<TableRows>;
  /**
   * Run one call to its end, scoring it live: `onEvent` gets every turn with the score so far,
   * then the scored trajectory. `askCaller` supplies the caller's words when `spec.user` is
   * `human` (append `###STOP###` to hang up); a `remote` caller is a model at its endpoint. Resolves with the scored trajectory
   * (`reward_info` null when the call ended invalid, e.g. stopped with {@link cancel}).
   * `noise`: WAV recordings that become the channel's noise bank (≥ 10 s beds, shorter bursts,
   * as the CLI's `--noise-dir`); used only when the call has channel audio.
   */
  runCall(
    spec: CallSpec,
    onEvent: (e: CallEvent) => void | Promise<void>,
    askCaller?: (p: CallerPrompt) => Promise<string | CallerAnswer>,
    host?: ChannelHost,
    noise?: readonly NoiseFile[],
  ): Promise<Trajectory>;
  /**
   * K rollouts of one task with the core's `runBatch` (scripted or remote model caller).
   * `onTrajectory` gets each scored (or invalid) trajectory as it finishes. With `job.channel`,
   * caller turns go through the channel: `host` renders the graphs (its `put` gets the WAVs) and
   * `noise` files are the noise bank, as in {@link runCall}. Resolves with the task's summary.
   */
  runTask(
    job: BatchJob,
    onTrajectory: (t: Trajectory) => void | Promise<void>,
    host?: ChannelHost,
    noise?: readonly NoiseFile[],
  ): Promise<TaskSummary>;
  /** Stop what runs: a call ends invalid at its next turn; a batch starts no new rollout. */
  cancel(): Promise<void>;
  /**
   * Load a tau2-bench data folder the user opened (file name → text of `db.json`, `tasks.json`,
   * `policy.md`, `split_tasks.json`) with the same code as the Node loader; `folder` (e.g.
   * `airline`) picks the domain, else db.json's tables do. Resolves with the domain's name
   * (`tau2-airline`), then served like a built-in one by this worker.
   */
  openTau2(files: Record<string, string>, folder: string): Promise<{ name: string; tasks: number }>;
  /**
   * Build a domain from an API description dropped on the page (issue 19 item 5): the same
   * deterministic scaffold as `switchboard build-domain` (`buildDomainFiles`), with `options.agent`
   * the same code-agent step as its `--agent` (`runCodeAgent`: a model at a remote endpoint
   * rewrites each task's caller text, every proposal checked and gated, rejects listed), then the
   * gate, all in this worker. On admission the domain is served like a built-in one (a second
   * build of the same name replaces it); the page keeps the returned files to restore it
   * ({@link openBuilt}).
   * @param file the spec's file name (named in errors, and the policy's source), or the folder's
   *   name when `spec` is a list of MCP tool files
   * @param spec the spec's text (OpenAPI 3.x JSON/YAML or an MCP tool list), or MCP tool files
   *   (name → text, `*.json` / `*.snap`; others are left out) merged into one list in file-name
   *   order as `--from <folder>` does (`mergeMcpFiles`)
   * @param options as the CLI's: `name` (default: the file name's stem as an identifier),
   *   `language` (`en`), `tasks` (12), `seed` (0), `agent` (none: scaffold only); the endpoint's
   *   `apiKey` is sent to its base URL's origin only (a redirect elsewhere is not followed) and
   *   is in none of the returned files
   * @param onProgress with an agent: requests answered so far (`done`; first one per task, then one
   *   per domain stage, so `done` passes `total`) and the number of tasks (`total`), after each request
   * @throws SpecError (`<file>: <path in the spec>: <what is wrong>`) for a bad spec; Error
   *   `<name>: refused by the gate: …` listing the gate's reasons when it refuses the domain;
   *   Error when `name` is not an identifier or is a built-in domain's; InfrastructureError when
   *   the code agent's endpoint fails a request after its retry (nothing is built, as the CLI
   *   writes nothing); Error when stopped with {@link cancel} during the agent step (likewise).
   */
  buildFromSpec(
    file: string,
    spec: string | readonly { name: string; text: string }[],
    options?: SpecBuildOptions,
    onProgress?: (p: { done: number; total: number }) => void,
  ): Promise<SpecBuild>;
  /**
   * Serve a built domain again from its files (as {@link buildFromSpec} returned them, e.g. kept
   * in IndexedDB over a reload, or in a batch worker): loaded with the same code, and gated again
   * unless `gate` is false (a batch worker of a page whose main worker admitted it).
   * @throws Error naming `<name>/<file>` (and the field) when the files do not make a domain;
   *   Error `<name>: refused by the gate: …`; Error when `name` is not an identifier or is a
   *   built-in domain's.
   */
  openBuilt(name: string, files: Record<string, string>, options?: { gate?: boolean }): Promise<{ tasks: number }>;
  /** Stop serving a domain built or opened in this tab (a built-in one stays). */
  forget(name: string): Promise<void>;
  /**
   * Load on-device agent `id` of the page's bundled manifest into a model worker, its files
   * downloaded from the Hub on first use (then cached by the browser); once, calls reuse it.
   * `onProgress` gets each file's bytes as they arrive. Resolves with the device it runs on
   * (`webgpu` or `wasm`).
   */
  loadLocal(id: string, onProgress?: (p: DownloadProgress) => void): Promise<{ device: string }>;
}

/**
 * Options of {@link RolloutService.buildFromSpec}: the CLI's `--name`, `--language`, `--tasks`,
 * `--seed`, and `--agent` as the page's remote endpoint settings (with its key, never recorded).
 */
export interface SpecBuildOptions {
  name?: string;
  language?: 'zh' | 'en';
  tasks?: number;
  seed?: number;
  agent?: EndpointSettings;
}

/**
 * An admitted domain built from a spec: its name, counts, what the scaffold skipped
 * (`{ path, reason }`), the code agent's report when one ran, and the domain folder's files
 * (name → text, `build-report.json` and `agent-replies.json` included, as the CLI writes them).
 */
export interface SpecBuild {
  name: string;
  tasks: number;
  tools: number;
  tables: number;
  skipped: { path: string; reason: string }[];
  agent?: AgentReport;
  files: Record<string, string>;
}

/** JSON-Schema property → short type text for display. */
function typeText(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Record<string, unknown>[]).map(typeText).join(' | ');
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object')
    return `${typeText(schema.items as Record<string, unknown>)}[]`;
  return typeof schema.type === 'string' ? schema.type : Array.isArray(schema.type) ? schema.type.join(' | ') : 'any';
}

function toolInfo(tool: ToolDefinition, side: ToolInfo['side']): ToolInfo {
  const p = toolSchema(tool).function.parameters;
  const props = (p.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((p.required as string[] | undefined) ?? []);
  const params = Object.entries(props).map(([name, s]) => ({
    name,
    type: typeText(s),
    required: required.has(name),
    description: typeof s.description === 'string' ? s.description : '',
  }));
  params.sort((a, b) => Number(b.required) - Number(a.required));
  return { name: tool.name, kind: tool.kind, description: tool.description, side, params };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A participant that waits `paceMs` before each turn and gives up once `stopped()` is true. */
function paced<P extends Agent | UserSimulator>(inner: P, paceMs: number, stopped: () => boolean): P {
  return {
    id: inner.id,
    ...(inner.card ? { card: inner.card } : {}),
    async respond(view: EpisodeView): Promise<ParticipantReply> {
      if (paceMs > 0) await sleep(paceMs);
      if (stopped()) throw new InfrastructureError('call stopped by the user');
      return inner.respond(view);
    },
  } as P;
}

/** The person at the keyboard (and microphone) as the caller. */
class HumanCaller implements UserSimulator {
  readonly id = 'human';
  /** The last answer's recorded voice, until the channel takes it. */
  speech: Float32Array | undefined;
  constructor(private readonly ask: (p: CallerPrompt) => Promise<string | CallerAnswer>) {}
  async respond(view: EpisodeView): Promise<ParticipantReply> {
    let agentText = '';
    for (let i = view.turns.length - 1; i >= 0; i--) {
      const t = view.turns[i]!;
      if (t.role === 'assistant' && t.text) {
        agentText = t.text;
        break;
      }
    }
    const answer = await this.ask({ agentText, turns: view.turns.length });
    const text = typeof answer === 'string' ? answer : answer?.text;
    if (typeof text !== 'string') throw new InfrastructureError('the caller left');
    this.speech = typeof answer === 'object' ? answer.speech : undefined;
    return { text };
  }
}

/**
 * A person's recorded call said again: their turns in order, then a hang-up. The trajectory names
 * the caller `human` as the recorded call did.
 */
class ReplayCaller implements UserSimulator {
  readonly id = 'human';
  private next = 0;
  constructor(private readonly turns: readonly string[]) {}
  async respond(): Promise<ParticipantReply> {
    return { text: this.turns[this.next++] ?? STOP_TOKENS.stop };
  }
}

/** A loaded on-device model (see `local-model.ts`). */
type LocalLoader = (
  id: string,
  onProgress?: (p: DownloadProgress) => void,
) => Promise<{ client: ModelClient; device: string }>;

/**
 * Degraded caller WAVs kept in this worker by reference, for a realtime agent to hear (the page
 * keeps the stored copies, which cannot be read back at once); each is taken out when heard.
 */
type KeptAudio = Map<string, Uint8Array>;

/**
 * A factory of agents for `spec`; a remote agent loads the OpenAI client code on first use. A
 * realtime agent hears the caller ({@link HearingAgent}): each caller turn's degraded WAV from
 * `kept` when the call has a channel, else the turn spoken by espeak-ng in the caller's voice;
 * sent as PCM16 appends at the session's rate, never as text.
 */
async function agentFactory(spec: AgentSpec, local: LocalLoader, kept?: KeptAudio): Promise<() => Agent> {
  switch (spec.kind) {
    case 'local': {
      const [{ client }, { ModelAgent }] = await Promise.all([
        local(spec.id),
        import('../../core/participants/model-agent.ts'),
      ]);
      return () => new ModelAgent(client, {});
    }
    case 'reference':
      return () => new ReferenceAgent();
    case 'noop':
      return () => new NoopAgent();
    case 'realtime': {
      const [{ RealtimeAgent }, { webSocketConnect }, { redactUrl }, { HearingAgent }, { browserEspeakTts }] =
        await Promise.all([
          import('../../core/participants/realtime-agent.ts'),
          import('../shared/realtime-socket.ts'),
          import('../shared/endpoint-secrets.ts'),
          import('../../core/participants/hearing-agent.ts'),
          import('./audio/espeak-tts.ts'),
        ]);
      const tts = browserEspeakTts();
      const stored = (turn: UserTurn) => {
        const ref = turn.audio?.degraded;
        const wav = ref ? kept?.get(ref) : undefined;
        if (ref) kept?.delete(ref);
        return wav;
      };
      const key = spec.apiKey;
      const connect = webSocketConnect((url) =>
        key ? new WebSocket(url, ['realtime', `openai-insecure-api-key.${key}`]) : new WebSocket(url),
      );
      return () =>
        new HearingAgent(
          (userAudio) =>
            new RealtimeAgent({
              url: spec.url,
              connect,
              timers: realTimers,
              endpoint: redactUrl(spec.url),
              dialect: spec.dialect ?? 'ga',
              userAudio,
            }),
          { tts, stored },
        );
    }
    case 'remote': {
      const [client, { ModelAgent }] = await Promise.all([
        remoteClient(spec),
        import('../../core/participants/model-agent.ts'),
      ]);
      const sampling = spec.temperature !== undefined ? { temperature: spec.temperature } : {};
      return () => new ModelAgent(client, { sampling });
    }
  }
}

/**
 * The OpenAI-compatible client of a remote endpoint of the page (one retry; its key, when given,
 * as the bearer token), loaded on first use. `redirectRefusal` as the client's.
 */
async function remoteClient(
  spec: EndpointSettings,
  redirectRefusal?: (url: string) => string | null,
): Promise<import('../shared/openai-client.ts').OpenAiModelClient> {
  const { OpenAiModelClient } = await import('../shared/openai-client.ts');
  return new OpenAiModelClient({
    flavor: spec.flavor,
    baseURL: spec.baseURL,
    model: spec.model,
    ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
    maxRetries: 1,
    ...(redirectRefusal ? { redirectRefusal } : {}),
  });
}

/**
 * Model-backed callers ({@link ModelUser}) over a remote endpoint, a new one per rollout; the
 * OpenAI client code loads on first use.
 */
async function remoteCallers(spec: EndpointSettings): Promise<() => UserSimulator> {
  const [client, { ModelUser }] = await Promise.all([
    remoteClient(spec),
    import('../../core/participants/model-user.ts'),
  ]);
  const options = spec.temperature !== undefined ? { sampling: { temperature: spec.temperature } } : {};
  return () => new ModelUser(client, options);
}

/** The noise bank of the user's WAV files (decoded and split like the CLI's `--noise-dir`). */
function noiseBankOf(files: readonly NoiseFile[]): EpisodeChannel['bank'] {
  return splitNoiseBank(
    files.map((f) => {
      try {
        return [noiseName(f.name), noiseRecording(f.bytes)] as const;
      } catch (e) {
        throw new Error(`noise file ${f.name}: not a readable WAV file (${(e as Error).message})`);
      }
    }),
  );
}

/**
 * The episode channel of a call: espeak-ng in this worker (a separately loaded GPL-3.0 chunk,
 * imported only here), graphs rendered and WAVs kept by the page; `noise` files as its noise bank.
 */
async function episodeChannel(
  spec: Pick<CallSpec, 'preset' | 'channel'>,
  host: ChannelHost,
  human?: HumanCaller,
  noise?: readonly NoiseFile[],
  kept?: KeptAudio,
): Promise<EpisodeChannel> {
  const { browserEspeakTts } = await import('./audio/espeak-tts.ts');
  const espeak = browserEspeakTts();
  // A human turn with a recording: its voice stands in for the TTS of the whole turn (the
  // first synthesis of the turn); `id` names the source recorded in the turn's audio.
  let source = espeak.id;
  const tts: Tts = {
    get id() {
      return source;
    },
    async synthesize(text, voice) {
      const speech = human?.speech;
      if (speech) {
        human.speech = undefined;
        source = 'microphone';
        return { samples: speech, sampleRate: SPEECH_RATE_HZ };
      }
      source = espeak.id;
      return espeak.synthesize(text, voice);
    },
  };
  return {
    tts,
    renderer: { render: (graph) => host.render(graph) },
    preset: spec.preset,
    ...(noise?.length ? { bank: noiseBankOf(noise) } : {}),
    store: {
      async put(name, bytes) {
        const ref = await host.put(name, bytes);
        if (kept && name.endsWith('.degraded.wav')) kept.set(ref, bytes);
        return ref;
      },
      get: async (ref) => {
        throw new Error(`audio "${ref}" is kept by the page`);
      },
    },
    dropout: spec.channel?.dropout ?? 0,
    bargeIn: spec.channel?.bargeIn ?? 0,
  };
}

/**
 * Speaks agent replies: espeak-ng in this worker (the same separately loaded chunk as the
 * channel's), each reply kept through `host` as a 16 kHz WAV under {@link agentSpeechName}.
 */
async function agentSpeaker(
  language: string,
  host: ChannelHost,
): Promise<(index: number, text: string) => Promise<void>> {
  const { browserEspeakTts } = await import('./audio/espeak-tts.ts');
  const tts = browserEspeakTts();
  return async (index, text) => {
    const { samples, sampleRate } = await tts.synthesize(text, { language });
    await host.put(agentSpeechName(index), encodeWav(samples, sampleRate));
  };
}

/** The gate's reasons in one line, as a refused build or restore reports them. */
function refusal(name: string, gate: GateReport): Error {
  const reasons = [
    ...gate.domain_problems.map((p) => `domain: ${p}`),
    ...gate.tasks.flatMap((t) => t.reasons.map((r) => `${t.task_id}: ${r}`)),
  ];
  return new Error(`${name}: refused by the gate: ${reasons.join('; ')}`);
}

/**
 * The code agent's model in the page: the OpenAI-compatible client over `spec`, its key sent
 * only to the base URL's origin (a redirect to another origin is not followed); each answered
 * request is counted for `onAnswer`; once `stop` is aborted the request in flight ends and no
 * other is sent.
 */
async function builderClient(spec: EndpointSettings, stop: AbortSignal, onAnswer: () => void): Promise<ModelClient> {
  const { endpointOrigin } = await import('../shared/endpoint-secrets.ts');
  const origin = endpointOrigin(spec.baseURL);
  if (!origin || origin.startsWith('ws')) throw new Error(`code agent: "${spec.baseURL}" is not an http(s) base URL`);
  if (!spec.model.trim()) throw new Error('code agent: give the model served at the endpoint');
  const client = await remoteClient(spec, (url) =>
    endpointOrigin(url) === origin ? null : `the code agent's requests (and key) go only to ${origin}`,
  );
  return {
    id: client.id,
    flavor: client.flavor,
    kind: client.kind,
    endpoint: client.endpoint,
    model: client.model,
    async complete(request, signal): Promise<ModelResponse> {
      if (stop.aborted) throw new InfrastructureError('the build was stopped');
      try {
        // Stop also ends a request in flight (a hung endpoint would otherwise hold it until its timeout).
        return await client.complete(request, signal ? AbortSignal.any([signal, stop]) : stop);
      } finally {
        onAnswer();
      }
    },
  };
}

/**
 * Build the service.
 * @param sqlFactory resolves to the {@link SqlDbFactory} for the domains' databases (sql.js in
 *   this thread); called once.
 */
export function createRolloutService(sqlFactory: () => Promise<SqlDbFactory>): RolloutService {
  let factory: Promise<SqlDbFactory> | undefined;
  const runtimes = new Map<string, Promise<DomainRuntime>>();
  let abort = new AbortController();

  const opened = new Set<string>();
  const locals = new Map<string, ReturnType<LocalLoader>>();
  const local: LocalLoader = (id, onProgress) => {
    let m = locals.get(id);
    if (!m) {
      m = Promise.all([import('./local-model.ts'), import('./model-hub.ts')]).then(
        ([{ browserLocalModel }, { MODEL_HUB, MODEL_MANIFEST }]) =>
          browserLocalModel(id, {
            hub: {
              host: new URL(MODEL_HUB, self.location.href).href,
              manifest: MODEL_MANIFEST,
              ...(onProgress ? { onProgress } : {}),
            },
          }),
      );
      m.catch(() => locals.delete(id));
      locals.set(id, m);
    }
    return m;
  };
  const runtimeOf = (name: string): Promise<DomainRuntime> => {
    let r = runtimes.get(name);
    if (!r && opened.has(name)) throw new Error(`domain ${name} is no longer loaded; open its folder again`);
    if (!r) {
      r = (async () => {
        const domain = await loadBrowserDomain(name).catch((e: unknown) => {
          const message = e instanceof Error ? e.message : String(e);
          if (!message.startsWith('unknown domain')) throw e;
          // A share link or reload naming a domain built elsewhere: say where built domains live.
          const here = opened.size ? `; built or opened in this tab: ${[...opened].sort().join(', ')}` : '';
          throw new Error(
            `${message}${here} (a domain built from an API description is kept only in the browser that built it)`,
          );
        });
        return DomainRuntime.create(domain, await (factory ??= sqlFactory()));
      })();
      r.catch(() => runtimes.delete(name));
      runtimes.set(name, r);
    }
    return r;
  };
  const taskOf = (domain: Domain, id: string): Task => {
    const task = domain.tasks.find((t) => t.id === id);
    if (!task) throw new Error(`domain ${domain.name} has no task "${id}"`);
    return task;
  };
  const freshSignal = (): AbortSignal => {
    if (abort.signal.aborted) abort = new AbortController();
    return abort.signal;
  };
  /** A name a built domain may take: an identifier that no built-in domain has. */
  const checkName = (name: string) => {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name))
      throw new Error(`name "${name}": must be an identifier (letters, digits, _)`);
    if (builtinDomainNames().includes(name))
      throw new Error(`${name}: a built-in domain has this name; choose another name`);
  };
  /** Load a built domain's files, gate it (when `gate`), and serve it under `name`. */
  const serveBuilt = async (name: string, files: Record<string, string>, gate: boolean): Promise<Domain> => {
    const { domainFromFiles } = await import('../../core/build-domain/index.ts');
    const domain = domainFromFiles(name, files);
    if (domain.name !== name) throw new Error(`${name}/domain.json: name is "${domain.name}", not "${name}"`);
    const runtime = await DomainRuntime.create(domain, await (factory ??= sqlFactory()));
    if (gate) {
      const report = await gateDomain(runtime);
      if (!report.accepted) throw refusal(name, report);
    }
    runtimes.set(name, Promise.resolve(runtime));
    opened.add(name);
    return domain;
  };

  return {
    async domainNames() {
      return [...builtinDomainNames(), ...[...opened].sort()];
    },

    async buildFromSpec(file, spec, options = {}, onProgress) {
      const core = await import('../../core/build-domain/index.ts');
      const base = file.split('/').pop() ?? file;
      const name = options.name ?? core.domainNameOf(typeof spec === 'string' ? base.replace(/\.[^.]*$/, '') : base);
      checkName(name);
      const text = typeof spec === 'string' ? spec : core.mergeMcpFiles(file, spec);
      const seed = options.seed ?? 0;
      const scaffold = core.buildDomainFiles(file, text, {
        name,
        language: options.language ?? 'en',
        tasks: options.tasks ?? 12,
        seed,
        source: base,
      });
      let files = scaffold.files;
      let agent: AgentReport | undefined;
      if (options.agent) {
        const signal = freshSignal();
        const total = (JSON.parse(files['tasks.json'] ?? '[]') as unknown[]).length;
        let done = 0;
        const [{ runCodeAgent }, client] = await Promise.all([
          import('../../core/build-domain/agent-step.ts'),
          builderClient(options.agent, signal, () => onProgress?.({ done: ++done, total })),
        ]);
        onProgress?.({ done, total });
        const stoppedError = () => new Error(`${name}: the build was stopped; nothing was built`);
        const step = await runCodeAgent({
          dir: name,
          files,
          client,
          seed,
          factory: await (factory ??= sqlFactory()),
        }).catch((e: unknown) => {
          throw signal.aborted ? stoppedError() : e;
        });
        if (signal.aborted) throw stoppedError();
        files = step.files;
        agent = step.report;
      }
      const report = agent ? { ...scaffold.report, agent } : scaffold.report;
      files = { ...files, 'build-report.json': `${JSON.stringify(report, null, 2)}\n` };
      const domain = await serveBuilt(name, files, true);
      return {
        name,
        tasks: domain.tasks.length,
        tools: domain.tools.length,
        tables: scaffold.report.tables.length,
        skipped: scaffold.report.skipped,
        ...(agent ? { agent } : {}),
        files,
      };
    },

    async openBuilt(name, files, options = {}) {
      checkName(name);
      const domain = await serveBuilt(name, files, options.gate ?? true);
      return { tasks: domain.tasks.length };
    },

    async forget(name) {
      if (builtinDomainNames().includes(name) || !opened.has(name)) return;
      opened.delete(name);
      runtimes.delete(name);
    },

    async loadLocal(id, onProgress) {
      const { device } = await local(id, onProgress);
      return { device };
    },

    async openTau2(files, folder) {
      const { TAU2_FILES, TELECOM_FILES, buildTau2Domain, buildTau2TelecomDomain } = await import(
        '../shared/tau2-domain.ts'
      );
      if (typeof files[TELECOM_FILES.db] === 'string' || folder.toLowerCase().includes('telecom')) {
        // tau2-bench's telecom folder: its base split (tau2's default) is loaded.
        const missing = Object.values(TELECOM_FILES).filter((f) => typeof files[f] !== 'string');
        if (missing.length)
          throw new Error(`${folder}: not tau2-bench's telecom data folder (missing ${missing.join(', ')})`);
        const keys = Object.keys(TELECOM_FILES) as (keyof typeof TELECOM_FILES)[];
        const name = 'tau2-telecom';
        const texts = Object.fromEntries(keys.map((k) => [k, files[TELECOM_FILES[k]]!.replace(/^\uFEFF/, '')]));
        const paths = Object.fromEntries(keys.map((k) => [k, `${folder}/${TELECOM_FILES[k]}`]));
        const domain = buildTau2TelecomDomain(
          { ...texts, schema: await tau2SchemaText(name) } as Parameters<typeof buildTau2TelecomDomain>[0],
          { ...paths, schema: `domains/${name}/schema.sql` } as Parameters<typeof buildTau2TelecomDomain>[1],
        );
        const runtime = DomainRuntime.create(domain, await (factory ??= sqlFactory()));
        await runtime;
        runtimes.set(name, runtime);
        opened.add(name);
        return { name, tasks: domain.tasks.length };
      }
      const missing = Object.values(TAU2_FILES).filter((f) => typeof files[f] !== 'string');
      if (missing.length) throw new Error(`${folder}: not a tau2-bench data folder (missing ${missing.join(', ')})`);
      const text = (f: string) => files[f]!.replace(/^\uFEFF/, '');
      const db = text(TAU2_FILES.db);
      const f = folder.toLowerCase();
      const name = f.includes('airline')
        ? 'tau2-airline'
        : f.includes('retail')
          ? 'tau2-retail'
          : /"flights"\s*:/.test(db)
            ? 'tau2-airline'
            : /"orders"\s*:/.test(db)
              ? 'tau2-retail'
              : null;
      if (!name) throw new Error(`${folder}: cannot tell whether this is tau2's airline or retail data`);
      const at = (file: string) => `${folder}/${file}`;
      const domain = buildTau2Domain(
        name,
        {
          db,
          tasks: text(TAU2_FILES.tasks),
          policy: text(TAU2_FILES.policy),
          splits: text(TAU2_FILES.splits),
          schema: await tau2SchemaText(name),
        },
        {
          db: at(TAU2_FILES.db),
          tasks: at(TAU2_FILES.tasks),
          policy: at(TAU2_FILES.policy),
          splits: at(TAU2_FILES.splits),
          schema: `domains/${name}/schema.sql`,
        },
      );
      const runtime = DomainRuntime.create(domain, await (factory ??= sqlFactory()));
      await runtime;
      runtimes.set(name, runtime);
      opened.add(name);
      return { name, tasks: domain.tasks.length };
    },

    async describe(name) {
      const runtime = await runtimeOf(name);
      const d = runtime.domain;
      const env = await runtime.open();
      try {
        const tables = [];
        for (const t of runtime.tables) {
          const [row] = await env.query(`SELECT count(*) AS n FROM ${ident(t.name)}`);
          tables.push({ name: t.name, columns: t.columns, primaryKey: t.primaryKey, rows: Number(row?.n ?? 0) });
        }
        return {
          name: d.name,
          language: d.language,
          roles: [...d.roles],
          greeting: d.greeting,
          policy: d.policy,
          rules: d.rules,
          checks: (d.ruleChecks ?? []).map((c) => ({
            rule: c.rule,
            description: c.description,
            policy: c.policy ?? null,
          })),
          tools: [...d.tools.map((t) => toolInfo(t, 'agent')), ...(d.userTools ?? []).map((t) => toolInfo(t, 'user'))],
          tasks: d.tasks,
          tables,
        };
      } finally {
        await env.close();
      }
    },

    async tableRows(name, table, options = {}) {
      const runtime = await runtimeOf(name);
      const info = runtime.tables.find((t) => t.name === table);
      if (!info) throw new Error(`domain ${name} has no table "${table}"`);
      const env = await runtime.open(options.taskId ? taskOf(runtime.domain, options.taskId) : undefined);
      try {
        const order = (info.primaryKey.length ? info.primaryKey : info.columns).map(ident).join(', ');
        const limit = Math.max(0, Math.floor(options.limit ?? 200));
        const rows = await env.query(`SELECT * FROM ${ident(table)} ORDER BY ${order} LIMIT ?`, [limit]);
        const [count] = await env.query(`SELECT count(*) AS n FROM ${ident(table)}`);
        return { table, columns: info.columns, rows, total: Number(count?.n ?? 0) };
      } finally {
        await env.close();
      }
    },

    async runCall(spec, onEvent, askCaller, host, noise) {
      const runtime = await runtimeOf(spec.domain);
      const task = taskOf(runtime.domain, spec.taskId);
      const signal = freshSignal();
      const stopped = () => signal.aborted;
      const pace = Math.max(0, spec.paceMs ?? 0);
      const gold = await replayGold(runtime, task);
      let user: UserSimulator;
      if (spec.user.kind === 'human') {
        if (!askCaller) throw new Error('a human caller needs askCaller');
        user = new HumanCaller(askCaller);
      } else if (spec.user.kind === 'replay') {
        user = new ReplayCaller(spec.user.turns);
      } else if (spec.user.kind === 'remote') {
        user = (await remoteCallers(spec.user))();
      } else {
        user = new ScriptedUser();
      }
      const kept: KeptAudio | undefined = spec.agent.kind === 'realtime' ? new Map() : undefined;
      const agent = (await agentFactory(spec.agent, local, kept))();
      // Live scores are computed in turn order, off the episode's path.
      let chain = Promise.resolve();
      const emit = (index: number, turn: Turn, turns: Turn[]) => {
        // Awaited: through comlink the callback resolves once the page has handled the event,
        // so every turn event arrives before the end event and before runCall resolves.
        chain = chain.then(async () => {
          await onEvent({ type: 'turn', index, turn, live: await liveScore(runtime, task, turns, gold) });
        });
      };
      // The agent's replies spoken (espeak-ng, the domain's language), in turn order.
      const speaker = spec.speakAgent && host ? await agentSpeaker(runtime.domain.language, host) : undefined;
      const seen: Turn[] = [];
      const channel =
        spec.channel && host
          ? await episodeChannel(spec, host, user instanceof HumanCaller ? user : undefined, noise, kept)
          : undefined;
      const trajectory = await runEpisode({
        ...(channel ? { channel } : {}),
        ...(channel && spec.channel?.duplex ? { duplex: {} } : {}),
        runtime,
        task,
        agent: paced(agent, pace, stopped),
        user: paced(user, spec.user.kind === 'human' ? 0 : pace, stopped),
        seed: spec.seed,
        clock: steppingClock(runtime.domain.now, 1000),
        ...(spec.maxSteps ? { maxSteps: spec.maxSteps } : {}),
        onTurn: (turn, index) => {
          seen.push(structuredClone(turn));
          emit(index, seen[index]!, seen.slice());
          if (speaker && turn.role === 'assistant' && turn.text.trim()) {
            const text = turn.text;
            // A reply that cannot be spoken stays text: the call goes on.
            chain = chain.then(() =>
              speaker(index, text).catch((e: unknown) => console.warn(`agent speech of turn ${index}: ${String(e)}`)),
            );
          }
        },
      });
      await chain;
      if (trajectory.valid) {
        trajectory.reward_info = await evaluate(runtime, task, trajectory.turns, {
          termination: trajectory.termination,
          gold,
        });
      }
      await onEvent({ type: 'end', trajectory, live: await liveScore(runtime, task, trajectory.turns, gold) });
      return trajectory;
    },

    async runTask(job, onTrajectory, host, noise) {
      const runtime = await runtimeOf(job.domain);
      const task = taskOf(runtime.domain, job.taskId);
      const signal = freshSignal();
      const kept: KeptAudio | undefined = job.agent.kind === 'realtime' ? new Map() : undefined;
      const agent = await agentFactory(job.agent, local, kept);
      const user = job.user.kind === 'remote' ? await remoteCallers(job.user) : () => new ScriptedUser();
      const channel =
        job.channel && host
          ? await episodeChannel({ preset: job.preset ?? 'clean', channel: job.channel }, host, undefined, noise, kept)
          : undefined;
      // The page's callback runs on another message channel than this method's reply: wait until
      // it has taken every trajectory before resolving.
      const delivered: Promise<unknown>[] = [];
      const { summary } = await runBatch({
        runtime,
        tasks: [task],
        agent,
        user,
        ...(channel ? { channel } : {}),
        trials: job.trials,
        seed: job.seed,
        concurrency: job.concurrency ?? 1,
        clock: () => steppingClock(runtime.domain.now, 1000),
        ...(job.maxSteps ? { maxSteps: job.maxSteps } : {}),
        onTrajectory: (t) => {
          delivered.push(Promise.resolve(onTrajectory(t)).catch(() => undefined));
        },
        signal,
      });
      await Promise.all(delivered);
      return summary.tasks[0]!;
    },

    async cancel() {
      abort.abort();
    },
  };
}
