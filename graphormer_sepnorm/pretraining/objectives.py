r"""The self-supervised objectives, computed from the structure alone:

* **masked atoms** (node level, after Hu et al., `"Strategies for
  Pre-training Graph Neural Networks" <https://arxiv.org/abs/1905.12265>`_):
  a fraction of each graph's atoms have their feature embedding replaced by
  a learned mask token, and a head on their final node tokens predicts
  every categorical feature of the hidden atoms (for OGB features: element,
  chirality, degree, charge, hydrogens, radicals, hybridization,
  aromaticity, ring membership), one cross-entropy per feature;
* **descriptors** (graph level, read from the graph token, where SepNorm
  acts): the model's own head regresses the standardized RDKit descriptors
  of :mod:`~graphormer_sepnorm.pretraining.descriptors` (mean squared
  error, missing values left out).
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import GELU, LayerNorm, Linear, Module, Sequential

__all__ = ['mask_atoms', 'MaskedAtomHead', 'descriptor_loss']


def mask_atoms(nodes_per_graph: Sequence[int], seeds: Sequence[int],
               rate: float) -> Tensor:
    r"""Chooses the atoms to hide: each atom with probability :obj:`rate`,
    and at least one atom of every graph (a graph with none masked would
    add nothing to the node objective).

    A graph's mask depends on its own seed only, not on the batch it is in
    nor on the global random state. With seeds made from the run's seed,
    the step and the molecule's line in the corpus, a resumed run masks as
    the interrupted one would have, and :obj:`N` data-parallel processes
    mask exactly as one process with their global batch.

    Args:
        nodes_per_graph (Sequence[int]): The atoms of each graph, in batch
            order (the graphs' nodes are contiguous, as in PyG batches).
        seeds (Sequence[int]): One seed per graph.
        rate (float): The fraction of atoms masked, in :math:`[0, 1]`.

    Returns:
        A boolean mask :obj:`[sum(nodes_per_graph)]` (CPU).
    """
    masks = []
    generator = torch.Generator()
    for count, seed in zip(nodes_per_graph, seeds):
        generator.manual_seed(int(seed))
        draws = torch.rand(int(count), generator=generator)
        masked = draws < rate
        # The atom with the smallest draw is always masked.
        masked[draws.argmin()] = True
        masks.append(masked)
    return torch.cat(masks) if masks else torch.zeros(0, dtype=torch.bool)


class MaskedAtomHead(Module):
    r"""Predicts the categorical features of masked atoms from their final
    node tokens: a dense layer, GELU and layer norm (as the model's own
    prediction head), then one set of logits per feature.

    Args:
        hidden_channels (int): Token size of the encoder.
        vocab_sizes (Sequence[int]): The number of values of each atom
            feature (the encoder's :obj:`atom_vocab_sizes`).
    """
    def __init__(self, hidden_channels: int,
                 vocab_sizes: Sequence[int]) -> None:
        super().__init__()
        self.vocab_sizes = [int(v) for v in vocab_sizes]
        self.transform = Sequential(
            Linear(hidden_channels, hidden_channels), GELU(),
            LayerNorm(hidden_channels))
        self.logits = Linear(hidden_channels, sum(self.vocab_sizes))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.transform[0].reset_parameters()
        self.transform[2].reset_parameters()
        self.logits.reset_parameters()

    def forward(self, node_tokens: Tensor) -> list[Tensor]:
        r"""The logits of each feature, :obj:`[num_masked, vocab_size]`."""
        logits = self.logits(self.transform(node_tokens))
        return list(torch.split(logits, self.vocab_sizes, dim=-1))

    def loss(self, node_tokens: Tensor, features: Tensor,
             normalizer: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        r"""The mean over features of the cross-entropy of the masked atoms'
        true features :obj:`[num_masked, num_features]`, and which were
        predicted right (a boolean :obj:`[num_masked, num_features]`).

        The cross-entropies are summed and divided by :obj:`normalizer`
        (default: the number of masked atoms); data-parallel training
        passes the mean count over processes, so that the average of the
        processes' losses is the loss of their global batch."""
        features = features.view(features.size(0), -1).long()
        if normalizer is None:
            normalizer = features.new_tensor(features.size(0))
        losses, correct = [], []
        for column, logits in enumerate(self(node_tokens)):
            target = features[:, column]
            losses.append(F.cross_entropy(logits.float(), target,
                                          reduction='sum'))
            correct.append(logits.argmax(dim=-1) == target)
        loss = torch.stack(losses).mean() / normalizer.clamp(min=1)
        return loss, torch.stack(correct, dim=1)


def descriptor_loss(pred: Tensor, target: Tensor,
                    normalizer: Optional[Tensor] = None) -> Tensor:
    r"""Mean squared error over the descriptors that are present (NaN:
    missing), zero when none is: the squared errors summed and divided by
    :obj:`normalizer` (default: the number of present values; see
    :meth:`MaskedAtomHead.loss` for data-parallel training)."""
    pred = pred.float()
    target = target.view(pred.shape).to(pred.dtype)
    present = ~torch.isnan(target)
    error = torch.where(present, pred - target, torch.zeros_like(pred))
    if normalizer is None:
        normalizer = present.sum()
    return error.pow(2).sum() / normalizer.clamp(min=1)
