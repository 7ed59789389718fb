/**
 * Batch: K rollouts per task over a set of tasks in a pool of rollout workers (the core's
 * `runBatch` per task inside each worker), with progress, cancel, pass^k, a pass-rate chart,
 * the reward components and the difficulty of each task. The agent is the reference, do-nothing,
 * a remote endpoint or an on-device model; the caller scripted or a model at a remote endpoint;
 * with channel audio on, every caller turn goes through the preset's channel (dropout, barge-in,
 * noise files) as in a call, so a batch shows what the channel does to the calls. Every rollout is
 * kept in IndexedDB with its channel WAVs; the batch downloads as one zip in the CLI's `--out`
 * layout (`trajectories.jsonl` and `audio/<domain>/<task>/<trial>-<seed>/…`).
 */
import { useRef, useState } from 'preact/hooks';
import { runBatchPool, type PoolRun, type TaskSummary } from '../../adapters/browser/rollout-client.ts';
import type {
  AgentSpec,
  BatchJob,
  ChannelHost,
  ChannelSettings,
  EndpointSettings,
  NoiseFile,
  PresetName,
  Trajectory,
} from '../../adapters/browser/rollout-types.ts';
import { browserGraphRenderer } from '../../adapters/browser/audio/renderer.ts';
import type { StoredRecord } from '../../adapters/browser/trajectory-store.ts';
import { episodeAudioPrefix } from '../../core/rollout/channel-step.ts';
import { download, exportZip } from '../export-zip.ts';
import { isSuccess, passHatK } from '../../core/scoring/pass-hat-k.ts';
import type { ViewProps } from '../view-props.ts';
import { num } from '../components/score-panel.tsx';
import {
  CALLER_ENDPOINT_KEY,
  errorText,
  loadEndpoint,
  loadRealtime,
  newId,
  openedTau2,
  pickSessionNoise,
  sessionNoise,
  trajectoryStore,
} from '../runtime.ts';
import { endpointSpec } from '../components/endpoint-form.tsx';
import { ChannelControls } from '../components/channel-controls.tsx';
import {
  AgentSelect,
  agentSpecFor,
  CallerSelect,
  ParticipantForms,
  type AgentKind,
} from '../components/participant-select.tsx';
import { isRealtimeUrl } from '../components/realtime-form.tsx';
import { builtFiles } from '../built-domains.ts';

type CallerKind = BatchJob['user']['kind'];

/** Per-task tallies from the trajectories received so far. */
interface Tally {
  n: number;
  successes: number;
  invalid: number;
  rewardSum: number;
}

/** How hard a task was in this batch. */
export type Difficulty = 'always passed' | 'boundary' | 'always failed' | 'no valid rollout';

/** Difficulty of a task from its valid rollouts: all passed, none passed, or some. */
export function difficultyOf(t: Pick<Tally, 'n' | 'successes'>): Difficulty {
  if (t.n === 0) return 'no valid rollout';
  if (t.successes === t.n) return 'always passed';
  if (t.successes === 0) return 'always failed';
  return 'boundary';
}

