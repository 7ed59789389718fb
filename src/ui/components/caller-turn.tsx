/** The caller's turn in the Call view: typed words, hang-up, and an optional microphone take. */
import type { Ref } from 'preact';
import type { MicRecording } from '../../adapters/browser/audio/mic.ts';
import type { CallerPrompt } from '../../adapters/browser/rollout-types.ts';

/** The form the person at the keyboard speaks through; the view owns the state. */
export function CallerTurn({
  prompt,
  running,
  channel,
  draft,
  setDraft,
  send,
  inputRef,
  recording,
  record,
  take,
  dropTake,
  openTake,
  heard,
}: {
  /** The pending caller prompt, when it is the caller's turn. */
  prompt: { p: CallerPrompt } | undefined;
  running: boolean;
  /** Channel audio is on (needed to speak by microphone). */
  channel: boolean;
  draft: string;
  setDraft(s: string): void;
  send(hangUp: boolean): void;
  inputRef: Ref<HTMLTextAreaElement>;
  recording: MicRecording | undefined;
  record(): Promise<void>;
  /** The recorded take (16 kHz samples) and its object URL. */
  take: { samples: Float32Array; url: string } | undefined;
  dropTake(): void;
  /** Use a WAV file as the take instead of the microphone. */
  openTake(file: File | undefined): Promise<void>;
  /** What the speech recognizer heard in the take (when one is loaded). */
  heard: { text?: string; busy?: boolean; error?: string } | undefined;
}) {
  return (
    <form
      class="say"
      aria-label="Your turn as the caller"
      onSubmit={(e) => {
        e.preventDefault();
        send(false);
      }}
    >
      <label for="say">
        {prompt
          ? 'Your words (Enter sends, Shift+Enter new line)'
          : running
            ? 'Wait for the agent…'
            : 'Start a call to speak as the caller.'}
      </label>
      <textarea
        id="say"
        ref={inputRef}
        rows={2}
        value={draft}
        disabled={!prompt}
        onInput={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            send(false);
          }
        }}
      />
      <div class="buttons">
        <button type="submit" id="send" disabled={!prompt}>
          Send
        </button>
        <button type="button" id="hang-up" disabled={!prompt} onClick={() => send(true)}>
          Say it and hang up
        </button>
        <button
          type="button"
          id="record"
          aria-pressed={!!recording}
          disabled={!channel || (!prompt && !recording)}
          title={
            channel
              ? 'your voice goes through the channel preset before the agent hears it'
              : 'switch channel audio on to speak'
          }
          onClick={() => void record()}
        >
          {recording ? '■ Stop recording' : '● Record voice'}
        </button>
        <label class="file-take">
          or a WAV file{' '}
          <input
            type="file"
            id="voice-file"
            accept=".wav,audio/wav"
            disabled={!channel || !prompt}
            onChange={(e) => {
              const input = e.currentTarget;
              void openTake(input.files?.[0]).finally(() => {
                input.value = '';
              });
            }}
          />
        </label>
      </div>
      {!channel && <p class="muted">Switch “Channel audio” on to speak by microphone.</p>}
      {take && (
        <p class="take" id="take">
          Your take: <span id="take-ms">{Math.round((take.samples.length / 16000) * 1000)}</span> ms{' '}
          <audio controls src={take.url} aria-label="your recording, before the channel" />{' '}
          <button type="button" onClick={dropTake}>
            Discard
          </button>{' '}
          <span class="muted">sent with your next words; the transcript then plays what the agent heard</span>
        </p>
      )}
      {heard && (
        <p class="heard" id="heard" aria-live="polite">
          {heard.busy ? (
            'Recognizing your words…'
          ) : heard.error ? (
            <span class="error">Speech recognition failed: {heard.error}</span>
          ) : (
            <>
              Recognized: <q id="heard-text">{heard.text}</q>{' '}
              <span class="muted">(in your words above; edit them before sending)</span>
            </>
          )}
        </p>
      )}
    </form>
  );
}
