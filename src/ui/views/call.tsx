/**
 * Watch a simulated call (scripted or model-backed caller) or call as the caller (you type), against the
 * reference, do-nothing or a remote agent; scored live; shareable; stored as it happens.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { proxy } from '../../adapters/browser/rollout-client.ts';
import { browserGraphRenderer } from '../../adapters/browser/audio/renderer.ts';
import { startMicRecording, takeFromWavFile, wavBytes, type MicRecording } from '../../adapters/browser/audio/mic.ts';
import type { StoredRecord } from '../../adapters/browser/trajectory-store.ts';
import type {
  AgentSpec,
  CallEvent,
  CallSpec,
  CallerAnswer,
  CallerPrompt,
  ChannelHost,
  ChannelSettings,
  EndpointSettings,
  LiveScore,
  NoiseFile,
  PresetName,
  Trajectory,
  Turn,
} from '../../adapters/browser/rollout-types.ts';
import type { ViewProps } from '../view-props.ts';
import { CallerTurn } from '../components/caller-turn.tsx';
import { ChannelControls } from '../components/channel-controls.tsx';
import { endpointSpec, storedEndpoint } from '../components/endpoint-form.tsx';
import { openLink, type RemoteEndpoint } from '../endpoint-keys.ts';
import { redactUrl } from '../../adapters/shared/endpoint-secrets.ts';
import { ScorePanel } from '../components/score-panel.tsx';
import { asrModels, RecognizerPicker } from '../components/local-agent.tsx';
import { MODEL_MANIFEST } from '../../adapters/browser/model-hub.ts';
import {
  AgentSelect,
  agentSpecFor,
  CallerSelect,
  ParticipantForms,
  type AgentKind,
} from '../components/participant-select.tsx';
import { isRealtimeUrl, storedRealtime } from '../components/realtime-form.tsx';
import { Transcript } from '../components/transcript.tsx';
import {
  CALLER_ENDPOINT_KEY,
  errorText,
  DEFAULT_ENDPOINT,
  PAGE_ID,
  loadEndpoint,
  loadedRecognizer,
  loadRealtime,
  savedEndpoint,
  mainWorker,
  newId,
  sessionNoise,
  pickSessionNoise,
  trajectoryStore,
} from '../runtime.ts';
import { formatHash, linkedSpeech, paramsSpec, shareLink, specParams } from '../share.ts';
import { reasonOf } from '../task-reason.ts';

/**
 * Callers of the Watch view (the Call view's caller is the person at the keyboard); `replay` is a
 * person's recorded call opened from its link.
 */
type CallerKind = 'scripted' | 'remote' | 'replay';

const STOP = '###STOP###';
const PACE_KEY = 'switchboard.pace';

