"""The ZINC ensemble shipped in the package, trained from SMILES (OGB
features) on the CSV of ZINC-subset's splits: each member scores on that
CSV's validation split what its model card says, and predicting the SMILES
of the real ZINC-subset validation molecules gives that score again.

Validation split only: the test split is read only for final runs."""
import csv
from pathlib import Path

import pytest

import graphormer_sepnorm.bundled as bundled
from graphormer_sepnorm.bundled import (BundledModelNotInstalled,
                                        bundled_model_paths)
from graphormer_sepnorm.checkpoint import read_card
from graphormer_sepnorm.data.molecule_splits import write_splits_csv
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.training.evaluate import evaluate_checkpoint

from conftest import shared_path

PACKAGE_DIR = Path(bundled.__file__).resolve().parent


def _shipped_members() -> list[Path]:
    try:
        return bundled_model_paths('zinc', PACKAGE_DIR)
    except BundledModelNotInstalled:
        pytest.skip(f"no bundled ZINC model in {PACKAGE_DIR} "
                    f"(zinc_seed<seed>.safetensors)")


def _validation_rows(path: Path, output: Path) -> Path:
    """The split CSV with its validation rows and one train and one test
    row (a split may not be empty): the validation split of the whole file,
    without featurizing 11,000 molecules that are not scored."""
    with open(path, newline='') as f:
        rows = list(csv.DictReader(f))
    first = {split: next(r for r in rows if r['split'] == split)
             for split in ('train', 'test')}
    kept = [r for r in rows if r['split'] == 'valid' or r in first.values()]
    with open(output, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)
    return output


def test_smiles_reproduce_the_validation_mae_of_the_cards(tmp_path):
    members = _shipped_members()
    source = shared_path('ZINC-proxy')
    whole = write_splits_csv('zinc_subset', source, tmp_path / 'all.csv')
    split_csv = _validation_rows(whole, tmp_path / 'zinc_subset_smiles.csv')
    with open(source / 'smiles' / 'val.csv', newline='') as f:
        rows = list(csv.DictReader(f))
    smiles = [row['smiles'] for row in rows]
    targets = [float(row['y']) for row in rows]
    for member in members:
        card, _ = read_card(member)
        assert card.featurizer == 'ogb' and card.extra['dataset'] == 'csv'
        # Predicted under 'prediction', as the dataset-trained models were.
        assert card.target_names == []
        recorded = card.extra['evaluation']['val']
        graphs = evaluate_checkpoint(member, 'val', {
            'root': str(tmp_path / 'data'), 'path': str(split_csv)},
            full_split=True)
        assert graphs['num_graphs'] == recorded['num_graphs'] == len(rows)
        assert graphs['metric'] == recorded['metric'] == 'mae'
        assert graphs['value'] == pytest.approx(recorded['value'], abs=1e-5)
        predictions = Predictor.from_checkpoint(member).predict(
            smiles, num_workers=0)
        assert all(p.ok for p in predictions)
        mae = sum(abs(p.value - y) for p, y in
                  zip(predictions, targets)) / len(rows)
        # Trained from these SMILES: the same graphs, the same MAE.
        assert mae == pytest.approx(graphs['value'], abs=1e-4), member.name
