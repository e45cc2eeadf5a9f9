"""Precise BatchNorm statistics: the re-estimate against hand-computed
values, and train.precise_bn_batches in a run (training unchanged, only the
statistics validation uses; exact resume kept)."""
import numpy as np
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_mean_pool

from graphormer_sepnorm.models import GraphormerSepNorm
from graphormer_sepnorm.training.precise_bn import (batch_norms,
                                                    recalibrate_batch_norm,
                                                    seeded_generators)
from training_helpers import (TRAIN, metrics_rows, run_script, without_time,
                              zinc_args)


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


def _state(run_dir) -> dict:
    return torch.load(run_dir / 'checkpoints' / 'last.ckpt',
                      weights_only=True)['state_dict']


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


def test_precise_statistics_change_validation_not_training(zinc_root,
                                                           tmp_path):
    common = ('train.max_steps=8', 'optim.total_steps=8', 'optim.lr=1e-2')
    plain = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'plain',
                                         *common))
    assert plain.returncode == 0, plain.stderr[-3000:]
    precise = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'precise',
                                           *common,
                                           'train.precise_bn_batches=2'))
    assert precise.returncode == 0, precise.stderr[-3000:]
    a, b = _state(tmp_path / 'plain'), _state(tmp_path / 'precise')
    statistics = [k for k in a if k.endswith(('running_mean', 'running_var',
                                              'num_batches_tracked'))]
    assert statistics
    for key in a:
        if key not in statistics:  # the same training, weight for weight
            assert torch.equal(a[key], b[key]), key
    assert any(not torch.equal(a[k], b[k]) for k in statistics)
    rows_a, rows_b = metrics_rows(tmp_path / 'plain'), metrics_rows(
        tmp_path / 'precise')
    assert [r['train_loss'] for r in rows_a] == [r['train_loss']
                                                 for r in rows_b]
    assert [r['val_mae'] for r in rows_a] != [r['val_mae'] for r in rows_b]


def test_resume_stays_exact_with_precise_statistics(zinc_root, tmp_path):
    common = ('optim.total_steps=8', 'train.precise_bn_batches=2',
              'train.checkpoint_every_n_steps=2')
    straight = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'a',
                                            'train.max_steps=8', *common))
    assert straight.returncode == 0, straight.stderr[-3000:]
    first = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'b',
                                         'train.max_steps=6', *common))
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_script(TRAIN, '--resume', str(tmp_path / 'b'),
                        'train.max_steps=8')
    assert second.returncode == 0, second.stderr[-3000:]
    assert without_time(metrics_rows(tmp_path / 'a')) == without_time(
        metrics_rows(tmp_path / 'b'))


@pytest.mark.parametrize('value', ['0', '-3'])
def test_a_count_below_one_is_refused(zinc_root, tmp_path, value):
    result = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'bad',
                                          f'train.precise_bn_batches={value}'))
    assert result.returncode == 2
    assert "'train.precise_bn_batches' must be > 0" in result.stderr


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
