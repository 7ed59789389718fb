/** History: trajectories kept in IndexedDB, one row each; view one; export them as JSONL. */
import { useEffect, useState } from 'preact/hooks';
import { trajectoriesJsonl, type StoredRecord } from '../../adapters/browser/trajectory-store.ts';
import type { ViewProps } from '../view-props.ts';
import { RewardBreakdown, num } from '../components/score-panel.tsx';
import { Transcript } from '../components/transcript.tsx';
import { errorText, storeSwept, trajectoryStore } from '../runtime.ts';
import { shareLink } from '../share.ts';
import { download, exportZip } from '../export-zip.ts';

function when(ms: number): string {
  return new Date(ms).toLocaleString();
}

/** The History view. */
export function HistoryView(_: ViewProps) {
  const [records, setRecords] = useState<StoredRecord[]>();
  const [open, setOpen] = useState<string>();
  const [filter, setFilter] = useState<'all' | 'call' | 'batch'>('all');
  const [error, setError] = useState<string>();
  const load = () =>
    storeSwept()
      .then((s) => s.list())
      .then(setRecords, (e: unknown) => setError(errorText(e)));
  useEffect(() => {
    void load();
  }, []);

  const shown = (records ?? []).filter((r) => filter === 'all' || r.source === filter);
  const current = shown.find((r) => r.key === open);
  const [audio, setAudio] = useState<ReadonlyMap<string, Uint8Array>>(new Map());
  useEffect(() => {
    setAudio(new Map());
    if (open)
      void trajectoryStore()
        .audioOf(open)
        .then(setAudio, () => undefined);
  }, [open]);
  const done = shown.filter((r) => r.trajectory);

  return (
    <div class="history">
      <div class="controls">
        <label>
          Show{' '}
          <select
            id="history-filter"
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value as typeof filter)}
          >
            <option value="all">everything</option>
            <option value="call">single calls</option>
            <option value="batch">batch rollouts</option>
          </select>
        </label>
        <button
          type="button"
          id="export-jsonl"
          disabled={done.length === 0}
          onClick={() =>
            download(
              'trajectories.jsonl',
              // Oldest first, as a run writes them.
              trajectoriesJsonl(done.slice().reverse()),
              'application/x-ndjson',
            )
          }
        >
          Export {done.length} as JSONL
        </button>
        <button
          type="button"
          id="export-zip"
          disabled={done.length === 0}
          onClick={() =>
            void exportZip(done.slice().reverse()).then(
              (zip) => download('switchboard-trajectories.zip', zip, 'application/zip'),
              (e: unknown) => setError(errorText(e)),
            )
          }
        >
          Export {done.length} as zip (JSONL + WAV)
        </button>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        <button
          type="button"
          id="clear-history"
          disabled={!records?.length}
          onClick={() => {
            if (confirm('Delete every stored trajectory?')) void trajectoryStore().clear().then(load);
          }}
        >
          Clear
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!records && <p class="muted">Loading…</p>}
      {records && shown.length === 0 && (
        <p class="muted">Nothing stored yet. Calls and batch rollouts are kept here as they run.</p>
      )}
      {shown.length > 0 && (
        <div class="scroll">
          <table class="data" id="history">
            <thead>
              <tr>
                <th scope="col">Saved</th>
                <th scope="col">Kind</th>
                <th scope="col">Task</th>
                <th scope="col">Agent</th>
                <th scope="col">Caller</th>
                <th scope="col">Seed</th>
                <th scope="col">Turns</th>
                <th scope="col">State</th>
                <th scope="col">Reward</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r) => (
                <tr key={r.key} data-key={r.key} data-task={r.task_id} class={open === r.key ? 'selected' : ''}>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === r.key}
                      onClick={() => setOpen(open === r.key ? undefined : r.key)}
                    >
                      {when(r.savedAt)}
                    </button>
                  </td>
                  <td>{r.source}</td>
                  <td>
                    <code>{r.task_id}</code>
                  </td>
                  <td>{r.agent}</td>
                  <td>{r.user}</td>
                  <td>{r.seed}</td>
                  <td>{r.turns.length}</td>
                  <td>
                    {r.status === 'done' ? (r.trajectory?.valid ? r.trajectory.termination : 'invalid') : r.status}
                  </td>
                  <td class="reward-cell">{r.trajectory?.reward_info ? num(r.trajectory.reward_info.reward) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {current && (
        <section class="history-detail" aria-labelledby="h-detail">
          <h2 id="h-detail">
            {current.task_id} · seed {current.seed} · {current.agent} vs {current.user}
          </h2>
          {current.spec && (
            <p>
              <a href={shareLink(location.href, current.spec)}>Open as a share link</a>
            </p>
          )}
          <div class="split">
            <Transcript turns={current.turns} id="history-transcript" audio={audio} />
            <div>
              {current.trajectory?.reward_info ? (
                <RewardBreakdown info={current.trajectory.reward_info} id="history-reward" />
              ) : (
                <p class="muted">Not scored.</p>
              )}
            </div>
          </div>
        </section>
      )}
    </div>
  );
}
