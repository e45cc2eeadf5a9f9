"""model.forest_trees end to end (training/forest_blend.py): one short
``train --csv --molecule-features morgan --forest-trees 10`` run on real
MolHIV molecules. Its forest is scikit-learn's forest refitted here on
RDKit's fingerprints of the run's own training rows; its test predictions
are the blend, at the weight that validation picks among the weights
tried; the predictor gives the same values from SMILES; the checkpoint
keeps the thresholds in float64; init_from leaves the forest behind; a run
without molecule features is refused."""
import json

import numpy as np
import pandas as pd
import pytest
import torch
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator
from safetensors import safe_open
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.cli.train import train_main
from graphormer_sepnorm.forest import BLEND_WEIGHTS, model_forest
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.training.evaluate import (load_checkpoint_split,
                                                  predict_split)
from graphormer_sepnorm.training.init_from import load_encoder
from training_helpers import TINY_MODEL

TREES = 10


@pytest.fixture(scope='module')
def run_dir(molhiv_frame, tmp_path_factory):
    """Two epochs of train --csv on 200 real MolHIV molecules with the
    Morgan count fingerprint (radius 1, 64 entries) and a forest."""
    folder = tmp_path_factory.mktemp('forest')
    csv = folder / 'hiv.csv'
    molhiv_frame.to_csv(csv, index=False)
    status = train_main([
        '--csv', str(csv), '--targets', 'HIV_active',
        '--molecule-features', 'morgan', '--forest-trees', str(TREES),
        'data.task=binary',
        'data.morgan_radius=1',
        'data.morgan_size=64', f'data.root={folder / "data"}',
        f'output_dir={folder / "runs"}', 'train.max_epochs=2',
        'data.batch_size=32', 'optim.warmup_steps=1', 'seed=5',
        'train.progress_bar=false',
        'train.num_threads=1', *TINY_MODEL])
    assert status == 0
    return folder / 'runs' / 'hiv_sep_seed5'


def _fingerprints(smiles):
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=1, fpSize=64)
    return np.stack([generator.GetCountFingerprintAsNumPy(
        Chem.MolFromSmiles(s)) for s in smiles]).astype(np.float32)


def test_the_forest_is_scikit_learns_and_its_blend_is_scored(run_dir):
    results = json.loads((run_dir / 'results.json').read_text())
    record = results['forest']
    split = pd.read_csv(run_dir / 'split.csv')
    rows = {name: split[split['split'] == name] for name in
            ('train', 'valid', 'test')}
    # Independent truth: RDKit's fingerprints of the run's rows, and
    # scikit-learn's forest with the run's seed.
    reference = RandomForestClassifier(TREES, max_features='sqrt',
                                       random_state=5).fit(
        _fingerprints(rows['train']['smiles']),
        rows['train']['HIV_active'])

    def forest_of(name):
        return reference.predict_proba(
            _fingerprints(rows[name]['smiles']))[:, 1]

    model, card = load_model(run_dir / 'model.safetensors')
    forest = model_forest(model)
    assert forest is not None and card.extra['forest'] == record
    assert float(forest.weight) == record['weight'] in BLEND_WEIGHTS
    # The network alone, on validation: the blend's weight is the best.
    delattr(model, 'forest')
    _, _, _, val, _ = load_checkpoint_split(run_dir, 'val')
    _, logits, labels = predict_split(model, val, 'binary', 0.0, 1.0)
    network = torch.sigmoid(logits).numpy().ravel()
    labels = labels.numpy().ravel()
    scores = {w: roc_auc_score(labels, w * network + (1 - w) *
                               forest_of('valid')) for w in BLEND_WEIGHTS}
    for w, score in scores.items():
        # torchmetrics computes the AUC in float32
        assert record['val_metric_by_weight'][f'{w:.2f}'] == \
            pytest.approx(score, abs=1e-6)
    assert record['val_metric_blend'] == pytest.approx(
        max(scores.values()), abs=1e-6)
    assert results['best_val_metric'] == record['val_metric_blend']
    assert results['network_best_val_metric'] == record['val_metric_network']
    # Test: the file holds the blend, and results.json scores that file.
    _, _, _, test, _ = load_checkpoint_split(run_dir, 'test')
    _, logits, labels = predict_split(model, test, 'binary', 0.0, 1.0)
    w = record['weight']
    blend = (w * torch.sigmoid(logits).numpy().ravel() +
             (1 - w) * forest_of('test'))
    written = pd.read_csv(run_dir / 'test_predictions.csv')
    np.testing.assert_allclose(written['prediction'], blend, atol=1e-9)
    assert results['test_metric_at_best_val'] == pytest.approx(
        roc_auc_score(labels.numpy().ravel(), written['prediction']),
        abs=1e-6)
    assert record['cpu_time_s'] > 0 and record['trees_per_target'] == TREES


def test_prediction_from_smiles_gives_the_blend(run_dir):
    written = pd.read_csv(run_dir / 'test_predictions.csv')
    predictor = Predictor.from_checkpoint(run_dir)
    values = [p.value for p in predictor.predict(written['smiles'].tolist())]
    np.testing.assert_allclose(values, written['prediction'], atol=1e-6)


def test_the_checkpoint_keeps_the_trees_exactly(run_dir, tmp_path):
    from graphormer_sepnorm.checkpoint import save_model
    with safe_open(str(run_dir / 'model.safetensors'), 'pt') as f:
        assert f.get_tensor('forest.threshold').dtype == torch.float64
    model, card = load_model(run_dir / 'model.safetensors')
    half = save_model(tmp_path / 'half.safetensors', model, card,
                      dtype=torch.float16)
    again, _ = load_model(half)
    assert torch.equal(model_forest(again).threshold,
                       model_forest(model).threshold)
    assert next(again.parameters()).dtype == torch.float32


def test_init_from_leaves_the_forest_behind(run_dir):
    backbone, _ = load_model(run_dir / 'model.safetensors')
    model, _ = load_model(run_dir / 'model.safetensors')
    delattr(model, 'forest')
    load_encoder(model, backbone)
    assert model_forest(model) is None


def test_a_forest_without_molecule_features_is_refused():
    with pytest.raises(ConfigError, match='no molecule features for the '
                                          'forest'):
        load_config(None, ['data.name=zinc_subset', 'train.max_epochs=1',
                           'model.forest_trees=5'], check_paths=False)


def test_reports_say_what_the_forest_did(run_dir):
    from graphormer_sepnorm.report.contributions import describe_method
    from graphormer_sepnorm.report.run_report import write_run_report
    record = json.loads((run_dir / 'results.json').read_text())['forest']
    write_run_report(run_dir)
    page = (run_dir / 'report.html').read_text()
    assert (f"{TREES} trees per target, the network&#x27;s share "
            f"{record['weight']:.2f}") in page
    text = describe_method(Predictor.from_checkpoint(run_dir), 16)
    assert "the shading explains the network's output only" in text
