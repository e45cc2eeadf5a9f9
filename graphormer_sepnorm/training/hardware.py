r"""The hardware a run uses, as its results record it."""
from __future__ import annotations

import os
import platform

import torch

__all__ = ['hardware_name', 'resolved_accelerator']


def hardware_name(accelerator: str) -> str:
    r"""GPU name, or the CPU model name and core count."""
    if accelerator in ('cuda', 'gpu') and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.cuda.current_device())
    name = platform.processor() or 'CPU'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    name = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name} ({os.cpu_count()} cores)"


def resolved_accelerator(config: dict) -> str:
    r"""The accelerator :obj:`train.accelerator` means on this machine:
    :obj:`"cuda"` or :obj:`"cpu"` for :obj:`"auto"`."""
    accelerator = config['train']['accelerator']
    if accelerator == 'auto':
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    return 'cuda' if accelerator == 'gpu' else accelerator
