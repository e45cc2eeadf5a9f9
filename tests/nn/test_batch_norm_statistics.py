"""recalibrate_batch_norm against hand-computed statistics (equal-weight
batches, the first num_batches only), the random state it keeps, and the
warning when a model is evaluated with statistics older than its weights
(train.precise_bn_batches in a run: tests/training/test_precise_bn.py)."""
import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_mean_pool

from graphormer_sepnorm.models import GraphormerSepNorm
from graphormer_sepnorm.nn import recalibrate_batch_norm
from graphormer_sepnorm.nn.batch_norm_statistics import (batch_norms,
                                                         seeded_generators)


class PooledBatchNorm(torch.nn.Module):
    """Mean-pools node features per graph, then a BatchNorm over graphs
    (as SepNorm's graph-token BatchNorm normalizes over the graphs of a
    batch)."""
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(2)

    def forward(self, batch):
        return self.norm(global_mean_pool(batch.x, batch.batch))


def test_statistics_are_the_equal_weight_mean_of_the_batches():
    generator = torch.Generator().manual_seed(0)
    graphs = [Data(x=torch.randn(n, 2, generator=generator) * (1 + i))
              for i, n in enumerate([3, 1, 4, 2, 5, 2, 3, 2])]
    model = PooledBatchNorm()
    model.norm.running_mean.fill_(100.0)  # stale values, to be replaced
    model.eval()
    state = torch.get_rng_state()
    assert recalibrate_batch_norm(model, DataLoader(graphs, batch_size=3)) \
        == 1
    assert torch.equal(torch.get_rng_state(), state)  # the caller's kept
    assert not model.training  # left in evaluation mode
    # By hand: batches of 3, 3 and 2 graphs in order; per batch, the mean
    # and unbiased variance of the graphs' mean features; every batch
    # weighs the same, whatever its size.
    pooled = np.stack([g.x.mean(0).double().numpy() for g in graphs])
    batches = [pooled[0:3], pooled[3:6], pooled[6:8]]
    mean = np.mean([b.mean(0) for b in batches], axis=0)
    var = np.mean([b.var(0, ddof=1) for b in batches], axis=0)
    np.testing.assert_allclose(model.norm.running_mean.numpy(), mean,
                               rtol=1e-5)
    np.testing.assert_allclose(model.norm.running_var.numpy(), var,
                               rtol=1e-5)


def test_only_sepnorm_has_statistics_to_re_estimate():
    # ShareNorm normalizes every token with LayerNorm: the option is a
    # no-op there, so the BatchNorm measurement needs SepNorm runs only.
    sizes = dict(num_layers=2, hidden_channels=8, ffn_channels=8,
                 num_heads=2)
    sep = GraphormerSepNorm(norm='sep', **sizes)
    assert batch_norms(sep) and all(
        name.endswith('graph_norm') for name, module in sep.named_modules()
        if module in batch_norms(sep))
    share = GraphormerSepNorm(norm='share', **sizes)
    before = {k: v.clone() for k, v in share.state_dict().items()}
    assert recalibrate_batch_norm(share, iter(())) == 0
    assert all(torch.equal(before[k], v)
               for k, v in share.state_dict().items())



def test_recalibration_leaves_every_cuda_generator_alone(monkeypatch):
    # torch.manual_seed seeds all CUDA devices (lazily without CUDA); the
    # recalibration must seed the CPU generator only when the model is on
    # the CPU, and restore it.
    calls = []
    monkeypatch.setattr(torch.cuda, 'manual_seed_all',
                        lambda seed: calls.append(seed))
    monkeypatch.setattr(torch.cuda, 'manual_seed',
                        lambda seed: calls.append(seed))
    graphs = [Data(x=torch.randn(n, 2)) for n in (3, 2, 4, 2)]
    model = PooledBatchNorm()
    torch.manual_seed(123)
    calls.clear()
    state = torch.get_rng_state()
    recalibrate_batch_norm(model, DataLoader(graphs, batch_size=2), seed=5)
    assert calls == []
    assert torch.equal(torch.get_rng_state(), state)


