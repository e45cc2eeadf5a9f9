"""CanonicalNodeOrder: renumbered real ZINC graphs become one graph
(networkx says it is the same graph), and the model's output stops
depending on the numbering where shortest paths tie."""
import csv

import networkx as nx
import pytest
import torch
from conftest import load_real_zinc, shared_path
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import Compose
from torch_geometric.utils import to_networkx

from graphormer_sepnorm import AddShortestPaths, CanonicalNodeOrder
from graphormer_sepnorm.bundled import bundled_model_paths
from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.data.featurize import get_featurizer

RENUMBERINGS = 3


def renumbered(data: Data, generator: torch.Generator) -> list[Data]:
    """data itself and RENUMBERINGS - 1 random renumberings of it, with
    their edges in a random order too."""
    graphs = [data]
    for _ in range(RENUMBERINGS - 1):
        graph = data.subgraph(torch.randperm(data.num_nodes,
                                             generator=generator))
        edges = torch.randperm(graph.edge_index.size(1), generator=generator)
        graph.edge_index = graph.edge_index[:, edges]
        graph.edge_attr = graph.edge_attr[edges]
        graphs.append(graph)
    return graphs


def identical(a: Data, b: Data) -> bool:
    return all(torch.equal(a[key], b[key])
               for key in ('x', 'edge_index', 'edge_attr', 'y'))


def labelled(data: Data) -> nx.DiGraph:
    return to_networkx(data, node_attrs=['x'], edge_attrs=['edge_attr'])


@pytest.fixture(scope='module')
def zinc_graphs() -> list[Data]:
    return load_real_zinc('val') + load_real_zinc('test')


def test_renumbered_real_graphs_become_one_graph(zinc_graphs):
    transform = CanonicalNodeOrder()
    generator = torch.Generator().manual_seed(0)
    for k, data in enumerate(zinc_graphs):
        graphs = [transform(g) for g in renumbered(data, generator)]
        assert all(identical(graphs[0], g) for g in graphs[1:]), k
    assert len(zinc_graphs) == 2000


def test_the_canonical_graph_is_the_same_graph(zinc_graphs):
    match = dict(node_match=lambda a, b: a['x'] == b['x'],
                 edge_match=lambda a, b: a['edge_attr'] == b['edge_attr'])
    transform = CanonicalNodeOrder()
    for data in zinc_graphs[:300]:
        assert nx.is_isomorphic(labelled(data), labelled(transform(data)),
                                **match)


def test_model_output_no_longer_depends_on_the_numbering():
    # A member of the bundled ZINC ensemble: trained, so its multi-hop edge
    # encoding matters (a freshly initialized one barely reads the edges).
    # It reads OGB features: the real ZINC validation molecules featurized
    # in their written atom order.
    model, card = load_model(bundled_model_paths('zinc')[0])
    model.eval()
    paths = AddShortestPaths()
    canonical = Compose([CanonicalNodeOrder(), AddShortestPaths()])
    generator = torch.Generator().manual_seed(1)
    featurize = get_featurizer(card.featurizer)
    with open(shared_path('ZINC-proxy', 'smiles', 'val.csv'),
              newline='') as f:
        graphs = [featurize(row['smiles'], canonical=False)
                  for row, _ in zip(csv.DictReader(f), range(200))]
    copies = [renumbered(g, generator) for g in graphs]

    def spread(transform) -> torch.Tensor:
        with torch.no_grad():
            outputs = torch.stack([
                model(Batch.from_data_list(
                    [transform(c[r].clone()) for c in copies])).view(-1)
                for r in range(RENUMBERINGS)])
        return outputs.max(0).values - outputs.min(0).values

    # Without the transform, tied shortest paths make the output depend on
    # the numbering (as in the reference Graphormer)...
    assert spread(paths).max() > 1e-3
    # ... and with it, it does not.
    assert spread(canonical).max() < 1e-5


def test_every_attribute_follows_its_node_and_edge():
    # A path 0-1-2 with a node attribute and an edge attribute per edge.
    data = Data(x=torch.tensor([[7], [5], [6]]),
                edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
                edge_attr=torch.tensor([1, 1, 2, 2]),
                charge=torch.tensor([70, 50, 60]), y=torch.tensor([3.0]))
    out = CanonicalNodeOrder()(data)
    # Colour refinement ranks nodes by their features first: 5, 6, 7.
    assert out.x.view(-1).tolist() == [5, 6, 7]
    assert out.charge.tolist() == [50, 60, 70]
    assert out.edge_index.tolist() == [[0, 0, 1, 2], [1, 2, 0, 0]]
    # The old 1-2 bond (type 2) is now 0-1; the old 0-1 (type 1) is 0-2.
    assert out.edge_attr.tolist() == [2, 1, 2, 1]
    assert out.y.tolist() == [3.0]


def test_symmetric_nodes_ties_are_broken():
    # A 6-ring of identical atoms: every node is tied until one is singled
    # out; the result is a 6-ring numbered along the ring from node 0.
    ring = torch.tensor([[i, (i + 1) % 6] for i in range(6)]).T
    data = Data(x=torch.zeros(6, 1, dtype=torch.long),
                edge_index=torch.cat([ring, ring.flip(0)], dim=1),
                edge_attr=torch.ones(12, dtype=torch.long))
    out = CanonicalNodeOrder()(data)
    assert nx.is_isomorphic(labelled(data), labelled(out))
    assert out.edge_index.size(1) == 12


def test_must_come_before_add_shortest_paths():
    data = AddShortestPaths()(Data(x=torch.zeros(2, 1, dtype=torch.long),
                                   edge_index=torch.tensor([[0, 1], [1, 0]])))
    with pytest.raises(ValueError, match='before AddShortestPaths'):
        CanonicalNodeOrder()(data)


def test_graph_without_edges_or_features():
    out = CanonicalNodeOrder()(Data(num_nodes=3,
                                    edge_index=torch.empty(2, 0).long()))
    assert out.num_nodes == 3 and out.edge_index.size(1) == 0


def test_real_molecules_without_bonds():
    """Tox21's ions, salts and water made by PyG's from_smiles have an
    [0, 3] edge_attr: every renumbering of each becomes one graph, its
    atoms sorted by their features (no bond to tell them apart)."""
    from rdkit import Chem, RDLogger
    from torch_geometric.utils import from_smiles
    RDLogger.DisableLog('rdApp.*')
    with open(shared_path('moleculenet', 'tox21.csv'), newline='') as f:
        smiles = [row['smiles'] for row in csv.DictReader(f)]
    bondless = ['O'] + [s for s in smiles
                        if (mol := Chem.MolFromSmiles(s)) is not None
                        and mol.GetNumBonds() == 0]
    assert len(bondless) >= 15 and '[I-].[K+]' in bondless
    generator = torch.Generator().manual_seed(0)
    pipeline = Compose([CanonicalNodeOrder(), AddShortestPaths()])
    for s in bondless:
        data = from_smiles(s)
        assert data.edge_attr.shape == (0, 3)
        data.y = torch.zeros(1)
        graphs = [pipeline(g) for g in renumbered(data, generator)]
        assert all(identical(graphs[0], g) for g in graphs[1:]), s
        rows = [tuple(row) for row in graphs[0].x.tolist()]
        assert rows == sorted(rows), s
