/**
 * Plain-data messages between the page and `workers/rollout.worker.ts` (through comlink). Type
 * imports only on the page side: the page bundle does not pull in the core, the domains or
 * sql.js.
 */
import type { PresetName } from '../../core/channel/presets.ts';
import type { AudioGraph } from '../../core/channel/graph.ts';
import type { RemoteFlavor as ModelFlavor } from '../../core/ports/model-client.ts';
import type { SqlRow } from '../../core/ports/sql-db.ts';
import type { ToolKind } from '../../core/schema/domain.ts';
import type { PolicyRule } from '../../core/schema/policy.ts';
import type { Task } from '../../core/schema/task.ts';
import type { AssertionVerdict, RewardInfo, Trajectory, Turn } from '../../core/schema/trajectory.ts';

export type { PresetName, Task, Trajectory, Turn, RewardInfo, AssertionVerdict, SqlRow, ModelFlavor };

/** A remote OpenAI-compatible endpoint. `apiKey` stays on this machine: it is never recorded or shared. */
export interface EndpointSettings {
  flavor: ModelFlavor;
  baseURL: string;
  model: string;
  apiKey?: string;
  temperature?: number;
}

/** Who the agent is. */
export type AgentSpec =
  | { kind: 'reference' }
  | { kind: 'noop' }
  | ({ kind: 'remote' } & EndpointSettings)
  /** An on-device agent of the models folder's manifest (`models/manifest.json`), run in a model worker. */
  | { kind: 'local'; id: string }
  /**
   * A voice agent behind an OpenAI-Realtime-compatible WebSocket server (`ws:`/`wss:` URL), over
   * the browser's WebSocket. The browser's WebSocket sends no `Authorization` header: `apiKey`
   * goes as the subprotocol `openai-insecure-api-key.<key>` beside `realtime` (OpenAI's way for
   * browsers; use a short-lived key), and is never stored or shared.
   */
  | { kind: 'realtime'; url: string; dialect?: 'ga' | 'beta'; apiKey?: string };

/**
 * Who the caller is: the scripted simulator, the person at the keyboard, a model behind a
 * remote OpenAI-compatible endpoint (a `ModelUser`, prompted from the task), or a person's
 * recorded turns replayed.
 */
export type UserSpec =
  | { kind: 'scripted' }
  | { kind: 'human' }
  | ({ kind: 'remote' } & EndpointSettings)
  /**
   * A person's recorded call replayed: `turns` are what they sent, in order (a hang-up keeps its
   * `###STOP###`); past the last one the caller hangs up. Their microphone audio is not replayed:
   * with channel audio each turn is spoken by TTS.
   */
  | { kind: 'replay'; turns: string[] };

/** Everything that determines one call. With scripted participants it replays bit for bit. */
export interface CallSpec {
  domain: string;
  taskId: string;
  seed: number;
  /** Channel preset of the caller's audio (recorded; audio rendering plugs in here). */
  preset: PresetName;
  agent: AgentSpec;
  user: UserSpec;
  /** Participant turns before `max_steps`. Default 100. */
  maxSteps?: number;
  /** Pause before every participant turn, ms, so a person can follow the call. Default 0. */
  paceMs?: number;
  /**
   * Speak caller turns (espeak-ng) and put them through the preset's channel; the page renders
   * the graphs and keeps the WAVs ({@link ChannelHost}). Absent: text only.
   */
  channel?: ChannelSettings;
  /**
   * Speak every agent reply with espeak-ng in the domain's language and keep it as a 16 kHz WAV
   * named {@link agentSpeechName} through the {@link ChannelHost} (the page plays it). What the
   * agent says is unchanged; a share link carries it as `speak=1`.
   */
  speakAgent?: boolean;
}

/** The stored name of the agent's spoken reply at trajectory turn `index`. */
export function agentSpeechName(index: number): string {
  return `agent-speech/turn-${index}.wav`;
}

/** Channel settings of a call beyond the preset (CLI `--dropout`, `--barge-in`). */
export interface ChannelSettings {
  /** Probability that a caller turn is cut off mid-way. */
  dropout: number;
  /** Probability that the caller barges in on an agent reply. */
  bargeIn: number;
  /**
   * File names of the user's noise recordings when the call used them as its noise bank (the
   * recordings go to `runCall` apart from the spec, and never into a share link).
   */
  noise?: string[];
  /**
   * Issue 17: run the call on the full-duplex timeline (the CLI's `--duplex`): the trajectory
   * gains `duplex` with the call's interaction metrics.
   */
  duplex?: boolean;
}

