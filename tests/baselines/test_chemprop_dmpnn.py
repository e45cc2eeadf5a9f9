"""The chemprop baseline end to end on small real data: artefacts, metrics
recomputed from its predictions, RDKit-rejected molecules dropped (chemprop
itself stops at them), and resume."""
import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

chemprop = pytest.importorskip(
    'chemprop', reason='the chemprop baseline needs the [baselines] extra '
    '(pip install ".[baselines]")')

import torch  # noqa: E402
from baseline_data import (MOLHIV_BAD, molhiv_rows, small_molhiv,  # noqa: E402
                           small_zinc)
from lightning_helpers import BurningRegression, fit, loaders  # noqa: E402
from benchmarks.baselines.chemprop_dmpnn import (  # noqa: E402
    MODEL_FAMILY, train_chemprop)
from benchmarks.baselines.chemprop_run_files import (  # noqa: E402
    checkpoint_callbacks)
from graphormer_sepnorm.training.config import ConfigError  # noqa: E402

QUIET = dict(progress_bar=False, threads=1)


def _predictions(run_dir):
    with open(run_dir / 'test_predictions.csv', newline='') as f:
        return list(csv.DictReader(f))


def _assert_neutral(run_dir, *absolute):
    for path in run_dir.iterdir():
        if path.suffix in ('.json', '.yaml', '.csv'):
            text = path.read_text()
            for forbidden in absolute:
                assert str(forbidden) not in text, (path.name, forbidden)


def test_zinc_run_writes_artefacts_and_honest_metrics(tmp_path):
    written = small_zinc(tmp_path / 'data')
    results = train_chemprop('zinc_subset', tmp_path / 'data',
                             output_dir=tmp_path / 'runs', seed=1,
                             max_epochs=3, batch_size=16, **QUIET)
    run_dir = tmp_path / 'runs' / 'zinc_subset_chemprop_seed1'
    for name in ('config.yaml', 'metrics.csv', 'results.json', 'curves.png',
                 'test_predictions.csv', 'checkpoints/best.ckpt',
                 'checkpoints/last.ckpt'):
        assert (run_dir / name).is_file(), name
    assert json.loads((run_dir / 'results.json').read_text()) == results
    assert results['model_family'] == MODEL_FAMILY
    assert results['chemprop_version'] == chemprop.__version__
    assert (results['dataset'], results['metric'], results['seed']) == \
        ('zinc_subset', 'mae', 1)
    # 60 training molecules in batches of 16: 4 steps per epoch.
    assert results['steps'] == 12 and results['epochs_completed'] == 3
    assert results['cpu_time_s'] > 0 and results['wall_time_s'] > 0
    # Test MAE = the mean |prediction - y| of the written predictions
    # against the real test labels, in order.
    rows = _predictions(run_dir)
    assert [r['smiles'] for r in rows] == \
        [r['smiles'] for r in written['test']]
    errors = [abs(float(p['prediction']) - float(t['y']))
              for p, t in zip(rows, written['test'])]
    assert math.isclose(results['test_metric_at_best_val'],
                        sum(errors) / len(errors), rel_tol=1e-9)
    # The selected epoch's logged val MAE (chemprop's, on standardized
    # targets, rescaled) is the val MAE recomputed from the best model.
    with open(run_dir / 'metrics.csv', newline='') as f:
        history = list(csv.DictReader(f))
    assert len(history) == 3
    val = [float(r['val_mae']) for r in history]
    assert results['best_epoch'] == int(np.argmin(val))
    assert math.isclose(min(val), results['best_val_metric'], rel_tol=1e-5)
    assert results['molecules']['test'] == {'scored': 20, 'dropped': 0,
                                            'dropped_ids': []}
    _assert_neutral(run_dir, tmp_path, Path.cwd())


def test_resume_continues_and_a_finished_run_is_not_overwritten(tmp_path):
    small_zinc(tmp_path / 'data', sizes=(32, 16, 16))
    args = dict(dataset='zinc_subset', source=tmp_path / 'data',
                output_dir=tmp_path / 'runs', batch_size=16, **QUIET)
    first = train_chemprop(max_epochs=3, **args)
    with pytest.raises(ConfigError, match='--resume'):
        train_chemprop(max_epochs=3, **args)
    resumed = train_chemprop(max_epochs=4, resume=True, **args)
    assert resumed['epochs_completed'] == 4 and resumed['steps'] == 8
    assert resumed['cpu_time_s'] > first['cpu_time_s']


class WorseningRegression(BurningRegression):
    """Logs a validation MAE that grows every epoch: the best model is
    epoch 0's, the latest is not."""
    def validation_step(self, batch, batch_idx):
        self.log('val/mae', float(self.current_epoch + 1))


def test_last_checkpoint_is_the_latest_epoch_not_the_best(tmp_path):
    # Lightning's ModelCheckpoint(save_last=True) left last.ckpt at the
    # best epoch (0 here), so a resumed crash redid every later epoch.
    steps_per_epoch = len(loaders()[0])
    best, last = checkpoint_callbacks(tmp_path, 'val/mae',
                                      higher_is_better=False,
                                      steps_per_epoch=steps_per_epoch)
    fit(WorseningRegression(), [best, last], max_epochs=3)
    assert float(best.best_model_score) == 1.0
    saved = {name: torch.load(tmp_path / f'{name}.ckpt', weights_only=False)
             for name in ('best', 'last')}
    assert saved['best']['global_step'] == steps_per_epoch
    assert saved['last']['epoch'] == 2
    assert saved['last']['global_step'] == 3 * steps_per_epoch


