"""Prediction for a model trained with CSV feature columns
(data.feature_columns; graphormer_sepnorm/predict/feature_columns.py): the
columns are read by name from the input CSV beside the SMILES and
standardized with the card's statistics, so that the predictions from the
training CSV equal the model's outputs on the graphs the training data code
builds (load_checkpoint_split + predict_split, PyG Data batches); a missing
column is one error before any work, an empty or non-numeric cell an error
row, SMILES alone a clear error naming the columns."""
import numpy as np
import pandas as pd
import pytest
import torch

from graphormer_sepnorm.checkpoint import load_model, save_model
from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import Predictor, PredictionError
from graphormer_sepnorm.training.evaluate import (load_checkpoint_split,
                                                  predict_split)

from predict_helpers import one_thread, read_csv, zinc, zinc_ckpt  # noqa
from script_helpers import train_csv_two_steps

#: Rows of the training CSV whose feature cell cannot be used: training
#: leaves them out, prediction gives them an error row.
EMPTY_ROW, TEXT_ROW = 4, 9
#: The output column of the predictions of target y beside the input's y.
PREDICTED = 'y_pred'


@pytest.fixture(scope='module')
def training_csv(zinc_property_frame, tmp_path_factory):
    """171 labelled ZINC molecules with two feature columns, in the file in
    the other order than the model reads them: 'mw' (RDKit's molecular
    weight, empty on row 4) and 'assay' (random, 'n/a' on row 9)."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors
    frame = zinc_property_frame[['smiles', 'y']].dropna().reset_index(
        drop=True)
    frame.insert(0, 'id', [f'mol{k}' for k in range(len(frame))])
    frame['mw'] = [f'{Descriptors.MolWt(Chem.MolFromSmiles(s)):.3f}'
                   for s in frame['smiles']]
    frame['assay'] = [f'{v:.4f}' for v in
                      np.random.default_rng(0).normal(0, 3, len(frame))]
    frame.loc[EMPTY_ROW, 'mw'] = ''
    frame.loc[TEXT_ROW, 'assay'] = 'n/a'
    path = tmp_path_factory.mktemp('columns') / 'assays.csv'
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope='module')
def run_dir(training_csv):
    """Two steps of train --csv with data.feature_columns=[assay,mw] and a
    one-layer model."""
    return train_csv_two_steps(training_csv,
                               'data.feature_columns=[assay,mw]')


@pytest.fixture(scope='module')
def predictor(run_dir):
    return Predictor.from_checkpoint(run_dir)


@pytest.fixture(scope='module')
def predicted(predictor, training_csv):
    """predict_file on the training CSV: its rows by id."""
    out = training_csv.parent / 'predicted.csv'
    summary = predictor.predict_file(training_csv, out, num_workers=0,
                                     progress=False, chunk_size=64)
    assert (summary.predicted, summary.failed) == (169, 2)
    assert summary.renamed == {'y': PREDICTED}  # The CSV has its labels.
    return {row['id']: row for row in read_csv(out)}


def trained_outputs(run_dir):
    """The model's outputs on the graphs of every split as training builds
    them (the card's fitted featurizer on the CSV's rows), by id."""
    out = {}
    for split in ('train', 'val', 'test'):
        model, card, _, dataset, _ = load_checkpoint_split(run_dir, split)
        ids, values, _ = predict_split(model, dataset, card.task,
                                       card.target_mean, card.target_std,
                                       batch_size=32)
        rows = dataset.table.loc[dataset.lines[ids]]
        out.update(zip(rows['id'], values[:, 0].tolist()))
    return out


def test_file_predictions_are_the_models_outputs_on_the_training_graphs(
        run_dir, predicted, predictor):
    assert predictor.feature_columns == ['assay', 'mw']
    trained = trained_outputs(run_dir)
    assert len(trained) == 169  # Every row but the two bad cells.
    assert set(predicted) - set(trained) == {f'mol{EMPTY_ROW}',
                                             f'mol{TEXT_ROW}'}
    ids = sorted(trained)
    got = np.array([float(predicted[i][PREDICTED]) for i in ids])
    want = np.array([trained[i] for i in ids])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert all(predicted[i]['error'] == '' for i in ids)


def test_the_columns_matter_and_are_read_by_name(predictor, training_csv,
                                                 predicted):
    """The Python API with a mapping gives the file's values (to float
    tolerance: other chunks, so other batches), and rows in the model's
    order or a DataFrame the same bit for bit; the columns swapped give
    others (the features reach the model)."""
    frame = pd.read_csv(training_csv, dtype=str, keep_default_na=False)
    good = frame.drop([EMPTY_ROW, TEXT_ROW])
    smiles = good['smiles'].tolist()
    by_name = [p.value for p in predictor.predict(smiles, num_workers=0,
                                                  features={
        'mw': good['mw'].tolist(), 'assay': good['assay'].tolist()})]
    expected = [float(predicted[i][PREDICTED]) for i in good['id']]
    np.testing.assert_allclose(by_name, expected, rtol=1e-6, atol=1e-7)
    rows = good[['assay', 'mw']].astype(float).values
    assert [p.value for p in predictor.predict(
        smiles, num_workers=0, features=rows)] == by_name
    assert [p.value for p in predictor.predict(
        smiles, num_workers=0, features=good)] == by_name
    swapped = predictor.predict(smiles, num_workers=0,
                                features=rows[:, ::-1].tolist())
    assert not np.allclose([p.value for p in swapped], by_name,
                           rtol=1e-4, atol=1e-5)


def test_an_empty_or_text_cell_is_an_error_row(predicted):
    empty, text = predicted[f'mol{EMPTY_ROW}'], predicted[f'mol{TEXT_ROW}']
    assert empty[PREDICTED] == text[PREDICTED] == ''
    assert "feature column 'mw' holds '', not a finite number" in \
        empty['error']
    assert "feature column 'assay' holds 'n/a'" in text['error']


def test_a_missing_column_is_one_error_before_any_work(
        predictor, training_csv, tmp_path, capsys):
    frame = pd.read_csv(training_csv, dtype=str, keep_default_na=False)
    src = tmp_path / 'no_mw.csv'
    frame.drop(columns=['mw']).to_csv(src, index=False)
    out = tmp_path / 'out.csv'
    with pytest.raises(PredictionError, match=r"no column\(s\) 'mw' .*"
                       r"reads the column\(s\) assay, mw beside the SMILES"
                       r".*add them to the file"):
        predictor.predict_file(src, out, num_workers=0, progress=False)
    assert not out.exists()
    assert cli.predict_main(['--checkpoint', str(predictor.source),
                             '--input', str(src), '--output', str(out),
                             '--quiet']) == 2
    assert "no column(s) 'mw'" in capsys.readouterr().err
    assert not out.exists()


def test_a_column_named_twice_is_refused(predictor, training_csv,
                                         tmp_path):
    # Two 'mw' columns with other values: which one the training CSV's
    # column was is not known, so neither is read.
    frame = pd.read_csv(training_csv, dtype=str, keep_default_na=False)
    lines = frame.to_csv(index=False).splitlines()
    src = tmp_path / 'mw_twice.csv'
    src.write_text('\n'.join([lines[0] + ',mw'] +
                             [line + ',1.0' for line in lines[1:]]) + '\n')
    out = tmp_path / 'out.csv'
    with pytest.raises(PredictionError, match=r"more than one column named "
                       r"'mw'.*keep one column of each name"):
        predictor.predict_file(src, out, num_workers=0, progress=False)
    assert not out.exists()


def test_smiles_alone_is_a_clear_error(predictor, tmp_path, capsys):
    smi = tmp_path / 'library.smi'
    smi.write_text('CCO ethanol\nc1ccccc1O phenol\n')
    with pytest.raises(PredictionError, match=r"SMI file, which gives SMILES "
                       r"only.*assay, mw.*CSV or TSV file"):
        predictor.predict_file(smi, tmp_path / 'out.csv', progress=False)
    with pytest.raises(PredictionError, match=r"SMILES alone cannot be "
                       r"predicted.*assay, mw.*features="):
        predictor.predict(['CCO'])
    with pytest.raises(PredictionError, match='SMILES alone'):
        predictor.embed(['CCO'])
    assert cli.predict_main(['--checkpoint', str(predictor.source),
                             '--smiles', 'CCO']) == 2
    assert 'assay, mw' in capsys.readouterr().err


@pytest.mark.parametrize('features,message', [
    ({'assay': [1.0, 2.0]}, r"no column\(s\) 'mw'"),
    ([[1.0, 200.0]], 'values for 1 molecules but 2 SMILES'),
    ({'assay': [1.0, 2.0], 'mw': [1.0]}, 'different lengths'),
    ([[1.0, 200.0], [2.0]], r'Row 1 of features= is \[2.0\]'),
    ('1.0,200.0', 'not a string'),
])
def test_bad_features_arguments(predictor, features, message):
    with pytest.raises(PredictionError, match=message):
        predictor.predict(['CCO', 'CCN'], num_workers=0, features=features)


def test_features_for_a_model_without_columns_are_refused(zinc):
    assert zinc.feature_columns == []
    with pytest.raises(PredictionError, match='reads none'):
        zinc.predict(['CCO'], features={'a': [1.0]})


def test_an_ensemble_reads_the_columns_of_its_members(run_dir, predictor,
                                                      training_csv,
                                                      tmp_path):
    """A second member (the model's parameters shifted) with the same
    feature columns: the ensemble predicts from the CSV, in two worker
    processes (the column values travel with the SMILES), the mean of its
    members."""
    model, card = load_model(run_dir / 'model.safetensors')
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.01)
    other = save_model(tmp_path / 'other.safetensors', model, card)
    ensemble = Predictor.from_checkpoints([run_dir, other])
    assert ensemble.feature_columns == ['assay', 'mw']
    out = tmp_path / 'ensemble.csv'
    ensemble.predict_file(training_csv, out, num_workers=2, chunk_size=64,
                          progress=False)
    rows = read_csv(out)
    member = Predictor.from_checkpoint(other)
    frame = pd.read_csv(training_csv, dtype=str, keep_default_na=False)
    features = frame[['assay', 'mw']]
    first, second = (p.predict(frame['smiles'], num_workers=0,
                               chunk_size=64, features=features)
                     for p in (predictor, member))
    for row, a, b in zip(rows, first, second):
        if a.ok:
            assert float(row[PREDICTED]) == pytest.approx(
                (a.value + b.value) / 2, rel=1e-12)
        else:
            assert row['error'] == a.error
