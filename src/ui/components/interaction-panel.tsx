/**
 * The interaction metrics of a call that ran on the full-duplex timeline (issue 17): a small
 * table of L_R, L_Y, R_R, R_Y, I_A, S_BC, S_VT, S_ND with the events behind each (tau2-bench's
 * τ-voice panel; docs/duplex.md). One call rarely has 10 events of a kind, so every value is
 * shown with its count here, and those under 10 are marked as the tables elsewhere hide them.
 */
import type { Trajectory } from '../../adapters/browser/rollout-types.ts';
import {
  displayStatus,
  PANEL_FIELDS,
  PANEL_LABELS,
  supportOf,
  type InteractionPanel as Panel,
} from '../../core/duplex/interaction-metrics.ts';

function value(p: Panel, f: (typeof PANEL_FIELDS)[number]): string {
  const v = p[f];
  if (v === null) return '—';
  return f.endsWith('latency_mean') ? `${v.toFixed(2)} s` : `${(v * 100).toFixed(1)}%`;
}

/** The panel, or nothing for a turn-based call. */
export function InteractionPanel({ trajectory }: { trajectory: Trajectory }) {
  const p = trajectory.duplex?.metrics as Panel | null | undefined;
  if (!p) return null;
  return (
    <div id="interaction-metrics">
      <h3>Interaction metrics</h3>
      <table class="data">
        <thead>
          <tr>
            <th>metric</th>
            <th>value</th>
            <th>events</th>
          </tr>
        </thead>
        <tbody>
          {PANEL_FIELDS.map((f) => (
            <tr key={f} data-field={f} data-value={p[f] ?? ''}>
              <td>{PANEL_LABELS[f]}</td>
              <td class={displayStatus(p, f) === 'low_n' ? 'muted' : ''}>{value(p, f)}</td>
              <td>{supportOf(p, f)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        {trajectory.duplex!.total_ticks} ticks of {trajectory.duplex!.turn_taking.tick_ms} ms; values backed by fewer
        than 10 events are greyed (tables of runs hide them).
      </p>
    </div>
  );
}
