/**
 * A caller turn's channel audio: playback and a waveform (SVG) of what the agent heard, with the
 * channel events of the effect timeline marked on it — noise bursts, packet-loss drops, the
 * dropout cut, and the barge-in point (the caller starts speaking where the agent was cut).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Turn } from '../../adapters/browser/rollout-types.ts';

type UserTurn = Extract<Turn, { role: 'user' }>;

/** 16-bit PCM mono WAV → samples and rate (the channel's own format). */
export function decodePcm16(bytes: Uint8Array): { samples: Float32Array; sampleRate: number } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let rate = 16000;
  let channels = 1;
  for (let off = 12; off + 8 <= bytes.length; ) {
    const id = String.fromCharCode(bytes[off]!, bytes[off + 1]!, bytes[off + 2]!, bytes[off + 3]!);
    const size = v.getUint32(off + 4, true);
    if (id === 'fmt ') {
      channels = v.getUint16(off + 10, true);
      rate = v.getUint32(off + 12, true);
    } else if (id === 'data') {
      const n = Math.floor(Math.min(size, bytes.length - off - 8) / 2 / channels);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = v.getInt16(off + 8 + i * 2 * channels, true) / 32768;
      return { samples: out, sampleRate: rate };
    }
    off += 8 + size + (size & 1);
  }
  return { samples: new Float32Array(0), sampleRate: rate };
}

const W = 600;
const H = 64;

/** Min/max envelope path of `x` over `W` columns. */
function envelope(x: Float32Array): string {
  if (x.length === 0) return '';
  const parts: string[] = [];
  const per = x.length / W;
  for (let c = 0; c < W; c++) {
    let lo = 0;
    let hi = 0;
    const end = Math.min(x.length, Math.ceil((c + 1) * per));
    for (let i = Math.floor(c * per); i < end; i++) {
      const s = x[i]!;
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    parts.push(`M${c} ${(H / 2 - hi * (H / 2)).toFixed(1)}V${(H / 2 - lo * (H / 2) + 0.5).toFixed(1)}`);
  }
  return parts.join('');
}

/** What each kind of mark on a waveform means (legend text), by mark class. */
export const MARK_LEGEND = {
  burst: 'noise burst',
  packet_loss: 'packet loss',
  muffle: 'muffled mic',
  dropout: 'dropout cut (the rest was not heard)',
  'barge-in': 'barge-in (caller starts over the agent)',
} as const;

/** The legend of the marks a waveform shows: a swatch in the mark's colour and its meaning. */
function MarkLegend({ kinds }: { kinds: readonly (keyof typeof MARK_LEGEND)[] }) {
  if (kinds.length === 0) return null;
  return (
    <ul class="wave-legend" aria-label="waveform marks">
      {kinds.map((k) => (
        <li key={k} data-legend={k}>
          <svg class="swatch" viewBox="0 0 12 12" aria-hidden="true">
            {k === 'dropout' || k === 'barge-in' ? (
              <line class={`mark-${k}`} x1={6} x2={6} y1={0} y2={12} />
            ) : (
              <rect class={`mark mark-${k}`} x={0} y={0} width={12} height={12} />
            )}
          </svg>
          {MARK_LEGEND[k]}
        </li>
      ))}
    </ul>
  );
}

/** Playback and waveform of one caller turn; `interruptedMs` is the agent's cut time when this turn barged in. */
export function TurnAudio({
  turn,
  wav,
  index,
  interruptedMs,
}: {
  turn: UserTurn;
  wav: Uint8Array | undefined;
  index: number;
  interruptedMs?: number | null;
}) {
  const audio = turn.audio;
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!wav) return;
    const u = URL.createObjectURL(new Blob([wav as BlobPart], { type: 'audio/wav' }));
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [wav]);
  const path = useMemo(() => (wav ? envelope(decodePcm16(wav).samples) : ''), [wav]);
  if (!audio) return null;
  const dur = Math.max(1, audio.duration_ms);
  const x = (ms: number) => (Math.min(dur, Math.max(0, ms)) / dur) * W;
  const marks = audio.timeline.filter((e) => e.type === 'burst' || e.type === 'packet_loss' || e.type === 'muffle');
  const labels: string[] = [];
  const bursts = marks.filter((e) => e.type === 'burst').length;
  const drops = marks.filter((e) => e.type === 'packet_loss').length;
  const bed = audio.timeline.find((e) => e.type === 'background_noise');
  const bedSource = typeof bed?.params.source === 'string' ? bed.params.source : undefined;
  if (bedSource) labels.push(`background noise ${bedSource}`);
  if (bursts) labels.push(`${bursts} noise burst${bursts > 1 ? 's' : ''}`);
  if (drops) labels.push(`${drops} packet drop${drops > 1 ? 's' : ''}`);
  if (turn.dropout) labels.push(`dropout cut at ${Math.round(turn.dropout.cut_ms ?? dur)} ms`);
  if (turn.barge_in)
    labels.push(
      `barge-in (${turn.barge_in.type})${interruptedMs != null ? ` at agent ${Math.round(interruptedMs)} ms` : ''}`,
    );
  return (
    <div class="turn-audio" data-audio-turn={index} {...(bedSource ? { 'data-noise': bedSource } : {})}>
      <svg
        class="waveform"
        viewBox={`0 0 ${W} ${H}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`waveform of caller turn ${index}, ${Math.round(dur)} ms, ${audio.preset} channel${labels.length ? `: ${labels.join(', ')}` : ''}`}
      >
        {marks.map((e, i) => (
          <rect
            key={i}
            class={`mark mark-${e.type}`}
            data-mark={e.type}
            x={x(e.start_ms)}
            width={Math.max(1.5, x(e.end_ms) - x(e.start_ms))}
            y={0}
            height={H}
          >
            <title>{`${e.type} ${Math.round(e.start_ms)}–${Math.round(e.end_ms)} ms ${JSON.stringify(e.params)}`}</title>
          </rect>
        ))}
        <path d={path} class="wave" />
        {turn.barge_in && (
          <line class="mark-barge-in" data-mark="barge_in" x1={1} x2={1} y1={0} y2={H}>
            <title>barge-in point: the caller starts here</title>
          </line>
        )}
        {turn.dropout && (
          <line class="mark-dropout" data-mark="dropout" x1={W - 1} x2={W - 1} y1={0} y2={H}>
            <title>{`dropout cut: "${turn.dropout.full_text.slice(turn.dropout.cut_char)}" was not heard`}</title>
          </line>
        )}
      </svg>
      <MarkLegend
        kinds={(Object.keys(MARK_LEGEND) as (keyof typeof MARK_LEGEND)[]).filter((k) =>
          k === 'dropout' ? !!turn.dropout : k === 'barge-in' ? !!turn.barge_in : marks.some((e) => e.type === k),
        )}
      />
      <div class="audio-meta">
        {url ? (
          <audio controls preload="metadata" src={url} aria-label={`what the agent heard, turn ${index}`} />
        ) : (
          <span class="muted">audio not kept</span>
        )}
        <span class="muted">
          {Math.round(dur)} ms · {audio.preset} · {audio.tts}
          {labels.length > 0 && ` · ${labels.join(' · ')}`}
        </span>
      </div>
    </div>
  );
}
