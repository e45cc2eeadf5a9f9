"""Tests for graphormer_sepnorm.nn.node_encoder: its degree count and dense
node layout equal PyG's degree and to_dense_batch on real ZINC batches, and
the package imports without PyG (what keeps prediction start-up short)."""
import subprocess
import sys

import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.utils import degree, to_dense_batch

from graphormer_sepnorm.nn.node_encoder import _degree, _dense_nodes

from conftest import REPO, load_real_zinc


@pytest.mark.parametrize('count', [1, 2, 17, 64])
def test_degree_and_dense_nodes_equal_pyg(count):
    batch = Batch.from_data_list(load_real_zinc('val', limit=count))
    src, dst = batch.edge_index
    for index in (src, dst):
        ours = _degree(index, batch.num_nodes)
        assert torch.equal(ours, degree(index, batch.num_nodes,
                                        dtype=torch.long))
        assert ours.dtype == torch.long
    h = torch.randn(batch.num_nodes, 5)
    dense, mask = _dense_nodes(h, batch.batch, batch.num_graphs)
    expected, expected_mask = to_dense_batch(h, batch.batch,
                                             batch_size=batch.num_graphs)
    assert torch.equal(dense, expected) and torch.equal(mask, expected_mask)
    single, single_mask = _dense_nodes(h[:7], None, 1)
    pyg_single, pyg_mask = to_dense_batch(h[:7], None, batch_size=1)
    assert torch.equal(single, pyg_single) and torch.equal(single_mask,
                                                           pyg_mask)


def test_an_isolated_node_has_degree_zero():
    assert _degree(torch.tensor([0, 0, 2]), 4).tolist() == [2, 0, 1, 0]


def test_prediction_imports_without_pyg():
    code = ('import sys\n'
            'from graphormer_sepnorm.predict import Predictor\n'
            'from graphormer_sepnorm import GraphormerSepNorm\n'
            'GraphormerSepNorm(num_layers=1, hidden_channels=8, '
            'ffn_channels=8, num_heads=2)\n'
            'heavy = [m for m in ("torch_geometric", "lightning", "ogb", '
            '"matplotlib") if m in sys.modules]\n'
            'assert not heavy, heavy\n')
    result = subprocess.run([sys.executable, '-c', code], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
