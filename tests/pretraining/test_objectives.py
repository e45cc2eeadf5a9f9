"""The pretraining objectives against hand-computed values and torch's own
cross-entropy."""
import math

import pytest
import torch
import torch.nn.functional as F

from graphormer_sepnorm.pretraining.objectives import (MaskedAtomHead,
                                                       descriptor_loss,
                                                       mask_atoms)


def test_mask_rate_and_at_least_one_atom_per_graph():
    # 500 graphs of 1 to 30 atoms.
    sizes = torch.randint(1, 31, (500, ), generator=torch.Generator()
                          .manual_seed(0)).tolist()
    masked = mask_atoms(sizes, range(500), 0.15)
    batch = torch.repeat_interleave(torch.arange(500), torch.tensor(sizes))
    per_graph = torch.zeros(500).index_add_(0, batch, masked.float())
    assert per_graph.min() >= 1
    # Expected count: each atom with p = 0.15, plus one forced atom in the
    # graphs that drew none (probability 0.85^n).
    expected = sum(0.15 * n + 0.85**n for n in sizes)
    assert masked.sum().item() == pytest.approx(expected, rel=0.08)


def test_a_graphs_mask_depends_on_its_seed_alone():
    alone = mask_atoms([4], [11], 0.5)
    torch.manual_seed(123)  # the global stream must not matter
    in_batch = mask_atoms([3, 4, 2], [5, 11, 6], 0.5)
    assert torch.equal(in_batch[3:7], alone)


def test_masks_by_hand():
    # Each graph: its own generator's draws; below the rate, or the
    # smallest draw.
    masked = mask_atoms([3, 2], [3, 4], 0.2)
    expected = []
    for count, seed in ((3, 3), (2, 4)):
        draws = torch.rand(count, generator=torch.Generator()
                           .manual_seed(seed))
        mask = draws < 0.2
        mask[int(draws.argmin())] = True
        expected.append(mask)
    assert torch.equal(masked, torch.cat(expected))


def test_masked_atom_loss_is_mean_cross_entropy_per_feature():
    torch.manual_seed(0)
    head = MaskedAtomHead(8, [5, 3])
    tokens = torch.randn(4, 8)
    features = torch.tensor([[0, 2], [4, 1], [1, 0], [3, 2]])
    loss, correct = head.loss(tokens, features)
    logits = head.logits(head.transform(tokens))
    first, second = logits[:, :5], logits[:, 5:]
    expected = (F.cross_entropy(first, features[:, 0]) +
                F.cross_entropy(second, features[:, 1])) / 2
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    assert torch.equal(correct[:, 0], first.argmax(1) == features[:, 0])
    assert torch.equal(correct[:, 1], second.argmax(1) == features[:, 1])
    # Summed and divided by another count (data-parallel normalization).
    scaled, _ = head.loss(tokens, features, torch.tensor(8.0))
    assert scaled.item() == pytest.approx(expected.item() * 4 / 8, rel=1e-6)


def test_descriptor_loss_leaves_out_missing_values():
    pred = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    target = torch.tensor([[1.5, math.nan, 1.0], [math.nan, math.nan, 2.0]])
    # Present: 0.5^2, 2^2, 2^2 over 3 values.
    assert descriptor_loss(pred, target).item() == pytest.approx(
        (0.25 + 4 + 4) / 3)
    assert descriptor_loss(pred, torch.full_like(pred, math.nan)).item() == 0
