"""The MolHIV model shipped in the package: from the SMILES of real MolHIV
validation molecules it predicts what it predicts on their dataset graphs
(OGB's features, which were computed with an older RDKit: a few molecules'
atom features differ, see ../shared/data/README.md).

Validation split only (of the small MolHIV copy): the test split is read
only for final runs."""
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import graphormer_sepnorm.bundled as bundled
from graphormer_sepnorm.bundled import (BundledModelNotInstalled,
                                        bundled_model_paths)
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.training.evaluate import (load_checkpoint_split,
                                                  predict_split)

PACKAGE_DIR = Path(bundled.__file__).resolve().parent


def test_smiles_give_the_probabilities_of_the_dataset_graphs(molhiv_root):
    try:
        members = bundled_model_paths('molhiv', PACKAGE_DIR)
    except BundledModelNotInstalled:
        pytest.skip(f"no bundled MolHIV model in {PACKAGE_DIR}")
    folder = molhiv_root / 'ogbg_molhiv'
    smiles = pd.read_csv(folder / 'mapping' / 'mol.csv.gz')['smiles']
    with gzip.open(folder / 'split' / 'scaffold' / 'valid.csv.gz', 'rt') as f:
        assert len([line for line in f if line.strip()]) == 100
    for member in members:
        model, card, info, dataset, _ = load_checkpoint_split(
            member, 'val', {'root': str(molhiv_root), 'raw_source': None})
        ids, logits, labels = predict_split(model, dataset, 'binary',
                                            card.target_mean,
                                            card.target_std)
        from_graphs = 1 / (1 + np.exp(-logits.view(-1).numpy()))
        predictions = Predictor.from_checkpoint(member).predict(
            [smiles[i] for i in ids], num_workers=0)
        parsed = [p.ok for p in predictions]
        from_smiles = np.array([p.value if p.ok else np.nan
                                for p in predictions])
        close = np.abs(from_smiles - from_graphs) < 1e-4
        assert sum(parsed) == len(ids)  # no rejected SMILES among these
        assert close.mean() >= 0.95, (member.name, np.flatnonzero(~close))
