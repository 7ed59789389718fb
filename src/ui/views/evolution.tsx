/**
 * Evolution: an evolve run's `report.json` (from `switchboard evolve --out`), loaded from a file
 * (picker or drop) or a URL (`#/evolution?report=<url>`): the difficulty of the bank per round
 * (label histogram chart), labels before and after, each task's lineage (label per round, parent,
 * pattern and reason), the variants the gate admitted or refused, the model repairs admitted in the
 * loop, and the task issues after the last round (what the run wrote to `bank/issues.json`:
 * status, resolution, evidence trajectory). Everything stays in the tab.
 */
import { useEffect, useState } from 'preact/hooks';
import { summarizeEvolve, type EvolveSummary, type SummarySource } from '../../core/evolution/report-summary.ts';
import { TASK_LABELS, type TaskLabel } from '../../core/evolution/labels.ts';
import type { TaskIssue } from '../../core/evolution/issues.ts';
import type { Route } from '../share.ts';

interface Loaded {
  source: string;
  domain: string;
  agent: string;
  k: number;
  rounds: SummarySource['rounds'];
  summary: EvolveSummary;
  /** The task issues after the last round (`rounds[last].issues`; the run's `bank/issues.json`). */
  issues: TaskIssue[];
}

/**
 * Check a parsed report: an object with `rounds`, each with `labels.histogram` and
 * `labels.tasks`. Returns the loaded report or throws an Error naming the field.
 */
export function readReport(doc: unknown, source: string): Loaded {
  const r = doc as Partial<SummarySource & { domain: string; agent: string; k: number; summary: EvolveSummary }>;
  if (!r || typeof r !== 'object' || !Array.isArray(r.rounds) || r.rounds.length === 0)
    throw new Error(`${source}: not an evolve report.json (field "rounds" is missing or empty)`);
  r.rounds.forEach((round, i) => {
    if (!round?.labels?.histogram || !Array.isArray(round.labels.tasks))
      throw new Error(`${source}: rounds[${i}].labels is not a label report`);
  });
  const summary = summarizeEvolve(r as SummarySource);
  const last = r.rounds[r.rounds.length - 1] as { issues?: unknown };
  if (last.issues !== undefined && !Array.isArray(last.issues))
    throw new Error(`${source}: rounds[${r.rounds.length - 1}].issues is not a list of task issues`);
  return {
    issues: (last.issues ?? []) as TaskIssue[],
    source,
    domain: String(r.domain ?? '?'),
    agent: String(r.agent ?? '?'),
    k: Number(r.k ?? 0),
    rounds: r.rounds,
    summary,
  };
}

const LABEL_TEXT: Record<TaskLabel, string> = {
  always_pass: 'always pass',
  boundary: 'boundary',
  always_fail: 'always fail',
  'flaky-infra': 'flaky infra',
};

/** Stacked bars: the label histogram of each round. */
function DifficultyChart({ rounds }: { rounds: SummarySource['rounds'] }) {
  const barH = 22;
  const gap = 10;
  const labelW = 80;
  const w = 560;
  const plotW = w - labelW - 20;
  const h = rounds.length * (barH + gap) + 30;
  return (
    <svg
      class="chart"
      id="evolution-chart"
      viewBox={`0 0 ${w} ${h}`}
      width="100%"
      role="img"
      aria-labelledby="evolution-chart-title"
    >
      <title id="evolution-chart-title">Tasks per difficulty label in each round</title>
      {rounds.map((r, i) => {
        const total = TASK_LABELS.reduce((a, l) => a + (r.labels.histogram[l] ?? 0), 0) || 1;
        let x = labelW;
        const y = i * (barH + gap);
        return (
          <g key={r.round} data-round={r.round}>
            <text x={labelW - 8} y={y + barH * 0.7} text-anchor="end" class="label">
              round {r.round}
            </text>
            {TASK_LABELS.map((l) => {
              const n = r.labels.histogram[l] ?? 0;
              const width = (n / total) * plotW;
              const rect = (
                <rect key={l} x={x} y={y} width={width} height={barH} class={`bar lab-${l}`} data-label={l} data-n={n}>
                  <title>{`${LABEL_TEXT[l]}: ${n}`}</title>
                </rect>
              );
              x += width;
              return rect;
            })}
          </g>
        );
      })}
      <g transform={`translate(${labelW}, ${h - 14})`}>
        {TASK_LABELS.map((l, i) => (
          <g key={l} transform={`translate(${i * 120}, 0)`}>
            <rect width={10} height={10} y={-9} class={`bar lab-${l}`} />
            <text x={14} class="axis">
              {LABEL_TEXT[l]}
            </text>
          </g>
        ))}
      </g>
    </svg>
  );
}

