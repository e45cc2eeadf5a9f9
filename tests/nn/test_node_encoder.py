"""Tests for graphormer_sepnorm.nn.node_encoder: on real ZINC batches its
packed tokens, unpacked, equal the graph token followed by PyG's
to_dense_batch of atom plus degree embeddings (degrees from PyG's degree),
and the package imports without PyG (what keeps prediction start-up
short)."""
import subprocess
import sys

import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.utils import degree, to_dense_batch

from graphormer_sepnorm.nn import GraphormerNodeEncoder
from graphormer_sepnorm.transforms import AddShortestPaths

from conftest import REPO, laid_out, load_real_zinc


@pytest.mark.parametrize('count, buckets', [(1, 1), (2, 1), (17, 3),
                                            (64, 4)])
def test_tokens_equal_pyg_degree_and_dense_batch(count, buckets):
    graphs = [AddShortestPaths()(g)
              for g in load_real_zinc('val', limit=count)]
    batch, tokens = laid_out(Batch.from_data_list(graphs), buckets)
    encoder = GraphormerNodeEncoder([28], 6, max_degree=3, directed=True)
    src, dst = batch.edge_index
    in_degree = degree(dst, batch.num_nodes, dtype=torch.long)
    out_degree = degree(src, batch.num_nodes, dtype=torch.long)
    assert torch.equal(batch.layout.in_degree, in_degree)
    assert torch.equal(batch.layout.out_degree, out_degree)
    expected_nodes = (encoder.atom_embedding(batch.x) +
                      encoder.in_degree_embedding(in_degree.clamp(max=3)) +
                      encoder.out_degree_embedding(out_degree.clamp(max=3)))
    dense, node_mask = to_dense_batch(expected_nodes, batch.batch)
    padded, mask = tokens.unpack(encoder(batch, tokens))
    assert torch.equal(mask, node_mask)
    assert torch.equal(padded[:, 1:], dense)
    assert torch.equal(padded[:, 0],
                       encoder.graph_token.expand(count, -1))
    packed = encoder(batch, tokens)
    assert (packed[~tokens.real_mask] == 0).all()


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
