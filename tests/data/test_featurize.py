"""Tests for :mod:`graphormer_sepnorm.data.featurize`."""
from __future__ import annotations

import csv
import gzip
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch
from rdkit import Chem, rdBase

from conftest import SHARED_DATA
from graphormer_sepnorm.data.featurize import (
    FEATURIZERS,
    ZINC_ATOM_TYPES,
    FeaturizationError,
    get_featurizer,
    smiles_to_ogb_graph,
    smiles_to_zinc_graph,
)
from graphormer_sepnorm.data.featurize.ogb import ogb_graph_arrays


def require(*relative: str) -> list[Path]:
    """Returns the shared data files, or skips the test if one is missing."""
    root = SHARED_DATA
    paths = [root / r for r in relative]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f'shared data not found: expected {missing} (set '
                    f'GRAPHORMER_SHARED_DATA to the folder holding ZINC/, '
                    f'zinc250k/ and ogbg_molhiv/)')
    return paths


# ZINC featurizer ############################################################


def test_zinc_vocabulary():
    assert len(ZINC_ATOM_TYPES) == 28
    assert ZINC_ATOM_TYPES[:5] == ('C', 'O', 'N', 'F', 'C H1')
    assert ZINC_ATOM_TYPES[-1] == 'P H1 +'
    assert len(set(ZINC_ATOM_TYPES)) == 28


def test_zinc_graph_format():
    data = smiles_to_zinc_graph('CC(=O)Oc1ccccc1C(=O)O')  # Aspirin.
    assert data.num_nodes == 13
    assert data.x.dtype == torch.long and data.x.shape == (13, 1)
    assert data.edge_index.dtype == torch.long
    assert data.edge_index.shape == (2, 26)
    assert data.edge_attr.dtype == torch.long and data.edge_attr.shape == (26,)
    # Sorted by (row, col), like PyG's ZINC:
    row, col = data.edge_index
    key = row * data.num_nodes + col
    assert torch.equal(key, key.sort().values)
    # Both directions with the same bond type:
    pairs = {(int(i), int(j)): int(b)
             for (i, j), b in zip(data.edge_index.t(), data.edge_attr)}
    assert all(pairs[(j, i)] == b for (i, j), b in pairs.items())
    # Kekulé form: 3 single + 3 double in the ring, 2 C=O, no aromatic type.
    assert set(data.edge_attr.tolist()) <= {1, 2, 3}
    assert int((data.edge_attr == 2).sum()) == 2 * (3 + 2)


def test_zinc_atom_types():
    names = lambda s: [  # noqa: E731
        ZINC_ATOM_TYPES[i] for i in smiles_to_zinc_graph(s).x.view(-1)
    ]
    assert names('c1cc[nH]c1') == ['C', 'C', 'C', 'N', 'C']  # [nH] -> N.
    assert names('C[NH+](C)C') == ['C', 'N H1 +', 'C', 'C']
    assert names('C[NH3+]') == ['C', 'N H3 +']
    assert names('C[C@@H](O)F') == ['C', 'C H1', 'O', 'F']
    assert names('CC(=O)[O-]') == ['C', 'C', 'O', 'O -']
    assert names('C[n+]1ccccc1') == ['C', 'N +', 'C', 'C', 'C', 'C', 'C']
    assert names('CC#N') == ['C', 'C', 'N']
    assert smiles_to_zinc_graph('CC#N').edge_attr.tolist() == [1, 1, 3, 3]


def test_zinc_disconnected_molecule():
    data = smiles_to_zinc_graph('CCO.CC')
    assert data.num_nodes == 5
    assert data.edge_index.size(1) == 6
    assert data.edge_attr.tolist() == [1] * 6


def test_zinc_single_atom():
    data = smiles_to_zinc_graph('C')
    assert data.x.tolist() == [[0]]
    assert data.edge_index.shape == (2, 0)
    assert data.edge_attr.shape == (0, )


def _nx_graph(x: np.ndarray, edge_index: np.ndarray,
              edge_attr: np.ndarray) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from((i, {'t': int(t)}) for i, t in enumerate(x))
    graph.add_edges_from((int(i), int(j), {'b': int(b)})
                         for (i, j), b in zip(edge_index.T, edge_attr))
    return graph


def _same_type(a: dict, b: dict) -> bool:
    return a['t'] == b['t']


def _same_bond(a: dict, b: dict) -> bool:
    return a['b'] == b['b']


