/**
 * API keys of remote endpoints in the page, bound to origins.
 *
 * A key typed in the page is saved (localStorage only) for the origin of the base URL it was
 * typed for, scheme + host + port ({@link endpointOrigin}), and is given to a call only when
 * the call's base URL has that same origin. So a share link naming another endpoint never
 * receives a saved key, whatever else it says. Pure functions over a {@link KeyRing}; storage is
 * in `runtime.ts`.
 */
import { endpointOrigin } from '../adapters/shared/endpoint-secrets.ts';
import type { AgentSpec, EndpointSettings, UserSpec } from '../adapters/browser/rollout-types.ts';

/** Saved keys by origin, e.g. `{"https://api.example": "sk-…"}`. */
export type KeyRing = Readonly<Record<string, string>>;

/** The key saved for `baseURL`'s origin, or undefined (no key, or not an http(s) URL). */
export function keyFor(ring: KeyRing, baseURL: string): string | undefined {
  const origin = endpointOrigin(baseURL);
  return origin !== null && Object.hasOwn(ring, origin) ? ring[origin] : undefined;
}

/**
 * `ring` with `key` saved for `baseURL`'s origin (an empty key forgets it). A base URL that is
 * not an http(s) URL has no origin and gets no key: `ring` is returned unchanged.
 */
export function withKey(ring: KeyRing, baseURL: string, key: string): KeyRing {
  const origin = endpointOrigin(baseURL);
  if (origin === null) return ring;
  const { [origin]: _, ...rest } = ring;
  return key ? { ...rest, [origin]: key } : rest;
}

/** One remote participant of a call: who it is and the base URL it will call. */
export interface RemoteEndpoint {
  who: 'agent' | 'caller';
  baseURL: string;
}

/**
 * The remote endpoints of a share link that the user must confirm before anything is sent:
 * those whose origin differs from the endpoint saved in this browser for the same participant
 * (or when none is saved, or the URL has no origin). An empty list means the link only names
 * endpoints the user already chose, and `run=1` may start the call.
 */
export function endpointsToConfirm(
  linked: readonly RemoteEndpoint[],
  saved: Readonly<Partial<Record<RemoteEndpoint['who'], string>>>,
): RemoteEndpoint[] {
  return linked.filter((e) => {
    const mine = saved[e.who];
    const origin = endpointOrigin(e.baseURL);
    return mine === undefined || origin === null || origin !== endpointOrigin(mine);
  });
}

/** Shared settings of a remote participant over this machine's saved ones: the link picks flavor, model, base URL and temperature; never a key. */
export function sharedOver(saved: EndpointSettings, shared: EndpointSettings): EndpointSettings {
  const { apiKey: _, ...mine } = saved;
  return {
    ...mine,
    flavor: shared.flavor,
    model: shared.model,
    baseURL: shared.baseURL || saved.baseURL,
    ...(shared.temperature !== undefined ? { temperature: shared.temperature } : {}),
  };
}

/**
 * What a share link does to the remote endpoints of a call: the agent's and the caller's
 * settings (the link's over the saved ones, or `fallback` when none are saved) and which of them
 * must be confirmed before anything is sent ({@link endpointsToConfirm}). `withCaller`: the
 * view has a remote caller slot (Watch, not Call).
 */
export function openLink(
  link: { agent?: AgentSpec; user?: UserSpec },
  saved: { agent?: EndpointSettings; caller?: EndpointSettings },
  fallback: EndpointSettings,
  withCaller: boolean,
): { agent: EndpointSettings; caller: EndpointSettings; confirm: RemoteEndpoint[] } {
  const a = saved.agent ?? fallback;
  const c = saved.caller ?? fallback;
  const agent = link.agent?.kind === 'remote' ? sharedOver(a, link.agent) : a;
  const caller = link.user?.kind === 'remote' ? sharedOver(c, link.user) : c;
  const linked: RemoteEndpoint[] = [];
  if (link.agent?.kind === 'remote') linked.push({ who: 'agent', baseURL: agent.baseURL });
  if (withCaller && link.user?.kind === 'remote') linked.push({ who: 'caller', baseURL: caller.baseURL });
  const confirm = endpointsToConfirm(linked, {
    ...(saved.agent ? { agent: saved.agent.baseURL } : {}),
    ...(saved.caller ? { caller: saved.caller.baseURL } : {}),
  });
  return { agent, caller, confirm };
}
