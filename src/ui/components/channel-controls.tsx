/**
 * Channel audio settings of a call: on/off and, only when on, the preset, dropout and barge-in
 * rates, and the user's noise files.
 */
import type { ChannelSettings, NoiseFile, PresetName } from '../../adapters/browser/rollout-types.ts';
import { PRESETS } from '../share.ts';

/** The channel controls; `channel` undefined means channel audio is off. */
export function ChannelControls({
  preset,
  setPreset,
  channel,
  setChannel,
  noise,
  pickNoise,
  running,
}: {
  /** The channel preset (recorded with every call; it shapes the audio only when channel audio is on). */
  preset: PresetName;
  setPreset(p: PresetName): void;
  channel: ChannelSettings | undefined;
  setChannel(c: ChannelSettings | undefined): void;
  /** The user's noise recordings (this tab's session only; never in a link). */
  noise: readonly NoiseFile[];
  /** Replace the noise bank with the WAV files of `list` (null clears it). */
  pickNoise(list: FileList | null): Promise<void>;
  running: boolean;
}) {
  return (
    <>
      <label>
        <input
          id="channel-audio"
          type="checkbox"
          checked={!!channel}
          disabled={running}
          onChange={(e) => setChannel(e.currentTarget.checked ? { dropout: 0, bargeIn: 0 } : undefined)}
        />{' '}
        Channel audio (espeak-ng)
      </label>
      {channel && (
        <>
          <label>
            Channel preset{' '}
            <select
              id="preset"
              value={preset}
              disabled={running}
              onChange={(e) => setPreset(e.currentTarget.value as PresetName)}
            >
              {PRESETS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <label>
            Dropout{' '}
            <input
              id="dropout"
              type="number"
              min={0}
              max={1}
              step={0.1}
              value={channel.dropout}
              disabled={running}
              size={4}
              onInput={(e) =>
                setChannel({ ...channel, dropout: Math.min(1, Math.max(0, Number(e.currentTarget.value) || 0)) })
              }
            />
          </label>
          <label>
            Barge-in{' '}
            <input
              id="barge-in"
              type="number"
              min={0}
              max={1}
              step={0.1}
              value={channel.bargeIn}
              disabled={running}
              size={4}
              onInput={(e) =>
                setChannel({ ...channel, bargeIn: Math.min(1, Math.max(0, Number(e.currentTarget.value) || 0)) })
              }
            />
          </label>
          <label title="Caller and agent on one 200 ms tick axis: backchannels overlap without becoming turns, a real barge-in makes the agent yield; the call gets interaction metrics (the CLI's --duplex)">
            <input
              id="duplex"
              type="checkbox"
              checked={!!channel.duplex}
              disabled={running}
              onChange={(e) => {
                const { duplex: _d, ...rest } = channel;
                setChannel(e.currentTarget.checked ? { ...rest, duplex: true } : rest);
              }}
            />{' '}
            Full duplex
          </label>
          <label title="WAV files: 10 s or longer are background beds, shorter ones are bursts (as the CLI's --noise-dir); kept in this tab only, never in a link">
            Noise files{' '}
            <input
              id="noise-files"
              type="file"
              accept=".wav,audio/wav"
              multiple
              disabled={running}
              onChange={(e) => void pickNoise(e.currentTarget.files)}
            />
          </label>
          <span class="muted" id="noise-status" aria-live="polite">
            {noise.length ? `custom noise bank: ${noise.map((f) => f.name).join(', ')}` : "the preset's own noises"}
            {noise.length > 0 && (
              <>
                {' '}
                <button type="button" id="noise-clear" disabled={running} onClick={() => void pickNoise(null)}>
                  Clear
                </button>
              </>
            )}
          </span>
        </>
      )}
    </>
  );
}
