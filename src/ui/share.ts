/**
 * Share links: a call's settings in the URL hash (`#/watch?domain=carrier&task=…&seed=0&…`).
 * Holds what determines the call — domain, task, seed, channel preset, participant kinds and
 * model settings — and the page's speech settings (`speak=1`: the agent's replies spoken;
 * `asr=<id>&asr_rev=<revision>`: the on-device recognizer of the caller's voice at its pinned
 * revision), and never an API key or the credentials or query of an endpoint URL, nor the
 * user's noise files (`noise=custom` only says they were used).
 */
import type {
  AgentSpec,
  CallSpec,
  EndpointSettings,
  ModelFlavor,
  PresetName,
  UserSpec,
} from '../adapters/browser/rollout-types.ts';

/** Channel presets (kept in step with `src/core/channel/presets.ts`, checked by a test). */
export const PRESETS: readonly PresetName[] = ['clean', 'control', 'regular', 'harsh'];
const FLAVORS: readonly ModelFlavor[] = ['vllm-omni', 'openai', 'vllm'];

/** A route of the page: the view and its parameters. */
export interface Route {
  view: string;
  params: URLSearchParams;
}

/** Parse `#/<view>?<params>`; an empty hash is the start view (`home`). */
export function parseHash(hash: string): Route {
  const body = hash.replace(/^#\/?/, '');
  const q = body.indexOf('?');
  const view = (q < 0 ? body : body.slice(0, q)) || 'home';
  return { view, params: new URLSearchParams(q < 0 ? '' : body.slice(q + 1)) };
}

/** `#/<view>?<params>`. */
export function formatHash(view: string, params?: URLSearchParams): string {
  const s = params?.toString() ?? '';
  return `#/${view}${s ? `?${s}` : ''}`;
}

/** An endpoint URL without user info, query or fragment (they may hold secrets). */
export function publicEndpoint(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '';
  }
}

/** A remote endpoint's shareable settings under `prefix` (`flavor`, `model`, `base`, `temperature`): never its key or URL credentials. */
function setEndpoint(p: URLSearchParams, prefix: string, e: EndpointSettings): void {
  p.set(`${prefix}flavor`, e.flavor);
  p.set(`${prefix}model`, e.model);
  const base = publicEndpoint(e.baseURL);
  if (base) p.set(`${prefix}base`, base);
  if (e.temperature !== undefined) p.set(`${prefix}temperature`, String(e.temperature));
}

/** The endpoint settings under `prefix` (see {@link setEndpoint}); the key is this machine's, never the link's. */
function getEndpoint(p: URLSearchParams, prefix: string): EndpointSettings {
  const flavor = p.get(`${prefix}flavor`) as ModelFlavor | null;
  const t = Number(p.get(`${prefix}temperature`));
  return {
    flavor: flavor && FLAVORS.includes(flavor) ? flavor : 'openai',
    model: p.get(`${prefix}model`) ?? '',
    baseURL: publicEndpoint(p.get(`${prefix}base`) ?? ''),
    ...(p.has(`${prefix}temperature`) && Number.isFinite(t) ? { temperature: t } : {}),
  };
}

/** A speech recognizer of the page's model manifest: its id and the revision the manifest pins. */
export interface RecognizerRef {
  id: string;
  revision: string;
}

/**
 * The share parameters of a call (without `run`); `asr` (the recognizer chosen for the caller's
 * voice) is added for a call a person makes (`user.kind === 'human'`), where it is used.
 */
export function specParams(spec: CallSpec, asr?: RecognizerRef): URLSearchParams {
  const p = new URLSearchParams();
  p.set('domain', spec.domain);
  p.set('task', spec.taskId);
  p.set('seed', String(spec.seed));
  p.set('preset', spec.preset);
  p.set('agent', spec.agent.kind);
  if (spec.agent.kind === 'remote') setEndpoint(p, '', spec.agent);
  if (spec.agent.kind === 'local') p.set('local', spec.agent.id);
  p.set('user', spec.user.kind);
  if (spec.user.kind === 'remote') setEndpoint(p, 'user_', spec.user);
  // A person's call: their words, one `said` each, in order.
  if (spec.user.kind === 'replay') for (const t of spec.user.turns) p.append('said', t);
  if (spec.maxSteps !== undefined) p.set('max_steps', String(spec.maxSteps));
  if (spec.channel) {
    p.set('audio', '1');
    if (spec.channel.dropout) p.set('dropout', String(spec.channel.dropout));
    if (spec.channel.bargeIn) p.set('barge_in', String(spec.channel.bargeIn));
    if (spec.channel.duplex) p.set('duplex', '1');
    // The user's noise files stay in their tab: the link only says a custom bank was used.
    if (spec.channel.noise?.length) p.set('noise', 'custom');
  }
  if (spec.speakAgent) p.set('speak', '1');
  if (asr && spec.user.kind === 'human') {
    p.set('asr', asr.id);
    p.set('asr_rev', asr.revision);
  }
  return p;
}

