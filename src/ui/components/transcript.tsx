/**
 * A call's turns. Every text — the agent's, the caller's, tool results — is rendered as a text
 * node (never as HTML), so whatever a model writes shows literally.
 */
import { useEffect, useState } from 'preact/hooks';
import { agentSpeechName, type Turn } from '../../adapters/browser/rollout-types.ts';
import { TurnAudio } from './waveform.tsx';

const WHO: Record<Turn['role'], string> = { assistant: 'Agent', user: 'Caller', tool: 'Tool' };

function args(a: Record<string, unknown>): string {
  return JSON.stringify(a);
}

/** Length in ms of a 16-bit mono WAV as the page stores them (44-byte header, 2 bytes a sample). */
function wavMs(wav: Uint8Array): number {
  const v = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const rate = v.getUint32(24, true);
  return rate > 0 ? Math.round(((wav.byteLength - 44) / 2 / rate) * 1000) : 0;
}

/** Playback of the agent's spoken reply (a WAV kept with the call). */
function AgentSpeech({ wav, autoplay }: { wav: Uint8Array; autoplay: boolean }) {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    const u = URL.createObjectURL(new Blob([wav as BlobPart], { type: 'audio/wav' }));
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [wav]);
  const ms = wavMs(wav);
  return (
    <p class="agent-speech" data-ms={ms}>
      {url && <audio controls autoPlay={autoplay} src={url} aria-label="the agent's reply, spoken" />}{' '}
      <span class="muted">{ms} ms spoken</span>
    </p>
  );
}

/** The transcript of `turns`; `live` adds a polite live region for screen readers. */
export function Transcript({
  turns,
  id = 'transcript',
  live = false,
  audio,
  autoplay = false,
}: {
  turns: readonly Turn[];
  id?: string;
  live?: boolean;
  /** Stored WAVs by reference: caller turns with channel audio get playback and a waveform. */
  audio?: ReadonlyMap<string, Uint8Array>;
  /** Play the latest spoken agent reply as it arrives. */
  autoplay?: boolean;
}) {
  let lastSpoken = -1;
  turns.forEach((t, i) => {
    if (t.role === 'assistant' && audio?.has(agentSpeechName(i))) lastSpoken = i;
  });
  if (turns.length === 0) return <p class="muted">No turns yet.</p>;
  return (
    <ol class="transcript" id={id} aria-live={live ? 'polite' : undefined}>
      {turns.map((t, i) => {
        if (t.role === 'tool') {
          return (
            <li key={i} class={`turn role-tool ${t.error ? 'is-error' : ''}`} data-turn={i} data-role="tool">
              <span class="who">
                {t.requestor === 'user' ? 'Caller tool' : WHO.tool} <span class="idx">#{i}</span>
              </span>
              <div class="body">
                <code class="call">
                  {t.name}({args(t.arguments)})
                </code>{' '}
                <span class={`badge ${t.error ? 'bad' : 'good'}`}>{t.error ? 'error' : 'ok'}</span>
                {t.writes.length > 0 && <span class="badge write">{t.writes.length} column writes</span>}
                <details>
                  <summary>result</summary>
                  <pre class="result">{t.content}</pre>
                </details>
              </div>
            </li>
          );
        }
        return (
          <li key={i} class={`turn role-${t.role}`} data-turn={i} data-role={t.role}>
            <span class="who">
              {WHO[t.role]} <span class="idx">#{i}</span>
            </span>
            <div class="body">
              {t.text && <p class="text">{t.text}</p>}
              {t.tool_calls.map((c) => (
                <p key={c.id} class="calls">
                  →{' '}
                  <code>
                    {c.name}({args(c.arguments)})
                  </code>
                </p>
              ))}
              {!t.text && t.tool_calls.length === 0 && <p class="text muted">(silence)</p>}
              {t.role === 'assistant' && audio?.get(agentSpeechName(i)) && (
                <AgentSpeech wav={audio.get(agentSpeechName(i))!} autoplay={autoplay && i === lastSpoken} />
              )}
              {t.role === 'user' && t.audio && (
                <TurnAudio
                  turn={t}
                  index={i}
                  wav={audio?.get(t.audio.degraded)}
                  interruptedMs={(() => {
                    const prev = turns[i - 1];
                    return prev?.role === 'assistant' ? prev.interrupted?.cut_ms : undefined;
                  })()}
                />
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
