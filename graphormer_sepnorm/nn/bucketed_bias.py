from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor


def size_order(node_mask: Tensor, num_buckets: int) -> Optional[Tensor]:
    r"""The permutation that sorts the graphs of a batch by size, as
    :class:`BucketedBias` needs it, or :obj:`None` when a single bucket makes
    sorting pointless."""
    if min(num_buckets, node_mask.size(0)) <= 1:
        return None
    return torch.argsort(node_mask.sum(dim=1), stable=True)


class BucketedBias:
    r"""An attention bias :obj:`[batch_size, heads, L, L]` split into buckets
    of graphs of similar size, each cut to the length of its largest graph.

    Every graph of a batch is padded to the largest one, and attention costs
    grow with the square of that length: on ZINC (9 to 38 atoms) one padded
    batch spends more than half its attention work on padding. Attending
    bucket by bucket computes the same result (each graph attends only within
    itself) with less padding. The graphs must be sorted by size (see
    :func:`size_order`: the model sorts its batch once per forward pass, so
    that every bucket is a slice of it); the buckets are built once per
    forward pass and shared by all layers.

    Args:
        bias (torch.Tensor): :obj:`[batch_size, heads, 1 + N, 1 + N]`.
        node_mask (torch.Tensor): Real-node mask :obj:`[batch_size, N]`, of
            graphs sorted by size.
        num_buckets (int, optional): Number of buckets of (nearly) equal
            numbers of graphs. (default: :obj:`1`)
    """
    def __init__(self, bias: Tensor, node_mask: Tensor,
                 num_buckets: int = 1) -> None:
        batch_size = node_mask.size(0)
        self.length = bias.size(-1)
        num_buckets = max(1, min(num_buckets, batch_size))
        if num_buckets == 1:
            self.groups = [(0, batch_size, self.length)]
            self.biases = [bias]
            return
        sizes = node_mask.sum(dim=1).tolist()
        if any(a > b for a, b in zip(sizes, sizes[1:])):
            raise ValueError("BucketedBias needs the graphs sorted by size; "
                             "permute the batch with size_order() first")
        bounds = [round(i * batch_size / num_buckets)
                  for i in range(num_buckets + 1)]
        self.groups = [(start, stop, 1 + sizes[stop - 1])
                       for start, stop in zip(bounds[:-1], bounds[1:])
                       if stop > start]
        self.biases = [
            bias[start:stop, :, :length, :length].contiguous()
            for start, stop, length in self.groups
        ]

    def apply(self, attend: Callable[[Tensor, Tensor], Tensor],
              x: Tensor) -> Tensor:
        r"""Runs :obj:`attend(x_bucket, bias_bucket)` on every bucket of
        :obj:`x` :obj:`[batch_size, 1 + N, channels]` and returns the results
        in one tensor, zero beyond each bucket's length."""
        if len(self.groups) == 1:
            return attend(x, self.biases[0])
        # split (not slicing) keeps the backward pass from filling a
        # full-size zero gradient for every bucket.
        parts = torch.split(x, [stop - start for start, stop, _ in self.groups])
        return torch.cat([
            F.pad(attend(part[:, :length], bias),
                  (0, 0, 0, self.length - length))
            for part, (_, _, length), bias in zip(parts, self.groups,
                                                  self.biases)
        ])
