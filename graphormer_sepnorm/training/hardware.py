r"""The hardware a run uses, as its results record it."""
from __future__ import annotations

import os
import platform
from typing import Mapping, Optional

import torch

__all__ = ['cpu_model', 'hardware_name', 'resolved_accelerator',
           'THREADS_ENV', 'free_cores', 'configure_threads',
           'oversubscription']

#: The environment variable OpenMP and torch read their thread count from;
#: when it is set, :func:`configure_threads` keeps it (the user chose).
THREADS_ENV = 'OMP_NUM_THREADS'


def cpu_model() -> str:
    r"""The processor's model name (:obj:`model name` of
    :file:`/proc/cpuinfo`), or the platform's where that cannot be read."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'CPU'


def hardware_name(accelerator: str) -> str:
    r"""GPU name, or the CPU model name and core count."""
    if accelerator in ('cuda', 'gpu') and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.cuda.current_device())
    return f"{cpu_model()} ({os.cpu_count()} cores)"


def resolved_accelerator(config: dict) -> str:
    r"""The accelerator :obj:`train.accelerator` means on this machine:
    :obj:`"cuda"` or :obj:`"cpu"` for :obj:`"auto"`."""
    accelerator = config['train']['accelerator']
    if accelerator == 'auto':
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    return 'cuda' if accelerator == 'gpu' else accelerator


def free_cores() -> tuple[int, int, float]:
    r"""The cores this process may use, the idle ones among them (at least
    one) and the machine's one-minute load average: :obj:`(cores, free,
    load)`."""
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity')
             else os.cpu_count() or 1)
    load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else 0.0
    return cores, max(1, min(cores, round(cores - load))), load


def configure_threads(requested: Optional[int] = None,
                      environ: Optional[Mapping[str, str]] = None) -> int:
    r"""Sets torch's intra-op thread count for a run and returns it.

    A thread that waits for a busy core stalls every operation it is part
    of: on a 2-core machine running other work, 2 threads trained 16 times
    slower than 1 (see benchmarks/README.md, "Threads"). So by default
    each process takes the idle cores (the cores less the load average,
    shared among the local processes of a distributed run), at least one.

    Args:
        requested (int, optional): The config's :obj:`train.num_threads`;
            :obj:`None` (default): :envvar:`OMP_NUM_THREADS` when set (torch
            read it), else the idle cores.
        environ (mapping, optional): The environment (default:
            :obj:`os.environ`).
    """
    environ = os.environ if environ is None else environ
    _, free, _ = free_cores()
    if requested is not None:
        threads = requested
    elif environ.get(THREADS_ENV):
        threads = torch.get_num_threads()
    else:
        threads = max(1, free // _local_processes(environ))
    torch.set_num_threads(threads)
    return threads


def _local_processes(environ: Mapping[str, str]) -> int:
    return max(1, int(environ.get('LOCAL_WORLD_SIZE', 1)))


def oversubscription(threads: int,
                     environ: Optional[Mapping[str, str]] = None
                     ) -> Optional[str]:
    r"""A warning when the machine is busier than its cores, or when
    :obj:`threads` per local process ask for more than its cores;
    :obj:`None` otherwise. :obj:`environ` as in :func:`configure_threads`.
    """
    environ = os.environ if environ is None else environ
    cores, _, load = free_cores()
    processes = _local_processes(environ)
    if load <= cores and threads * processes <= cores:
        return None
    return (f"the machine is oversubscribed: load {load:.1f} on {cores} "
            f"cores, and this run uses {threads} torch thread(s) per process "
            f"x {processes} process(es); training is slower than on an idle "
            f"machine (train.num_threads sets the threads)")
