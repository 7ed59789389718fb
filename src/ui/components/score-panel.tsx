/**
 * The live score panel: every tool call (read/write, ok/error, process reward, write
 * whitelist), the database diff so far, assertion states, QUALITY veto hits, and — once the call
 * ended — the reward by component. All numbers come from the core (`evaluate`, run in the worker).
 */
import { InteractionPanel } from './interaction-panel.tsx';
import type { AssertionVerdict, LiveScore, RewardInfo, Trajectory } from '../../adapters/browser/rollout-types.ts';

/** A number with at most 3 decimals, trailing zeros dropped; signed when `sign`. */
export function num(n: number | null | undefined, sign = false): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  const s = String(Math.round(n * 1000) / 1000);
  return sign && n > 0 ? `+${s}` : s;
}

const WHITELIST_TEXT = { inside: 'inside', outside: 'OUTSIDE', 'no-writes': 'no writes', unchecked: '—' } as const;

/**
 * The state shown for a verdict. Once the call ended, the verdict itself. While it runs, a
 * failure that points at no turn only means the awaited act has not happened yet (no tool call,
 * no confirmation so far), which the agent may still do: it is `pending`, as are undecided ones;
 * a failure at a turn (a write without consent, a forbidden call) is `failed so far`.
 */
export function shownState(v: Pick<AssertionVerdict, 'status' | 'turn'>, running: boolean): string {
  if (!running) return v.status === 'not_judged' ? 'not judged' : v.status;
  if (v.status === 'skipped' || v.status === 'not_judged') return 'pending';
  if (v.status === 'failed' && v.turn === null) return 'pending';
  return `${v.status} so far`;
}