class FakeGenerator:
    def __init__(self):
        self.seeds = []

    def manual_seed(self, seed):
        self.seeds.append(seed)
        return self


def test_a_cuda_model_seeds_and_restores_its_own_device_only(monkeypatch):
    # The CUDA branch without a GPU: device 1's generator is seeded and its
    # state put back; device 0's generator and manual_seed_all are not used.
    generators = [FakeGenerator(), FakeGenerator()]
    restored, seeded_all = [], []
    cuda_state = torch.arange(4, dtype=torch.uint8)
    monkeypatch.setattr(torch.cuda, 'default_generators', generators)
    monkeypatch.setattr(torch.cuda, 'get_rng_state',
                        lambda device: cuda_state if device.index == 1
                        else pytest.fail(f'read {device}'))
    monkeypatch.setattr(torch.cuda, 'set_rng_state',
                        lambda state, device: restored.append((state,
                                                               device)))
    monkeypatch.setattr(torch.cuda, 'manual_seed_all', seeded_all.append)
    torch.manual_seed(99)
    seeded_all.clear()
    cpu_state = torch.get_rng_state()
    with seeded_generators(7, torch.device('cuda', 1)):
        draw = torch.rand(3)
    assert torch.equal(draw, torch.rand(3, generator=torch.Generator()
                                        .manual_seed(7)))
    assert generators[1].seeds == [7] and generators[0].seeds == []
    assert restored == [(cuda_state, torch.device('cuda', 1))]
    assert seeded_all == []
    assert torch.equal(torch.get_rng_state(), cpu_state)


def test_only_the_first_num_batches_count():
    generator = torch.Generator().manual_seed(1)
    graphs = [Data(x=torch.randn(n, 2, generator=generator))
              for n in [3, 1, 4, 2, 5, 2, 3, 2]]
    model = PooledBatchNorm()
    assert recalibrate_batch_norm(model, DataLoader(graphs, batch_size=2),
                                  num_batches=2) == 1
    pooled = np.stack([g.x.mean(0).double().numpy() for g in graphs[:4]])
    mean = np.mean([pooled[0:2].mean(0), pooled[2:4].mean(0)], axis=0)
    np.testing.assert_allclose(model.norm.running_mean.numpy(), mean,
                               rtol=1e-5)
    with pytest.raises(ValueError, match='num_batches must be at least 1'):
        recalibrate_batch_norm(model, DataLoader(graphs), num_batches=0)


def tiny(norm: str) -> GraphormerSepNorm:
    torch.manual_seed(0)
    return GraphormerSepNorm(num_layers=1, hidden_channels=8,
                             ffn_channels=8, num_heads=2, norm=norm,
                             multi_hop_max_dist=3)


def stale_warnings(model, batch) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with torch.no_grad():
            model.eval()(batch)
    return sum('older than its weights' in str(w.message) for w in caught)


def test_evaluating_after_training_warns_until_recalibrated():
    from conftest import load_real_zinc
    from torch_geometric.data import Batch

    from graphormer_sepnorm import AddShortestPaths
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', 12)]
    batch = Batch.from_data_list(graphs)
    model = tiny('sep')
    assert stale_warnings(model, batch) == 0  # as built
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()(batch).abs().mean().backward()
    optimizer.step()
    assert stale_warnings(model, batch) == 1
    assert stale_warnings(model, batch) == 0  # once until weights change
    recalibrate_batch_norm(model, DataLoader(graphs, batch_size=4))
    assert stale_warnings(model, batch) == 0
    optimizer.step()
    assert stale_warnings(model, batch) == 1
    # Loaded statistics are taken to match the loaded weights.
    fresh = tiny('sep')
    fresh.load_state_dict(model.state_dict())
    assert stale_warnings(fresh, batch) == 0
    # Running statistics on purpose; ShareNorm has none.
    optimizer.step()
    model.warn_stale_statistics = False
    assert stale_warnings(model, batch) == 0
    share = tiny('share')
    share.train()(batch).abs().mean().backward()
    torch.optim.AdamW(share.parameters(), lr=1e-3).step()
    assert stale_warnings(share, batch) == 0
