/** The agent and caller choosers, and their settings forms, shared by the Watch / Call and Batch views. */
import type { ComponentChildren } from 'preact';
import type { AgentSpec, EndpointSettings } from '../../adapters/browser/rollout-types.ts';
import { CALLER_ENDPOINT_KEY, type RealtimeSettings } from '../runtime.ts';
import { EndpointForm, endpointSpec } from './endpoint-form.tsx';
import { LocalAgentPicker } from './local-agent.tsx';
import { RealtimeForm, realtimeSpec } from './realtime-form.tsx';

/** Who the page's forms offer as the agent. */
export type AgentKind = AgentSpec['kind'];

/** The agent spec of the forms' choice (a remote endpoint's or realtime agent's key from the key ring). */
export function agentSpecFor(
  kind: AgentKind,
  forms: { endpoint: EndpointSettings; localId: string; realtime: RealtimeSettings },
): AgentSpec {
  switch (kind) {
    case 'remote':
      return { kind: 'remote', ...endpointSpec(forms.endpoint) };
    case 'local':
      return { kind: 'local', id: forms.localId };
    case 'realtime':
      return realtimeSpec(forms.realtime);
    default:
      return { kind };
  }
}

/** The agent chooser (element id `id`). */
export function AgentSelect({
  id,
  value,
  onChange,
  disabled,
}: {
  id: string;
  value: AgentKind;
  onChange(kind: AgentKind): void;
  disabled: boolean;
}) {
  return (
    <label>
      Agent{' '}
      <select id={id} value={value} disabled={disabled} onChange={(e) => onChange(e.currentTarget.value as AgentKind)}>
        <option value="reference">reference (replays the gold solution; does not listen)</option>
        <option value="noop">do-nothing</option>
        <option value="remote">remote endpoint</option>
        <option value="local">on-device model</option>
        <option value="realtime">realtime voice agent (OpenAI-Realtime WebSocket)</option>
      </select>
    </label>
  );
}

/** The caller chooser (element id `id`): scripted or a model at a remote endpoint, plus `more` options. */
export function CallerSelect<K extends string>({
  id,
  value,
  onChange,
  disabled,
  more,
}: {
  id: string;
  value: K;
  onChange(kind: NoInfer<K>): void;
  disabled: boolean;
  more?: ComponentChildren;
}) {
  return (
    <label>
      Caller{' '}
      <select id={id} value={value} disabled={disabled} onChange={(e) => onChange(e.currentTarget.value as K)}>
        <option value="scripted">scripted (replays the task's script)</option>
        <option value="remote">model at a remote endpoint</option>
        {more}
      </select>
    </label>
  );
}

/**
 * The settings forms of the chosen participants: the agent's endpoint or on-device model, and the
 * model caller's endpoint (its key saved under the caller's storage key).
 */
export function ParticipantForms({
  agentKind,
  endpoint,
  setEndpoint,
  localId,
  setLocalId,
  callerRemote,
  callerEndpoint,
  setCallerEndpoint,
  realtime,
  setRealtime,
  running,
}: {
  agentKind: AgentKind;
  endpoint: EndpointSettings;
  setEndpoint(e: EndpointSettings): void;
  localId: string;
  setLocalId(id: string): void;
  /** The caller is a model at a remote endpoint. */
  callerRemote: boolean;
  callerEndpoint: EndpointSettings;
  setCallerEndpoint(e: EndpointSettings): void;
  realtime: RealtimeSettings;
  setRealtime(s: RealtimeSettings): void;
  running: boolean;
}) {
  return (
    <>
      {agentKind === 'remote' && <EndpointForm value={endpoint} onChange={setEndpoint} />}
      {callerRemote && (
        <EndpointForm
          value={callerEndpoint}
          onChange={setCallerEndpoint}
          storageKey={CALLER_ENDPOINT_KEY}
          who="caller"
        />
      )}
      {agentKind === 'realtime' && <RealtimeForm value={realtime} onChange={setRealtime} />}
      {agentKind === 'local' && <LocalAgentPicker value={localId} onChange={setLocalId} disabled={running} />}
    </>
  );
}
