/** Browse a domain: policy rules, tools, tasks, and the live database tables. */
import { useEffect, useState } from 'preact/hooks';
import type { TableRows } from '../../adapters/browser/rollout-types.ts';
import type { ViewProps } from '../view-props.ts';
import { reasonOf } from '../task-reason.ts';
import { errorText, mainWorker, rememberTau2 } from '../runtime.ts';
import { BuildFromSpec } from './build-from-spec.tsx';

/** A cell value as text (JSON for anything but strings and numbers). */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  return JSON.stringify(v);
}

function Tables({ info }: Pick<ViewProps, 'info'>) {
  const [table, setTable] = useState(info.tables[0]?.name ?? '');
  const [taskId, setTaskId] = useState('');
  const [rows, setRows] = useState<TableRows>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!table) return;
    setError(undefined);
    mainWorker()
      .service.tableRows(info.name, table, taskId ? { taskId, limit: 500 } : { limit: 500 })
      .then(setRows, (e: unknown) => setError(errorText(e)));
  }, [info.name, table, taskId]);
  return (
    <section aria-labelledby="h-db">
      <h2 id="h-db">Database</h2>
      <div class="controls">
        <label>
          Table{' '}
          <select id="db-table" value={table} onChange={(e) => setTable(e.currentTarget.value)}>
            {info.tables.map((t) => (
              <option key={t.name} value={t.name}>
                {t.name} ({t.rows} rows)
              </option>
            ))}
          </select>
        </label>
        <label>
          As a fresh call of{' '}
          <select value={taskId} onChange={(e) => setTaskId(e.currentTarget.value)}>
            <option value="">the seed (no task)</option>
            {info.tasks.map((t) => (
              <option key={t.id} value={t.id}>
                {t.id}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {rows && rows.table === table && (
        <>
          <p class="muted" id="db-count">
            {rows.total} rows in {rows.table}
            {rows.total > rows.rows.length ? `, first ${rows.rows.length} shown` : ''}; primary key{' '}
            {info.tables.find((t) => t.name === table)?.primaryKey.join(', ') || '(none)'}
          </p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take keyboard focus to scroll (WCAG 2.1.1) */}
          {/* biome-ignore lint/a11y/useSemanticElements: a div region keeps the table's scroll box styling */}
          <div class="scroll" tabIndex={0} role="region" aria-label={`rows of ${rows.table}`}>
            <table class="data" id="db-rows">
              <thead>
                <tr>
                  {rows.columns.map((c) => (
                    <th key={c} scope="col">
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.rows.map((r, i) => (
                  <tr key={i}>
                    {rows.columns.map((c) => (
                      <td key={c}>{cellText(r[c])}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** The Browse view. */
/** Names of the files of a tau2-bench data folder (kept in step with `TAU2_FILES` and `TELECOM_FILES`). */
const TAU2_FILE_NAMES = [
  'db.json',
  'tasks.json',
  'policy.md',
  'split_tasks.json',
  'db.toml',
  'user_db.toml',
  'main_policy.md',
  'tech_support_manual.md',
];

/**
 * Open a tau2-bench data folder from disk (`data/tau2/domains/airline/` of a checkout): its four
 * files are read here and parsed in the worker by the same code as the Node loader.
 */
let lastOpened: string | undefined; // survives the view's remount when the domain switches

function OpenTau2({ onOpened }: { onOpened?: (name: string) => void }) {
  const [state, setState] = useState<{ busy?: boolean; error?: string; done?: string }>(() =>
    lastOpened ? { done: lastOpened } : {},
  );
  const open = async (list: FileList | null) => {
    const files = [...(list ?? [])].filter((f) => TAU2_FILE_NAMES.includes(f.name));
    if (files.length === 0) {
      setState({ error: `no tau2-bench files in that folder (expected ${TAU2_FILE_NAMES.join(', ')})` });
      return;
    }
    const folder = (files[0]!.webkitRelativePath || files[0]!.name).split('/').slice(-2, -1)[0] ?? 'folder';
    setState({ busy: true });
    try {
      const texts = Object.fromEntries(await Promise.all(files.map(async (f) => [f.name, await f.text()] as const)));
      const { name, tasks } = await mainWorker().service.openTau2(texts, folder);
      rememberTau2(name, texts, folder);
      lastOpened = `${folder} loaded as ${name} (${tasks} tasks)`;
      setState({ done: lastOpened });
      onOpened?.(name);
    } catch (e) {
      setState({ error: errorText(e) });
    }
  };
  return (
    <p class="open-tau2">
      <label>
        Open a tau2-bench data folder{' '}
        <input
          id="tau2-folder"
          type="file"
          // Non-standard but everywhere (Chromium, Firefox, Safari); a boolean DOM property.
          {...{ webkitdirectory: true }}
          multiple
          disabled={state.busy}
          onChange={(e) => void open(e.currentTarget.files)}
        />
      </label>{' '}
      <span class="muted" id="tau2-status" aria-live="polite">
        {state.busy
          ? 'loading…'
          : (state.done ??
            'airline or retail: db.json, tasks.json, policy.md, split_tasks.json; telecom: db.toml, user_db.toml, tasks.json, split_tasks.json, main_policy.md, tech_support_manual.md; it stays in this tab')}
      </span>
      {state.error && (
        <span role="alert" class="error" id="tau2-error">
          {' '}
          {state.error}
        </span>
      )}
    </p>
  );
}

export function BrowseView({ info, onDomainOpened, onDomainRemoved }: ViewProps) {
  return (
    <div class="browse">
      <OpenTau2 {...(onDomainOpened ? { onOpened: onDomainOpened } : {})} />
      <BuildFromSpec
        {...(onDomainOpened ? { onBuilt: onDomainOpened } : {})}
        {...(onDomainRemoved ? { onRemoved: onDomainRemoved } : {})}
      />
      <p class="lede">
        <strong>{info.name}</strong> · language {info.language} · calls {info.roles.join(' and ')} · {info.rules.length}{' '}
        rules · {info.checks.length} rule checks · {info.tools.length} tools · {info.tasks.length} tasks ·{' '}
        {info.tables.length} tables
      </p>
      <nav aria-label="Sections" class="toc">
        {/* biome-ignore lint/a11y/useValidAnchor: a real link to the section; onClick scrolls without changing the view's hash route */}
        <a href="#h-policy" onClick={jump}>
          Policy
        </a>{' '}
        ·{' '}
        {/* biome-ignore lint/a11y/useValidAnchor: a real link to the section; onClick scrolls without changing the view's hash route */}
        <a href="#h-tools" onClick={jump}>
          Tools
        </a>{' '}
        ·{' '}
        {/* biome-ignore lint/a11y/useValidAnchor: a real link to the section; onClick scrolls without changing the view's hash route */}
        <a href="#h-tasks" onClick={jump}>
          Tasks
        </a>{' '}
        ·{' '}
        {/* biome-ignore lint/a11y/useValidAnchor: a real link to the section; onClick scrolls without changing the view's hash route */}
        <a href="#h-db" onClick={jump}>
          Database
        </a>
      </nav>
      <section aria-labelledby="h-policy">
        <h2 id="h-policy">Policy rules</h2>
        <dl class="rules" id="rules">
          {info.rules.map((r) => (
            <div key={r.id} class="rule">
              <dt>{r.id}</dt>
              <dd>{r.text}</dd>
            </div>
          ))}
        </dl>
        {info.checks.length > 0 && (
          <>
            <h3>Executable rule checks</h3>
            <p class="muted">
              Run on every write of the reference solutions (the gate) and of the agent (reported beside the reward).
            </p>
            <dl class="rules" id="rule-checks">
              {info.checks.map((c, i) => (
                <div key={`${c.rule}-${i}`} class="rule">
                  <dt>{c.rule}</dt>
                  <dd>
                    {c.description}
                    {c.policy && (
                      <>
                        {' '}
                        <q>{c.policy}</q>
                      </>
                    )}
                  </dd>
                </div>
              ))}
            </dl>
          </>
        )}
        <details>
          <summary>Full policy text</summary>
          <pre class="policy">{info.policy}</pre>
        </details>
      </section>
      <section aria-labelledby="h-tools">
        <h2 id="h-tools">Tools</h2>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take keyboard focus to scroll (WCAG 2.1.1) */}
        {/* biome-ignore lint/a11y/useSemanticElements: a div region keeps the table's scroll box styling */}
        <div class="scroll-x" tabIndex={0} role="region" aria-label="tools">
          <table class="data" id="tools">
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Kind</th>
                <th scope="col">Called by</th>
                <th scope="col">Parameters</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {info.tools.map((t) => (
                <tr key={t.name}>
                  <td>
                    <code>{t.name}</code>
                  </td>
                  <td>
                    <span class={`badge kind-${t.kind}`}>{t.kind}</span>
                  </td>
                  <td>{t.side === 'agent' ? 'agent' : 'caller'}</td>
                  <td>
                    {t.params.length === 0 && <span class="muted">none</span>}
                    <ul class="params">
                      {t.params.map((p) => (
                        <li key={p.name} title={p.description}>
                          <code>
                            {p.name}
                            {p.required ? '' : '?'}: {p.type}
                          </code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>{t.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="h-tasks">
        <h2 id="h-tasks">Tasks</h2>
        <ul class="tasks" id="tasks">
          {info.tasks.map((t) => (
            <li key={t.id}>
              <details>
                <summary>
                  <code>{t.id}</code> <span class="badge">{t.role}</span> {reasonOf(t)}
                </summary>
                <dl class="kv">
                  {t.description?.purpose && (
                    <>
                      <dt>Purpose</dt>
                      <dd>{t.description.purpose}</dd>
                    </>
                  )}
                  <dt>Reward basis</dt>
                  <dd>{t.evaluation_criteria?.reward_basis.join(' × ') ?? '—'}</dd>
                  <dt>Reference solution</dt>
                  <dd>
                    <ol>
                      {(t.evaluation_criteria?.actions ?? []).map((a, i) => (
                        <li key={i}>
                          <code>
                            {a.requestor === 'user' ? 'caller: ' : ''}
                            {a.name}({JSON.stringify(a.arguments)})
                          </code>
                        </li>
                      ))}
                    </ol>
                  </dd>
                  <dt>Assertions</dt>
                  <dd>
                    <ul>
                      {(t.evaluation_criteria?.assertions ?? []).map((a) => (
                        <li key={a.id}>
                          <code>{a.id}</code> ({a.rule}) {a.text}
                        </li>
                      ))}
                    </ul>
                  </dd>
                  <dt>Write whitelist</dt>
                  <dd>
                    {t.evaluation_criteria?.write_whitelist == null
                      ? 'not checked'
                      : t.evaluation_criteria.write_whitelist.length === 0
                        ? 'no write allowed'
                        : t.evaluation_criteria.write_whitelist
                            .map(
                              (w) =>
                                `${w.table}${w.ops ? ` ${w.ops.join('/')}` : ''}${w.columns ? ` (${w.columns.join(', ')})` : ''}${w.where ? ` where ${JSON.stringify(w.where)}` : ''}`,
                            )
                            .join('; ')}
                  </dd>
                </dl>
              </details>
            </li>
          ))}
        </ul>
      </section>
      <Tables info={info} />
    </div>
  );
}

/** In-page section links without touching the hash (it holds the route). */
function jump(e: MouseEvent) {
  e.preventDefault();
  const id = (e.currentTarget as HTMLAnchorElement).getAttribute('href')!.slice(1);
  const el = document.getElementById(id);
  el?.scrollIntoView();
  el?.setAttribute('tabindex', '-1');
  el?.focus();
}
