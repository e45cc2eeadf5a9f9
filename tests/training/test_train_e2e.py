"""Real short training runs on the ZINC-subset stand-in and a small MolHIV
copy: through scripts/train.py (subprocess) and in-process; exact resume,
NaN handling, on-device batching and 2-process data parallelism."""
import csv
import json
import math

import numpy as np
import pytest
import torch

from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.cli.train import evaluate_main, train_main
from graphormer_sepnorm.training.config import load_config
from graphormer_sepnorm.training.run_results import TEST_PROTOCOLS
from training_helpers import (CONFIGS, TINY_MODEL, TRAIN, max_weight_diff,
                              metrics_rows, run_script, without_time,
                              zinc_args)

RUN_FILES = ['config.yaml', 'checkpoints/last.ckpt', 'checkpoints/best.ckpt',
             'model.safetensors', 'metrics.csv', 'curves.png', 'results.json',
             'test_predictions.csv', 'report.html']


def without_test(rows) -> list[dict]:
    """metrics.csv rows without their clock and test columns."""
    return [{k: v for k, v in r.items() if not k.startswith('test_')}
            for r in without_time(rows)]


def prediction_rows(path) -> list[dict]:
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope='module')
def zinc_run(zinc_root, tmp_path_factory):
    """16 steps (4 epochs) through scripts/train.py, dropout on; test
    scored as new runs score it (train.test_at=end, the default)."""
    out = tmp_path_factory.mktemp('runs')
    result = run_script(TRAIN, *zinc_args(zinc_root, out, 'A',
                                          'train.max_steps=16',
                                          'optim.total_steps=16',
                                          'train.checkpoint_every_n_steps=5'))
    assert result.returncode == 0, result.stderr[-3000:]
    return out / 'A', result


def test_zinc_training_writes_the_run_directory(zinc_run):
    run_dir, result = zinc_run
    for name in RUN_FILES:
        assert (run_dir / name).is_file(), name
    rows = metrics_rows(run_dir)
    assert [int(r['epoch']) for r in rows] == list(range(4))
    assert [int(r['step']) for r in rows] == [4, 8, 12, 16]
    losses = [float(r['train_loss']) for r in rows]
    assert losses[-1] < losses[0]  # the loss falls
    results = json.loads((run_dir / 'results.json').read_text())
    for key in ('num_parameters', 'steps', 'wall_time_s', 'best_val_metric',
                'test_metric_at_best_val', 'throughput_graphs_per_s',
                'target_mean', 'target_std'):
        assert isinstance(results[key], (int, float)), key
        assert math.isfinite(results[key]) and results[key] > 0 or \
            key == 'target_mean', key
    assert results['steps'] == 16 and results['dataset'] == 'zinc_subset'
    assert results['norm'] == 'sep' and results['seed'] == 0
    assert results['hardware']['device_name']
    best = min(rows, key=lambda r: float(r['val_mae']))
    assert results['best_val_metric'] == pytest.approx(float(best['val_mae']))
    # Validation never scored test: it was scored once, after training.
    assert [r['test_mae'] for r in rows] == [''] * 4
    assert results['test_protocol'] == ('test scored once at the end, by '
                                        'the best-validation checkpoint')
    assert results['final_test_metric'] is None
    model, card = load_model(run_dir / 'model.safetensors')
    assert card.task == 'regression' and card.featurizer == 'zinc'
    assert card.target_std == pytest.approx(results['target_std'])
    assert card.extra['test_metric_at_best_val'] == pytest.approx(
        results['test_metric_at_best_val'])
    assert model.config['num_layers'] == 1
    assert (run_dir / 'curves.png').stat().st_size > 1000
    report = (run_dir / 'report.html').read_text()  # tests/report: details
    assert results['test_protocol'] in report


def test_test_predictions_hold_the_reported_test_metric(zinc_run, zinc_root):
    """test_predictions.csv: every test graph in split order with its real
    label; every test metric of results.json, computed by hand from the
    file's rows, is the reported one to rounding (it was computed from the
    values written there)."""
    from graphormer_sepnorm.data.datasets import graph_targets, load_splits
    run_dir, _ = zinc_run
    results = json.loads((run_dir / 'results.json').read_text())
    assert results['test_predictions'] == 'test_predictions.csv'
    rows = prediction_rows(run_dir / 'test_predictions.csv')
    assert list(rows[0]) == ['id', 'target', 'prediction']
    assert [int(r['id']) for r in rows] == list(range(32))
    root, source = zinc_root
    labels = graph_targets(load_splits('zinc_subset', root,
                                       raw_source=source).test)[:32]
    assert [float(r['target']) for r in rows] == pytest.approx(
        labels.double().tolist(), abs=1e-6)
    pred = np.array([float(r['prediction']) for r in rows])
    target = np.array([float(r['target']) for r in rows])
    error = pred - target
    by_hand = {'mae': np.abs(error).mean(),
               'rmse': np.sqrt((error ** 2).mean()),
               'r2': 1 - (error ** 2).sum() / ((target - target.mean()) ** 2
                                               ).sum()}
    assert results['test_metrics_at_best_val'] == pytest.approx(by_hand,
                                                                rel=1e-12)
    assert results['test_metric_at_best_val'] == results[
        'test_metrics_at_best_val']['mae']


