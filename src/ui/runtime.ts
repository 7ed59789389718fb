/**
 * Page-wide services: the main rollout worker (browse and single calls), the trajectory store,
 * and the remote endpoint settings kept in this browser's localStorage only.
 */
import { startRolloutWorker, type RolloutWorker } from '../adapters/browser/rollout-client.ts';
import { openTrajectoryStore, type TrajectoryStore } from '../adapters/browser/trajectory-store.ts';
import type { EndpointSettings, NoiseFile } from '../adapters/browser/rollout-types.ts';

let main: RolloutWorker | undefined;

/** The page's main rollout worker, started on first use. */
export function mainWorker(): RolloutWorker {
  return (main ??= startRolloutWorker());
}

/** The user's noise recordings for channel-audio calls: kept for this tab's session only. */
let noiseFiles: readonly NoiseFile[] = [];

/** The session's noise files (empty: the presets' own noises). */
export function sessionNoise(): readonly NoiseFile[] {
  return noiseFiles;
}

/** Replace the session's noise files. */
export function setSessionNoise(files: readonly NoiseFile[]): void {
  noiseFiles = files;
}

/** The files of tau2-bench folders opened in Browse, by domain name, for the batch workers. */
const tau2Folders = new Map<string, { files: Record<string, string>; folder: string }>();

/** Remember an opened tau2-bench folder (the main worker has loaded it). */
export function rememberTau2(name: string, files: Record<string, string>, folder: string): void {
  tau2Folders.set(name, { files, folder });
}

/** The opened tau2-bench folder of domain `name`, if any. */
export function openedTau2(name: string): { files: Record<string, string>; folder: string } | undefined {
  return tau2Folders.get(name);
}

let store: TrajectoryStore | undefined;

/** The trajectory store. */
export function trajectoryStore(): TrajectoryStore {
  return (store ??= openTrajectoryStore());
}

const ENDPOINT_KEY = 'switchboard.endpoint';

/** Where the remote caller's endpoint (key included) is kept, apart from the agent's. */
export const CALLER_ENDPOINT_KEY = 'switchboard.caller-endpoint';

/** The saved remote endpoint (the agent's, or another under `key`), or defaults. */
export function loadEndpoint(key: string = ENDPOINT_KEY): EndpointSettings {
  const fallback: EndpointSettings = { flavor: 'openai', baseURL: 'http://127.0.0.1:8000/v1', model: '', apiKey: '' };
  try {
    const raw = localStorage.getItem(key);
    return raw ? { ...fallback, ...(JSON.parse(raw) as Partial<EndpointSettings>) } : fallback;
  } catch {
    return fallback;
  }
}

/** Save the remote endpoint (key included) in localStorage; it is sent nowhere else. */
export function saveEndpoint(e: EndpointSettings, key: string = ENDPOINT_KEY): void {
  localStorage.setItem(key, JSON.stringify(e));
}

/** A unique id for records and batches. */
export function newId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** Message of anything thrown. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