/** The share link of a call: `<page>#/watch?…&run=1` (opening it runs the call). */
export function shareLink(pageUrl: string, spec: CallSpec, asr?: RecognizerRef): string {
  const p = specParams(spec, asr);
  p.set('run', '1');
  const base = pageUrl.replace(/#.*$/, '');
  // A call to make yourself opens the call view; a recorded one (replay) is watched.
  return `${base}${formatHash(spec.user.kind === 'human' ? 'call' : 'watch', p)}`;
}

/** At most this many recorded caller turns are read from a link. */
const MAX_SAID = 200;

function intParam(p: URLSearchParams, name: string): number | undefined {
  const v = p.get(name);
  if (v === null || !/^\d{1,9}$/.test(v)) return undefined;
  return Number(v);
}

/**
 * Read call settings from hash parameters. Missing or invalid values are left out (the view
 * keeps its defaults); a remote agent or caller takes its key from this machine, never from the link.
 */
export function paramsSpec(
  p: URLSearchParams,
): Partial<Omit<CallSpec, 'agent' | 'user'>> & { agent?: AgentSpec; user?: UserSpec } {
  const out: Partial<Omit<CallSpec, 'agent' | 'user'>> & { agent?: AgentSpec; user?: UserSpec } = {};
  const domain = p.get('domain');
  if (domain) out.domain = domain;
  const task = p.get('task');
  if (task) out.taskId = task;
  const seed = intParam(p, 'seed');
  if (seed !== undefined) out.seed = seed;
  const preset = p.get('preset');
  if (preset && (PRESETS as readonly string[]).includes(preset)) out.preset = preset as PresetName;
  const agent = p.get('agent');
  if (agent === 'reference' || agent === 'noop') out.agent = { kind: agent };
  const localId = p.get('local');
  if (agent === 'local' && localId && /^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(localId))
    out.agent = { kind: 'local', id: localId };
  if (agent === 'remote') out.agent = { kind: 'remote', ...getEndpoint(p, '') };
  // A realtime agent is named by kind only: its URL (which may hold a key) is never in a link.
  if (agent === 'realtime') out.agent = { kind: 'realtime', url: '' };
  const user = p.get('user');
  if (user === 'scripted' || user === 'human') out.user = { kind: user };
  if (user === 'remote') out.user = { kind: 'remote', ...getEndpoint(p, 'user_') };
  if (user === 'replay') out.user = { kind: 'replay', turns: p.getAll('said').slice(0, MAX_SAID) };
  const steps = intParam(p, 'max_steps');
  if (steps) out.maxSteps = steps;
  if (p.has('audio')) {
    const prob = (name: string) => {
      const v = Number(p.get(name) ?? 0);
      return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
    };
    out.channel =
      p.get('audio') === '1'
        ? {
            dropout: prob('dropout'),
            bargeIn: prob('barge_in'),
            ...(p.get('duplex') === '1' ? { duplex: true } : {}),
          }
        : undefined;
  }
  if (p.get('speak') === '1') out.speakAgent = true;
  return out;
}

/** A link value quoted for a message: JSON, at most 60 characters of it. */
function quoted(v: string): string {
  return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
}

/**
 * The speech settings of a link checked against this page: `speak` must be `1` or `0`, and
 * `asr` / `asr_rev` must name one of `recognizers` (this page's manifest) at the revision it
 * pins, or the recognizer is not preselected and the reason is given. Link values appear in the
 * messages quoted and cut to 60 characters; nothing else does.
 * @param recognizers this page's speech recognizers (manifest id and pinned revision)
 * @returns the recognizer to preselect (if any) and one message per bad value
 */
export function linkedSpeech(
  p: URLSearchParams,
  recognizers: readonly RecognizerRef[],
): { asrId?: string; errors: string[] } {
  const errors: string[] = [];
  const speak = p.get('speak');
  if (speak !== null && speak !== '1' && speak !== '0')
    errors.push(`The link's speak=${quoted(speak)} is not 1 or 0: the agent's replies are not spoken.`);
  const id = p.get('asr');
  const revision = p.get('asr_rev');
  if (id === null) {
    if (revision !== null) errors.push('The link gives asr_rev without asr: no speech recognizer is chosen.');
    return { errors };
  }
  const known = recognizers.find((r) => r.id === id);
  if (!known) {
    const has = recognizers.map((r) => r.id).join(', ') || 'none';
    errors.push(
      `The link's speech recognizer ${quoted(id)} is not in this page's model manifest (it has: ${has}); pick one below.`,
    );
  } else if (revision !== known.revision) {
    errors.push(
      revision === null
        ? `The link names speech recognizer ${id} without its revision (asr_rev); this page pins ${known.revision}. Pick it below to use this page's.`
        : `The link's speech recognizer ${id} is at revision ${quoted(revision)}; this page pins ${known.revision}, whose words may differ. Pick it below to use this page's.`,
    );
  } else return { asrId: id, errors };
  return { errors };
}
