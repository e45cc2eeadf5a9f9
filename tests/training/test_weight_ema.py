"""optim.ema_decay (graphormer_sepnorm/training/weight_ema.py): the average
against one computed by hand from the weights after every step; what sees
it (validation, the BatchNorm re-estimate, the best checkpoint,
model.safetensors, test) while training itself is unchanged; an exact
resume; and the settings it refuses."""
import json

import lightning
import pytest
import torch
from lightning.pytorch.callbacks import Callback
from safetensors.torch import load_file

from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.training.weight_ema import WeightEMA, \
    warmed_up_decay
from training_helpers import (CONFIGS, EVALUATE, REPO, TRAIN, metrics_rows,
                              run_script, without_time, zinc_args)


def test_the_warmed_up_decay_by_hand():
    assert warmed_up_decay(0.999, 0) == pytest.approx(0.1)
    assert warmed_up_decay(0.999, 10) == pytest.approx(11 / 20)
    assert warmed_up_decay(0.9, 80) == pytest.approx(0.9)  # 81/90 = 0.9
    assert warmed_up_decay(0.9, 1000) == 0.9


class _Regression(lightning.LightningModule):
    """A linear layer and a BatchNorm fitted to random targets by SGD."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)
        self.norm = torch.nn.BatchNorm1d(3)

    def forward(self, x):
        return self.linear(self.norm(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log('val', torch.nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class _Record(Callback):
    """The trained weights after every step, and the weights each
    validation's epoch start sees (after the callbacks before it)."""

    def __init__(self):
        self.trained, self.validated = [], []

    def on_train_batch_end(self, trainer, pl_module, *args):
        self.trained.append({k: v.detach().clone() for k, v in
                             pl_module.state_dict().items()})

    def on_validation_epoch_start(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.validated.append({k: v.detach().clone() for k, v in
                                   pl_module.state_dict().items()})


def _by_hand(trajectory: list, decay: float) -> dict:
    average = dict(trajectory[0])
    for n, weights in enumerate(trajectory[1:], start=1):
        d = min(decay, (1 + n) / (10 + n))
        average = {k: (v if not v.is_floating_point() else
                       d * average[k] + (1 - d) * weights[k])
                   for k, v in weights.items()}
    return average


def test_the_average_is_the_exponential_average_of_every_step(tmp_path):
    torch.manual_seed(0)
    x, y = torch.randn(64, 3), torch.randn(64, 1)
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, y), batch_size=8)
    record = _Record()
    trainer = lightning.Trainer(
        max_epochs=3, callbacks=[WeightEMA(0.6), record],
        default_root_dir=tmp_path, logger=False, enable_progress_bar=False,
        enable_model_summary=False, enable_checkpointing=False,
        num_sanity_val_steps=1)
    model = _Regression()
    trainer.fit(model, data, data)
    assert len(record.trained) == 24 and len(record.validated) == 3
    for epoch, seen in enumerate(record.validated):
        expected = _by_hand(record.trained[:8 * (epoch + 1)], 0.6)
        for key, value in expected.items():
            assert torch.allclose(seen[key].double(), value.double(),
                                  atol=1e-6), (epoch, key)
        trained = record.trained[8 * (epoch + 1) - 1]
        assert not torch.allclose(seen['linear.weight'],
                                  trained['linear.weight'])
    # Training goes on from the trained weights, and ends on the average.
    final = _by_hand(record.trained, 0.6)
    for key, value in model.state_dict().items():
        assert torch.allclose(value.double(), final[key].double(),
                              atol=1e-6), key


def test_it_is_refused_outside_zero_to_one_and_in_pretraining():
    for value in ('0', '1', '1.5'):
        with pytest.raises(ConfigError,
                           match=r"'optim.ema_decay' must be in \(0, 1\)"):
            load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                        [f'optim.ema_decay={value}'], env={},
                        check_paths=False)
    with pytest.raises(ConfigError, match="pretraining exports the trained "
                       "backbone, not an average of it: leave it null"):
        load_config(REPO / 'graphormer_sepnorm' / 'configs' / 'pretrain' /
                    'cpu_sepnorm.yaml', ['optim.ema_decay=0.99'], env={},
                    check_paths=False)
    with pytest.raises(ValueError, match=r'in \(0, 1\)'):
        WeightEMA(1.0)


def test_the_trainer_swaps_the_average_in_before_the_batchnorm_estimate(
        tmp_path):
    from graphormer_sepnorm.training.precise_bn import PreciseBatchNorm
    from graphormer_sepnorm.training.trainer import build_trainer
    config = load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                         ['optim.ema_decay=0.9',
                          'train.precise_bn_batches=2'], env={},
                         check_paths=False)
    trainer, _, _ = build_trainer(config, tmp_path)
    order = [type(c) for c in trainer.callbacks]
    assert order.index(WeightEMA) < order.index(PreciseBatchNorm)
    # The estimate runs at the hook where the swap has happened.
    assert 'on_validation_epoch_start' in vars(PreciseBatchNorm)
    assert 'on_validation_start' not in vars(PreciseBatchNorm)


