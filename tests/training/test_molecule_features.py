"""Molecule features in the graph token (data/molecule_features.py,
data/graph_features.py, nn/graph_features.py): one short
``train --csv --molecule-features rdkit2d,morgan`` run, whose card holds the
training split's statistics, whose training features equal those
prediction computes byte for byte, and whose predictor gives a molecule
with a failing descriptor an error row; the default model's state-dict keys
stay those of the checkpoints written before the option existed."""
import json

import numpy as np
import pandas as pd
import pytest
import torch
from rdkit import Chem
from rdkit.Chem import Descriptors, rdFingerprintGenerator

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.bundled import bundled_model_paths
from graphormer_sepnorm.checkpoint import read_card
from graphormer_sepnorm.cli.train import train_main
from graphormer_sepnorm.data.datasets import load_splits
from graphormer_sepnorm.data.graph_features import add_graph_features
from graphormer_sepnorm.data.molecule_features import MoleculeFeaturizer
from graphormer_sepnorm.data.molecule_graphs import collate, prepare_graph
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.pretraining import descriptors
from graphormer_sepnorm.training.evaluate import load_checkpoint_split
from training_helpers import TINY_MODEL


@pytest.fixture(scope='module')
def run_dir(zinc_property_frame, tmp_path_factory):
    """Three steps of train --csv --molecule-features rdkit2d,morgan on 171
    labelled ZINC molecules (Morgan radius 1, 64 entries, to keep it
    small)."""
    folder = tmp_path_factory.mktemp('features')
    csv = folder / 'small.csv'
    zinc_property_frame[['smiles', 'y']].dropna().to_csv(csv, index=False)
    status = train_main([
        '--csv', str(csv), '--targets', 'y',
        '--molecule-features', 'rdkit2d,morgan', 'data.morgan_radius=1',
        'data.morgan_size=64', f'data.root={folder / "data"}',
        f'output_dir={folder / "runs"}', 'train.max_steps=3',
        'data.batch_size=16', 'optim.warmup_steps=1',
        'train.progress_bar=false', 'train.num_threads=1', *TINY_MODEL])
    assert status == 0
    return folder / 'runs' / 'small_sep_seed0'


def test_card_holds_the_training_split_statistics(run_dir):
    card, _ = read_card(run_dir / 'model.safetensors')
    state = card.extra['molecule_features']
    assert card.model_config['graph_feature_channels'] == 39 + 64
    assert state['featurizers'] == ['rdkit2d', 'morgan']
    assert state['scaled_channels'] == list(range(39))
    assert state['rejected'] == {'train': 0, 'val': 0, 'test': 0}
    # Independent truth: RDKit's descriptors of the training rows of the
    # run's split.csv, averaged with pandas.
    split = pd.read_csv(run_dir / 'split.csv')
    train = split[split['split'] == 'train']['smiles']
    functions = dict(Descriptors.descList)
    values = pd.DataFrame(
        [[functions[name](Chem.MolFromSmiles(s))
          for name in descriptors.DESCRIPTOR_NAMES] for s in train])
    np.testing.assert_allclose(state['scaler']['mean'], values.mean(),
                               rtol=1e-9, atol=1e-12)
    std = values.std(ddof=0).replace(0.0, 1.0)
    np.testing.assert_allclose(state['scaler']['std'], std, rtol=1e-9)
    results = json.loads((run_dir / 'results.json').read_text())
    assert results['molecule_features']['channels'] == 103


def test_training_and_prediction_features_are_identical(run_dir):
    """The graph_features of the evaluated test split (the card's
    featurizer on the CSV's molecules) equal, byte for byte, those the
    predictor computes for the same SMILES."""
    _, _, _, test, _ = load_checkpoint_split(run_dir, 'test')
    predictor = Predictor.from_checkpoint(run_dir)
    rows = test.table.loc[test.lines[list(test.indices())]]
    smiles = rows['smiles'].tolist()
    chunk = predictor.featurize_chunk(smiles)
    assert chunk.errors == [None] * len(smiles)
    predicted = np.stack([graph[5] for graph in chunk.graphs])
    trained = np.concatenate([test[k].graph_features.numpy()
                              for k in range(len(test))])
    assert predicted.dtype == trained.dtype == np.float32
    assert predicted.tobytes() == trained.tobytes()
    # The Morgan block is RDKit's count fingerprint, unscaled.
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=1, fpSize=64)
    assert np.array_equal(predicted[0, 39:], generator.
                          GetCountFingerprintAsNumPy(
                              Chem.MolFromSmiles(smiles[0])))