/** Bars of the pass rate (successes / valid rollouts) per task, as SVG. */
function PassRateChart({ rows }: { rows: { id: string; rate: number | null }[] }) {
  const barH = 18;
  const gap = 6;
  const labelW = 210;
  const w = 560;
  const plotW = w - labelW - 50;
  const h = rows.length * (barH + gap) + 28;
  return (
    <svg class="chart" id="pass-chart" viewBox={`0 0 ${w} ${h}`} width="100%" role="img" aria-labelledby="chart-title">
      <title id="chart-title">Pass rate per task (successful valid rollouts / valid rollouts)</title>
      {[0, 0.5, 1].map((x) => (
        <g key={x}>
          <line x1={labelW + x * plotW} x2={labelW + x * plotW} y1={0} y2={h - 20} class="grid" />
          <text x={labelW + x * plotW} y={h - 6} text-anchor="middle" class="axis">
            {x * 100}%
          </text>
        </g>
      ))}
      {rows.map((r, i) => {
        const y = i * (barH + gap);
        const rate = r.rate ?? 0;
        return (
          <g key={r.id} data-task={r.id}>
            <text x={labelW - 8} y={y + barH * 0.72} text-anchor="end" class="label">
              {r.id}
            </text>
            <rect
              x={labelW}
              y={y}
              width={Math.max(rate * plotW, r.rate === null ? 0 : 1)}
              height={barH}
              class={rate >= 1 ? 'bar good' : rate <= 0 ? 'bar bad' : 'bar mid'}
            />
            <text x={labelW + rate * plotW + 6} y={y + barH * 0.72} class="value">
              {r.rate === null ? '—' : `${Math.round(rate * 100)}%`}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** The Batch view. */
export function BatchView({ info }: ViewProps) {
  const [selected, setSelected] = useState<Set<string>>(() => new Set(info.tasks.map((t) => t.id)));
  const [trials, setTrials] = useState(4);
  const [seed, setSeed] = useState(0);
  const [agentKind, setAgentKind] = useState<AgentKind>('reference');
  const [endpoint, setEndpoint] = useState<EndpointSettings>(loadEndpoint);
  const [localId, setLocalId] = useState('');
  const [realtime, setRealtime] = useState(loadRealtime);
  const [callerKind, setCallerKind] = useState<CallerKind>('scripted');
  const [callerEndpoint, setCallerEndpoint] = useState<EndpointSettings>(() => loadEndpoint(CALLER_ENDPOINT_KEY));
  const [preset, setPreset] = useState<PresetName>('clean');
  const [channel, setChannel] = useState<ChannelSettings>();
  const [noise, setNoise] = useState<readonly NoiseFile[]>(sessionNoise);
  const [workers, setWorkers] = useState(() => Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2)));
  const [running, setRunning] = useState(false);
  const [cancelled, setCancelled] = useState(false);
  const [error, setError] = useState<string>();
  const [results, setResults] = useState<{
    tasks: string[];
    trials: number;
    trajectories: Trajectory[];
    summaries: Map<string, TaskSummary>;
  }>();
  const run = useRef<PoolRun>();
  // This batch's stored records (for its zip) and the promise of their last IndexedDB write.
  const saved = useRef<{ records: StoredRecord[]; done(): Promise<unknown> }>();

  const start = () => {
    const tasks = info.tasks.filter((t) => selected.has(t.id)).map((t) => t.id);
    if (tasks.length === 0 || running) return;
    const agent: AgentSpec = agentSpecFor(agentKind, { endpoint, localId, realtime });
    const user: BatchJob['user'] =
      callerKind === 'remote' ? { kind: 'remote', ...endpointSpec(callerEndpoint) } : { kind: 'scripted' };
    const jobs: BatchJob[] = tasks.map((taskId) => ({
      domain: info.name,
      taskId,
      trials,
      seed,
      agent,
      user,
      ...(channel ? { preset, channel: noise.length ? { ...channel, noise: noise.map((f) => f.name) } : channel } : {}),
    }));
    // The page renders the channel's graphs (OfflineAudioContext exists only here). Each WAV waits
    // here until its rollout's trajectory arrives, then is kept with it in IndexedDB.
    const wavs = new Map<string, Uint8Array>();
    const host: ChannelHost | undefined = channel
      ? {
          render: (graph) => browserGraphRenderer.render(graph),
          async put(name, bytes) {
            wavs.set(name, bytes);
            return name;
          },
        }
      : undefined;
    const batch = newId();
    const store = trajectoryStore();
    const state = { tasks, trials, trajectories: [] as Trajectory[], summaries: new Map<string, TaskSummary>() };
    const records: StoredRecord[] = [];
    let saving: Promise<unknown> = Promise.resolve();
    saved.current = { records, done: () => saving };
    setResults({ ...state });
    setError(undefined);
    setCancelled(false);
    setRunning(true);
    let frame = 0;
    const redraw = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setResults({ ...state, trajectories: state.trajectories.slice() });
      });
    };
    // A tau2-bench folder opened in Browse lives in the main worker: the pool's workers load it too.
    const tau2 = openedTau2(info.name);
    // So does a domain built in the page from an API description.
    const files = builtFiles(info.name);
    const pool = runBatchPool({
      jobs,
      size: workers,
      ...(tau2 ? { tau2 } : {}),
      ...(files ? { built: { name: info.name, files } } : {}),
      ...(host ? { host, ...(noise.length ? { noise } : {}) } : {}),
      onTrajectory(t) {
        state.trajectories.push(t);
        const record: StoredRecord = {
          key: newId(),
          savedAt: Date.now(),
          source: 'batch',
          batch,
          status: 'done',
          domain: t.domain,
          task_id: t.task_id,
          seed: t.seed,
          agent: t.participants.agent,
          user: t.participants.user,
          turns: t.turns,
          trajectory: t,
        };
        records.push(record);
        const prefix = `${episodeAudioPrefix(t)}/`;
        const audio = [...wavs].filter(([name]) => name.startsWith(prefix));
        for (const [name] of audio) wavs.delete(name);
        saving = saving
          .then(() => store.put(record))
          .then(() => Promise.all(audio.map(([name, bytes]) => store.putAudio(record.key, name, bytes))))
          .catch(() => undefined);
        redraw();
      },
      onTask(s) {
        state.summaries.set(s.task_id, s);
        redraw();
      },
    });
    run.current = pool;
    pool.done
      .then(
        (r) => {
          setCancelled(r.cancelled);
          setResults({ ...state, trajectories: state.trajectories.slice() });
        },
        (e: unknown) => setError(errorText(e)),
      )
      .finally(() => setRunning(false));
  };

  const total = results ? results.tasks.length * results.trials : 0;
  const valid = results?.trajectories.filter((t) => t.valid) ?? [];
  const tallies = new Map<string, Tally>();
  for (const id of results?.tasks ?? []) tallies.set(id, { n: 0, successes: 0, invalid: 0, rewardSum: 0 });
  for (const t of results?.trajectories ?? []) {
    const tally = tallies.get(t.task_id);
    if (!tally) continue;
    if (!t.valid || !t.reward_info) {
      tally.invalid++;
      continue;
    }
    tally.n++;
    tally.rewardSum += t.reward_info.reward;
    if (isSuccess(t.reward_info)) tally.successes++;
  }
  const trialResults = (results?.trajectories ?? []).map((t) => ({
    taskId: t.task_id,
    valid: t.valid && !!t.reward_info,
    success: t.reward_info ? isSuccess(t.reward_info) : false,
  }));
  const ks = Array.from({ length: results?.trials ?? 0 }, (_, i) => i + 1);
  const components = new Map<string, { sum: number; n: number; below: number }>();
  for (const t of valid) {
    for (const [name, c] of Object.entries(t.reward_info?.components ?? {})) {
      if (!c || c.score === null) continue;
      const m = components.get(name) ?? { sum: 0, n: 0, below: 0 };
      m.sum += c.score;
      m.n++;
      if (c.score < 1) m.below++;
      components.set(name, m);
    }
  }
  const groups: Record<Difficulty, string[]> = {
    'always passed': [],
    boundary: [],
    'always failed': [],
    'no valid rollout': [],
  };
  for (const [id, t] of tallies) if (results?.summaries.has(id)) groups[difficultyOf(t)].push(id);

  return (
    <div class="batch">
      <form
        class="controls settings"
        aria-label="Batch settings"
        onSubmit={(e) => {
          e.preventDefault();
          start();
        }}
      >
        <fieldset class="task-pick">
          <legend>
            Tasks ({selected.size} of {info.tasks.length}){' '}
            <button type="button" onClick={() => setSelected(new Set(info.tasks.map((t) => t.id)))} disabled={running}>
              all
            </button>{' '}
            <button type="button" onClick={() => setSelected(new Set())} disabled={running}>
              none
            </button>
          </legend>
          {info.tasks.map((t) => (
            <label key={t.id} class="check">
              <input
                type="checkbox"
                name="task"
                value={t.id}
                checked={selected.has(t.id)}
                disabled={running}
                onChange={(e) => {
                  const next = new Set(selected);
                  if (e.currentTarget.checked) next.add(t.id);
                  else next.delete(t.id);
                  setSelected(next);
                }}
              />{' '}
              {t.id}
            </label>
          ))}
        </fieldset>
        <label>
          Trials per task (K){' '}
          <input
            id="trials"
            type="number"
            min={1}
            max={64}
            value={trials}
            disabled={running}
            onInput={(e) => setTrials(Math.min(64, Math.max(1, Math.floor(Number(e.currentTarget.value) || 1))))}
            size={4}
          />
        </label>
        <label>
          Base seed{' '}
          <input
            id="batch-seed"
            type="number"
            min={0}
            value={seed}
            disabled={running}
            onInput={(e) => setSeed(Math.max(0, Math.floor(Number(e.currentTarget.value) || 0)))}
            size={6}
          />
        </label>
        <AgentSelect id="batch-agent" value={agentKind} onChange={setAgentKind} disabled={running} />
        <CallerSelect id="batch-caller" value={callerKind} onChange={setCallerKind} disabled={running} />
        <ChannelControls
          preset={preset}
          setPreset={setPreset}
          channel={channel}
          setChannel={setChannel}
          noise={noise}
          pickNoise={async (list) => setNoise(await pickSessionNoise(list))}
          running={running}
        />
        <label>
          Workers{' '}
          <input
            id="workers"
            type="number"
            min={1}
            max={16}
            value={workers}
            disabled={running}
            onInput={(e) => setWorkers(Math.min(16, Math.max(1, Math.floor(Number(e.currentTarget.value) || 1))))}
            size={3}
          />
        </label>
        <div class="buttons">
          <button
            type="submit"
            id="batch-run"
            disabled={
              running ||
              selected.size === 0 ||
              (agentKind === 'remote' && !endpoint.model) ||
              (agentKind === 'local' && !localId) ||
              (agentKind === 'realtime' && !isRealtimeUrl(realtime.url)) ||
              (callerKind === 'remote' && !callerEndpoint.model)
            }
          >
            Run batch
          </button>
          <button type="button" id="batch-cancel" disabled={!running} onClick={() => run.current?.cancel()}>
            Cancel
          </button>
        </div>
      </form>
      <ParticipantForms
        {...{ agentKind, endpoint, setEndpoint, localId, setLocalId, callerEndpoint, setCallerEndpoint, running }}
        {...{ realtime, setRealtime }}
        callerRemote={callerKind === 'remote'}
      />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {results && (
        <>
          <p class="progress-line">
            <progress id="batch-progress" max={total} value={valid.length} aria-label="Rollouts done" />{' '}
            <span id="batch-status" aria-live="polite">
              {valid.length} / {total} rollouts
              {results.trajectories.length > valid.length
                ? ` (${results.trajectories.length - valid.length} invalid, resampled)`
                : ''}
              {running ? ' · running' : cancelled ? ' · cancelled' : ' · done'}
            </span>{' '}
            <button
              type="button"
              id="batch-export"
              disabled={running || results.trajectories.length === 0}
              onClick={() => {
                const kept = saved.current;
                if (!kept) return;
                void kept
                  .done()
                  .then(() => exportZip(kept.records))
                  .then(
                    (zip) => download('switchboard-batch.zip', zip, 'application/zip'),
                    (e: unknown) => setError(errorText(e)),
                  );
              }}
            >
              Download (zip: trajectories{channel ? ' and channel WAVs' : ''})
            </button>
          </p>
          {results.trajectories.some((t) => !t.valid) && (
            <p role="alert" class="error" id="batch-invalid">
              {results.trajectories.filter((t) => !t.valid).length} rollouts could not run:{' '}
              {[...new Set(results.trajectories.filter((t) => !t.valid).map((t) => t.invalid_reason ?? t.termination))]
                .slice(0, 3)
                .join('; ')}
            </p>
          )}
          <h2>Results</h2>
          <div class="scroll">
            <table class="data" id="batch-results">
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">Valid</th>
                  <th scope="col">Passed</th>
                  <th scope="col">Mean reward</th>
                  {ks.map((k) => (
                    <th key={k} scope="col">
                      pass^{k}
                    </th>
                  ))}
                  <th scope="col">Difficulty</th>
                </tr>
              </thead>
              <tbody>
                {results.tasks.map((id) => {
                  const t = tallies.get(id)!;
                  const s = results.summaries.get(id);
                  return (
                    <tr key={id} data-task={id}>
                      <th scope="row">
                        <code>{id}</code>
                      </th>
                      <td>{t.n}</td>
                      <td>{t.successes}</td>
                      <td>{t.n ? num(t.rewardSum / t.n) : '—'}</td>
                      {ks.map((k) => (
                        <td key={k}>{s ? num(s.pass_hat[k] ?? null) : '…'}</td>
                      ))}
                      <td>{s ? difficultyOf(t) : '…'}</td>
                    </tr>
                  );
                })}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">All tasks</th>
                  <td>{valid.length}</td>
                  <td>{[...tallies.values()].reduce((a, t) => a + t.successes, 0)}</td>
                  <td>
                    {valid.length
                      ? num(valid.reduce((a, t) => a + (t.reward_info?.reward ?? 0), 0) / valid.length)
                      : '—'}
                  </td>
                  {ks.map((k) => (
                    <td key={k} data-k={k}>
                      {num(passHatK(trialResults, k))}
                    </td>
                  ))}
                  <td />
                </tr>
              </tfoot>
            </table>
          </div>
          <div class="split">
            <section aria-labelledby="h-chart">
              <h2 id="h-chart">Pass rate</h2>
              <PassRateChart
                rows={results.tasks.map((id) => ({
                  id,
                  rate: tallies.get(id)!.n ? tallies.get(id)!.successes / tallies.get(id)!.n : null,
                }))}
              />
            </section>
            <section aria-labelledby="h-components">
              <h2 id="h-components">Reward components</h2>
              <table class="data" id="batch-components">
                <thead>
                  <tr>
                    <th scope="col">Component</th>
                    <th scope="col">Mean score</th>
                    <th scope="col">Rollouts below 1</th>
                  </tr>
                </thead>
                <tbody>
                  {[...components].map(([name, m]) => (
                    <tr key={name} data-component={name}>
                      <th scope="row">{name}</th>
                      <td>{num(m.sum / m.n)}</td>
                      <td>
                        {m.below} of {m.n}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h2>Difficulty</h2>
              <dl class="difficulty" id="difficulty">
                {(Object.keys(groups) as Difficulty[])
                  .filter((g) => g !== 'no valid rollout' || groups[g].length > 0)
                  .map((g) => (
                    <div key={g} data-group={g}>
                      <dt>
                        {g} ({groups[g].length})
                      </dt>
                      <dd>{groups[g].length ? groups[g].join(', ') : <span class="muted">none</span>}</dd>
                    </div>
                  ))}
              </dl>
            </section>
          </div>
        </>
      )}
    </div>
  );
}
