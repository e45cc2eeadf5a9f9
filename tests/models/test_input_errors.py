import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import AddSelfLoops

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm

SMALL = dict(num_layers=1, hidden_channels=8, ffn_channels=8, num_heads=2)


def path_graph(edge_rows=4, edge_columns=1):
    r"""The path 0-1-2, both directions, with :obj:`edge_rows` rows of
    edge features (:obj:`None`: no :obj:`edge_attr`)."""
    data = Data(x=torch.zeros(3, 1, dtype=torch.long),
                edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
    if edge_rows is not None:
        data.edge_attr = torch.zeros(edge_rows, edge_columns,
                                     dtype=torch.long)
    return data


def run(model, data, transform=None):
    data = transform(data) if transform else data
    return model.eval()(Batch.from_data_list([AddShortestPaths()(data)]))


def test_the_path_graph_fits_the_model():
    # The baseline each error below departs from in one way.
    assert run(GraphormerSepNorm(**SMALL), path_graph()).shape == (1, 1)
    assert run(GraphormerSepNorm(**SMALL, bond_vocab_sizes=None),
               path_graph(None)).shape == (1, 1)


@pytest.mark.parametrize('transform, rows, edges', [
    (None, 2, 4), (AddSelfLoops(), 2, 7)])
def test_edge_attr_with_too_few_rows(transform, rows, edges):
    # AddSelfLoops adds 3 loops but no rows to an edge_attr that does not
    # have one per edge.
    with pytest.raises(ValueError) as error:
        run(GraphormerSepNorm(**SMALL), path_graph(2), transform)
    assert str(error.value).startswith(
        f"'edge_attr' has {rows} rows but 'edge_index' has {edges} edges "
        f"(columns); give every edge its row")


def test_edge_attr_for_a_model_without_edge_features():
    with pytest.raises(ValueError) as error:
        run(GraphormerSepNorm(**SMALL, bond_vocab_sizes=None),
            path_graph(4, 3))
    assert str(error.value).startswith(
        "The graphs have 'edge_attr' but the model was built without edge "
        "features (bond_vocab_sizes=None); build it with")


def test_graphs_without_edge_attr():
    with pytest.raises(ValueError) as error:
        run(GraphormerSepNorm(**SMALL, bond_vocab_sizes=[5, 6, 2]),
            path_graph(None))
    assert str(error.value).startswith(
        "The graphs have no 'edge_attr' but the model embeds 3 edge feature "
        "column(s) (bond_vocab_sizes=[5, 6, 2], edge_float_channels=0); "
        "build the model with bond_vocab_sizes=None and "
        "edge_float_channels=0")


def test_graphs_without_x_get_the_fix():
    data = path_graph()
    del data.x
    data.num_nodes = 3
    with pytest.raises(ValueError) as error:
        run(GraphormerSepNorm(**SMALL), data)
    assert "The graphs have no node features 'x'" in str(error.value)
    assert ('data.x = torch.zeros(data.num_nodes, 1, dtype=torch.long), and '
            'build the model with atom_vocab_sizes=[1]') in str(error.value)
