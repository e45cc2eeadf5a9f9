"""benchmarks/bn_recalibration.py: the re-estimated BatchNorm statistics
against their hand-computed values, and the saved-statistics score against
the validation metric that training logged."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.nn import global_mean_pool

from benchmark_helpers import script_module
from graphormer_sepnorm.training.cli import train_main

CONFIGS = Path(__file__).resolve().parents[2] / 'configs'


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
    recalibrate = script_module('bn_recalibration').recalibrate_batch_norm
    assert recalibrate(model, graphs, batch_size=3) == 1
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


@pytest.fixture(scope='module')
def tiny_run(zinc_root, tmp_path_factory):
    """8 steps (2 epochs of 4) of a 1-layer SepNorm model on ZINC."""
    root, source = zinc_root
    out = tmp_path_factory.mktemp('runs')
    assert train_main([
        '--config', str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
        f'data.root={root}', f'data.raw_source={source}',
        f'output_dir={out}', 'run_name=bn', 'data.limit_train=64',
        'data.limit_val=32', 'data.limit_test=32', 'data.batch_size=16',
        'model.num_layers=1', 'model.hidden_channels=16',
        'model.ffn_channels=16', 'model.num_heads=2', 'optim.lr=1e-2',
        'optim.warmup_steps=2', 'train.max_steps=8', 'optim.total_steps=8',
        'train.progress_bar=false', 'train.eval_test=false']) == 0
    return out / 'bn'


def test_saved_statistics_score_as_validation_logged_them(tiny_run,
                                                          tmp_path):
    main = script_module('bn_recalibration').main
    assert main(['--config', str(tiny_run / 'config.yaml'),
                 '--checkpoints', str(tiny_run / 'checkpoints/last.ckpt'),
                 '--output-dir', str(tmp_path)]) == 0
    [row] = json.loads((tmp_path / 'bn_recalibration.json').read_text())
    with open(tiny_run / 'metrics.csv', newline='') as f:
        logged = list(csv.DictReader(f))[-1]
    assert (row['epoch'], row['step']) == (int(logged['epoch']), 8)
    assert row['saved_statistics'] == pytest.approx(
        float(logged['val_mae']), rel=1e-5)
    # SepNorm's graph-token BatchNorms: before the one layer's feed-forward
    # block and in the final norm (before its attention the graph token is
    # the same embedding for every graph, so that norm is a LayerNorm).
    assert row['batch_norm_layers'] == 2
    assert np.isfinite(row['recalibrated_statistics'])
    assert row['recalibrated_statistics'] != row['saved_statistics']
    assert str(tmp_path) not in (tmp_path / 'bn_recalibration.md').read_text()


def test_a_file_that_is_not_a_checkpoint_is_named(tiny_run, tmp_path,
                                                  capsys):
    main = script_module('bn_recalibration').main
    bad = tmp_path / 'notes.ckpt'
    bad.write_text('not a checkpoint')
    with pytest.raises(SystemExit) as exit_info:
        main(['--config', str(tiny_run / 'config.yaml'),
              '--checkpoints', str(bad)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert 'notes.ckpt is not a checkpoint' in error
    assert 'config.yaml' in error
