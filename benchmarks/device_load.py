r"""What bounds a run on the GPU machine: the GPU's utilization (sampled from
``nvidia-smi``) and the CPU cores' (from ``/proc/stat``) while it runs, and
the verdict they give. ``benchmarks/gpu_check.py`` samples its pretraining
and prediction runs with it."""
from __future__ import annotations

import shutil
import subprocess
import threading
from typing import Optional

#: Utilization (%) from which a resource is called the bound.
SATURATED = 85.0


def cpu_times() -> Optional[tuple[int, int]]:
    r"""(busy, total) jiffies of all cores from ``/proc/stat``, or
    :obj:`None` where it cannot be read."""
    try:
        with open('/proc/stat') as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle, iowait
    return sum(fields) - idle, sum(fields)


def bound(gpu_busy: Optional[float], cpu_busy: Optional[float]) -> str:
    r"""Which resource bounds a run whose GPU was busy :obj:`gpu_busy` % and
    its CPU cores :obj:`cpu_busy` % of the time (:obj:`None`: not read)."""
    if gpu_busy is not None and gpu_busy >= SATURATED:
        return 'GPU'
    if cpu_busy is not None and cpu_busy >= SATURATED:
        return 'data pipeline (CPU cores busy)'
    if gpu_busy is None:
        return 'unknown (no GPU utilization read)'
    return ('neither saturated: start-up, latency or a serial step (a '
            'single core) bound it')


class LoadSampler:
    r"""Samples the GPU's utilization every :obj:`interval` seconds while
    in a ``with`` block and the CPU cores' busy share over the block.

    Args:
        interval (float): Seconds between ``nvidia-smi`` samples.
    """
    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self.smi = shutil.which('nvidia-smi')
        self.gpu: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._cpu_start: Optional[tuple[int, int]] = None
        self.cpu_busy: Optional[float] = None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                out = subprocess.run(
                    [self.smi, '--query-gpu=utilization.gpu',
                     '--format=csv,noheader,nounits'], capture_output=True,
                    text=True, timeout=5).stdout.split()
                self.gpu.append(float(out[0]))
            except (OSError, ValueError, IndexError,
                    subprocess.TimeoutExpired):
                pass

    def __enter__(self) -> 'LoadSampler':
        self._cpu_start = cpu_times()
        if self.smi:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.smi:
            self._thread.join()
        end = cpu_times()
        if self._cpu_start and end and end[1] > self._cpu_start[1]:
            self.cpu_busy = 100.0 * (end[0] - self._cpu_start[0]) / (
                end[1] - self._cpu_start[1])

    def summary(self) -> dict:
        r"""The mean GPU utilization, the CPU cores' busy share and
        :func:`bound`'s verdict."""
        gpu = sum(self.gpu) / len(self.gpu) if self.gpu else None
        return dict(gpu_busy_pct=None if gpu is None else round(gpu, 1),
                    cpu_busy_pct=(None if self.cpu_busy is None else
                                  round(self.cpu_busy, 1)),
                    gpu_samples=len(self.gpu), bound=bound(gpu,
                                                          self.cpu_busy))
