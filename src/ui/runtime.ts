/**
 * Page-wide services: the main rollout worker (browse and single calls), the trajectory store,
 * and the remote endpoint settings kept in this browser's localStorage only.
 */
import { startRolloutWorker, type RolloutWorker } from '../adapters/browser/rollout-client.ts';
import { openTrajectoryStore, type TrajectoryStore } from '../adapters/browser/trajectory-store.ts';
import type { EndpointSettings } from '../adapters/browser/rollout-types.ts';

let main: RolloutWorker | undefined;

/** The page's main rollout worker, started on first use. */
export function mainWorker(): RolloutWorker {
  return (main ??= startRolloutWorker());
}

/** Stop the main worker (a stuck call); the next use starts a new one. */
export function restartMainWorker(): void {
  main?.terminate();
  main = undefined;
}

let store: TrajectoryStore | undefined;

/** The trajectory store. */
export function trajectoryStore(): TrajectoryStore {
  return (store ??= openTrajectoryStore());
}

const ENDPOINT_KEY = 'switchboard.endpoint';

/** The saved remote endpoint, or defaults. */
export function loadEndpoint(): EndpointSettings {
  const fallback: EndpointSettings = { flavor: 'openai', baseURL: 'http://127.0.0.1:8000/v1', model: '', apiKey: '' };
  try {
    const raw = localStorage.getItem(ENDPOINT_KEY);
    return raw ? { ...fallback, ...(JSON.parse(raw) as Partial<EndpointSettings>) } : fallback;
  } catch {
    return fallback;
  }
}

/** Save the remote endpoint (key included) in localStorage; it is sent nowhere else. */
export function saveEndpoint(e: EndpointSettings): void {
  localStorage.setItem(ENDPOINT_KEY, JSON.stringify(e));
}

/** A unique id for records and batches. */
export function newId(): string {
  return typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** Message of anything thrown. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
