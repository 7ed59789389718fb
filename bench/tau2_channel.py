"""tau2-bench's own phone-channel chain, timed for `npm run bench` (bench/channel.ts prints it beside ours).

Usage: python3 bench/tau2_channel.py <tau2-bench src dir> <speech.wav> <noise.wav> <burst.wav> <runs>

Runs tau2-bench's batch chain (`BatchAudioEffectsMixin.apply_batch_effects`, its order and its
functions) on the speech with every effect it has switched on, `runs` times after one warm-up, and
prints one JSON document with the medians of the whole chain's wall time and this process's CPU
time, and each step's median wall time, in ms:

1. dynamic muffling (`apply_dynamic_muffling`: one 500 ms segment at 1500 Hz, 100 ms ramps);
2. background noise (`apply_background_noise` with a `BackgroundNoiseGenerator` on the noise
   file at 15 dB SNR, 3 dB drift; the generator is made once, as tau2 makes it once per call);
3. a burst (`apply_burst_noise` with the burst file at 5 dB SNR; tau2 reads the file per turn);
4. telephony (`convert_to_telephony`: 16 -> 8 kHz, 300-3400 Hz band-pass, 0.9 headroom, mu-law);
5. frame drops (`apply_frame_drops`: one 150 ms drop).

tau2-bench has no far field (reverb) and no wind; those are not in its chain.

Only tau2's audio modules are imported: the `tau2` package's own `__init__` (its runner, LLM and
data-frame imports) is skipped, and any module that is not installed here becomes a do-nothing
stand-in whose every attribute is a `unittest.mock.MagicMock` (loguru's logger, pyaudio, toml, ...), after numpy, scipy, audioop and pydantic are
imported for real.
"""

import importlib.abc
import importlib.machinery
import json
import statistics
import sys
import time
import types
import warnings
from unittest.mock import MagicMock


class _NotInstalled(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on the import path: a module nothing else finds becomes a stand-in."""

    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        m.__getattr__ = lambda n: (_ for _ in ()).throw(AttributeError(n)) if n.startswith("__") else MagicMock()
        return m

    def exec_module(self, module):
        pass


def main():
    src, speech_path, noise_path, burst_path, runs = sys.argv[1:6]
    runs = int(runs)
    warnings.simplefilter("ignore")
    import numpy  # noqa: F401
    import scipy.signal  # noqa: F401
    import audioop  # noqa: F401
    import pydantic  # noqa: F401

    pkg = types.ModuleType("tau2")
    pkg.__path__ = [f"{src}/tau2"]
    sys.modules["tau2"] = pkg
    sys.meta_path.append(_NotInstalled())
    from pathlib import Path

    from tau2.voice.synthesis.audio_effects.effects import (
        apply_burst_noise,
        apply_dynamic_muffling,
        apply_frame_drops,
        convert_to_telephony,
    )
    from tau2.voice.synthesis.audio_effects.noise_generator import BackgroundNoiseGenerator, apply_background_noise
    from tau2.voice.utils.audio_io import load_wav_file

    speech = load_wav_file(speech_path)
    generator = BackgroundNoiseGenerator(audio_file_path=Path(noise_path), sample_rate=speech.format.sample_rate)
    steps = {
        "muffle": lambda a: apply_dynamic_muffling(
            a, segment_count=1, segment_duration_ms=500, cutoff_freq=1500.0, transition_ms=100
        ),
        "noise": lambda a: apply_background_noise(a, generator),
        "burst": lambda a: apply_burst_noise(a, burst_noise_file=Path(burst_path), burst_snr_db=5.0),
        "telephony": convert_to_telephony,
        "frame_drops": lambda a: apply_frame_drops(a, drop_count=1, drop_duration_ms=150),
    }
    walls = []
    cpus = []
    per_step = {k: [] for k in steps}
    for i in range(runs + 1):
        audio = speech
        c_all = time.process_time()
        t_all = time.perf_counter()
        for name, fn in steps.items():
            t0 = time.perf_counter()
            audio = fn(audio)
            per_step[name].append((time.perf_counter() - t0) * 1000)
        walls.append((time.perf_counter() - t_all) * 1000)
        cpus.append((time.process_time() - c_all) * 1000)
        if i == 0:
            walls.clear()
            cpus.clear()
            for v in per_step.values():
                v.clear()
    seconds = speech.num_samples / speech.format.sample_rate
    print(
        json.dumps(
            {
                "python": sys.version.split()[0],
                "runs": runs,
                "seconds": seconds,
                "wall_ms": statistics.median(walls),
                "cpu_ms": statistics.median(cpus),
                "steps_ms": {k: statistics.median(v) for k, v in per_step.items()},
                "output": {"encoding": str(audio.format.encoding.value), "rate_hz": audio.format.sample_rate},
            }
        )
    )


main()
