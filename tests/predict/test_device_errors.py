"""Tests for graphormer_sepnorm.predict.device_errors: failures of the
accelerator told from failures of the molecules of a batch."""
import torch

from graphormer_sepnorm.predict.device_errors import is_device_error


def test_only_device_errors_count_as_device_errors():
    assert is_device_error(RuntimeError('CUDA error: an illegal memory access '
                                        'was encountered'))
    assert is_device_error(torch.cuda.OutOfMemoryError('out of memory'))
    assert is_device_error(RuntimeError('Expected all tensors to be on the '
                                        'same device, cuda:0 and cpu'))
    assert not is_device_error(ValueError('graph with 600 nodes, more than '
                                          'max_nodes=512'))
    assert not is_device_error(IndexError('index 40 is out of bounds'))
    assert not is_device_error(RuntimeError('shape mismatch'))