/** A noise recording the user chose (a WAV file's name and bytes); see `noise-bank.ts` in the core. */
export interface NoiseFile {
  name: string;
  bytes: Uint8Array;
}

/** What the page does for the worker's channel: render graphs (OfflineAudioContext is page-only) and keep WAVs. */
export interface ChannelHost {
  render(graph: AudioGraph): Promise<Float32Array>;
  /** Store a WAV under `name` (the CLI's relative path); returns the reference. */
  put(name: string, bytes: Uint8Array): Promise<string>;
}

/** One tool of a domain, for display. */
export interface ToolInfo {
  name: string;
  kind: ToolKind;
  description: string;
  /** `side`: agent tool or caller-side user tool. */
  side: 'agent' | 'user';
  /** Parameter name → JSON-Schema type text (e.g. `string`, `number`, `"a" | "b"`), required first. */
  params: { name: string; type: string; required: boolean; description: string }[];
}

/** A domain as the Browse view shows it. */
export interface DomainInfo {
  name: string;
  language: string;
  roles: readonly string[];
  greeting: string;
  policy: string;
  rules: PolicyRule[];
  /** The policy's executable rule checks (`domains/<name>/rules.ts`): id, what it checks, the policy text it quotes. */
  checks: { rule: string; description: string; policy: string | null }[];
  tools: ToolInfo[];
  tasks: Task[];
  /** Table name → columns and primary key. */
  tables: { name: string; columns: string[]; primaryKey: string[]; rows: number }[];
}

/** Rows of one table. */
export interface TableRows {
  table: string;
  columns: string[];
  rows: SqlRow[];
  /** Rows in the table (may exceed `rows.length` when limited). */
  total: number;
}

/** Whitelist status of one agent tool call. */
export type WhitelistStatus = 'inside' | 'outside' | 'no-writes' | 'unchecked';

/** One tool call as the live score panel shows it. */
export interface LiveToolCall {
  /** Index of the tool turn in the trajectory. */
  turn: number;
  name: string;
  requestor: 'assistant' | 'user';
  kind: ToolKind | null;
  ok: boolean;
  /** Process reward of the call (agent calls only; `null` for the caller's own tools). */
  process: number | null;
  whitelist: WhitelistStatus;
  /** Offending writes (`table[key].column (…)`) when outside the whitelist. */
  offending: string[];
  /** Column writes the call made. */
  writes: number;
}

/** Score of a call so far, recomputed by the core after every turn. */
export interface LiveScore {
  calls: LiveToolCall[];
  /** Sum of the process rewards so far (no final reward yet). */
  processTotal: number;
  /** Database changes since the task's initial state, one line each (`bills[B1].status: "unpaid" → "paid"`). */
  diff: string[];
  /** Assertion and rule-check verdicts on the turns so far. */
  assertions: AssertionVerdict[];
  /** QUALITY veto hits so far (`turn 5: formatting (bullet list)`). */
  quality: string[];
}

/** What the worker reports while a call runs. */
export type CallEvent =
  | { type: 'turn'; index: number; turn: Turn; live: LiveScore }
  | { type: 'end'; trajectory: Trajectory; live: LiveScore };

/**
 * The human caller's answer: words, and optionally their recorded voice (mono 16 kHz samples),
 * which then replaces TTS for this turn and goes through the channel like any caller speech.
 */
export interface CallerAnswer {
  text: string;
  speech?: Float32Array;
}

/** What the human caller sees when it is their turn. */
export interface CallerPrompt {
  /** The agent's last words. */
  agentText: string;
  turns: number;
}

/** One task's share of a batch. */
export interface BatchJob {
  domain: string;
  taskId: string;
  trials: number;
  seed: number;
  agent: AgentSpec;
  /** The scripted caller, or a model caller at a remote endpoint (a new `ModelUser` per rollout). */
  user: { kind: 'scripted' } | ({ kind: 'remote' } & EndpointSettings);
  /** Channel preset of the caller's audio when `channel` is set. Default `clean`. */
  preset?: PresetName;
  /**
   * Speak caller turns and put them through the preset's channel, as a call does; the page
   * renders the graphs ({@link ChannelHost}). Absent: text only.
   */
  channel?: ChannelSettings;
  maxSteps?: number;
  /** Rollouts of this task in flight at once inside the worker. Default 1. */
  concurrency?: number;
}