/** The view. */
export function EvolutionView({ route }: { route: Route }) {
  const [report, setReport] = useState<Loaded>();
  const [error, setError] = useState<string>();
  const [url, setUrl] = useState(() => route.params.get('report') ?? '');

  const load = (text: string, source: string) => {
    try {
      setReport(readReport(JSON.parse(text), source));
      setError(undefined);
    } catch (e) {
      setError(e instanceof SyntaxError ? `${source}: not JSON (${e.message})` : (e as Error).message);
    }
  };
  const fetchReport = async (u: string) => {
    try {
      const res = await fetch(u);
      if (!res.ok) throw new Error(`${u}: HTTP ${res.status}`);
      load(await res.text(), u);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const readFile = async (file: File | undefined) => {
    if (file) load(await file.text(), file.name);
  };
  useEffect(() => {
    const linked = route.params.get('report');
    if (linked) void fetchReport(linked);
  }, [route.params.get('report')]);

  const s = report?.summary;
  return (
    <section class="evolution" id="evolution">
      <h2>Evolution</h2>
      <p class="muted">
        Open the <code>report.json</code> of <code>switchboard evolve --out</code>: pick it (or drop it on the file
        field), or give its URL.
      </p>
      <div class="row">
        <label
          id="evolution-drop"
          onDragOver={(e) => e.preventDefault()}
          onDrop={(e) => {
            e.preventDefault();
            void readFile(e.dataTransfer?.files[0]);
          }}
        >
          Report file{' '}
          <input
            type="file"
            id="evolution-file"
            accept="application/json,.json"
            onChange={(e) => void readFile(e.currentTarget.files?.[0])}
          />
        </label>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (url) void fetchReport(url);
          }}
        >
          <label>
            URL <input id="evolution-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>{' '}
          <button id="evolution-load" type="submit">
            Load
          </button>
        </form>
      </div>
      {error && (
        <p role="alert" class="error" id="evolution-error">
          {error}
        </p>
      )}
      {report && s && (
        <>
          <p id="evolution-status" aria-live="polite">
            {report.domain} · agent {report.agent} · K={report.k} · {report.rounds.length} round
            {report.rounds.length === 1 ? '' : 's'} · {report.source}
          </p>
          <h3>Difficulty per round</h3>
          <DifficultyChart rounds={report.rounds} />
          <p id="evolution-before-after">
            Labels before → after:{' '}
            {TASK_LABELS.map((l) => `${LABEL_TEXT[l]} ${s.labels_before[l]} → ${s.labels_after[l]}`).join(', ')}
          </p>
          <h3>Lineage</h3>
          <div class="scroll">
            <table class="data" id="lineage">
              <thead>
                <tr>
                  <th>task</th>
                  {report.rounds.map((r) => (
                    <th key={r.round}>round {r.round}</th>
                  ))}
                  <th>from</th>
                  <th>why</th>
                </tr>
              </thead>
              <tbody>
                {s.lineage.map((t) => (
                  <tr key={t.task_id} data-task={t.task_id} data-generation={t.generation}>
                    <td style={{ paddingLeft: `${0.5 + t.generation * 1.2}em` }}>
                      <code>{t.task_id}</code>
                    </td>
                    {t.labels.map((l, i) => (
                      <td key={i} class={l ? `lab-${l}` : 'muted'}>
                        {l ? LABEL_TEXT[l] : '–'}
                        {t.verdicts[i] ? ` (${t.verdicts[i]})` : ''}
                      </td>
                    ))}
                    <td>{t.parent ? <code>{t.parent}</code> : 'domain'}</td>
                    <td>{t.pattern ? `${t.pattern}: ${t.reason}` : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {s.repaired.length > 0 && (
            <>
              <h3>Repaired in the loop</h3>
              <ul id="evolution-repaired">
                {s.repaired.map((r) => (
                  <li key={`${r.task_id}@${r.version}`}>
                    round {r.round} <code>{r.task_id}</code> → version {r.version}: {r.reason}
                  </li>
                ))}
              </ul>
            </>
          )}
          <h3>Task issues</h3>
          {report.issues.length === 0 ? (
            <p id="task-issues-none" class="muted">
              No task issues: no always-failed task was found broken.
            </p>
          ) : (
            <div class="scroll">
              <table class="data" id="task-issues">
                <thead>
                  <tr>
                    <th>issue</th>
                    <th>finding</th>
                    <th>status</th>
                    <th>resolution</th>
                    <th>evidence</th>
                  </tr>
                </thead>
                <tbody>
                  {report.issues.map((i) => (
                    <tr key={i.id} data-issue={i.id} data-status={i.status}>
                      <td>
                        <code>{i.id}</code>
                      </td>
                      <td title={i.detail}>
                        {i.finding}
                        {i.field ? ` (${i.field})` : ''}
                      </td>
                      <td>{i.status}</td>
                      <td>{i.resolution ?? '–'}</td>
                      <td>
                        {i.evidence_trajectory ? <code>{i.evidence_trajectory}</code> : '–'}
                        {(i.evidence_trajectories ?? []).length > 1 ? ` +${i.evidence_trajectories.length - 1}` : ''}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {s.rejected.length > 0 && (
            <>
              <h3>Refused by the gate</h3>
              <ul id="evolution-rejected">
                {s.rejected.map((r) => (
                  <li key={r.task_id}>
                    round {r.round} <code>{r.task_id}</code> ({r.pattern}): {r.reasons.join('; ')}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