/** The Watch / Call view. */
export function CallView({ info, route, mode }: ViewProps & { mode: 'watch' | 'call' }) {
  const initial = paramsSpec(route.params);
  // A linked task id that the domain lacks stays chosen (nothing runs) and is reported.
  const [taskId, setTaskId] = useState(() => initial.taskId ?? info.tasks[0]?.id ?? '');
  const [seed, setSeed] = useState(initial.seed ?? 0);
  const [preset, setPreset] = useState<PresetName>(initial.preset ?? 'clean');
  // A link names a realtime agent by kind only (its URL may hold a key): the URL is this browser's.
  const [agentKind, setAgentKind] = useState<AgentKind>(initial.agent?.kind ?? 'reference');
  const [localId, setLocalId] = useState(initial.agent?.kind === 'local' ? initial.agent.id : '');
  const [realtime, setRealtime] = useState(loadRealtime);
  // The link's remote endpoints over the saved ones; those it names that this browser has not
  // saved must be confirmed before anything is sent (and never get a saved key: keys go by origin).
  const [opened] = useState(() => {
    const agent = savedEndpoint();
    const caller = savedEndpoint(CALLER_ENDPOINT_KEY);
    const saved = { ...(agent ? { agent } : {}), ...(caller ? { caller } : {}) };
    return openLink(initial, saved, DEFAULT_ENDPOINT, mode === 'watch');
  });
  const [endpoint, setEndpoint] = useState<EndpointSettings>(opened.agent);
  const [callerKind, setCallerKind] = useState<CallerKind>(
    initial.user?.kind === 'remote' ? 'remote' : initial.user?.kind === 'replay' ? 'replay' : 'scripted',
  );
  // A recorded call's words (from its link), and the words of the call made here.
  const replayed = initial.user?.kind === 'replay' ? initial.user.turns : [];
  const said = useRef<string[]>([]);
  const [recorded, setRecorded] = useState<string[]>();
  const [stopped, setStopped] = useState(false);
  const [callerEndpoint, setCallerEndpoint] = useState<EndpointSettings>(opened.caller);
  const [pace, setPace] = useState(() => {
    const p = route.params.get('pace');
    if (p !== null && /^\d+$/.test(p)) return Number(p);
    return Number(localStorage.getItem(PACE_KEY) ?? 400);
  });
  const [channel, setChannel] = useState<ChannelSettings | undefined>(() => initial.channel);
  // The user's noise recordings (this tab's session only; never in a link).
  const [noise, setNoise] = useState<readonly NoiseFile[]>(sessionNoise);
  const [audio, setAudio] = useState<ReadonlyMap<string, Uint8Array>>(new Map());
  const [turns, setTurns] = useState<Turn[]>([]);
  const [live, setLive] = useState<LiveScore>();
  const [trajectory, setTrajectory] = useState<Trajectory>();
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string>();
  const [prompt, setPrompt] = useState<{
    p: CallerPrompt;
    resolve(s: string | CallerAnswer): void;
    reject(e: Error): void;
  }>();
  const [recording, setRecording] = useState<MicRecording>();
  const [take, setTake] = useState<{ samples: Float32Array; url: string }>();
  // The speech recognizer for the caller's voice, and what it heard in the take.
  // A link's recognizer is preselected only when this page's manifest pins it at the link's revision.
  const [linkSpeech] = useState(() => linkedSpeech(route.params, asrModels(MODEL_MANIFEST)));
  const [asrId, setAsrId] = useState(linkSpeech.asrId ?? '');
  const asr = asrModels(MODEL_MANIFEST).find((r) => r.id === asrId && mode === 'call' && channel);
  const [speakAgent, setSpeakAgent] = useState(initial.speakAgent === true);
  const [heard, setHeard] = useState<{ text?: string; busy?: boolean; error?: string }>();
  const [draft, setDraft] = useState('');
  const [copied, setCopied] = useState(false);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const stopping = useRef<() => void>();
  const started = useRef(false);
  const [toConfirm, setToConfirm] = useState<RemoteEndpoint[]>(opened.confirm);

  const task = info.tasks.find((t) => t.id === taskId);
  const agent: AgentSpec = agentSpecFor(agentKind, { endpoint, localId, realtime });
  const spec: CallSpec = {
    domain: info.name,
    taskId,
    seed,
    preset,
    agent,
    user:
      mode === 'call'
        ? { kind: 'human' }
        : callerKind === 'remote'
          ? { kind: 'remote', ...endpointSpec(callerEndpoint) }
          : callerKind === 'replay'
            ? { kind: 'replay', turns: replayed }
            : { kind: 'scripted' },
    paceMs: mode === 'call' ? 0 : pace,
    ...(initial.maxSteps ? { maxSteps: initial.maxSteps } : {}),
    ...(channel ? { channel: noise.length ? { ...channel, noise: noise.map((f) => f.name) } : channel } : {}),
    ...(speakAgent ? { speakAgent: true } : {}),
  };
  // After a call made here, its link replays the person's words.
  const link = shareLink(
    location.href,
    mode === 'call' && recorded ? { ...spec, user: { kind: 'replay', turns: recorded } } : spec,
    asr,
  );
  const linkNoise = route.params.get('noise') === 'custom';

  // Keep the address bar in step with the settings (reload keeps them).
  useEffect(() => {
    history.replaceState(null, '', formatHash(mode, specParams(spec, asr)));
  }, [
    speakAgent,
    asr?.id,
    taskId,
    seed,
    preset,
    agentKind,
    endpoint.model,
    endpoint.baseURL,
    endpoint.flavor,
    localId,
    channel?.dropout,
    channel?.bargeIn,
    !channel,
    noise,
    callerKind,
    callerEndpoint.model,
    callerEndpoint.baseURL,
    callerEndpoint.flavor,
  ]);

  useEffect(() => {
    if (prompt) inputRef.current?.focus();
  }, [prompt]);

  const start = async (confirmed = false) => {
    if (running || !task || (toConfirm.length && !confirmed)) return;
    setTurns([]);
    setAudio(new Map());
    setLive(undefined);
    setTrajectory(undefined);
    setError(undefined);
    setCopied(false);
    setStopped(false);
    setRecorded(undefined);
    said.current = [];
    setRunning(true);
    const store = trajectoryStore();
    const { agent: a, user: u, ...rest } = spec;
    // What is stored and shared never holds a key, nor credentials in a base URL.
    const storedSpec: CallSpec = {
      ...rest,
      agent:
        a.kind === 'remote' ? { kind: 'remote', ...storedEndpoint(a) } : a.kind === 'realtime' ? storedRealtime(a) : a,
      user: u.kind === 'remote' ? { kind: 'remote', ...storedEndpoint(u) } : u,
    };
    const record: StoredRecord = {
      key: newId(),
      savedAt: Date.now(),
      source: 'call',
      status: 'running',
      owner: PAGE_ID,
      domain: spec.domain,
      task_id: spec.taskId,
      seed: spec.seed,
      agent:
        a.kind === 'remote'
          ? `${a.flavor}:${a.model}`
          : a.kind === 'local'
            ? `local:${a.id}`
            : a.kind === 'realtime'
              ? `realtime:${redactUrl(a.url)}`
              : a.kind,
      user: u.kind === 'remote' ? `${u.flavor}:${u.model}` : u.kind,
      spec: storedSpec,
      turns: [],
      trajectory: null,
    };
    let saving = store.put(record).catch(() => undefined);
    const save = (patch: Partial<StoredRecord>) => {
      Object.assign(record, patch, { savedAt: Date.now() });
      const snapshot = structuredClone(record);
      saving = saving.then(() => store.put(snapshot)).catch(() => undefined);
    };
    const collected: Turn[] = [];
    const onEvent = proxy((e: CallEvent) => {
      setLive(e.live);
      if (e.type === 'turn') {
        collected[e.index] = e.turn;
        setTurns(collected.slice());
        save({ turns: collected.slice() });
      } else {
        setTurns(e.trajectory.turns);
        setTrajectory(e.trajectory);
        save({ turns: e.trajectory.turns, trajectory: e.trajectory, status: 'done' });
      }
    });
    const wavs = new Map<string, Uint8Array>();
    // The worker speaks; the page renders the channel graphs (OfflineAudioContext exists only
    // here) and keeps every WAV in IndexedDB beside the record as it arrives.
    const host: ChannelHost | undefined =
      spec.channel || spec.speakAgent
        ? proxy({
            render: (graph) => browserGraphRenderer.render(graph),
            async put(name, bytes) {
              wavs.set(name, bytes);
              setAudio(new Map(wavs));
              saving = saving.then(() => store.putAudio(record.key, name, bytes)).catch(() => undefined);
              return name;
            },
          } satisfies ChannelHost)
        : undefined;
    const ask =
      mode === 'call'
        ? proxy(
            (p: CallerPrompt) =>
              new Promise<string | CallerAnswer>((resolve, reject) => setPrompt({ p, resolve, reject })),
          )
        : undefined;
    let stoppedHere = false;
    stopping.current = () => {
      stoppedHere = true;
    };
    try {
      const { service, failed } = mainWorker();
      const t = await Promise.race([
        service.runCall(spec, onEvent, ask, host, spec.channel?.noise ? noise : undefined),
        failed,
      ]);
      // A call that could not run (an endpoint down, a worker fault) says so where the call is.
      if (!t.valid && !stoppedHere) setError(`The call could not be completed: ${t.invalid_reason ?? t.termination}`);
      if (mode === 'call' && t.valid) setRecorded(said.current.slice());
    } catch (e) {
      if (!stoppedHere) setError(errorText(e));
    } finally {
      setPrompt(undefined);
      setRunning(false);
      await saving;
    }
  };

  const pickNoise = async (list: FileList | null) => setNoise(await pickSessionNoise(list));

  const stop = () => {
    stopping.current?.();
    setStopped(true);
    void mainWorker().service.cancel();
    prompt?.reject(new Error('call stopped by the user'));
    setPrompt(undefined);
  };

  const send = (hangUp: boolean) => {
    if (!prompt) return;
    // A recorded turn's words: what was typed or, with speech recognition, what it heard (the
    // draft holds it, editable); without either a placeholder.
    const text = draft.trim() || (take ? '(spoken)' : '');
    if (!text && !hangUp) return;
    const words = hangUp ? `${text}${STOP}` : text;
    said.current.push(words);
    prompt.resolve(take ? { text: words, speech: take.samples } : words);
    setPrompt(undefined);
    setDraft('');
    dropTake();
  };

  const dropTake = () => {
    setHeard(undefined);
    setTake((t) => {
      if (t) URL.revokeObjectURL(t.url);
      return undefined;
    });
  };

  /** Keep a take; with a loaded recognizer, its words become the draft (unless one was typed). */
  const keepTake = async (samples: Float32Array) => {
    dropTake();
    setTake({
      samples,
      url: URL.createObjectURL(new Blob([wavBytes(samples) as BlobPart], { type: 'audio/wav' })),
    });
    const recognizer = await loadedRecognizer();
    if (!recognizer) return;
    setHeard({ busy: true });
    try {
      const text = await recognizer.transcribe(samples, info.language);
      setHeard({ text });
      setDraft((d) => (d.trim() ? d : text));
    } catch (e) {
      setHeard({ error: errorText(e) });
    }
  };

  const openTake = async (file: File | undefined) => {
    if (!file) return;
    setError(undefined);
    try {
      await keepTake(await takeFromWavFile(new Uint8Array(await file.arrayBuffer())));
    } catch (e) {
      setError(`${file.name}: not a readable WAV file (${errorText(e)})`);
    }
  };

  const record = async () => {
    setError(undefined);
    if (recording) {
      setRecording(undefined);
      try {
        await keepTake(await recording.stop());
      } catch (e) {
        setError(`recording failed: ${errorText(e)}`);
      }
      return;
    }
    try {
      setRecording(await startMicRecording());
    } catch (e) {
      setError(`no microphone: ${errorText(e)}`);
    }
  };

  useEffect(() => {
    if (mode === 'watch' && route.params.get('run') === '1' && task && !started.current && toConfirm.length === 0) {
      started.current = true;
      void start();
    }
  }, []);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };

  return (
    <div class="call">
      <form
        class="controls settings"
        aria-label="Call settings"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label>
          Task{' '}
          <select id="task" value={taskId} disabled={running} onChange={(e) => setTaskId(e.currentTarget.value)}>
            {info.tasks.map((t) => (
              <option key={t.id} value={t.id}>
                {t.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Seed{' '}
          <input
            id="seed"
            type="number"
            min={0}
            value={seed}
            disabled={running}
            onInput={(e) => setSeed(Math.max(0, Math.floor(Number(e.currentTarget.value) || 0)))}
            size={6}
          />
        </label>
        <AgentSelect id="agent" value={agentKind} onChange={setAgentKind} disabled={running} />
        <ChannelControls
          preset={preset}
          setPreset={setPreset}
          channel={channel}
          setChannel={setChannel}
          noise={noise}
          pickNoise={pickNoise}
          running={running}
        />
        <label class="check">
          <input
            type="checkbox"
            id="speak-agent"
            checked={speakAgent}
            disabled={running}
            onChange={(e) => setSpeakAgent(e.currentTarget.checked)}
          />{' '}
          Speak the agent's replies
        </label>
        {mode === 'watch' && (
          <CallerSelect
            id="caller"
            value={callerKind}
            onChange={setCallerKind}
            disabled={running}
            more={
              replayed.length > 0 && (
                <option value="replay">a person's recorded call ({replayed.length} turns, from the link)</option>
              )
            }
          />
        )}
        {mode === 'watch' && (
          <label>
            Pace{' '}
            <select
              id="pace"
              value={String(pace)}
              onChange={(e) => {
                setPace(Number(e.currentTarget.value));
                localStorage.setItem(PACE_KEY, e.currentTarget.value);
              }}
            >
              <option value="0">instant</option>
              <option value="150">fast</option>
              <option value="400">normal</option>
              <option value="1200">slow</option>
            </select>
          </label>
        )}
        <div class="buttons">
          <button
            type="submit"
            id="run"
            disabled={
              running ||
              !task ||
              toConfirm.length > 0 ||
              (agentKind === 'remote' && !endpoint.model) ||
              (agentKind === 'local' && !localId) ||
              (agentKind === 'realtime' && !isRealtimeUrl(realtime.url)) ||
              (mode === 'watch' && callerKind === 'remote' && !callerEndpoint.model) ||
              (mode === 'watch' && callerKind === 'replay' && replayed.length === 0)
            }
          >
            {mode === 'watch' ? 'Run call' : 'Start call'}
          </button>
          <button type="button" id="stop" disabled={!running} onClick={stop}>
            Stop
          </button>
        </div>
      </form>
      {toConfirm.length > 0 && (
        <div
          class="confirm-endpoints"
          role="alertdialog"
          aria-labelledby="confirm-endpoints-title"
          id="confirm-endpoints"
        >
          <p id="confirm-endpoints-title">
            <strong>This link calls endpoints you have not saved in this browser:</strong>
          </p>
          <ul>
            {toConfirm.map((e) => (
              <li key={e.who} data-who={e.who}>
                {e.who} → <code>{redactUrl(e.baseURL) || '(no base URL)'}</code>
              </li>
            ))}
          </ul>
          <p class="muted">
            Nothing has been sent. Your saved API keys are sent only to the endpoint each was saved for, never to these.
          </p>
          <button
            type="button"
            id="confirm-endpoints-call"
            onClick={() => {
              setToConfirm([]);
              started.current = true;
              void start(true);
            }}
          >
            Call {toConfirm.length > 1 ? 'these endpoints' : 'this endpoint'}
          </button>{' '}
          <button
            type="button"
            id="confirm-endpoints-mine"
            onClick={() => {
              setEndpoint(loadEndpoint());
              setCallerEndpoint(loadEndpoint(CALLER_ENDPOINT_KEY));
              setToConfirm([]);
            }}
          >
            Use my saved endpoints
          </button>
        </div>
      )}
      <ParticipantForms
        {...{ agentKind, endpoint, setEndpoint, localId, setLocalId, callerEndpoint, setCallerEndpoint, running }}
        {...{ realtime, setRealtime }}
        callerRemote={mode === 'watch' && callerKind === 'remote'}
      />
      {mode === 'call' && channel && <RecognizerPicker value={asrId} onChange={setAsrId} />}
      {task && (
        <p class="scenario">
          <span class="badge">{task.role}</span> {reasonOf(task)}
          {mode === 'call' && (task.user_scenario.facts ?? []).length > 0 && (
            <span class="muted">
              {' '}
              · you know: {(task.user_scenario.facts ?? []).map((f) => `${f.key} ${f.value}`).join(', ')}
            </span>
          )}
        </p>
      )}
      <p class="share">
        Share link:{' '}
        <a id="share-link" href={link}>
          {link.length > 96 ? `${link.slice(0, 96)}…` : link}
        </a>{' '}
        <button type="button" onClick={copy} aria-describedby="share-note">
          Copy
        </button>{' '}
        <span id="share-note" class="muted" aria-live="polite">
          {copied
            ? 'copied'
            : mode === 'call' && !recorded
              ? 'opens this task for someone else to call; after your call it replays your words'
              : (mode === 'call' && recorded) || callerKind === 'replay'
                ? 'replays the recorded caller’s words exactly (typed words; a recorded voice is spoken by TTS); no key is in it'
                : spec.channel?.noise
                  ? 'your noise files cannot travel in a link: it says a custom noise bank was used, and opens with the preset’s noises (not an exact replay); no key is in it'
                  : 'reproduces this call (scripted participants replay exactly); no key is in it'}
        </span>
      </p>
      {linkNoise && !spec.channel?.noise && (
        <p class="muted" id="noise-link-note">
          The shared call used a custom noise bank that is not in the link: add the same noise files to reproduce it
          exactly.
        </p>
      )}
      {linkSpeech.errors.length > 0 && (
        <p role="alert" class="error" id="speech-link-error">
          {linkSpeech.errors.join(' ')}
        </p>
      )}
      {!task && (
        <p role="alert" class="error" id="task-error">
          Task “{taskId}” is not in domain {info.name}; pick one of its {info.tasks.length} tasks above.
        </p>
      )}
      {error && (
        <p role="alert" class="error" id="call-error">
          {error}
        </p>
      )}
      <div class="split">
        <section class="conversation" aria-labelledby="h-transcript">
          <h2 id="h-transcript">
            Transcript{' '}
            <span class="muted" id="call-status" aria-live="polite">
              {running
                ? stopped
                  ? 'stopping…'
                  : prompt
                    ? 'your turn'
                    : 'running…'
                : stopped
                  ? 'stopped'
                  : trajectory
                    ? `ended (${trajectory.termination})`
                    : 'not started'}
            </span>
          </h2>
          <Transcript turns={turns} live audio={audio} autoplay={mode === 'call' && speakAgent} />
          {mode === 'call' && (
            <CallerTurn
              prompt={prompt}
              running={running}
              channel={!!channel}
              draft={draft}
              setDraft={setDraft}
              send={send}
              inputRef={inputRef}
              recording={recording}
              record={record}
              take={take}
              dropTake={dropTake}
              openTake={openTake}
              heard={heard}
            />
          )}
        </section>
        <ScorePanel live={live} trajectory={trajectory} running={running} stopped={stopped} />
      </div>
    </div>
  );
}
