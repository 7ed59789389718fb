/**
 * The microphone as the caller: record with `getUserMedia` + `MediaRecorder`, decode, and
 * resample to the channel's 16 kHz mono with an `OfflineAudioContext` (the browser's own
 * resampler). The samples then go through the preset's channel like TTS speech.
 */
import { SPEECH_RATE_HZ } from '../../../core/audio/pcm.ts';

/** A recording in progress. */
export interface MicRecording {
  /** Stop, release the microphone, and return the take as 16 kHz mono samples. */
  stop(): Promise<Float32Array>;
  /** Stop and throw the take away. */
  cancel(): void;
}

/** Mono mix of a decoded buffer resampled to 16 kHz. */
export async function toSpeechRate(buffer: AudioBuffer): Promise<Float32Array> {
  const length = Math.max(1, Math.round(buffer.duration * SPEECH_RATE_HZ));
  const ctx = new OfflineAudioContext(1, length, SPEECH_RATE_HZ);
  const src = ctx.createBufferSource();
  src.buffer = buffer;
  src.connect(ctx.destination); // WebAudio down-mixes to the mono destination
  src.start();
  return (await ctx.startRendering()).getChannelData(0).slice();
}

/** Ask for the microphone and start recording. Rejects when it is denied or missing. */
export async function startMicRecording(): Promise<MicRecording> {
  if (!navigator.mediaDevices?.getUserMedia)
    throw new Error(
      'this browser gives no microphone access (getUserMedia is missing; the page needs https or localhost)',
    );
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const release = () => stream.getTracks().forEach((t) => t.stop());
  const chunks: Blob[] = [];
  let recorder: MediaRecorder;
  try {
    recorder = new MediaRecorder(stream);
  } catch (e) {
    release();
    throw e;
  }
  recorder.addEventListener('dataavailable', (e) => {
    if (e.data.size > 0) chunks.push(e.data);
  });
  recorder.start();
  const stopped = () =>
    new Promise<void>((resolve) => {
      if (recorder.state === 'inactive') resolve();
      else {
        recorder.addEventListener('stop', () => resolve(), { once: true });
        recorder.stop();
      }
    });
  return {
    async stop() {
      await stopped();
      release();
      const blob = new Blob(chunks, { type: recorder.mimeType });
      const ctx = new AudioContext();
      try {
        return await toSpeechRate(await ctx.decodeAudioData(await blob.arrayBuffer()));
      } finally {
        void ctx.close();
      }
    },
    cancel() {
      void stopped().then(release);
    },
  };
}

/**
 * A WAV file the caller opened instead of recording: its samples, channels mixed, resampled to
 * 16 kHz (the core's WAV reader and resampler, so the same file always gives the same take).
 * @throws when the bytes are not a readable WAV file.
 */
export async function takeFromWavFile(bytes: Uint8Array): Promise<Float32Array> {
  const { decodeWav, resample } = await import('../../../core/audio/wav.ts');
  const wav = decodeWav(bytes);
  return wav.sampleRate === SPEECH_RATE_HZ ? wav.samples : resample(wav.samples, wav.sampleRate, SPEECH_RATE_HZ);
}

/** 16-bit mono PCM WAV of `samples` (for playing a take back in the page). */
export function wavBytes(samples: Float32Array, sampleRate = SPEECH_RATE_HZ): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const v = new DataView(out.buffer);
  const text = (off: number, s: string) => [...s].forEach((c, i) => v.setUint8(off + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  v.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  text(36, 'data');
  v.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]!));
    v.setInt16(44 + i * 2, s < 0 ? Math.round(s * 32768) : Math.round(s * 32767), true);
  }
  return out;
}
