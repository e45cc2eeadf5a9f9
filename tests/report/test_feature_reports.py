"""Reports of a model trained with molecule features (rdkit2d and a CSV
feature column, one two-step train --csv run): training writes report.html
and predict --report its page, both shaded; the contributions add up to the
model's output on the graph with the features computed here by the card's
featurizer (which differs from the output with zero features); without the
column's values, a clear note instead of shading."""
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from graphormer_sepnorm.checkpoint import read_card
from graphormer_sepnorm.cli.predict import predict_main
from graphormer_sepnorm.data.molecule_features import MoleculeFeaturizer
from graphormer_sepnorm.data.molecule_graphs import collate, prepare_graph
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.predict.molecules import WithColumns
from graphormer_sepnorm.report.contributions import (FIXED_FEATURES,
                                                     atom_contributions)
from graphormer_sepnorm.report.drawing import drawing_html
from graphormer_sepnorm.report.prediction_report import (
    ReportMolecule, ReportOptions, write_prediction_report)
from graphormer_sepnorm.report.run_report import write_run_report

from script_helpers import train_csv_two_steps

#: The shading note of a model with molecule features, as the page escapes
#: it.
FIXED = FIXED_FEATURES.replace("'", '&#x27;')


@pytest.fixture(scope='module')
def run_dir(zinc_property_frame, tmp_path_factory):
    """Two steps of train --csv --molecule-features rdkit2d with
    data.feature_columns=[assay] (random values) on 171 ZINC molecules."""
    folder = tmp_path_factory.mktemp('feature_reports')
    frame = zinc_property_frame[['smiles', 'y']].dropna().reset_index(
        drop=True)
    frame.insert(0, 'id', [f'mol{k}' for k in range(len(frame))])
    frame['assay'] = np.random.default_rng(0).normal(0, 3, len(frame)).round(4)
    frame.to_csv(folder / 'assays.csv', index=False)
    return train_csv_two_steps(folder / 'assays.csv', '--molecule-features',
                               'rdkit2d', 'data.feature_columns=[assay]')


@pytest.fixture(scope='module')
def predictor(run_dir):
    return Predictor.from_checkpoint(run_dir)


def _shaded(predictor, smiles, values):
    atoms, = atom_contributions(predictor, [WithColumns(smiles, values)],
                                steps=8)
    assert atoms is not None
    return drawing_html(smiles, atoms.values)


def test_training_writes_a_shaded_report(run_dir, predictor):
    text = (run_dir / 'report.html').read_text()  # Written by training.
    assert FIXED in text and 'No atom shading' not in text
    split = pd.read_csv(run_dir / 'split.csv', dtype=str)
    row = split[split['split'] == 'test'].iloc[0]
    assert predictor.feature_columns == ['assay']
    assert _shaded(predictor, row['smiles'], [row['assay']]) in text
    assert drawing_html(row['smiles']) not in text


def test_contributions_add_up_to_the_output_with_the_featurizers_features(
        run_dir, predictor):
    card, _ = read_card(run_dir / 'model.safetensors')
    featurizer = MoleculeFeaturizer.from_state_dict(
        card.extra['molecule_features'])
    model = predictor.model
    scale = float(np.ravel(card.target_std)[0])
    split = pd.read_csv(run_dir / 'split.csv', dtype=str)
    for _, row in split[split['split'] == 'test'].head(3).iterrows():
        features = featurizer(row['smiles'], [row['assay']])
        assert features.shape == (40,)  # 39 descriptors, then the column.
        graph = prepare_graph(row['smiles'], card.featurizer,
                              predictor.max_nodes)

        def output(features, baseline=False):
            batch = collate([(*graph, features)], model.layout_options())
            handle = model.node_encoder.atom_embedding.register_forward_hook(
                lambda module, inputs, out: out * (0 if baseline else 1))
            try:
                with torch.no_grad():
                    return float(model(batch)[0, 0]) * scale
            finally:
                handle.remove()

        gap = output(features) - output(features, baseline=True)
        result, = atom_contributions(
            predictor, [WithColumns(row['smiles'], [row['assay']])])
        assert result.target == pytest.approx(gap, rel=1e-4, abs=1e-5)
        assert result.values.sum() == pytest.approx(gap, rel=0.05, abs=1e-3)
        zeros = np.zeros_like(features)
        # Zero features would give another gap: the check can fail.
        assert abs(output(zeros) - output(zeros, baseline=True) - gap) > \
            0.05 * abs(gap) + 1e-3


def test_predict_report_is_shaded(run_dir, predictor, tmp_path):
    source = run_dir.parent.parent / 'assays.csv'
    report = tmp_path / 'page.html'
    assert predict_main([
        '--checkpoint', str(run_dir), '--input', str(source), '--output',
        str(tmp_path / 'out.csv'), '--report', str(report), '--report-top',
        '3', '--report-sample', '2', '--num-workers', '0', '--quiet']) == 0
    text = report.read_text()
    assert FIXED in text and 'drawn unshaded' not in text
    # The best prediction (column y; the input's y is written as y_pred).
    top = pd.read_csv(tmp_path / 'out.csv').nlargest(1, 'y').iloc[0]
    row = pd.read_csv(source, dtype=str).set_index('id').loc[top['id']]
    assert _shaded(predictor, row['smiles'], [row['assay']]) in text


def test_without_the_columns_values_a_clear_note(run_dir, predictor,
                                                 tmp_path):
    run = tmp_path / 'run'
    shutil.copytree(run_dir, run)
    (run / 'split.csv').unlink()
    text = write_run_report(run, worst=2, steps=4).read_text()
    assert ('No atom shading: the model reads the feature column(s) assay '
            'beside the SMILES') in text and 'has no split.csv' in text
    page = tmp_path / 'page.html'
    write_prediction_report(
        page, [ReportMolecule(1, 'CCO', [1.0])], ['y'], predictor,
        ReportOptions(steps=4))
    text = page.read_text()
    assert 'feature column(s) assay that the model reads are drawn ' \
           'unshaded' in text
    assert drawing_html('CCO') in text
