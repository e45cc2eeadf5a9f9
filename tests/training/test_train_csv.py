"""Training on your own CSV end to end (scripts/train.py's main, in
process): a two-target regression with missing labels and a binary task on
about 200 real molecules, the metrics recomputed by hand from the saved
model's predictions, the run records, and every bad input with its
message and exit status 2."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file
from sklearn.metrics import average_precision_score, roc_auc_score

from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.data.csv_dataset import CSVDataWarning
from graphormer_sepnorm.data.datasets import load_data_splits
from graphormer_sepnorm.cli.train import train_main
from training_helpers import REPO, TINY_MODEL

CONFIG = str(REPO / 'configs' / 'csv_zinc_properties.yaml')
SHORT = ['train.max_epochs=3', 'data.batch_size=16', 'optim.lr=1e-3',
         'train.progress_bar=false', 'train.log_every_n_steps=5',
         *TINY_MODEL]


def _args(path, tmp_path, name, *extra):
    return ['--config', CONFIG, f'data.path={path}',
            f'data.root={tmp_path / "data"}', f'output_dir={tmp_path}',
            f'run_name={name}', *SHORT, *extra]


def _train(capsys, *args):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', CSVDataWarning)
        status = train_main(list(args))
    return status, capsys.readouterr().err


def _predictions(run_dir, split):
    """The saved model's outputs on a split, in the training CSV's units
    (mapped back with the model card), and the labels."""
    model, card = load_model(run_dir / 'model.safetensors')
    data = card.extra['data']
    graphs = load_data_splits(data)[split]
    from torch_geometric.loader import DataLoader
    batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
    with torch.no_grad():
        out = model(batch).double()
    if card.task == 'regression':
        out = (out * torch.tensor(card.target_std, dtype=torch.double) +
               torch.tensor(card.target_mean, dtype=torch.double))
    return out.numpy(), batch.y.double().view(out.shape).numpy(), card


@pytest.fixture(scope='module')
def regression_run(zinc_property_frame, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp('csv_regression')
    path = tmp_path / 'zinc.csv'
    zinc_property_frame.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', CSVDataWarning)
        status = train_main(_args(path, tmp_path, 'reg',
                                  'data.target_columns=[y,logp]'))
    assert status == 0
    return tmp_path / 'reg', zinc_property_frame


def test_two_targets_with_missing_labels(regression_run):
    run_dir, frame = regression_run
    for name in ('split.csv', 'skipped_rows.csv', 'metrics.csv',
                 'model.safetensors', 'results.json'):
        assert (run_dir / name).is_file(), name
    results = json.loads((run_dir / 'results.json').read_text())
    assert results['task'] == 'regression'
    assert results['targets'] == ['y', 'logp']
    assert results['split_sizes'] == {'train': 152, 'val': 19, 'test': 19}
    # The ten rows without any label are skipped and listed
    skipped = pd.read_csv(run_dir / 'skipped_rows.csv')
    assert skipped['line'].tolist() == list(range(2, 202, 21))
    history = pd.read_csv(run_dir / 'metrics.csv')
    assert len(history) == 3
    for column in ('val_mae', 'val_rmse', 'val_r2', 'val_mae_y',
                   'val_mae_logp'):
        assert history[column].notna().all(), column
    # Test scored once, after training (train.test_at=end): every metric
    test = results['test_metrics_at_best_val']
    assert history['test_r2_logp'].isna().all()
    assert None not in (test['r2_logp'], test['std_mae'])

    # The metrics, by hand, from the saved (best) model's predictions
    pred, y, card = _predictions(run_dir, 'val')
    best = results['val_metrics_at_best_val']
    for k, name in enumerate(['y', 'logp']):
        labeled = ~np.isnan(y[:, k])
        err = pred[labeled, k] - y[labeled, k]
        total = ((y[labeled, k] - y[labeled, k].mean())**2).sum()
        assert best[f'mae_{name}'] == pytest.approx(np.abs(err).mean(),
                                                    rel=1e-5)
        assert best[f'rmse_{name}'] == pytest.approx(
            np.sqrt((err**2).mean()), rel=1e-5)
        assert best[f'r2_{name}'] == pytest.approx(
            1 - (err**2).sum() / total, rel=1e-4, abs=1e-5)
    assert best['mae'] == pytest.approx(
        (best['mae_y'] + best['mae_logp']) / 2)
    # Two targets: the best epoch is selected on the standardized MAE (each
    # target's MAE over the std of its training labels), also in the history
    assert results['metric'] == 'std_mae' and not results['higher_is_better']
    assert best['std_mae'] == pytest.approx(
        (best['mae_y'] / card.target_std[0] +
         best['mae_logp'] / card.target_std[1]) / 2, rel=1e-6)
    assert results['best_epoch'] == history['val_std_mae'].idxmin()
    assert results['best_val_metric'] == pytest.approx(
        history['val_std_mae'].min(), rel=1e-9)
    for column in ('val_std_mae', 'val_std_rmse'):
        assert history[column].notna().all(), column

    # The card: targets, featurizer, per-target standardization from the
    # training rows of the CSV (pandas over the written split)
    split = pd.read_csv(run_dir / 'split.csv')
    train = split[split['split'] == 'train']
    assert card.target_names == ['y', 'logp'] and card.featurizer == 'ogb'
    assert card.target_mean == pytest.approx(
        train[['y', 'logp']].mean().tolist(), rel=1e-6)
    assert card.target_std == pytest.approx(
        train[['y', 'logp']].std().tolist(), rel=1e-6)


def test_test_predictions_join_the_csv(regression_run, tmp_path):
    """test_predictions.csv of a CSV run without data.id_column: ``id``
    (the molecule's row in split.csv) and the SMILES as in the CSV, then
    each target's label and the best model's prediction; joined with the
    user's file on the SMILES, the labels are the file's. scripts/evaluate.py
    --predictions writes the same file."""
    from graphormer_sepnorm.training.evaluate import evaluate_checkpoint
    run_dir, frame = regression_run
    written = pd.read_csv(run_dir / 'test_predictions.csv')
    assert list(written.columns) == ['id', 'smiles', 'y', 'y_prediction',
                                     'logp', 'logp_prediction']
    split = pd.read_csv(run_dir / 'split.csv')
    assert (split['split'][written['id']] == 'test').all()
    assert (split['smiles'][written['id']].to_numpy() ==
            written['smiles'].to_numpy()).all()
    joined = written.merge(frame, on='smiles', suffixes=('', '_file'),
                           validate='one_to_one')
    assert len(joined) == len(written) == 19
    for name in ('y', 'logp'):  # labels are stored as float32
        np.testing.assert_allclose(joined[name], joined[f'{name}_file'],
                                   rtol=1e-7)
    pred, y, _ = _predictions(run_dir, 'test')
    np.testing.assert_allclose(
        written[['y_prediction', 'logp_prediction']].to_numpy(), pred,
        rtol=1e-5, atol=1e-6)
    evaluate_checkpoint(run_dir, 'test',
                        predictions_file=tmp_path / 'again.csv')
    assert (tmp_path / 'again.csv').read_text() == (
        run_dir / 'test_predictions.csv').read_text()


def test_binary_task(molhiv_frame, tmp_path, capsys):
    """A binary task, by data.task alone (train.monitor follows it), with
    an id column that test_predictions.csv carries."""
    path = tmp_path / 'hiv.csv'
    frame = molhiv_frame.copy()
    frame.insert(0, 'compound', [f'HIV-{i:03d}' for i in range(len(frame))])
    frame.to_csv(path, index=False)
    status, err = _train(capsys, *_args(
        path, tmp_path, 'hiv', 'data.target_columns=HIV_active',
        'data.task=binary', 'data.split=random', 'data.id_column=compound'))
    assert status == 0, err
    results = json.loads((tmp_path / 'hiv' / 'results.json').read_text())
    assert results['metric'] == 'rocauc' and results['higher_is_better']
    pred, y, card = _predictions(tmp_path / 'hiv', 'test')
    assert card.task == 'binary' and card.target_names == ['HIV_active']
    assert (card.target_mean, card.target_std) == (0.0, 1.0)
    test = results['test_metrics_at_best_val']
    assert test['rocauc'] == pytest.approx(roc_auc_score(y, pred), rel=1e-5)
    assert test['prauc'] == pytest.approx(
        average_precision_score(y, pred), rel=1e-5)
    # test_predictions.csv: the id column, the SMILES, the label and the
    # probability; joined with the file on the id, SMILES and labels agree
    written = pd.read_csv(tmp_path / 'hiv' / 'test_predictions.csv')
    assert list(written.columns) == ['compound', 'smiles', 'target',
                                     'prediction']
    joined = written.merge(frame, on='compound', validate='one_to_one')
    assert len(joined) == len(written) == len(y) == 20
    assert (joined['smiles_x'] == joined['smiles_y']).all()
    assert (joined['target'] == joined['HIV_active']).all()
    np.testing.assert_allclose(written['prediction'],
                               1 / (1 + np.exp(-pred[:, 0])), rtol=1e-5)


def _with_folds(frame):
    """A copy of :obj:`frame` with a split column ``fold``: every 5th row
    valid, the next test, the others train (40/40/120 of 200 rows)."""
    frame = frame.copy()
    position = np.arange(len(frame)) % 5
    frame['fold'] = np.where(position == 0, 'valid',
                             np.where(position == 1, 'test', 'train'))
    return frame


def _train_binary_on_folds(capsys, frame, tmp_path, name, targets):
    """Writes :obj:`frame` to ``<name>.csv`` and trains a binary model of
    :obj:`targets` on it, split by its ``fold`` column, into run ``name``."""
    path = tmp_path / f'{name}.csv'
    frame.to_csv(path, index=False)
    return _train(capsys, *_args(
        path, tmp_path, name, f'data.target_columns={targets}',
        'data.task=binary', 'data.split=column',
        'data.split_column=fold'))


def test_a_task_with_one_class_in_validation_is_skipped(molhiv_frame,
                                                        tmp_path, capsys):
    # Two binary tasks; in the validation rows the second one is all 0
    frame = _with_folds(molhiv_frame)
    frame['other'] = frame['HIV_active'][::-1].to_numpy()
    frame.loc[frame['fold'] == 'valid', 'other'] = 0
    with pytest.warns(RuntimeWarning, match=r"ROC-AUC and PR-AUC are "
                      r"undefined for target 'other' in the valid split: "
                      r"all 40 labels are 0 \(one class only\)"):
        status, err = _train_binary_on_folds(capsys, frame, tmp_path, 'two',
                                             '[HIV_active,other]')
    assert status == 0, err
    history = pd.read_csv(tmp_path / 'two' / 'metrics.csv')
    assert history['val_rocauc_other'].isna().all()
    assert (history['val_rocauc'] == history['val_rocauc_HIV_active']).all()
    results = json.loads((tmp_path / 'two' / 'results.json').read_text())
    assert results['test_metrics_at_best_val']['rocauc_other'] is not None


def test_no_model_is_selected_when_validation_has_one_class(molhiv_frame,
                                                            tmp_path, capsys):
    """One binary target whose validation labels are all 0: ROC-AUC selects
    no epoch, so model.safetensors holds the final weights (Lightning's
    ModelCheckpoint, given NaN at every validation, keeps the first
    epoch's), and a warning says so."""
    frame = _with_folds(molhiv_frame)
    valid_actives = (frame['fold'] == 'valid') & (frame['HIV_active'] == 1)
    frame.loc[valid_actives, 'fold'] = 'train'
    with pytest.warns(RuntimeWarning, match=r"val_rocauc is undefined at "
                      r"every validation .*; model.safetensors holds the "
                      r"final weights \(epoch 2\), not a model selected on "
                      r"the validation split"):
        status, err = _train_binary_on_folds(capsys, frame, tmp_path, 'one',
                                             'HIV_active')
    assert status == 0, err
    run_dir = tmp_path / 'one'
    results = json.loads((run_dir / 'results.json').read_text())
    assert results['best_val_metric'] is None
    assert results['best_checkpoint'] is None
    assert results['test_metric_at_best_val'] is None
    final = torch.load(run_dir / 'checkpoints' / 'last.ckpt',
                       weights_only=True)['state_dict']
    saved = load_file(str(run_dir / 'model.safetensors'))
    assert saved and all(torch.equal(tensor, final[f'model.{name}'])
                         for name, tensor in saved.items())


def _bad_csv(tmp_path, text, name='bad.csv'):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize('case', [
    'misspelled column', 'non-numeric', 'empty column', 'not binary',
    'fewer than a batch', 'empty split', 'no task', 'monitor',
    'column named twice'
])
def test_bad_input_one_line_and_status_2(case, zinc_property_frame,
                                         tmp_path, capsys):
    good = tmp_path / 'good.csv'
    zinc_property_frame.to_csv(good, index=False)
    lines = good.read_text().splitlines()
    extra = ['data.target_columns=[y,logp]']
    if case == 'misspelled column':
        path, extra = good, ['data.target_columns=[y,logP]']
        expected = (r"has no column 'logP' \(named by data.target_columns\);"
                    r" columns present: 'smiles', 'y', 'logp'. Did you mean "
                    r"'logp'\?")
    elif case == 'non-numeric':
        lines[10] = lines[10].rsplit(',', 1)[0] + ',n.d.'
        path = _bad_csv(tmp_path, '\n'.join(lines))
        expected = r"bad.csv line 11, column 'logp': 'n.d.' is not a number"
    elif case == 'empty column':
        path = _bad_csv(tmp_path, '\n'.join(
            [lines[0] + ',assay'] + [line + ',' for line in lines[1:]]))
        extra = ['data.target_columns=[y,assay]']
        expected = r"target column 'assay' has no value in any of its 200 rows"
    elif case == 'not binary':
        path, extra = good, ['data.target_columns=y', 'data.task=binary']
        expected = (r"good.csv line 3, column 'y': '2.465756416320801' is "
                    r"not 0 or 1; data.task=binary needs 0/1 labels")
    elif case == 'fewer than a batch':
        path, extra = good, extra + ['data.batch_size=160']
        expected = (r"The training split has 152 molecules, fewer than one "
                    r"batch \(data.batch_size=160\)")
    elif case == 'empty split':
        path, extra = good, extra + ['data.split_sizes=[0.998,0.001,0.001]']
        expected = r"the valid split is empty \(190 usable molecules"
    elif case == 'no task':
        path, extra = good, extra + ['data.task=null']
        expected = r"data.name=csv needs 'data.task'; regression or binary"
    elif case == 'column named twice':
        # pandas would read the second 'y' as 'y.1' and train on the first
        path = _bad_csv(tmp_path, '\n'.join(
            [lines[0] + ',y'] + [line + ',0' for line in lines[1:]]))
        expected = (r"bad.csv: the header names column 'y' twice \(columns 2 "
                    r"and 4\); rename or remove one")
    else:
        path, extra = good, extra + ['train.monitor=rocauc']
        expected = (r"'train.monitor' is 'rocauc', a metric the regression "
                    r"task does not report; choose one of mae, rmse, r2")
    status, err = _train(capsys, *_args(path, tmp_path, 'run', *extra))
    assert status == 2 and 'Traceback' not in err
    errors = [line for line in err.splitlines() if line.startswith('error')]
    assert len(errors) == 1 and re.search(expected, errors[0]), err
    # Nothing was trained
    assert not (tmp_path / 'run' / 'checkpoints').exists()


def test_predict_from_the_checkpoint_one_named_column_per_target(
        regression_run, tmp_path):
    """scripts/predict.py on the run directory writes the training CSV's
    target columns, in its units: the model's output mapped back with the
    mean and standard deviation of the training rows, computed here with
    pandas from split.csv. An input column named as a target keeps its
    values; that target's predictions go to <target>_pred."""
    import subprocess
    import sys

    from torch_geometric.data import Batch

    from graphormer_sepnorm.data.featurize import smiles_to_ogb_graph
    from graphormer_sepnorm.transforms import AddShortestPaths
    run_dir, frame = regression_run
    molecules = frame[['smiles']].head(12).copy()
    molecules['id'] = [f'm{i}' for i in range(12)]
    molecules.loc[3, 'smiles'] = 'not a molecule'
    molecules['y'] = 'measured'  # an input column named as a target
    molecules.to_csv(tmp_path / 'in.csv', index=False)
    result = subprocess.run(
        [sys.executable, str(REPO / 'scripts' / 'predict.py'),
         '--checkpoint', str(run_dir), '--input', str(tmp_path / 'in.csv'),
         '--output', str(tmp_path / 'out.csv'), '--num-workers', '0'],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert 'y, logp = regression value in the units' in result.stderr
    out = pd.read_csv(tmp_path / 'out.csv', keep_default_na=False)
    assert list(out.columns) == ['smiles', 'id', 'y', 'y_pred', 'logp',
                                 'error']
    assert out['id'].tolist() == molecules['id'].tolist()
    assert out['y'].tolist() == ['measured'] * 12
    assert out['y_pred'][3] == '' and \
        'could not be parsed' in out['error'][3]

    split = pd.read_csv(run_dir / 'split.csv')
    train = split[split['split'] == 'train'][['y', 'logp']]
    model, _ = load_model(run_dir / 'model.safetensors')
    keep = [i for i in range(12) if i != 3]
    batch = Batch.from_data_list([
        AddShortestPaths()(smiles_to_ogb_graph(molecules['smiles'][i]))
        for i in keep])
    with torch.no_grad():
        raw = model(batch).double().numpy()
    expected = raw * train.std().to_numpy() + train.mean().to_numpy()
    predicted = out.loc[keep, ['y_pred', 'logp']].astype(float).to_numpy()
    np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-6)
