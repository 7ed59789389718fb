/**
 * The interaction-metric panel (tau2-bench's τ-voice panel; definitions in tau2-bench's
 * docs/interaction-metrics.md at a2c024725189): L_R, L_Y, R_R, R_Y, I_A, S_BC, S_VT, S_ND with
 * the event counts behind them, per domain, the all-domain mean, and the display rule (a value
 * backed by fewer than 10 events is not shown).
 */
import { callEvents, DEFAULT_WINDOWS, type InteractionEvent, type InteractionWindows } from './interaction-events.ts';
import type { MetricTick } from './segments.ts';

/** Version of the metric definitions we reproduce (tau2-bench's INTERACTION_METRICS_VERSION). */
export const INTERACTION_METRICS_VERSION = '1.0';

/** Event counts behind the panel's values. */
export interface InteractionCounts {
  n_simulations: number;
  /** Response events (response + no_response): R_R's and I_A's denominator. */
  response_total: number;
  /** Yield events (yield + no_yield): R_Y's denominator. */
  yield_total: number;
  backchannel_total: number;
  vocal_tic_total: number;
  non_directed_total: number;
  /** Agent segments that started while the caller spoke: I_A's numerator. */
  agent_interrupts_count: number;
}

/**
 * The panel of one domain (or the all-domain mean). Latencies in seconds; rates in [0, 1]
 * (I_A may exceed 1); null when no event backs the value.
 */
export interface InteractionPanel {
  /** L_R ↓: mean seconds from a caller turn's end to the agent's response. */
  response_latency_mean: number | null;
  /** L_Y ↓: mean seconds from a real barge-in to the agent's stop. */
  yield_latency_mean: number | null;
  /** R_R ↑: share of caller turns answered before the caller spoke again. */
  response_rate: number | null;
  /** R_Y ↑: share of real barge-ins the agent yielded to within the no-yield window (interval). */
  yield_rate: number | null;
  /** I_A ↓: agent-interrupts-caller events per response event. */
  agent_interruption_rate: number | null;
  /** S_BC ↑: share of backchannels the agent talked through. */
  selectivity_backchannel: number | null;
  /** S_VT ↑: share of vocal tics the agent ignored. */
  selectivity_vocal_tic: number | null;
  /** S_ND ↑: share of speech not meant for the agent that it ignored. */
  selectivity_non_directed: number | null;
  counts: InteractionCounts;
}

/** Panel fields in display order (L_R, L_Y, R_R, R_Y, I_A, S_BC, S_VT, S_ND). */
export const PANEL_FIELDS = [
  'response_latency_mean',
  'yield_latency_mean',
  'response_rate',
  'yield_rate',
  'agent_interruption_rate',
  'selectivity_backchannel',
  'selectivity_vocal_tic',
  'selectivity_non_directed',
] as const;
export type PanelField = (typeof PANEL_FIELDS)[number];

/** Short names of the panel fields, with the better direction. */
export const PANEL_LABELS: Readonly<Record<PanelField, string>> = {
  response_latency_mean: 'L_R ↓',
  yield_latency_mean: 'L_Y ↓',
  response_rate: 'R_R ↑',
  yield_rate: 'R_Y ↑',
  agent_interruption_rate: 'I_A ↓',
  selectivity_backchannel: 'S_BC ↑',
  selectivity_vocal_tic: 'S_VT ↑',
  selectivity_non_directed: 'S_ND ↑',
};

/** One call's ticks as input to the panel. */
export interface MetricCall {
  ticks: readonly MetricTick[];
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);
const share = (n: number, of: number) => (of > 0 ? n / of : null);

/** Correct share of a selectivity category: 1 − errors / total, null without events. */
function correctShare(events: readonly InteractionEvent[], category: InteractionEvent['category']): number | null {
  const mine = events.filter((e) => e.category === category);
  const errorRate = share(mine.filter((e) => e.error).length, mine.length);
  return errorRate === null ? null : 1 - errorRate;
}

/**
 * The panel over the calls of one domain (events pooled over calls, as tau2-bench does). Calls
 * without ticks are skipped; `counts.n_simulations` counts the others.
 *
 * @throws RangeError when no call has ticks (interaction metrics need a duplex timeline).
 */
