/**
 * Page-wide services: the main rollout worker (browse and single calls), the trajectory store,
 * and the remote endpoint settings and their API keys (bound to origins) kept in this browser's
 * localStorage only.
 */
import { startRolloutWorker, type RolloutWorker } from '../adapters/browser/rollout-client.ts';
import { markInterrupted, openTrajectoryStore, type TrajectoryStore } from '../adapters/browser/trajectory-store.ts';
import type { EndpointSettings, NoiseFile } from '../adapters/browser/rollout-types.ts';
import type { BrowserRecognizer } from '../adapters/browser/local-model.ts';
import { redactText } from '../adapters/shared/endpoint-secrets.ts';
import { keyFor, withKey, type KeyRing } from './endpoint-keys.ts';

let main: RolloutWorker | undefined;

/** The page's main rollout worker, started on first use. */
export function mainWorker(): RolloutWorker {
  return (main ??= startRolloutWorker());
}

/** The speech recognizer loaded for the microphone (one at a time), and its id. */
let recognizer: { id: string; loaded: Promise<BrowserRecognizer> } | undefined;

/**
 * Load speech recognizer `id` of the bundled manifest in its own model worker (downloaded from
 * the Hub on first use, then cached); replaces another loaded recognizer. Resolves with the
 * device it runs on.
 */
export async function loadRecognizer(
  id: string,
  onProgress?: (p: { file: string; loaded: number; total: number }) => void,
): Promise<{ device: string }> {
  if (recognizer?.id !== id) {
    const previous = recognizer?.loaded;
    const loaded = Promise.all([
      import('../adapters/browser/local-model.ts'),
      import('../adapters/browser/model-hub.ts'),
    ]).then(([{ browserRecognizer }, { MODEL_HUB, MODEL_MANIFEST }]) =>
      browserRecognizer(id, {
        host: new URL(MODEL_HUB, location.href).href,
        manifest: MODEL_MANIFEST,
        ...(onProgress ? { onProgress } : {}),
      }),
    );
    recognizer = { id, loaded };
    loaded.catch(() => {
      if (recognizer?.loaded === loaded) recognizer = undefined;
    });
    void previous?.then((r) => r.dispose()).catch(() => undefined);
  }
  const { device } = await recognizer!.loaded;
  return { device };
}

/** The loaded speech recognizer, if one has finished loading. */
export async function loadedRecognizer(): Promise<BrowserRecognizer | undefined> {
  return recognizer?.loaded.catch(() => undefined);
}

/** The user's noise recordings for channel-audio calls: kept for this tab's session only. */
let noiseFiles: readonly NoiseFile[] = [];

/** The session's noise files (empty: the presets' own noises). */
export function sessionNoise(): readonly NoiseFile[] {
  return noiseFiles;
}

/** Replace the session's noise files with the WAV files of `list` (null clears them); resolves with them. */
export async function pickSessionNoise(list: FileList | null): Promise<readonly NoiseFile[]> {
  const wavs = [...(list ?? [])].filter((f) => /\.wav$/i.test(f.name));
  noiseFiles = await Promise.all(
    wavs.map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })),
  );
  return noiseFiles;
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
let swept: Promise<unknown> = Promise.resolve();

/** Id of this page load: the owner of the records it writes while a call runs. */
export const PAGE_ID = newId();
const LOCK_PREFIX = 'switchboard-page-';

/**
 * Hold a Web Lock named for this page load as long as the page lives, so other tabs can tell
 * its running calls from those of closed pages (`navigator.locks.query`). Without Web Locks
 * every running record of another page load counts as interrupted.
 */
function holdPageLock(): void {
  void navigator.locks?.request(`${LOCK_PREFIX}${PAGE_ID}`, () => new Promise<void>(() => undefined));
}

/** The page loads still open (this one and other tabs), by their ids. */
async function openPages(): Promise<Set<string>> {
  const held = (await navigator.locks?.query().catch(() => undefined))?.held ?? [];
  const ids = held.map((l) => l.name ?? '').filter((n) => n.startsWith(LOCK_PREFIX));
  return new Set([PAGE_ID, ...ids.map((n) => n.slice(LOCK_PREFIX.length))]);
}

/**
 * The trajectory store. Opening it (once per page load) marks the calls that a closed page
 * left `running` as `interrupted` ({@link markInterrupted}); {@link storeSwept} waits for that.
 */
