/** The app shell: header with the domain picker and the views, and the current view. */
import { useEffect, useState } from 'preact/hooks';
import type { DomainInfo } from '../adapters/browser/rollout-types.ts';
import { lazyView } from './lazy.tsx';
import { errorText, mainWorker, storeSwept } from './runtime.ts';
import { restoreBuilt } from './built-domains.ts';
import type { StoredProblem } from '../adapters/browser/built-domain-store.ts';
import { formatHash, parseHash, type Route } from './share.ts';
import type { ViewProps } from './view-props.ts';
import { TAU2_DOWNLOADS, loadTau2, tau2Download } from './tau2-data.ts';
import { DownloadProgress, HomeView } from './views/home.tsx';

const VIEWS: { id: string; label: string; hint: string }[] = [
  { id: 'home', label: 'Start', hint: 'what this is; call, watch or batch; load tau2-bench data' },
  { id: 'browse', label: 'Browse', hint: 'policy, tools, tasks, database' },
  { id: 'watch', label: 'Watch a call', hint: 'simulated caller vs agent, scored live' },
  { id: 'call', label: 'Call as the caller', hint: 'you type the caller’s turns' },
  { id: 'batch', label: 'Batch', hint: 'K rollouts per task in a worker pool' },
  { id: 'history', label: 'History', hint: 'stored trajectories, export' },
  { id: 'evolution', label: 'Evolution', hint: 'an evolve report: difficulty per round, task lineage' },
];

const Browse = lazyView<ViewProps>(() => import('./views/browse.tsx').then((m) => m.BrowseView));
const Watch = lazyView<ViewProps & { mode: 'watch' | 'call' }>(() =>
  import('./views/call.tsx').then((m) => m.CallView),
);
const Batch = lazyView<ViewProps>(() => import('./views/batch.tsx').then((m) => m.BatchView));
const History = lazyView<ViewProps>(() => import('./views/history.tsx').then((m) => m.HistoryView));
const Evolution = lazyView<{ route: Route }>(() => import('./views/evolution.tsx').then((m) => m.EvolutionView));

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** The page. */
export function App() {
  const route = useRoute();
  const [names, setNames] = useState<string[]>([]);
  const linked = route.params.get('domain');
  const [domain, setDomain] = useState(() => linked ?? 'carrier');
  const [info, setInfo] = useState<DomainInfo>();
  const [reload, setReload] = useState(0);
  const [error, setError] = useState<string>();
  const [download, setDownload] = useState<{ done: number; total: number }>();
  const [skipped, setSkipped] = useState<StoredProblem[]>([]);

  useEffect(() => {
    const { service, failed } = mainWorker();
    Promise.race([service.domainNames(), failed]).then(
      (all) => setNames((n) => [...new Set([...all, ...n])]),
      (e: unknown) => setError(errorText(e)),
    );
    // Domains built in this browser earlier: served again (or reported and skipped).
    void restoreBuilt().then((r) => {
      setNames((n) => [...new Set([...n, ...r.names])]);
      setSkipped(r.problems);
    });
  }, []);
  // Calls that a closed tab left running are marked interrupted on every visit, whatever the view.
  useEffect(() => {
    void storeSwept();
  }, []);
  // A link to another domain (e.g. from the start view) switches to it.
  useEffect(() => {
    if (linked && linked !== domain) setDomain(linked);
  }, [linked]);
  useEffect(() => {
    let current = true;
    setInfo(undefined);
    setError(undefined);
    setDownload(undefined);
    const { service, failed } = mainWorker();
    const tau2 = tau2Download(domain);
    // A tau2-bench domain (a share link, the start view, the picker) loads its data by itself.
    const loaded = tau2
      ? loadTau2(tau2, (done, total) => current && setDownload({ done, total })).then(() =>
          setNames((n) => (n.includes(domain) ? n : [...n, domain])),
        )
      : restoreBuilt(); // a domain built in this browser (e.g. a reload showing it) is served first
    Promise.race([loaded.then(() => service.describe(domain)), failed]).then(
      (i) => current && setInfo(i),
      (e: unknown) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [domain, reload]);

  const view = VIEWS.some((v) => v.id === route.view) ? route.view : 'home';
  const choices = [...new Set([...(names.length ? names : [domain]), ...TAU2_DOWNLOADS.map((d) => d.name)])];
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <h1>Switchboard</h1>
          <span class="muted">voice-agent sandbox</span>
        </div>
        <label class="domain-pick">
          Domain{' '}
          <select id="domain" value={domain} onChange={(e) => setDomain(e.currentTarget.value)}>
            {choices.map((n) => {
              const d = names.includes(n) ? undefined : tau2Download(n);
              return (
                <option key={n} value={n}>
                  {d ? `${n} (download)` : n}
                </option>
              );
            })}
          </select>
        </label>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map((v) => (
              <li key={v.id}>
                <a
                  href={formatHash(v.id)}
                  aria-current={view === v.id ? 'page' : undefined}
                  title={v.hint}
                  data-view={v.id}
                >
                  {v.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="content" tabIndex={-1}>
        {error && (
          <p role="alert" class="error" id="app-error">
            {error}
          </p>
        )}
        {skipped.length > 0 && (
          <div role="alert" class="error" id="built-skipped">
            Kept built domains that could not be served (skipped; delete them in Browse):
            <ul>
              {skipped.map((p) => (
                <li key={p.name} data-name={p.name}>
                  <strong>{p.name}</strong>: {p.reason}
                </li>
              ))}
            </ul>
            <button type="button" onClick={() => setSkipped([])}>
              Dismiss
            </button>
          </div>
        )}
        {!info && !error && view !== 'home' && (
          <p class="muted" aria-live="polite" id="domain-loading">
            Loading domain {domain}…
            {download && (
              <>
                {' '}
                <DownloadProgress {...download} />
              </>
            )}
          </p>
        )}
        {view === 'home' && <HomeView domain={domain} info={info} download={download} onDomain={(n) => setDomain(n)} />}
        {info && view === 'browse' && (
          <Browse
            info={info}
            route={route}
            onDomainOpened={(name) => {
              setNames((n) => (n.includes(name) ? n : [...n, name]));
              setDomain(name);
              setReload((r) => r + 1); // the same name reloaded from disk: describe it afresh
            }}
            onDomainRemoved={(name) => {
              setNames((n) => n.filter((x) => x !== name));
              setSkipped((s) => s.filter((p) => p.name !== name));
              if (name === domain) setDomain('carrier');
            }}
          />
        )}
        {info && view === 'watch' && <Watch key="watch" info={info} route={route} mode="watch" />}
        {info && view === 'call' && <Watch key="call" info={info} route={route} mode="call" />}
        {info && view === 'batch' && <Batch info={info} route={route} />}
        {info && view === 'history' && <History info={info} route={route} />}
        {view === 'evolution' && <Evolution route={route} />}
      </main>
      <footer class="about" id="about">
        <p class="muted">
          Switchboard is Apache-2.0. Caller speech in the page uses eSpeak NG (npm <code>espeak-ng</code>,
          GPL-3.0-or-later), loaded only as a separate optional chunk when a call has channel audio switched on; it is
          not part of the main bundle. Everything runs in this tab; nothing is sent anywhere except to a remote agent
          endpoint you configure.
        </p>
      </footer>
    </>
  );
}