def test_a_failing_descriptor_gets_its_own_error_row(run_dir, monkeypatch):
    tpsa = descriptors._FUNCTIONS['TPSA']

    def failing(mol):
        if mol.GetNumAtoms() == 3:  # ethanol only
            raise ValueError('no TPSA here')
        return tpsa(mol)

    monkeypatch.setitem(descriptors._FUNCTIONS, 'TPSA', failing)
    predictor = Predictor.from_checkpoint(run_dir)
    rows = predictor.predict(['c1ccccc1O', 'CCO', 'CC(=O)Oc1ccccc1C(=O)O'])
    assert rows[1].value is None and 'TPSA' in rows[1].error
    assert 'cannot be computed' in rows[1].error
    assert rows[0].error is None and rows[2].error is None
    # The others are those of a call without the failing molecule.
    alone = predictor.predict(['c1ccccc1O', 'CC(=O)Oc1ccccc1C(=O)O'])
    assert [rows[0].value, rows[2].value] == [r.value for r in alone]


def test_the_default_model_keeps_its_state_dict_keys():
    """A default model (graph_feature_channels=0) has exactly the keys of
    the bundled checkpoints, written before the option existed."""
    from safetensors import safe_open
    path = bundled_model_paths('zinc')[0]
    card, _ = read_card(path)
    config = {k: v for k, v in card.model_config.items()
              if k != 'graph_feature_channels'}
    model = GraphormerSepNorm.from_config(config)
    assert model.config['graph_feature_channels'] == 0
    with safe_open(str(path), 'pt') as f:
        saved = set(f.keys())
    assert set(model.state_dict()) == saved


def test_model_refuses_a_batch_without_or_with_wrong_features():
    model = GraphormerSepNorm(num_layers=1, hidden_channels=16,
                              ffn_channels=16, num_heads=2,
                              graph_feature_channels=3).eval()
    graphs = [prepare_graph(s, 'zinc', 64) for s in ('CCO', 'c1ccccc1')]
    batch = collate(graphs, model.layout_options())
    with pytest.raises(ValueError, match="has no 'graph_features'"):
        model(batch)
    batch.graph_features = torch.zeros(2, 4)
    with pytest.raises(ValueError, match=r'expects \[2 graphs, 3\]'):
        model(batch)
    # The projection adds to the graph token alone: features change the
    # output, and one graph's features do not change another's.
    features = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    batch.graph_features = features
    out = model(batch)
    batch.graph_features = torch.tensor([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])
    changed = model(batch)
    assert torch.equal(out[0], changed[0]) and not torch.equal(out[1],
                                                               changed[1])


def test_zinc_subset_graphs_get_the_features_of_their_smiles(zinc_root):
    """The built-in ZINC-subset: graph k of a split gets the features of
    row k of ZINC-proxy/smiles/<split>.csv."""
    from conftest import shared_path
    root, source = zinc_root
    data = {'name': 'zinc_subset', 'root': str(root),
            'raw_source': str(source), 'molecule_features': ['rdkit2d']}
    splits = load_splits('zinc_subset', root, raw_source=source,
                         limit_train=50, limit_val=20, limit_test=20)
    splits, featurizer, rejected = add_graph_features(splits, data)
    assert rejected == {'train': 0, 'val': 0, 'test': 0}
    smiles = pd.read_csv(shared_path('ZINC-proxy', 'smiles',
                                     'val.csv'))['smiles']
    fresh = MoleculeFeaturizer.from_state_dict(featurizer.state_dict())
    for k in (0, 7, 19):
        assert np.array_equal(splits.val[k].graph_features.numpy()[0],
                              fresh(smiles[k]))


def test_molhiv_graphs_get_the_features_of_their_smiles(molhiv_root):
    """The built-in MolHIV: graph k of a split gets the features of the
    SMILES in mapping/mol.csv.gz at row k of the split's scaffold index
    (read here with pandas, not through the package). A molecule RDKit
    rejects (today's RDKit refuses some hypervalent Al and B of MolHIV, as
    chemprop's runs recorded) is left out, and only such molecules."""
    data = {'name': 'molhiv', 'root': str(molhiv_root), 'raw_source': None,
            'molecule_features': ['rdkit2d']}
    splits = load_splits('molhiv', molhiv_root)
    splits, featurizer, rejected = add_graph_features(splits, data)
    folder = molhiv_root / 'ogbg_molhiv'
    smiles = pd.read_csv(folder / 'mapping' / 'mol.csv.gz')['smiles']
    index = {name: pd.read_csv(folder / 'split' / 'scaffold' /
                               f'{file}.csv.gz', header=None)[0]
             for name, file in (('train', 'train'), ('val', 'valid'),
                                ('test', 'test'))}
    assert rejected == {
        name: sum(Chem.MolFromSmiles(smiles[i]) is None for i in rows)
        for name, rows in index.items()}
    assert rejected['test'] == 1  # the subset holds one of the two
    valid = index['val']
    assert len(splits.val) == len(valid)
    fresh = MoleculeFeaturizer.from_state_dict(featurizer.state_dict())
    for k in (0, 13, len(splits.val) - 1):
        assert np.array_equal(splits.val[k].graph_features.numpy()[0],
                              fresh(smiles[valid[k]]))
