"""Uniformity and anisotropy against hand-computed values."""
import math

import pytest
import torch

from graphormer_sepnorm.analysis import anisotropy, pairwise_cosine, uniformity


def test_identical_directions():
    embeddings = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.5, 0.0]])
    assert anisotropy(embeddings) == pytest.approx(1.0)
    assert uniformity(embeddings) == pytest.approx(0.0, abs=1e-6)


def test_hand_computed_square():
    # Four unit vectors at 90 degrees: pair cosines 0, -1, 0, 0, -1, 0.
    embeddings = torch.tensor([[1.0, 0], [0, 1.0], [-1.0, 0], [0, -1.0]])
    assert sorted(pairwise_cosine(embeddings).tolist()) == pytest.approx(
        [-1, -1, 0, 0, 0, 0])
    assert anisotropy(embeddings) == pytest.approx(-1 / 3)
    # squared distances: 2 (four pairs) and 4 (two pairs), t = 2
    expected = math.log((4 * math.exp(-4) + 2 * math.exp(-8)) / 6)
    assert uniformity(embeddings) == pytest.approx(expected)


def test_spread_is_more_uniform_than_a_cone():
    gen = torch.Generator().manual_seed(0)
    spread = torch.randn(200, 16, generator=gen)
    cone = spread * 0.1 + torch.ones(16)
    assert uniformity(spread) < uniformity(cone)
    assert anisotropy(spread) < 0.05 < 0.9 < anisotropy(cone)


def test_needs_two_embeddings():
    with pytest.raises(ValueError, match='num_items >= 2'):
        anisotropy(torch.ones(1, 4))