def test_zinc_matches_real_graphs(record_property):
    """Featurizing the JT-VAE SMILES of the 2,000 real ZINC-subset val/test
    graphs must give graphs isomorphic to the real ones."""
    root = SHARED_DATA
    splits = [('val', 'valid'), ('test', 'test')]
    require(*[f'ZINC/subset_partial_pyg/{s}_arrays.npz' for s, _ in splits],
            *[f'ZINC/raw/{s}.index' for s, _ in splits],
            *[f'zinc250k/jtvae_{f}.txt' for _, f in splits])

    total = bond_ok = node_ok = 0
    bond_failures = []
    for split, name in splits:
        arrays = np.load(root / f'ZINC/subset_partial_pyg/{split}_arrays.npz')
        index_text = (root / f'ZINC/raw/{split}.index').read_text()
        index = [int(i) for i in index_text.strip().split(',')]
        lines = (root / f'zinc250k/jtvae_{name}.txt').read_text().splitlines()
        x, x_ptr = arrays['x'][:, 0], arrays['x_ptr']
        ei, ea, e_ptr = (arrays['edge_index'], arrays['edge_attr'],
                         arrays['edge_ptr'])
        for k, pos in enumerate(index):
            real = _nx_graph(x[x_ptr[k]:x_ptr[k + 1]],
                             ei[:, e_ptr[k]:e_ptr[k + 1]],
                             ea[e_ptr[k]:e_ptr[k + 1]])
            data = smiles_to_zinc_graph(lines[pos].strip())
            mine = _nx_graph(data.x.view(-1).numpy(),
                             data.edge_index.numpy(), data.edge_attr.numpy())
            total += 1
            node_ok += nx.is_isomorphic(real, mine, node_match=_same_type)
            if nx.is_isomorphic(real, mine, node_match=_same_type,
                                edge_match=_same_bond):
                bond_ok += 1
            else:
                bond_failures.append(f'{split}[{k}]')

    assert total == 2000
    bond_rate, node_rate = bond_ok / total, node_ok / total
    record_property('zinc_isomorphism_bond_labelled', bond_rate)
    record_property('zinc_isomorphism_node_only', node_rate)
    print(f'\nZINC real-graph isomorphism: bond-labelled {bond_ok}/{total} '
          f'({bond_rate:.2%}), node-only {node_ok}/{total} '
          f'({node_rate:.2%}); bond-labelled failures: {bond_failures}')
    assert node_ok == total
    assert bond_rate >= 0.995, bond_failures


# OGB featurizer #############################################################


@pytest.mark.parametrize('smiles', [
    'CCO',
    'CC(=O)Oc1ccccc1C(=O)O',
    'C[C@H](N)C(=O)O',
    'C/C=C/C#N',
    'c1ccc2[nH]ccc2c1',
    'CC(=O)[O-].[Na+]',
    'C',
])
@pytest.mark.parametrize('canonical', [True, False])
def test_ogb_equals_smiles2graph(smiles: str, canonical: bool):
    """smiles2graph of the canonical SMILES, or of the SMILES as written."""
    from ogb.utils import smiles2graph

    written = 'c1ccccc1' + smiles  # a spelling that is never canonical
    text = (Chem.MolToSmiles(Chem.MolFromSmiles(written))
            if canonical else written)
    assert text != written or not canonical
    expected = smiles2graph(text)
    data = smiles_to_ogb_graph(written, canonical=canonical)
    assert data.x.dtype == torch.long and data.x.size(1) == 9
    assert data.edge_index.dtype == torch.long
    assert data.edge_attr.dtype == torch.long and data.edge_attr.size(1) == 3
    assert data.num_nodes == expected['num_nodes']
    assert np.array_equal(data.x.numpy(), expected['node_feat'])
    assert np.array_equal(data.edge_index.numpy(), expected['edge_index'])
    assert np.array_equal(data.edge_attr.numpy(), expected['edge_feat'])


@pytest.mark.parametrize('canonical', [True, False])
def test_ogb_equals_smiles2graph_on_real_molecules(canonical: bool):
    """Array for array, on 600 real MolHIV molecules (charges, metals,
    stereo, salts) and 400 ZINC250k ones."""
    from ogb.utils import smiles2graph

    mol_csv, zinc_txt = require('ogbg_molhiv/mapping/mol.csv.gz',
                                'zinc250k/jtvae_test.txt')
    with gzip.open(mol_csv, 'rt') as f:
        molecules = [row['smiles'] for row in csv.DictReader(f)][:600]
    molecules += Path(zinc_txt).read_text().split()[:400]
    compared = 0
    for smiles in molecules:
        try:
            x, edge_index, edge_attr = ogb_graph_arrays(smiles,
                                                        canonical=canonical)
        except FeaturizationError:  # The few that modern RDKit rejects.
            continue
        text = (Chem.MolToSmiles(Chem.MolFromSmiles(smiles))
                if canonical else smiles)
        expected = smiles2graph(text)
        assert np.array_equal(x, expected['node_feat']), smiles
        assert np.array_equal(edge_index, expected['edge_index']), smiles
        assert np.array_equal(edge_attr, expected['edge_feat']), smiles
        assert x.dtype == edge_index.dtype == edge_attr.dtype == np.int64
        compared += 1
    assert compared >= 995


def test_ogb_salt_keeps_both_fragments():
    data = smiles_to_ogb_graph('CC(=O)[O-].[Na+]')
    assert data.num_nodes == 5
    assert data.edge_index.size(1) == 6