def test_without_test_evaluation_test_is_never_read(zinc_run, zinc_root,
                                                    tmp_path, monkeypatch):
    """train.eval_test=false (tuning trials): the test split is never
    batched, its columns stay empty, and training is otherwise the same run
    as with test evaluation (same validation metrics and weights)."""
    from graphormer_sepnorm.data import datamodule
    reference, _ = zinc_run
    loaded_splits = []
    original = datamodule.GraphDataModule._loader

    def recording_loader(self, split, train):
        loaded_splits.append(split)
        return original(self, split, train)

    monkeypatch.setattr(datamodule.GraphDataModule, '_loader',
                        recording_loader)
    args = zinc_args(zinc_root, tmp_path, 'C', 'train.max_steps=16',
                     'optim.total_steps=16',
                     'train.checkpoint_every_n_steps=5',
                     'train.eval_test=false')
    assert train_main(args) == 0
    assert 'test' not in loaded_splits and 'val' in loaded_splits
    rows, expected = metrics_rows(tmp_path / 'C'), metrics_rows(reference)
    assert [r['test_mae'] for r in rows] == [''] * 4
    assert without_time(rows) == [
        {k: '' if k.startswith('test_') else v for k, v in r.items()}
        for r in without_time(expected)]
    results = json.loads((tmp_path / 'C' / 'results.json').read_text())
    assert results['test_metric_at_best_val'] is None
    assert results['test_predictions'] is None
    assert results['test_protocol'] is None
    assert not (tmp_path / 'C' / 'test_predictions.csv').exists()
    assert results['cpu_time_s'] > 0
    assert max_weight_diff(reference, tmp_path / 'C') == 0.0


def test_every_validation_keeps_the_old_protocol(zinc_run, zinc_root,
                                                  tmp_path):
    """train.test_at=every_validation (how the committed benchmark runs
    ran): test scored beside every validation, read at the best-validation
    epoch; the training is the same (same validation metrics and weights),
    and the best model's test predictions give that test metric."""
    reference, _ = zinc_run
    assert train_main(zinc_args(zinc_root, tmp_path, 'E',
                                'train.max_steps=16', 'optim.total_steps=16',
                                'train.checkpoint_every_n_steps=5',
                                'train.test_at=every_validation')) == 0
    rows, expected = metrics_rows(tmp_path / 'E'), metrics_rows(reference)
    assert all(r['test_mae'] for r in rows)
    assert without_test(rows) == without_test(expected)
    assert max_weight_diff(reference, tmp_path / 'E') == 0.0
    results = json.loads((tmp_path / 'E' / 'results.json').read_text())
    old = json.loads((reference / 'results.json').read_text())
    best = min(rows, key=lambda r: float(r['val_mae']))
    assert results['test_metric_at_best_val'] == pytest.approx(
        float(best['test_mae']), rel=1e-12)
    assert results['test_metric_at_best_val'] == pytest.approx(
        old['test_metric_at_best_val'], rel=1e-5)
    assert results['test_protocol'] == TEST_PROTOCOLS['every_validation']
    assert TEST_PROTOCOLS['every_validation'] == (
        'test scored at every validation and read at the best-validation '
        'epoch')


def test_evaluate_script_reproduces_the_test_metric(zinc_run, capsys):
    run_dir, _ = zinc_run
    results = json.loads((run_dir / 'results.json').read_text())
    assert evaluate_main(['--checkpoint', str(run_dir), '--split',
                          'test']) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated['metric'] == 'mae' and evaluated['num_graphs'] == 32
    assert evaluated['value'] == pytest.approx(
        results['test_metric_at_best_val'], rel=1e-6)


def test_evaluate_script_writes_the_same_predictions(zinc_run, tmp_path,
                                                     capsys):
    run_dir, _ = zinc_run
    written = tmp_path / 'new' / 'folder' / 'test.csv'
    assert evaluate_main(['--checkpoint', str(run_dir), '--predictions',
                          str(written)]) == 0
    capsys.readouterr()
    again = prediction_rows(written)
    trained = prediction_rows(run_dir / 'test_predictions.csv')
    assert [r['id'] for r in again] == [r['id'] for r in trained]
    assert [r['target'] for r in again] == [r['target'] for r in trained]
    assert [float(r['prediction']) for r in again] == pytest.approx(
        [float(r['prediction']) for r in trained], abs=1e-5)


