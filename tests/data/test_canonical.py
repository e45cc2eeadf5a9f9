"""Same molecule, same graph: the featurizers read molecules in RDKit's
canonical atom order (graphormer_sepnorm.data.featurize.canonical), checked
on 1,000 real ZINC molecules written 5 ways, against networkx isomorphism
with the graphs of the SMILES as written."""
import networkx as nx
import numpy as np
import pytest
from rdkit import Chem

from conftest import shared_path
from graphormer_sepnorm.data.featurize import (FeaturizationError,
                                               smiles_to_ogb_graph,
                                               smiles_to_zinc_graph)
from graphormer_sepnorm.data.featurize import canonical as canonical_module
from graphormer_sepnorm.data.featurize.canonical import parse_canonical

FEATURIZERS = [smiles_to_zinc_graph, smiles_to_ogb_graph]
SPELLINGS = 5


def spellings(smiles: str, count: int, seed: int) -> list[str]:
    """The SMILES as given plus count - 1 random, equally valid SMILES."""
    mol = Chem.MolFromSmiles(smiles)
    return [smiles, *Chem.MolToRandomSmilesVect(mol, count - 1,
                                                randomSeed=seed)]


@pytest.fixture(scope='module')
def zinc_molecules() -> list[str]:
    path = shared_path('zinc250k', 'jtvae_test.txt')
    return [line.split()[0] for line in path.read_text().splitlines()][:1000]


def arrays(data) -> tuple:
    return (data.x.numpy(), data.edge_index.numpy(), data.edge_attr.numpy())


def same_graph(a, b) -> bool:
    return all(np.array_equal(u, v) for u, v in zip(arrays(a), arrays(b)))


@pytest.mark.parametrize('featurize', FEATURIZERS)
def test_phenol_three_ways_is_one_graph(featurize):
    # The example: the bundled ZINC model gave 0.712, 0.747 and
    # 0.706 for these three.
    graphs = [featurize(s) for s in ('c1ccccc1O', 'Oc1ccccc1', 'c1cc(O)ccc1')]
    assert all(same_graph(graphs[0], g) for g in graphs[1:])
    # As written, the first two are numbered differently (O first or last):
    written = [featurize(s, canonical=False) for s in ('c1ccccc1O',
                                                       'Oc1ccccc1')]
    assert not np.array_equal(written[0].x.numpy(), written[1].x.numpy())


@pytest.mark.parametrize('featurize', FEATURIZERS)
def test_every_spelling_of_real_molecules_is_one_graph(featurize,
                                                       zinc_molecules):
    differ_as_written = 0
    for k, smiles in enumerate(zinc_molecules):
        texts = spellings(smiles, SPELLINGS, seed=k)
        graphs = [featurize(s) for s in texts]
        for text, graph in zip(texts[1:], graphs[1:]):
            assert same_graph(graphs[0], graph), (smiles, text)
        written = [featurize(s, canonical=False) for s in texts]
        differ_as_written += not all(same_graph(written[0], g)
                                     for g in written[1:])
    # The probe is sensitive: as written, nearly every molecule's spellings
    # are numbered differently.
    assert differ_as_written > 0.9 * len(zinc_molecules)


def _nx(data, node_columns) -> nx.Graph:
    graph = nx.Graph()
    x = data.x.view(data.num_nodes, -1).numpy()
    graph.add_nodes_from((i, {'t': tuple(row[node_columns])})
                         for i, row in enumerate(x))
    edge_attr = data.edge_attr.view(data.edge_index.size(1), -1).numpy()
    graph.add_edges_from((int(i), int(j), {'b': tuple(b)})
                         for (i, j), b in zip(data.edge_index.T.numpy(),
                                              edge_attr))
    return graph


def test_canonical_graph_is_the_molecule_as_written(zinc_molecules):
    """networkx: the canonical OGB graph is isomorphic to the graph of the
    SMILES as written (every atom and bond feature but the chirality tag,
    which is relative to the order of an atom's bonds: clockwise in one
    numbering is counter-clockwise in another)."""
    columns = [c for c in range(9) if c != 1]
    match = dict(node_match=lambda a, b: a['t'] == b['t'],
                 edge_match=lambda a, b: a['b'] == b['b'])
    for smiles in zinc_molecules[:200]:
        canonical = _nx(smiles_to_ogb_graph(smiles), columns)
        written = _nx(smiles_to_ogb_graph(smiles, canonical=False), columns)
        assert nx.is_isomorphic(canonical, written, **match), smiles


def test_stereoisomers_stay_different():
    left, right = (smiles_to_ogb_graph(s) for s in ('C[C@H](N)O',
                                                    'C[C@@H](N)O'))
    assert not np.array_equal(left.x.numpy(), right.x.numpy())
    assert set(left.x[:, 1].tolist()) != {0}  # a chirality tag is kept


def test_explicit_bracket_hydrogens_are_read_canonically():
    # '[CH3]' and 'C' are one atom: written, the ZINC featurizer types the
    # first 'C H3', which is outside its vocabulary.
    with pytest.raises(FeaturizationError, match='outside the ZINC'):
        smiles_to_zinc_graph('[CH3]CO', canonical=False)
    assert same_graph(smiles_to_zinc_graph('[CH3]CO'),
                      smiles_to_zinc_graph('OCC'))


def test_parse_canonical_returns_the_canonical_smiles():
    text, mol = parse_canonical(' Oc1ccccc1 ')
    assert text == Chem.MolToSmiles(Chem.MolFromSmiles('c1ccccc1O'))
    assert Chem.MolToSmiles(mol) == text
    assert [a.GetSymbol() for a in mol.GetAtoms()] == ['O'] + ['C'] * 6


def test_a_canonical_smiles_rdkit_cannot_read_back_is_named(monkeypatch):
    monkeypatch.setattr(canonical_module, 'canonical_smiles',
                        lambda mol: 'C1CC')  # an unclosed ring
    with pytest.raises(FeaturizationError,
                       match=r"'CCO'.*cannot read back.*'C1CC'"):
        smiles_to_ogb_graph('CCO')
