"""The example training CSV: real ZINC SMILES, penalized logP equal to the
real ZINC labels, and Crippen logP."""
import pandas as pd
import pytest
from rdkit import Chem
from rdkit.Chem import Crippen

from conftest import shared_path
from benchmarks.chem import PROPERTY_COLUMNS, write_property_csv


def test_property_csv_of_real_zinc_molecules(tmp_path):
    # The real ZINC-subset test split: row k is jtvae_test[test.index[k]]
    real = pd.read_csv(shared_path('ZINC-proxy', 'smiles', 'test.csv'),
                       nrows=30)
    path = write_property_csv(real['smiles'], tmp_path / 'out' / 'p.csv',
                              progress=False)
    table = pd.read_csv(path)
    assert tuple(table.columns) == PROPERTY_COLUMNS
    assert table['smiles'].tolist() == real['smiles'].tolist()
    assert table['penalized_logp'].tolist() == pytest.approx(
        real['y'].tolist(), abs=1e-5)
    assert table['logp'].tolist() == pytest.approx(
        [Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in real['smiles']])
