r"""Telling a failure of the accelerator from a failure of the molecules of a
batch: :func:`is_device_error`.

A batch that fails for its molecules (a graph the model cannot take) is
retried molecule by molecule, so that only the molecules at fault get an
error; a batch that fails for the device (a CUDA error, a device-side
assert, CUDA out of memory) stops the run instead, since retrying would only
fail again (a CUDA error leaves the context unusable).
"""
from __future__ import annotations

import torch

__all__ = ['is_device_error']

#: Parts of the messages of errors that come from the device, not from a
#: molecule (CUDA errors, device-side asserts, cuBLAS/cuDNN failures).
_DEVICE_ERROR_MARKERS = ('CUDA', 'cuda', 'device-side assert', 'CUBLAS',
                         'cuBLAS', 'CUDNN', 'cuDNN')


def is_device_error(error: BaseException) -> bool:
    r"""Whether :obj:`error` is a failure of the accelerator (a CUDA error,
    a device-side assert, CUDA out of memory) rather than of the molecules
    of the batch."""
    kinds = tuple(kind for kind in (getattr(torch.cuda, 'CudaError', None),
                                    getattr(torch, 'AcceleratorError', None),
                                    torch.cuda.OutOfMemoryError)
                  if isinstance(kind, type))
    return isinstance(error, kinds) or any(
        marker in str(error) for marker in _DEVICE_ERROR_MARKERS)