/** The reward breakdown of a scored call. */
export function RewardBreakdown({ info, id = 'reward-breakdown' }: { info: RewardInfo; id?: string }) {
  const all = Object.entries(info.components);
  return (
    <div class="reward" id={id}>
      <p class="reward-line">
        Reward{' '}
        <strong
          class={`reward-value ${info.reward >= 1 - 1e-6 && !info.partial ? 'good' : 'bad'}`}
          data-reward={info.reward}
        >
          {num(info.reward)}
        </strong>
        {info.partial && <span class="badge warn">partial (not judged)</span>}
        <span class="muted"> = product of {info.basis.length ? info.basis.join(' × ') : 'nothing (no criteria)'}</span>
      </p>
      {info.notes.map((n, i) => (
        <p key={i} class="note">
          {n}
        </p>
      ))}
      <table class="data components">
        <thead>
          <tr>
            <th scope="col">Component</th>
            <th scope="col">Score</th>
            <th scope="col">In reward</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {all.map(([name, c]) => (
            <tr key={name} data-component={name}>
              <th scope="row">{name}</th>
              <td class={c?.score === 1 ? 'good' : c?.score === 0 ? 'bad' : ''}>
                {c?.judged === false ? 'not judged' : num(c?.score)}
              </td>
              <td>{info.basis.includes(name as never) ? 'yes' : 'no'}</td>
              <td>
                {(c?.details ?? []).length === 0 ? (
                  <span class="muted">—</span>
                ) : (
                  <ul>
                    {c!.details.map((d, i) => (
                      <li key={i}>{d}</li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {info.step_rewards.length > 0 && (
        <p class="muted">
          Step rewards (per agent turn, final reward on the last): {info.step_rewards.map((r) => num(r)).join(', ')}
        </p>
      )}
    </div>
  );
}

/** The panel. `trajectory` is set once the call ended. */
export function ScorePanel({
  live,
  trajectory,
  running,
  stopped = false,
}: {
  live: LiveScore | undefined;
  trajectory?: Trajectory | undefined;
  running: boolean;
  /** The person pressed Stop: the call ends unscored, which is not a fault. */
  stopped?: boolean;
}) {
  const verdicts = trajectory?.reward_info?.assertions ?? live?.assertions ?? [];
  // Once the end event arrived the panel shows the final state, even before the call's promise settles.
  const ongoing = running && !trajectory;
  return (
    <section class="score" id="score" aria-labelledby="h-score" data-final={trajectory ? 'true' : 'false'}>
      <h2 id="h-score">{trajectory ? 'Score' : 'Live score'}</h2>
      {!live && <p class="muted">Starts with the first turn.</p>}
      {live && (
        <>
          <p id="process-total">
            {ongoing ? 'Process reward so far' : 'Process reward'}: <strong>{num(live.processTotal, true)}</strong>
            <span class="muted">
              {' '}
              ({live.calls.filter((c) => c.requestor === 'assistant').length} agent tool calls)
            </span>
          </p>
          <h3>Tool calls</h3>
          {live.calls.length === 0 ? (
            <p class="muted">{ongoing ? 'None yet.' : 'None.'}</p>
          ) : (
            <table class="data" id="tool-calls">
              <thead>
                <tr>
                  <th scope="col">Turn</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Result</th>
                  <th scope="col">Process</th>
                  <th scope="col">Whitelist</th>
                </tr>
              </thead>
              <tbody>
                {live.calls.map((c) => (
                  <tr key={c.turn} data-turn={c.turn}>
                    <td>{c.turn}</td>
                    <td>
                      <code>{c.name}</code>
                      {c.requestor === 'user' && <span class="muted"> (caller)</span>}
                    </td>
                    <td>
                      <span class={`badge kind-${c.kind ?? 'unknown'}`}>{c.kind ?? 'unknown'}</span>
                    </td>
                    <td class={c.ok ? 'good' : 'bad'}>{c.ok ? 'ok' : 'error'}</td>
                    <td>{c.process === null ? '—' : num(c.process, true)}</td>
                    <td
                      class={c.whitelist === 'outside' ? 'bad' : c.whitelist === 'inside' ? 'good' : ''}
                      title={c.offending.join('\n')}
                    >
                      {WHITELIST_TEXT[c.whitelist]}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h3>Database changes</h3>
          {live.diff.length === 0 ? (
            <p class="muted" id="db-diff-empty">
              {ongoing ? 'No change yet.' : 'No change.'}
            </p>
          ) : (
            <ul class="diff" id="db-diff">
              {live.diff.map((d, i) => (
                <li key={i}>
                  <code>{d}</code>
                </li>
              ))}
            </ul>
          )}
          <h3>Assertions</h3>
          <table class="data" id="assertions">
            <thead>
              <tr>
                <th scope="col">Assertion</th>
                <th scope="col">Rule</th>
                <th scope="col">State</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {verdicts.map((v, i) => {
                const state = shownState(v, ongoing);
                return (
                  <tr key={`${v.id}-${i}`} data-assertion={v.id}>
                    <td>
                      <code>{v.id}</code>
                    </td>
                    <td>{v.rule}</td>
                    <td
                      class={`state ${state.startsWith('passed') ? 'good' : state.startsWith('failed') ? 'bad' : ''}`}
                    >
                      {state}
                    </td>
                    <td>{v.reason}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <h3>Quality veto</h3>
          {live.quality.length === 0 ? (
            <p class="muted" id="quality-none">
              No hit.
            </p>
          ) : (
            <ul id="quality" class="bad">
              {live.quality.map((q, i) => (
                <li key={i}>{q}</li>
              ))}
            </ul>
          )}
        </>
      )}
      {trajectory && (
        <>
          <h3>Result</h3>
          <p id="termination">
            {stopped && !trajectory.valid ? (
              <>
                Ended: <strong>stopped</strong> <span class="muted">— you stopped the call; it is not scored</span>
              </>
            ) : (
              <>
                Ended: <strong>{trajectory.termination}</strong>
                {!trajectory.valid && <span class="bad"> — invalid rollout: {trajectory.invalid_reason}</span>}
              </>
            )}
          </p>
          {trajectory.reward_info && <RewardBreakdown info={trajectory.reward_info} />}
          <InteractionPanel trajectory={trajectory} />
        </>
      )}
    </section>
  );
}