def test_evaluate_refuses_an_unwritable_predictions_file(zinc_run, capsys):
    run_dir, _ = zinc_run
    assert evaluate_main(['--checkpoint', str(run_dir), '--predictions',
                          '/proc/nope/test.csv']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error:') and '--predictions' in err
    assert '/proc/nope' in err and err.count('\n') == 1


def test_cli_resume_continues_exactly(zinc_run, zinc_root, tmp_path, capsys):
    """Stop after 6 steps (mid-epoch), resume to 16: the same metrics and
    weights as the uninterrupted run (CPU, same seed, dropout on). The CLI
    runs in-process here (train_main), the reference in a subprocess."""
    reference, _ = zinc_run
    args = zinc_args(zinc_root, tmp_path, 'B', 'optim.total_steps=16',
                     'train.checkpoint_every_n_steps=5')
    assert train_main([*args, 'train.max_steps=6']) == 0
    assert torch.load(tmp_path / 'B' / 'checkpoints' / 'last.ckpt',
                      weights_only=True)['global_step'] == 6
    assert train_main([*args, 'train.max_steps=6']) == 2
    assert '--resume' in capsys.readouterr().err
    assert train_main(['--resume', str(tmp_path / 'B'),
                       'train.max_steps=16']) == 0
    assert without_time(metrics_rows(tmp_path / 'B')) == without_time(
        metrics_rows(reference))
    assert max_weight_diff(reference, tmp_path / 'B') == 0.0


def _inprocess_config(zinc_root, out, name, *extra):
    args = zinc_args(zinc_root, out, name, *extra)
    return load_config(args[1], args[2:], env={})


@pytest.mark.parametrize('device_reads', ['every step', 'deferred'])
def test_nan_loss_stops_and_the_run_resumes_from_the_last_good_checkpoint(
        zinc_root, tmp_path, monkeypatch, device_reads):
    """On the CPU every loss is read; on an accelerator (forced here) the
    first non-finite step is kept on the device and read before the next
    checkpoint: the same error, the same last good checkpoint."""
    from graphormer_sepnorm.training import run_module
    from graphormer_sepnorm.training.lit_module import (GraphormerLitModule,
                                                        NonFiniteLossError)
    from graphormer_sepnorm.training.trainer import train
    if device_reads == 'deferred':
        monkeypatch.setattr(run_module, 'reads_back_cheaply',
                            lambda tensor: False)
    common = ('train.max_steps=12', 'optim.total_steps=12',
              'train.checkpoint_every_n_steps=4')
    reference = train(_inprocess_config(zinc_root, tmp_path, 'ref', *common))

    original = GraphormerLitModule._loss

    def loss_nan_at_step_11(self, pred, batch):
        loss = original(self, pred, batch)
        return loss * math.nan if self.global_step == 10 else loss

    monkeypatch.setattr(GraphormerLitModule, '_loss', loss_nan_at_step_11)
    crashed = _inprocess_config(zinc_root, tmp_path, 'crash', *common)
    with pytest.raises(NonFiniteLossError, match=r'not finite\) at step 10.*'
                       r'last good checkpoint is kept'):
        train(crashed)
    last = tmp_path / 'crash' / 'checkpoints' / 'last.ckpt'
    state = torch.load(last, weights_only=True)
    assert state['global_step'] == 8  # the last interval before the NaN
    assert all(torch.isfinite(v).all() for v in state['state_dict'].values()
               if v.is_floating_point())

    monkeypatch.setattr(GraphormerLitModule, '_loss', original)
    resumed = train(crashed, resume=True)
    assert resumed['steps'] == 12
    assert without_time(metrics_rows(tmp_path / 'crash')) == without_time(
        metrics_rows(tmp_path / 'ref'))
    assert max_weight_diff(tmp_path / 'ref', tmp_path / 'crash') == 0.0
    assert resumed['test_metric_at_best_val'] == \
        reference['test_metric_at_best_val']


def test_on_device_batching_trains_identically(zinc_root, tmp_path):
    from graphormer_sepnorm.training.trainer import train
    common = ('train.max_steps=8', 'optim.total_steps=8')
    a = train(_inprocess_config(zinc_root, tmp_path, 'host', *common))
    b = train(_inprocess_config(zinc_root, tmp_path, 'dev', *common,
                                'data.on_device=true'))
    assert without_time(metrics_rows(tmp_path / 'host')) == without_time(
        metrics_rows(tmp_path / 'dev'))
    assert a['best_val_metric'] == b['best_val_metric']


def test_two_process_ddp_matches_one_process(zinc_root, tmp_path):
    """gloo, strategy=ddp, devices=2, global batch 16 (8 per process) vs one
    process with batch 16; dropout off; SepNorm's batch-norm statistics are
    global (GlobalBatchNorm1d, the CPU stand-in for SyncBatchNorm).

    Run in float64: in float32 the training losses already agree to ~1e-7,
    but Adam turns rounding noise in directions the loss is blind to (a
    bias right before a batch norm) into full-size steps, which moves the
    running statistics and hence eval-mode metrics by ~1e-4. In float64 the
    noise is ~1e-16, so 1e-6 is a tight and meaningful tolerance (the
    logged train loss is accumulated in float32: 1e-6 relative)."""
    common = ('train.max_steps=8', 'optim.total_steps=8',
              'train.precision=64-true', 'model.dropout=0',
              'model.attention_dropout=0', 'model.activation_dropout=0',
              'train.accelerator=cpu')
    single = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'one',
                                          *common))
    assert single.returncode == 0, single.stderr[-3000:]
    ddp = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'ddp', *common,
                                       'train.strategy=ddp',
                                       'train.devices=2'), timeout=300)
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    results = json.loads((tmp_path / 'ddp' / 'results.json').read_text())
    assert results['hardware']['world_size'] == 2
    rows_one = metrics_rows(tmp_path / 'one')
    rows_ddp = metrics_rows(tmp_path / 'ddp')
    assert len(rows_one) == len(rows_ddp) == 2
    for a, b in zip(rows_one, rows_ddp):
        assert a['step'] == b['step']
        for key in ('train_loss', 'val_mae'):
            assert float(a[key]) == pytest.approx(float(b[key]), rel=1e-6,
                                                  abs=1e-9), key
    one = json.loads((tmp_path / 'one' / 'results.json').read_text())
    assert results['test_metric_at_best_val'] == pytest.approx(
        one['test_metric_at_best_val'], rel=1e-6)
    assert max_weight_diff(tmp_path / 'one', tmp_path / 'ddp') < 1e-6