export function trajectoryStore(): TrajectoryStore {
  if (!store) {
    holdPageLock();
    const opened = openTrajectoryStore();
    store = opened;
    swept = openPages()
      .then((live) => markInterrupted(opened, (owner) => live.has(owner)))
      .catch(() => undefined);
  }
  return store;
}

/** The store once interrupted calls have been marked. */
export async function storeSwept(): Promise<TrajectoryStore> {
  const s = trajectoryStore();
  await swept;
  return s;
}

const ENDPOINT_KEY = 'switchboard.endpoint';

/** Where the remote caller's endpoint settings are kept, apart from the agent's. */
export const CALLER_ENDPOINT_KEY = 'switchboard.caller-endpoint';

/** Where API keys are kept, by origin (see `endpoint-keys.ts`). */
const KEYS_KEY = 'switchboard.keys';

/** The endpoint settings before any are saved (a local vLLM's default address). */
export const DEFAULT_ENDPOINT: EndpointSettings = { flavor: 'openai', baseURL: 'http://127.0.0.1:8000/v1', model: '' };

function readJson<T>(key: string): T | undefined {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The saved API keys by origin. */
export function loadKeys(): KeyRing {
  const ring = readJson<Record<string, unknown>>(KEYS_KEY) ?? {};
  return Object.fromEntries(Object.entries(ring).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The API key saved for `baseURL`'s origin, if any (see `endpoint-keys.ts`). */
export function endpointKey(baseURL: string): string | undefined {
  return keyFor(loadKeys(), baseURL);
}

/** Save `key` for `baseURL`'s origin (empty: forget it); nothing is saved for a URL without an origin. */
export function saveEndpointKey(baseURL: string, key: string): void {
  localStorage.setItem(KEYS_KEY, JSON.stringify(withKey(loadKeys(), baseURL, key)));
}

/**
 * The saved remote endpoint settings (the agent's, or another under `key`), without the key,
 * or undefined when none is saved. Settings saved by earlier versions with an `apiKey` inside
 * are migrated: the key moves to the key ring, bound to the origin of the base URL it was saved with.
 */
export function savedEndpoint(key: string = ENDPOINT_KEY): EndpointSettings | undefined {
  const raw = readJson<Partial<EndpointSettings>>(key);
  if (!raw) return undefined;
  const { apiKey, ...settings } = { ...DEFAULT_ENDPOINT, ...raw };
  if (apiKey !== undefined) {
    if (apiKey && !endpointKey(settings.baseURL)) saveEndpointKey(settings.baseURL, apiKey);
    localStorage.setItem(key, JSON.stringify(settings));
  }
  return settings;
}

/** The saved remote endpoint settings (without the key), or defaults. */
export function loadEndpoint(key: string = ENDPOINT_KEY): EndpointSettings {
  return savedEndpoint(key) ?? { ...DEFAULT_ENDPOINT };
}

/** Save the remote endpoint's settings in localStorage, never its key (that is in the key ring). */
export function saveEndpoint(e: EndpointSettings, key: string = ENDPOINT_KEY): void {
  const { apiKey: _, ...settings } = e;
  localStorage.setItem(key, JSON.stringify(settings));
}

/** The page's realtime agent settings (saved in localStorage; its key is in the key ring, by the URL's origin). */
export interface RealtimeSettings {
  /** `ws://` or `wss://` URL of the server, e.g. `wss://api.openai.com/v1/realtime`. */
  url: string;
  /** Model, sent as the URL's `model` query parameter when given. */
  model: string;
  dialect: 'ga' | 'beta';
}

const REALTIME_KEY = 'switchboard.realtime';

/** The saved realtime agent settings, or empty ones. */
export function loadRealtime(): RealtimeSettings {
  const raw = readJson<Partial<RealtimeSettings>>(REALTIME_KEY) ?? {};
  return {
    url: typeof raw.url === 'string' ? raw.url : '',
    model: typeof raw.model === 'string' ? raw.model : '',
    dialect: raw.dialect === 'beta' ? 'beta' : 'ga',
  };
}

/** Save the realtime agent settings (never a key). */
export function saveRealtime(s: RealtimeSettings): void {
  localStorage.setItem(REALTIME_KEY, JSON.stringify({ url: s.url, model: s.model, dialect: s.dialect }));
}

/** A unique id for records and batches. */
export function newId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** Message of anything thrown, as shown on the page: endpoint URLs in it are redacted (`endpoint-secrets.ts`). */
export function errorText(e: unknown): string {
  return redactText(e instanceof Error ? e.message : String(e));
}
