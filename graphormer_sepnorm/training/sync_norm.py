r"""Batch-norm statistics over all processes on CPU.

:class:`torch.nn.SyncBatchNorm` only runs on accelerators (it refuses CPU
tensors), so Lightning's ``sync_batchnorm=True`` cannot be used for CPU
data-parallel runs (gloo). :class:`CPUSyncBatchNorm` is a
:class:`~lightning.pytorch.plugins.LayerSync` plugin that swaps every
:class:`torch.nn.BatchNorm1d` (SepNorm's graph-token norm) for
:class:`GlobalBatchNorm1d`, whose training statistics are summed over the
process group with autograd-aware all-reduces. On CUDA the trainer uses
Lightning's own ``sync_batchnorm=True`` (``torch.nn.SyncBatchNorm``).
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from lightning.pytorch.plugins import LayerSync
from torch import Tensor
from torch.nn import BatchNorm1d, Module

__all__ = ['GlobalBatchNorm1d', 'CPUSyncBatchNorm']


def _all_reduce_sum(tensor: Tensor) -> Tensor:
    from torch.distributed.nn.functional import all_reduce
    return all_reduce(tensor, op=dist.ReduceOp.SUM)


class GlobalBatchNorm1d(BatchNorm1d):
    r"""A :class:`~torch.nn.BatchNorm1d` over :obj:`[N, C]` inputs whose
    training statistics cover the batches of every process (two
    all-reduces: the sums, then the squared deviations). It stays a
    :class:`~torch.nn.BatchNorm1d`, so code that checks for one (SepNorm)
    treats it alike. Outside training, or without an initialized process
    group of more than one process, it is a plain batch norm."""
    def forward(self, input: Tensor) -> Tensor:
        if not (self.training and dist.is_available() and dist.is_initialized()
                and dist.get_world_size() > 1):
            return super().forward(input)
        if input.dim() != 2:
            raise ValueError(f"GlobalBatchNorm1d expects [N, C] inputs, got "
                             f"{list(input.shape)}")
        x = input.float() if input.dtype in (torch.float16,
                                             torch.bfloat16) else input
        channels = x.size(1)
        local = torch.cat([x.sum(0), x.new_full((1, ), x.size(0))])
        total = _all_reduce_sum(local)
        count = total[channels]
        mean = total[:channels] / count
        centered = x - mean
        sq = _all_reduce_sum((centered * centered).sum(0))
        var = sq / count
        if self.track_running_stats and self.running_mean is not None:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                momentum = (self.momentum if self.momentum is not None else
                            1.0 / float(self.num_batches_tracked))
                n = float(count)
                unbiased = var * n / max(n - 1.0, 1.0)
                self.running_mean.mul_(1 - momentum).add_(momentum *
                                                          mean.detach())
                self.running_var.mul_(1 - momentum).add_(momentum *
                                                         unbiased.detach())
        out = centered * torch.rsqrt(var + self.eps)
        if self.affine:
            out = out * self.weight + self.bias
        return out.to(input.dtype)


def _swap(module: Module, to_global: bool) -> Module:
    source, target = ((BatchNorm1d, GlobalBatchNorm1d) if to_global else
                      (GlobalBatchNorm1d, BatchNorm1d))
    out = module
    if type(module) is source:
        out = target(module.num_features, module.eps, module.momentum,
                     module.affine, module.track_running_stats)
        if module.affine:
            with torch.no_grad():
                out.weight = module.weight
                out.bias = module.bias
        out.running_mean = module.running_mean
        out.running_var = module.running_var
        out.num_batches_tracked = module.num_batches_tracked
        out.training = module.training
    for name, child in module.named_children():
        out.add_module(name, _swap(child, to_global))
    return out


class CPUSyncBatchNorm(LayerSync):
    r"""Lightning plugin: :class:`~torch.nn.BatchNorm1d` layers become
    :class:`GlobalBatchNorm1d` for data-parallel training on CPU, and back
    afterwards. Parameters and buffers are shared, not copied."""
    def apply(self, model: Module) -> Module:
        return _swap(model, to_global=True)

    def revert(self, model: Module) -> Module:
        return _swap(model, to_global=False)