export function interactionPanel(
  calls: readonly MetricCall[],
  windows: InteractionWindows = DEFAULT_WINDOWS,
): InteractionPanel {
  const timed = calls.filter((c) => c.ticks.length > 0);
  if (timed.length === 0)
    throw new RangeError('no call has a tick timeline: interaction metrics need full-duplex (--duplex) calls');
  const events: InteractionEvent[] = [];
  let interrupts = 0;
  for (const call of timed) {
    const r = callEvents(call.ticks, windows);
    events.push(...r.events);
    interrupts += r.agent_interrupts;
  }
  const of = (type: InteractionEvent['type']) => events.filter((e) => e.type === type);
  const responses = of('response');
  const responseTotal = responses.length + of('no_response').length;
  const yields = of('yield');
  const yieldTotal = yields.length + of('no_yield').length;
  const total = (c: InteractionEvent['category']) => events.filter((e) => e.category === c).length;
  return {
    response_latency_mean: mean(responses.map((e) => e.latency_sec!)),
    yield_latency_mean: mean(yields.map((e) => e.latency_sec!)),
    response_rate: share(responses.length, responseTotal),
    yield_rate: share(yields.length, yieldTotal),
    agent_interruption_rate: share(interrupts, responseTotal),
    selectivity_backchannel: correctShare(events, 'backchannel'),
    selectivity_vocal_tic: correctShare(events, 'vocal_tic'),
    selectivity_non_directed: correctShare(events, 'non_directed'),
    counts: {
      n_simulations: timed.length,
      response_total: responseTotal,
      yield_total: yieldTotal,
      backchannel_total: total('backchannel'),
      vocal_tic_total: total('vocal_tic'),
      non_directed_total: total('non_directed'),
      agent_interrupts_count: interrupts,
    },
  };
}

/**
 * The all-domain panel: per field, the mean over domains that have a value (missing ones
 * skipped); counts summed. Null for no domains.
 */
export function overallPanel(domains: Readonly<Record<string, InteractionPanel>>): InteractionPanel | null {
  const panels = Object.values(domains);
  if (panels.length === 0) return null;
  const out = {} as InteractionPanel;
  for (const f of PANEL_FIELDS) out[f] = mean(panels.map((p) => p[f]).filter((v): v is number => v !== null));
  const counts = {} as InteractionCounts;
  const keys = [...new Set(panels.flatMap((p) => Object.keys(p.counts)))].sort() as (keyof InteractionCounts)[];
  for (const k of keys) counts[k] = panels.reduce((s, p) => s + (p.counts[k] ?? 0), 0);
  out.counts = counts;
  return out;
}

/** Fewest events behind a value that is shown (tau2-bench's leaderboard, MIN_INTERACTION_N). */
export const MIN_DISPLAY_EVENTS = 10;

/**
 * Events behind one panel value: for L_R the answered turns (R_R × response_total, rounded),
 * for L_Y likewise the yields (R_Y × yield_total; ours, by the same rule), for R_R and I_A the
 * response events, for R_Y the yield events, for S_* their category's events.
 */
export function supportOf(panel: InteractionPanel, field: PanelField): number {
  const c = panel.counts;
  switch (field) {
    case 'response_latency_mean':
      return Math.round((panel.response_rate ?? 0) * c.response_total);
    case 'yield_latency_mean':
      return Math.round((panel.yield_rate ?? 0) * c.yield_total);
    case 'response_rate':
    case 'agent_interruption_rate':
      return c.response_total;
    case 'yield_rate':
      return c.yield_total;
    case 'selectivity_backchannel':
      return c.backchannel_total;
    case 'selectivity_vocal_tic':
      return c.vocal_tic_total;
    case 'selectivity_non_directed':
      return c.non_directed_total;
  }
}

/** How a panel value is shown: `ok`, `low_n` (fewer than 10 events) or `undefined` (no value). */
export type DisplayStatus = 'ok' | 'low_n' | 'undefined';

/** The display status of one value ({@link MIN_DISPLAY_EVENTS}). */
export function displayStatus(panel: InteractionPanel, field: PanelField): DisplayStatus {
  if (panel[field] === null) return 'undefined';
  return supportOf(panel, field) >= MIN_DISPLAY_EVENTS ? 'ok' : 'low_n';
}

/**
 * The panel value as text, by the display rule: latencies `1.46s`, rates `97.1%`; `—` without
 * events; `n=3` (the value hidden) when fewer than {@link MIN_DISPLAY_EVENTS} events back it.
 * The JSON documents keep every value.
 */
export function formatPanelValue(panel: InteractionPanel, field: PanelField): string {
  const v = panel[field];
  if (v === null) return '—';
  const text = field.endsWith('latency_mean') ? `${v.toFixed(2)}s` : `${(v * 100).toFixed(1)}%`;
  return displayStatus(panel, field) === 'ok' ? text : `n=${supportOf(panel, field)}`;
}

/** The metrics document (`switchboard metrics --json`, `summary.json`'s `interaction_metrics`). */
export interface InteractionBlock {
  version: string;
  config: InteractionWindows;
  domains: Record<string, InteractionPanel>;
  overall: InteractionPanel | null;
}

/** The document for panels computed with `windows`. Domains sorted by name. */
export function interactionBlock(
  domains: Readonly<Record<string, InteractionPanel>>,
  windows: InteractionWindows = DEFAULT_WINDOWS,
): InteractionBlock {
  const sorted = Object.fromEntries(Object.entries(domains).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    version: INTERACTION_METRICS_VERSION,
    config: { ...windows },
    domains: sorted,
    overall: overallPanel(sorted),
  };
}