def test_molhiv_drops_rejected_smiles_and_scores_with_ogb(tmp_path):
    from chemprop.data import MoleculeDatapoint
    from ogb.graphproppred import Evaluator

    # chemprop stops at a SMILES RDKit rejects: the reason for dropping.
    with pytest.raises(RuntimeError, match='invalid'):
        MoleculeDatapoint.from_smi(MOLHIV_BAD[137], y=np.array([0.0]))
    split = small_molhiv(tmp_path / 'data')
    results = train_chemprop('molhiv', tmp_path / 'data',
                             output_dir=tmp_path / 'runs', max_epochs=3,
                             batch_size=32, **QUIET)
    molecules = results['molecules']
    assert molecules['test'] == {'scored': len(split['test']) - 1,
                                 'dropped': 1, 'dropped_ids': [137]}
    assert molecules['val']['dropped_ids'] == [12882]
    assert molecules['train']['dropped'] == 0
    rows = _predictions(tmp_path / 'runs' / 'molhiv_chemprop_seed0')
    assert [int(r['id']) for r in rows] == \
        [i for i in split['test'] if i != 137]
    y_true = np.array([[float(r['target'])] for r in rows])
    y_pred = np.array([[float(r['prediction'])] for r in rows])
    assert ((0 <= y_pred) & (y_pred <= 1)).all()  # probabilities
    expected = Evaluator('ogbg-molhiv').eval(
        {'y_true': y_true, 'y_pred': y_pred})['rocauc']
    assert results['metric'] == 'rocauc'
    # torchmetrics returns the AUC in float32: equal to OGB's to 1e-6.
    assert math.isclose(results['test_metric_at_best_val'], expected,
                        rel_tol=1e-6)


def test_a_training_subsample_is_named_and_listed_as_its_own_benchmark(
        tmp_path):
    small_molhiv(tmp_path / 'data', sizes=(60, 20, 30))
    results = train_chemprop('molhiv', tmp_path / 'data',
                             output_dir=tmp_path / 'runs', max_epochs=3,
                             batch_size=32, train_molecules=30, **QUIET)
    run_dir = tmp_path / 'runs' / 'molhiv_train30_chemprop_seed0'
    assert json.loads((run_dir / 'results.json').read_text()) == \
        json.loads(json.dumps(results))
    assert results['dataset'] == 'molhiv'
    assert results['benchmark'] == 'molhiv_train30'
    assert 25 <= results['train_molecules'] <= 30
    assert results['molecules']['train']['scored'] == \
        results['train_molecules']
    # Validation and test are the whole splits, as without the subsample.
    assert results['molecules']['test']['scored'] == \
        len(_predictions(run_dir))


def test_a_csv_config_gets_our_runs_split_and_scores_every_task(tmp_path):
    # Two real MolHIV-molecule tasks with missing labels, from a CSV
    # config: chemprop trains on the split our run of that config gets (the
    # same rows, ids and labels), and its test ROC-AUC is the mean over the
    # tasks of the written predictions, recomputed with scikit-learn.
    import yaml
    from sklearn.metrics import roc_auc_score

    from graphormer_sepnorm.data.csv_splits import (identifier_columns,
                                                    load_csv_splits)
    from graphormer_sepnorm.training.config import load_config
    rows = molhiv_rows()[:120]
    with open(tmp_path / 'tasks.csv', 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['smiles', 'a', 'b'])
        for k, (_, smiles, _) in enumerate(rows):
            writer.writerow([smiles, k % 2, '' if k % 5 == 0 else
                             int(k % 3 == 0)])
    config = tmp_path / 'tasks.yaml'
    config.write_text(yaml.safe_dump({
        'defaults': [str(Path(__file__).resolve().parents[2] / 'configs' /
                          'molhiv_sepnorm.yaml')],
        'data': {'name': 'csv', 'root': str(tmp_path / 'data'),
                 'path': str(tmp_path / 'tasks.csv'),
                 'target_columns': ['a', 'b'], 'task': 'binary',
                 'split': 'scaffold', 'split_seed': 0}}))
    results = train_chemprop('csv', config, output_dir=tmp_path / 'runs',
                             seed=0, split_seed=3, max_epochs=3,
                             batch_size=32, **QUIET)
    assert results['benchmark'] == 'tasks' and results['split_seed'] == 3
    assert results['targets'] == ['a', 'b']
    ours = load_csv_splits(load_config(config, ['data.split_seed=3'])['data'])
    run_dir = tmp_path / 'runs' / 'tasks_chemprop_seed0'
    written = _predictions(run_dir)
    assert [int(r['id']) for r in written] == identifier_columns(
        ours.test)['id']
    labels = torch.cat([graph.y for graph in ours.test]).numpy()
    scores = []
    for k, task in enumerate(('a', 'b')):
        assert [r[task] for r in written] == \
            ['' if np.isnan(y) else repr(float(y)) for y in labels[:, k]]
        kept = [r for r in written if r[task]]
        scores.append(roc_auc_score([float(r[task]) for r in kept],
                                    [float(r[f'{task}_prediction'])
                                     for r in kept]))
    assert results['test_metric_at_best_val'] == pytest.approx(
        np.mean(scores), abs=1e-6)
    _assert_neutral(run_dir, tmp_path, Path.cwd())