def test_ogb_matches_molhiv_counts():
    mol_csv, node_csv, edge_csv = require(
        'ogbg_molhiv/mapping/mol.csv.gz',
        'ogbg_molhiv/raw/num-node-list.csv.gz',
        'ogbg_molhiv/raw/num-edge-list.csv.gz')
    n = 200
    with gzip.open(mol_csv, 'rt') as f:
        rows = list(csv.DictReader(f))[:n]
    with gzip.open(node_csv, 'rt') as f:
        num_nodes = [int(line) for line in f.read().split()[:n]]
    with gzip.open(edge_csv, 'rt') as f:
        num_edges = [int(line) for line in f.read().split()[:n]]
    rejected = []
    for row, nodes, edges in zip(rows, num_nodes, num_edges):
        try:
            data = smiles_to_ogb_graph(row['smiles'])
        except FeaturizationError:
            # Modern RDKit (>= 2024.09) rejects a few metal complexes (e.g.,
            # hexavalent Al) that the RDKit used to build the files accepted:
            rejected.append(row['smiles'])
            continue
        assert data.num_nodes == nodes, row['smiles']
        # Both directions:
        assert data.edge_index.size(1) == 2 * edges, row['smiles']
    assert len(rejected) <= 2, rejected


# Errors #####################################################################


@pytest.mark.parametrize('featurizer', [smiles_to_zinc_graph,
                                        smiles_to_ogb_graph])
@pytest.mark.parametrize('smiles', ['', '   ', '\n\t'])
def test_empty_smiles(featurizer, smiles):
    with pytest.raises(FeaturizationError, match='empty'):
        featurizer(smiles)


@pytest.mark.parametrize('featurizer', [smiles_to_zinc_graph,
                                        smiles_to_ogb_graph])
@pytest.mark.parametrize('smiles', [None, 42, b'CCO', ['CCO']])
def test_non_string(featurizer, smiles):
    with pytest.raises(FeaturizationError, match='Expected a SMILES string'):
        featurizer(smiles)


@pytest.mark.parametrize('featurizer', [smiles_to_zinc_graph,
                                        smiles_to_ogb_graph])
@pytest.mark.parametrize('smiles,reason', [
    ('C1CC', 'could not be parsed'),
    ('CXC', 'not valid SMILES syntax'),
    ('C(C)(C)(C)(C)C', 'valence'),
])
def test_unparsable_smiles(featurizer, smiles, reason, capfd):
    before = rdBase.LogStatus()
    with pytest.raises(FeaturizationError, match=reason) as exc:
        featurizer(smiles)
    assert repr(smiles) in str(exc.value)
    # RDKit's own logging is silenced during the call and restored after:
    assert 'SMILES Parse Error' not in capfd.readouterr().err
    assert rdBase.LogStatus() == before


def test_atom_outside_zinc_vocabulary():
    with pytest.raises(FeaturizationError) as exc:
        smiles_to_zinc_graph('CC[Si](C)C')
    msg = str(exc.value)
    assert "'CC[Si](C)C'" in msg and "atom 2 is 'Si'" in msg
    assert 'outside the ZINC vocabulary of 28 atom types' in msg
    for smiles in ['CC(=O)[O-].[Na+]', 'CC[B-](F)(F)F', '[O-2]', 'C[SiH3]']:
        with pytest.raises(FeaturizationError, match='ZINC vocabulary'):
            smiles_to_zinc_graph(smiles)
    with pytest.raises(FeaturizationError, match="atom 0 is 'O -2'"):
        smiles_to_zinc_graph('[O-2]')
    # The same molecules are fine for the OGB featurizer:
    assert smiles_to_ogb_graph('CC[Si](C)C').num_nodes == 5


@pytest.mark.parametrize('featurizer', [smiles_to_zinc_graph,
                                        smiles_to_ogb_graph])
def test_max_nodes(featurizer):
    assert featurizer('CCCC', max_nodes=4).num_nodes == 4
    assert featurizer('CCCC', max_nodes=None).num_nodes == 4
    with pytest.raises(FeaturizationError, match='max_nodes=3') as exc:
        featurizer('CCCC', max_nodes=3)
    assert '4 heavy atoms' in str(exc.value)


@pytest.mark.parametrize('featurizer', [smiles_to_zinc_graph,
                                        smiles_to_ogb_graph])
def test_zero_atoms(featurizer, monkeypatch):
    # No non-empty SMILES string parses to zero atoms with current RDKit, so
    # simulate one:
    monkeypatch.setattr(Chem, 'MolFromSmiles',
                        lambda *args, **kwargs: Chem.Mol())
    with pytest.raises(FeaturizationError, match='zero atoms'):
        featurizer('C')


def test_featurization_error_is_value_error():
    assert issubclass(FeaturizationError, ValueError)


# Registry ###################################################################


def test_registry():
    assert set(FEATURIZERS) == {'zinc', 'ogb'}
    assert get_featurizer('zinc') is smiles_to_zinc_graph
    assert get_featurizer('ogb') is smiles_to_ogb_graph
    assert get_featurizer('ZINC') is smiles_to_zinc_graph
    with pytest.raises(ValueError, match="'ogb', 'zinc'") as exc:
        get_featurizer('pcqm')
    assert "'pcqm'" in str(exc.value)


def test_featurization_speed_smoke():
    start = time.perf_counter()
    for _ in range(50):
        smiles_to_zinc_graph('CC(=O)Oc1ccccc1C(=O)O')
    assert time.perf_counter() - start < 10.0
