/**
 * The start view: what Switchboard is in three lines, the three things to do (call a task
 * yourself, watch a call, run a batch) on the chosen domain, and the domains — the built-in one
 * and tau2-bench's airline and retail, downloaded in one click from a pinned GitHub commit.
 * Part of the main chunk: it is the first view and needs no worker to draw.
 */
import { useEffect, useState } from 'preact/hooks';
import type { DomainInfo } from '../../adapters/browser/rollout-types.ts';
import { formatHash } from '../share.ts';
import {
  TAU2_COMMIT_SHORT,
  TAU2_DOWNLOADS,
  megabytes,
  tau2Bytes,
  tau2IsCached,
  type Tau2Download,
} from '../tau2-data.ts';

/** `3.2 MB`, or `0.2 MB + db.json` when the manifest does not pin every size. */
function downloadSize(d: Tau2Download): string {
  const { bytes, exact } = tau2Bytes(d);
  return exact ? megabytes(bytes) : `${megabytes(bytes)} + db.json (size not pinned)`;
}

/** Props of the start view. */
export interface HomeProps {
  /** The chosen domain. */
  domain: string;
  /** It, once loaded. */
  info: DomainInfo | undefined;
  /** Progress of a tau2-bench download in flight, bytes. */
  download: { done: number; total: number } | undefined;
  /** Switch to domain `name` (a tau2 one downloads first). */
  onDomain(name: string): void;
}

const ACTIONS = [
  {
    view: 'call',
    id: 'start-call',
    label: 'Call a task yourself',
    what: 'You are the caller: type (or speak, with channel audio on) and the agent answers, scored as you go.',
  },
  {
    view: 'watch',
    id: 'start-watch',
    label: 'Watch a call',
    what: 'A simulated caller phones the agent; follow it turn by turn with the live score.',
  },
  {
    view: 'batch',
    id: 'start-batch',
    label: 'Run a batch',
    what: 'K calls per task in parallel workers: pass^k, pass rates, which tasks are hard.',
  },
] as const;

/** A tau2-bench download's progress: a bar and `1.2 MB of 3.2 MB` (no total when not every size is pinned). */
export function DownloadProgress({ done, total }: { done: number; total: number }) {
  return (
    <span class="download">
      <progress {...(total > 0 ? { max: total, value: Math.min(done, total) } : {})} aria-label="tau2-bench download" />{' '}
      <span class="muted">
        tau2-bench data: {megabytes(done)}
        {total > 0 ? ` of ${megabytes(total)}` : ' received'}
      </span>
    </span>
  );
}

/** The start view. */
export function HomeView({ domain, info, download, onDomain }: HomeProps) {
  const [cached, setCached] = useState<Record<string, boolean>>({});
  useEffect(() => {
    void Promise.all(TAU2_DOWNLOADS.map(async (d) => [d.name, await tau2IsCached(d)] as const)).then((e) =>
      setCached(Object.fromEntries(e)),
    );
  }, [info?.name]);
  const ready = info?.name === domain;
  return (
    <div class="home">
      <section class="intro" aria-labelledby="h-intro">
        <h2 id="h-intro">Phone calls for voice agents, scored</h2>
        <p id="intro-lines">
          <span>
            Switchboard puts a voice agent on simulated phone calls: real tools over a database, a written policy, and
            tasks.
          </span>
          <span>
            The caller's voice goes through a phone line (noise, packet loss, barge-in) and every call is scored against
            the task's known outcome.
          </span>
          <span>It all runs in this tab; the scores become rewards and training data for the agent.</span>
        </p>
      </section>
      <ul class="actions" aria-label="What to do">
        {ACTIONS.map((a) => (
          <li key={a.view}>
            <a
              class="action"
              id={a.id}
              href={formatHash(a.view, new URLSearchParams({ domain }))}
              aria-disabled={ready ? undefined : 'true'}
            >
              {a.label}
            </a>
            <span class="muted">{a.what}</span>
          </li>
        ))}
      </ul>
      <section aria-labelledby="h-domains">
        <h2 id="h-domains">Domains</h2>
        <ul class="domains" id="domains">
          <li data-domain="carrier">
            <button type="button" disabled={domain === 'carrier'} onClick={() => onDomain('carrier')}>
              {domain === 'carrier' ? 'In use' : 'Use'}
            </button>{' '}
            <strong>carrier</strong>{' '}
            <span class="muted">built in · a Mandarin-speaking mobile carrier's billing line</span>
          </li>
          {TAU2_DOWNLOADS.map((d) => {
            const active = domain === d.name;
            return (
              <li key={d.name} data-domain={d.name}>
                <button type="button" id={`load-${d.name}`} disabled={active} onClick={() => onDomain(d.name)}>
                  {active ? (ready ? 'In use' : 'Loading…') : cached[d.name] ? 'Use' : 'Load'}
                </button>{' '}
                <strong>{d.name}</strong>{' '}
                <span class="muted">
                  tau2-bench (MIT) · {d.about} ·{' '}
                  {cached[d.name]
                    ? 'in this browser'
                    : `${downloadSize(d)} from GitHub (commit ${TAU2_COMMIT_SHORT}, checked against pinned digests), then cached`}
                </span>
                {active && !ready && download && (
                  <>
                    {' '}
                    <DownloadProgress {...download} />
                  </>
                )}
              </li>
            );
          })}
        </ul>
        <p class="muted" id="domain-status" aria-live="polite">
          {ready
            ? `${info.name}: ${info.tasks.length} tasks, ${info.tools.length} tools, ${info.rules.length} policy rules.`
            : `Loading ${domain}…`}
        </p>
      </section>
    </div>
  );
}