def test_molhiv_training(molhiv_root, tmp_path):
    result = run_script(
        TRAIN, '--config', str(CONFIGS / 'molhiv_sepnorm.yaml'),
        f'data.root={molhiv_root}', f'output_dir={tmp_path}', 'run_name=hiv',
        'data.batch_size=50', 'train.max_epochs=3', 'optim.lr=1e-3',
        'train.progress_bar=false', *TINY_MODEL)
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = tmp_path / 'hiv'
    for name in RUN_FILES:
        assert (run_dir / name).is_file(), name
    rows = metrics_rows(run_dir)
    assert len(rows) == 3 and int(rows[-1]['step']) == 12
    assert float(rows[-1]['train_loss']) < float(rows[0]['train_loss'])
    results = json.loads((run_dir / 'results.json').read_text())
    assert results['metric'] == 'rocauc' and results['higher_is_better']
    for key in ('best_val_metric', 'test_metric_at_best_val'):
        assert 0.0 <= results[key] <= 1.0
    _, card = load_model(run_dir / 'model.safetensors')
    assert card.task == 'binary' and card.featurizer == 'ogb'
    assert (card.target_mean, card.target_std) == (0.0, 1.0)
    assert card.model_config['atom_vocab_sizes'] == [119, 5, 12, 12, 10, 6,
                                                     6, 2, 2]
    # Test predictions: OGB's graph indices of the test split, its labels,
    # probabilities whose ROC-AUC (by hand: the fraction of positive-negative
    # pairs ranked right, ties half) is the reported one.
    split = np.loadtxt(molhiv_root / 'ogbg_molhiv' / 'split' / 'scaffold' /
                       'test.csv.gz', dtype=int)
    rows = prediction_rows(run_dir / 'test_predictions.csv')
    assert [int(r['id']) for r in rows] == sorted(split.tolist())
    probability = np.array([float(r['prediction']) for r in rows])
    label = np.array([float(r['target']) for r in rows])
    assert ((probability > 0) & (probability < 1)).all()
    assert set(label) == {0.0, 1.0}
    positive, negative = probability[label == 1], probability[label == 0]
    pairs = positive[:, None] - negative[None, :]
    auc = ((pairs > 0).sum() + 0.5 * (pairs == 0).sum()) / pairs.size
    assert auc == pytest.approx(results['test_metric_at_best_val'], abs=1e-6)