STEPS = ('optim.total_steps=12', 'train.num_threads=1',
         'train.checkpoint_every_n_steps=2', 'train.precise_bn_batches=2')


def test_a_run_trains_alike_and_validates_saves_and_tests_the_average(
        zinc_root, tmp_path):
    runs = {}
    for name, extra in (('plain', ()), ('ema', ('optim.ema_decay=0.7',))):
        done = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, name,
                                            *STEPS, 'train.max_steps=12',
                                            *extra))
        assert done.returncode == 0, done.stderr[-3000:]
        runs[name] = tmp_path / name
    plain, ema = (metrics_rows(runs[n]) for n in ('plain', 'ema'))
    # The average never feeds back into training.
    assert [r['train_loss'] for r in plain] == [r['train_loss'] for r in ema]
    assert [r['val_mae'] for r in plain] != [r['val_mae'] for r in ema]
    last = torch.load(runs['ema'] / 'checkpoints' / 'last.ckpt',
                      map_location='cpu', weights_only=True)
    trained = last['current_model_state']
    plain_last = torch.load(runs['plain'] / 'checkpoints' / 'last.ckpt',
                            map_location='cpu', weights_only=True)
    weights = [k for k in trained if 'running_' not in k
               and 'num_batches' not in k]
    assert all(torch.equal(trained[k], plain_last['state_dict'][k])
               for k in weights)
    # The best checkpoint and model.safetensors hold the average.
    best = torch.load(runs['ema'] / 'checkpoints' / 'best.ckpt',
                      map_location='cpu', weights_only=True)
    saved = load_file(str(runs['ema'] / 'model.safetensors'))
    for key, value in saved.items():
        assert torch.equal(value, best['state_dict']['model.' + key]), key
    results = json.loads((runs['ema'] / 'results.json').read_text())
    if results['best_step'] == 12:  # the last validation is the best
        assert any(not torch.equal(saved[k[len('model.'):]], trained[k])
                   for k in weights if k.startswith('model.'))
    # Evaluated again, the saved model scores what its validation
    # recorded, and the test scores of results.json are its.
    for split, recorded in (('val', results['best_val_metric']),
                            ('test', results['test_metric_at_best_val'])):
        again = run_script(EVALUATE, '--checkpoint', str(runs['ema']),
                           '--split', split)
        assert again.returncode == 0, again.stderr[-3000:]
        assert json.loads(again.stdout)['value'] == pytest.approx(recorded,
                                                                rel=1e-5)


def test_a_resumed_run_averages_exactly_as_an_uninterrupted_one(zinc_root,
                                                                 tmp_path):
    common = (*STEPS, 'optim.ema_decay=0.7')
    straight = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'a',
                                            *common, 'train.max_steps=12'))
    assert straight.returncode == 0, straight.stderr[-3000:]
    first = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'b', *common,
                                         'train.max_steps=6'))
    assert first.returncode == 0, first.stderr[-3000:]
    refused = run_script(TRAIN, '--resume', str(tmp_path / 'b'),
                         'train.max_steps=12', 'optim.ema_decay=null')
    assert refused.returncode == 2
    assert 'optim.ema_decay was 0.7 when the run started' in refused.stderr
    second = run_script(TRAIN, '--resume', str(tmp_path / 'b'),
                        'train.max_steps=12')
    assert second.returncode == 0, second.stderr[-3000:]
    assert without_time(metrics_rows(tmp_path / 'a')) == without_time(
        metrics_rows(tmp_path / 'b'))
    a = load_file(str(tmp_path / 'a' / 'model.safetensors'))
    b = load_file(str(tmp_path / 'b' / 'model.safetensors'))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_lightning_without_the_callback_is_a_clear_error(tmp_path,
                                                           monkeypatch):
    import sys

    import lightning.pytorch.callbacks as callbacks

    from graphormer_sepnorm.training.trainer import build_trainer
    # Older Lightning releases have no WeightAveraging.
    monkeypatch.delattr(callbacks, 'WeightAveraging')
    monkeypatch.delitem(sys.modules,
                        'graphormer_sepnorm.training.weight_ema')
    config = load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                         ['optim.ema_decay=0.9'], env={}, check_paths=False)
    with pytest.raises(ConfigError, match=r"needs Lightning's "
                       r"WeightAveraging callback, which this Lightning "
                       r"lacks .*pip install -U lightning"):
        build_trainer(config, tmp_path)
