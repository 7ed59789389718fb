/**
 * Share links: a call's settings in the URL hash (`#/watch?domain=carrier&task=…&seed=0&…`).
 * Holds what determines the call — domain, task, seed, channel preset, participant kinds and
 * model settings — and never an API key or the credentials or query of an endpoint URL, nor
 * the user's noise files (`noise=custom` only says they were used).
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

/** The share parameters of a call (without `run`). */
export function specParams(spec: CallSpec): URLSearchParams {
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
  return p;
}

/** The share link of a call: `<page>#/watch?…&run=1` (opening it runs the call). */
export function shareLink(pageUrl: string, spec: CallSpec): string {
  const p = specParams(spec);
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
  return out;
}
